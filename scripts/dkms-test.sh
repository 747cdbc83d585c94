#!/bin/bash
# dkms-test.sh - the DKMS cycle for each installed kernel of the test matrix
# (scripts/matrix.sh --list): dkms add, build -k VER, install -k VER, check
# the installed module's vermagic is VER, dkms remove --all.
#
# Usage: scripts/dkms-test.sh [--out DIR]     (root; default out/dkms)
#
# Leaves the system as it found it: the source copy and the DKMS tree live
# in a temporary directory (--sourcetree/--dkmstree), the module signing key
# DKMS would create in /var/lib/dkms is made in that directory too (unless
# /etc/dkms/framework.conf names one), and only the install tree
# /lib/modules/VER/updates/dkms is touched, checked empty again afterwards
# (with depmod's files back to their previous contents).  Debian sid's
# kernel gets the same cycle with sid's dkms in the chroot of
# tests/harness/sid-kernel.sh (VP_MATRIX_SID=0 leaves it out).
# Exit status: 0 if every kernel passed, 1 if one failed, 2 if it cannot run.

prog=dkms-test
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
out=$top/out/dkms
if [ "${1:-}" = --out ]; then
	out=$2
	shift 2
fi
[ "$(id -u)" -eq 0 ] || { echo "dkms-test: needs root" >&2; exit 2; }
command -v dkms >/dev/null || { echo "dkms-test: dkms missing (run scripts/setup.sh)" >&2; exit 2; }

conf_val() { sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$top/dkms.conf"; }
name=$(conf_val PACKAGE_NAME)
ver=$(conf_val PACKAGE_VERSION)
if [ -z "$name" ] || [ -z "$ver" ]; then
	echo "dkms-test: no PACKAGE_NAME/VERSION in dkms.conf" >&2
	exit 2
fi

mapfile -t kvers < <("$top/scripts/matrix.sh" --list)
[ ${#kvers[@]} -gt 0 ] || { echo "dkms-test: no matrix kernel installed" >&2; exit 2; }

# Refuse to touch a real installation of the module.
for k in "${kvers[@]}"; do
	if compgen -G "/lib/modules/$k/updates/dkms/$name.ko*" >/dev/null; then
		echo "dkms-test: /lib/modules/$k/updates/dkms/$name.ko* exists (installed for real); not touching it" >&2
		exit 2
	fi
done

tmp=$(mktemp -d /tmp/vcpuperf-dkms.XXXXXX)
src=$tmp/src
tree=$tmp/dkms
mkdir -p "$src/$name-$ver" "$tree" "$out"
# A clean copy of what DKMS builds: Kbuild, dkms.conf and the sources (no
# objects of the working tree).
cp "$top/Kbuild" "$top/dkms.conf" "$src/$name-$ver/"
for d in include/uapi lib module; do
	mkdir -p "$src/$name-$ver/$d"
	cp "$top/$d"/*.[ch] "$src/$name-$ver/$d/"
done
# DKMS signs modules and creates /var/lib/dkms/mok.{key,pub} if missing:
# keep that key in the temporary directory (framework.conf still wins).
export mok_signing_key=$tmp/mok.key mok_certificate=$tmp/mok.pub

D=(dkms --sourcetree "$src" --dkmstree "$tree")

# Not while scripts/install-test.sh changes the same module trees.
exec 9</lib/modules
flock -w 1800 9 || { echo "dkms-test: another install-test or dkms-test holds the lock on /lib/modules" >&2; exit 2; }

# State of each kernel's module tree that the cycle may change.
snapshot() {
	local k=$1
	{
		ls -d "/lib/modules/$k/updates" "/lib/modules/$k/updates/dkms" 2>/dev/null || true
		find "/lib/modules/$k/updates" -type f 2>/dev/null | sort
		(cd "/lib/modules/$k" && md5sum modules.* 2>/dev/null) || true
	}
}
# ... and what DKMS keeps elsewhere (must not change at all).
snapshot_global() {
	find /var/lib/dkms /usr/src -maxdepth 2 2>/dev/null | sort
	ls -la /etc/dkms /etc/dkms/framework.conf.d
}
declare -A before
for k in "${kvers[@]}"; do before[$k]=$(snapshot "$k"); done
before_global=$(snapshot_global)

cleanup() {
	"${D[@]}" remove "$name/$ver" --all >/dev/null 2>&1 || true
	for k in "${kvers[@]}"; do
		rm -f "/lib/modules/$k/updates/dkms/$name".ko*
		# directories DKMS created
		case "${before[$k]}" in
		*"/lib/modules/$k/updates/dkms"*) ;;
		*) rmdir "/lib/modules/$k/updates/dkms" 2>/dev/null || true ;;
		esac
		case "${before[$k]}" in
		*"/lib/modules/$k/updates"$'\n'* | *"/lib/modules/$k/updates") ;;
		*) rmdir "/lib/modules/$k/updates" 2>/dev/null || true ;;
		esac
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

fail=0
rows=()
run() { # log step cmd...
	local log=$1 step=$2
	shift 2
	echo "+ $*" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		echo "dkms-test: $step failed (log: $log)" >&2
		tail -n 20 "$log" >&2
		return 1
	fi
}

t_all=$(date +%s)
log=$out/add.log
: >"$log"
if ! run "$log" add "${D[@]}" add "$src/$name-$ver"; then
	echo "dkms-test: FAILED (dkms add)"
	exit 1
fi
for k in "${kvers[@]}"; do
	t0=$(date +%s)
	log=$out/$k.log
	: >"$log"
	res=""
	if ! run "$log" build "${D[@]}" build "$name/$ver" -k "$k"; then
		res="build FAILED"
	elif grep -E 'warning:|error:' "$tree/$name/$ver/$k/x86_64/log/make.log" 2>/dev/null |
		grep -v 'Skipping BTF' >>"$log"; then
		res="build has warnings"
	elif ! run "$log" install "${D[@]}" install "$name/$ver" -k "$k"; then
		res="install FAILED"
	else
		ko=$(compgen -G "/lib/modules/$k/updates/dkms/$name.ko*" | head -n1 || true)
		vm=""
		[ -z "$ko" ] || vm=$(modinfo -F vermagic "$ko" 2>>"$log" | awk '{ print $1 }')
		if [ -z "$ko" ]; then
			res="no module installed"
		elif [ "$vm" != "$k" ]; then
			res="vermagic '$vm' != $k"
		else
			res="ok ($(basename "$ko"), vermagic $vm)"
		fi
	fi
	# uninstall this kernel's build before the next one (remove --all at the end)
	run "$log" uninstall "${D[@]}" uninstall "$name/$ver" -k "$k" || true
	case "$res" in ok*) ;; *) fail=1 ;; esac
	rows+=("$k|$res|$(($(date +%s) - t0))s")
done

# Debian sid's kernel: its headers need sid's gcc, so the cycle runs with
# sid's own dkms inside the cached chroot of tests/harness/sid-kernel.sh (which
# also checks that DKMS signed the module with the chroot's MOK key).
if [ "${VP_MATRIX_SID:-1}" != 0 ]; then
	t0=$(date +%s)
	log=$out/sid.log
	if "$top/tests/harness/sid-kernel.sh" dkms "$out/sid" >"$log" 2>&1; then
		k=$(sed -n 's/^installed .* vermagic \([^ ]*\) .*/\1/p' "$log")
		res="ok (sid's dkms $(sed -n 's/^dkms-//p' "$log" | head -n1), vermagic $k, signed)"
	else
		tail -n 20 "$log" >&2
		k=sid
		res="FAILED (log: $log)"
		fail=1
	fi
	rows+=("$k|$res|$(($(date +%s) - t0))s")
fi

log=$out/remove.log
: >"$log"
run "$log" remove "${D[@]}" remove "$name/$ver" --all || fail=1
if "${D[@]}" status "$name" | grep -q .; then
	echo "dkms-test: $name still registered after remove --all" >&2
	fail=1
fi
trap - EXIT
cleanup
for k in "${kvers[@]}"; do
	after=$(snapshot "$k")
	if [ "$after" != "${before[$k]}" ]; then
		echo "dkms-test: /lib/modules/$k differs from before the test:" >&2
		diff <(echo "${before[$k]}") <(echo "$after") >&2 || true
		fail=1
	fi
done
if [ "$(snapshot_global)" != "$before_global" ]; then
	echo "dkms-test: /var/lib/dkms, /usr/src or /etc/dkms changed:" >&2
	diff <(echo "$before_global") <(snapshot_global) >&2 || true
	fail=1
fi

echo
vp_table "dkms $(dkms --version | sed 's/^dkms-//'): $name/$ver ($(($(date +%s) - t_all))s; logs in $out)" \
	"kernel|add, build, install, vermagic, remove|time" "${rows[@]}"
if [ "$fail" -ne 0 ]; then
	echo "dkms-test: FAILED"
	exit 1
fi
echo "dkms-test: all passed"
