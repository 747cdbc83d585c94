# shellcheck shell=bash
# profile.sh - sourced: the kernel profiles the VM tests run on, in one
# place.  vp_profile NAME [SMP] builds vcpuperf.ko (W=1) and the test PMU
# for that kernel, each in a mirror of the sources under
# out/profile/NAME/, and sets
#   PROFILE_KVER      the kernel's version
#   PROFILE_VMRUN     vm-run.sh's options to boot it (an array)
#   PROFILE_ENV       the environment of the tests on it (an array of
#                     VAR=VALUE: VP_MODULE, VP_TESTPMU, VP_SLOW_KERNEL, ...)
# NAME: 6.1 (Debian 12's, the default), 6.12 (bookworm-backports), sid
# (7.2, built in tests/harness/sid-kernel.sh's chroot), debug (the KASAN,
# lockdep and kmemleak kernel of scripts/kunit-kernel.sh).
#   - 6.1 and debug boot two vCPUs; on debug the timing figures are said,
#     not enforced (VP_SLOW_KERNEL: it runs several times slower), and
#     kmemleak is scanned after the last rmmod (VP_KMEMLEAK);
#   - 6.12 and sid die at random in static-key patching with two
#     multi-threaded TCG vCPUs, so they boot one (timing said, not
#     enforced), or with SMP=2 two vCPUs in one QEMU thread
#     (--tcg-single: what the tests that need a second CPU run on).
# Returns non-zero, with the reason on stderr, when the kernel is not
# there or the build fails.

vp_profile() {
	local name=$1 smp=${2:-} top kdir dir
	top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	dir=$top/out/profile/$name
	PROFILE_VMRUN=()
	PROFILE_ENV=()
	case "$name" in
	6.1)
		PROFILE_KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 |
			sed -n 's/^linux-headers-\(6\.1\.[^ ,]*\).*/\1/p')
		kdir=/lib/modules/$PROFILE_KVER/build
		PROFILE_VMRUN=(--kver "$PROFILE_KVER" --smp "${smp:-2}")
		;;
	6.12)
		PROFILE_KVER=$("$top/scripts/matrix.sh" --list | grep '^6\.12\.' | tail -n1)
		kdir=/lib/modules/$PROFILE_KVER/build
		PROFILE_VMRUN=(--kver "$PROFILE_KVER" --smp "${smp:-1}")
		[ "${smp:-1}" = 1 ] || PROFILE_VMRUN+=(--tcg-single)
		PROFILE_ENV+=(VP_SLOW_KERNEL=1)
		;;
	sid)
		eval "$("$top/tests/harness/sid-kernel.sh" env)" || return 1
		PROFILE_KVER=$SID_KVER
		if ! "$top/tests/harness/sid-kernel.sh" build "$dir/kmod" >/dev/null ||
			! "$top/tests/harness/sid-kernel.sh" testpmu "$dir/testpmu" >/dev/null; then
			echo "profile sid: build failed (see $dir/*/build.log)" >&2
			return 1
		fi
		PROFILE_VMRUN=(--kernel "$SID_VMLINUZ" --modules-dir "$SID_MODDIR" --smp "${smp:-1}")
		[ "${smp:-1}" = 1 ] || PROFILE_VMRUN+=(--tcg-single)
		PROFILE_ENV=(VP_MODULE="$dir/kmod/vcpuperf.ko"
			VP_TESTPMU="$dir/testpmu/vp_testpmu.ko" VP_SLOW_KERNEL=1)
		return 0
		;;
	debug)
		local bzimage
		bzimage=$("$top/scripts/kunit-kernel.sh") || return 1
		kdir=${bzimage%/arch/x86/boot/bzImage}
		PROFILE_KVER=debug
		PROFILE_VMRUN=(--kernel "$bzimage" --mem 2048 --smp "${smp:-2}")
		PROFILE_ENV+=(VP_SLOW_KERNEL=1 VP_KMEMLEAK=1)
		;;
	*)
		echo "profile: unknown kernel profile '$name' (6.1, 6.12, sid, debug)" >&2
		return 2
		;;
	esac
	if [ -z "$PROFILE_KVER" ] || [ ! -d "$kdir" ]; then
		echo "profile $name: no kernel build tree (run scripts/setup.sh)" >&2
		return 1
	fi
	"$top/scripts/stage-kmod.sh" "$dir/kmod"
	make -C "$kdir" M="$dir/kmod" W=1 modules >"$dir/build.log" 2>&1 ||
		{ tail -n 20 "$dir/build.log" >&2; echo "profile $name: build failed" >&2; return 1; }
	"$top/tests/harness/testpmu.sh" "$kdir" "$dir/testpmu" W=1 || return 1
	PROFILE_ENV+=(VP_MODULE="$dir/kmod/vcpuperf.ko"
		VP_TESTPMU="$dir/testpmu/vp_testpmu.ko")
}
