#!/bin/bash
# sid-kernel.sh - Debian sid's newest kernel for the test matrix: a cached
# debootstrap chroot of sid holding that kernel's headers and its own gcc
# (sid's headers are configured for a gcc the host does not have), plus the
# kernel image and modules unpacked for booting in the test VM.
#
# Usage: tests/harness/sid-kernel.sh env            set up (or reuse); print
#                                             SID_ROOT= SID_KVER= SID_VMLINUZ=
#                                             SID_MODDIR= lines for eval
#        tests/harness/sid-kernel.sh build OUTDIR   build vcpuperf.ko (W=1) against
#                                             sid's headers inside the chroot:
#                                             OUTDIR/vcpuperf.ko, OUTDIR/build.log
#        tests/harness/sid-kernel.sh testpmu OUTDIR build the test PMU (tests/pmu,
#                                             W=1) the same way:
#                                             OUTDIR/vp_testpmu.ko, build.log;
#                                             exit 1 on a warning
#        tests/harness/sid-kernel.sh dkms OUTDIR    the DKMS cycle (add, build -k,
#                                             install -k, vermagic, remove)
#                                             with sid's dkms inside the chroot
#
# Cache: ${VCPUPERF_CACHE:-$HOME/.cache/vcpuperf}/sid/<key>/{root,kernel}
# where <key> hashes the package list, the layout version below, the mirror
# and the Date: of sid's InRelease on that mirror, so a new sid (a new kernel or gcc) makes a new
# chroot and the old one is dropped; if the mirror cannot be reached the
# newest complete chroot is reused.  Cold: about 3 minutes and 700 MB.
# Environment: VP_SID_MIRROR (default: the Debian archive this machine's
# own apt sources use, scripts/debian-mirror.sh).
# Needs root (debootstrap, chroot, bind mounts).

prog=sid-kernel
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"
mirror=${VP_SID_MIRROR:-$("$top/scripts/debian-mirror.sh")} || exit 1
cache=$VCPUPERF_CACHE/sid
# The chroot's packages: sid's kernel headers pull in the gcc they were
# configured with (CONFIG_CC_VERSION_TEXT); dkms for the DKMS cycle, and
# openssl so that DKMS signs the module with the chroot's MOK key.
chroot_pkgs="linux-headers-amd64 make libc6-dev dkms kmod openssl"
# Bump when the cache's layout or the way it is made changes.
layout=1
# The sid mirror may be a snapshot whose Release file has expired.
aptopt="-o Acquire::Check-Valid-Until=false"

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot)"
[ $# -ge 1 ] || die "usage: $0 env | build OUTDIR | testpmu OUTDIR | dkms OUTDIR"
cmd=$1
shift

mkdir -p "$cache"
release_date=$(curl -fsS --max-time 20 "$mirror/dists/sid/InRelease" 2>/dev/null |
	sed -n 's/^Date: //p' | head -n1 || true)
if [ -n "$release_date" ]; then
	key=$(echo "$layout $mirror $release_date $chroot_pkgs" | sha256sum | cut -c1-16)
else
	key=$(ls -t "$cache"/*/.complete 2>/dev/null | head -n1 | xargs -r dirname |
		xargs -r basename || true)
	[ -n "$key" ] || die "cannot reach $mirror and nothing is cached"
	log "$mirror unreachable: reusing the cached chroot $key"
fi
dir=$cache/$key
root=$dir/root
kern=$dir/kernel

exec 9>"$cache/.$key.lock"
flock 9

mounted=()
umount_all() {
	local m
	for m in "${mounted[@]}"; do umount "$m" 2>/dev/null || umount -l "$m" || true; done
	mounted=()
}
trap umount_all EXIT
mount_proc() {
	mountpoint -q "$root/proc" || { mount -t proc proc "$root/proc"; mounted+=("$root/proc"); }
}
in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}

# The chroot with sid's headers, gcc and dkms (a finished one is kept even
# if unpacking the kernel fails later).
bootstrap() {
	rm -rf "$dir"
	mkdir -p "$dir"
	log "debootstrap sid ($mirror, Release of $release_date) into $root"
	debootstrap --variant=minbase sid "$root" "$mirror" >"$dir/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$dir/debootstrap.log" >&2; die "debootstrap failed (log: $dir/debootstrap.log)"; }
	echo "Acquire::Check-Valid-Until \"false\";" >"$root/etc/apt/apt.conf.d/99vcpuperf"
	mount_proc
	log "installing $chroot_pkgs"
	in_root apt-get $aptopt update -qq >"$dir/apt.log" 2>&1 &&
		in_root apt-get $aptopt install -y -qq --no-install-recommends $chroot_pkgs \
			>>"$dir/apt.log" 2>&1 ||
		{ tail -n 20 "$dir/apt.log" >&2; die "apt-get in the chroot failed (log: $dir/apt.log)"; }
	touch "$dir/.bootstrapped"
}

setup() {
	local t0 deb k m
	t0=$(date +%s)
	command -v debootstrap >/dev/null || die "debootstrap missing (run scripts/setup.sh)"
	[ -f "$dir/.bootstrapped" ] || bootstrap
	mount_proc
	k=$(in_root dpkg-query -W -f='${Depends}' linux-headers-amd64 | tr ',' '\n' |
		sed -n 's/^ *linux-headers-\([0-9][^ ]*\).*/\1/p' | head -n1)
	[ -n "$k" ] && [ -d "$root/usr/src/linux-headers-$k" ] ||
		die "no linux-headers-<version> behind sid's linux-headers-amd64"
	# The image: vmlinuz and modules unpacked (no initramfs tools needed;
	# vm-run.sh makes its own initramfs), modules.dep made by depmod.
	log "unpacking sid's kernel $k"
	rm -f "$root"/tmp/*.deb
	(cd "$root/tmp" && in_root sh -c "cd /tmp && apt-get $aptopt download \
		linux-binary-$k linux-modules-$k" >>"$dir/apt.log" 2>&1) ||
		die "cannot download sid's linux-binary/modules-$k (log: $dir/apt.log)"
	mkdir -p "$dir/unpack" "$kern/lib/modules"
	for deb in "$root"/tmp/*.deb; do dpkg-deb -x "$deb" "$dir/unpack"; done
	rm -f "$root"/tmp/*.deb
	for m in "$dir/unpack/usr/lib/modules/$k" "$dir/unpack/lib/modules/$k"; do
		[ -d "$m" ] && mv "$m" "$kern/lib/modules/$k"
	done
	rm -rf "$dir/unpack"
	[ -r "$kern/lib/modules/$k/vmlinuz" ] || die "no vmlinuz in sid's linux-binary-$k"
	depmod -b "$kern" "$k" 2>>"$dir/apt.log"
	echo "$k" >"$dir/kver"
	umount_all
	touch "$dir/.complete"
	log "ready in $(($(date +%s) - t0))s: $dir"
	# Older chroots (an older sid) are dropped.
	for old in "$cache"/*/; do
		old=${old%/}
		[ "$old" = "$dir" ] || [ ! -f "$old/.complete" ] || rm -rf "$old"
	done
}

[ -f "$dir/.complete" ] || setup
kver=$(cat "$dir/kver")

# Copy the module sources into the chroot (a clean tree: the chroot cannot
# see the host's paths).
stage() { # name
	local s=$root/build/$1 d
	rm -rf "$s"
	mkdir -p "$s"
	cp "$top/Kbuild" "$top/dkms.conf" "$s/"
	for d in include/uapi lib module; do
		mkdir -p "$s/$d"
		cp "$top/$d"/*.[ch] "$s/$d/"
	done
}

case "$cmd" in
env)
	echo "SID_ROOT=$root"
	echo "SID_KVER=$kver"
	echo "SID_MODDIR=$kern/lib/modules/$kver"
	echo "SID_VMLINUZ=$kern/lib/modules/$kver/vmlinuz"
	;;
build)
	[ $# -eq 1 ] || die "usage: $0 build OUTDIR"
	out=$1
	mkdir -p "$out"
	stage vcpuperf
	mount_proc	# objtool reads /proc
	rc=0
	in_root make -C "/usr/src/linux-headers-$kver" M=/build/vcpuperf W=1 modules \
		>"$out/build.log" 2>&1 || rc=$?
	rm -f "$out/vcpuperf.ko"
	[ $rc -ne 0 ] || cp "$root/build/vcpuperf/vcpuperf.ko" "$out/"
	rm -rf "$root/build/vcpuperf"
	exit $rc
	;;
testpmu)
	[ $# -eq 1 ] || die "usage: $0 testpmu OUTDIR"
	out=$1
	mkdir -p "$out"
	s=$root/build/testpmu
	rm -rf "$s"
	mkdir -p "$s"
	cp "$top/tests/pmu/Kbuild" "$top"/tests/pmu/*.c "$s/"
	mount_proc
	rc=0
	in_root make -C "/usr/src/linux-headers-$kver" M=/build/testpmu W=1 modules \
		>"$out/build.log" 2>&1 || rc=$?
	rm -f "$out/vp_testpmu.ko"
	[ $rc -ne 0 ] || cp "$s/vp_testpmu.ko" "$out/"
	rm -rf "$s"
	if [ $rc -eq 0 ] && grep -E 'warning:|error:' "$out/build.log" | grep -v 'Skipping BTF'; then
		rc=1
	fi
	exit $rc
	;;
dkms)
	[ $# -eq 1 ] || die "usage: $0 dkms OUTDIR"
	out=$1
	mkdir -p "$out"
	name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$top/dkms.conf")
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
	stage "$name-$ver"
	mount_proc
	rc=0
	# The chroot is disposable, but the cycle still has to leave it clean:
	# a second run starts from the same state.
	in_root sh -ec "
		dkms --version
		dkms add /build/$name-$ver
		dkms build $name/$ver -k $kver
		! grep -E 'warning:|error:' /var/lib/dkms/$name/$ver/$kver/x86_64/log/make.log
		dkms install $name/$ver -k $kver
		ko=\$(ls /lib/modules/$kver/updates/dkms/$name.ko* | head -n1)
		vm=\$(modinfo -F vermagic \"\$ko\" | cut -d' ' -f1)
		signer=\$(modinfo -F signer \"\$ko\")
		echo \"installed \$ko vermagic \$vm signer \$signer\"
		test \"\$vm\" = $kver
		test -n \"\$signer\"
		dkms remove $name/$ver --all
		! ls /lib/modules/$kver/updates/dkms/$name.ko* 2>/dev/null
		! dkms status $name | grep .
	" >"$out/dkms.log" 2>&1 || rc=$?
	in_root dkms remove "$name/$ver" --all >/dev/null 2>&1 || true
	rm -rf "$root/build/$name-$ver" "$root/usr/src/$name-$ver"
	cat "$out/dkms.log"
	exit $rc
	;;
*) die "unknown command '$cmd'" ;;
esac
