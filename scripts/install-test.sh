#!/bin/bash
# install-test.sh - `make install` on this host for every installed kernel
# of the test matrix (scripts/matrix.sh --list), boot each of those kernels
# in a VM and check the installation there, then `make uninstall` and check
# the host is as it was.
#
# Usage: scripts/install-test.sh [--out DIR]     (root; default out/install-test)
#
# On the host: `make install KVER=VER` for each kernel (the module into
# /lib/modules/VER/extra, depmod), checked with modinfo -k VER (found by
# depmod, vermagic VER); `systemd-analyze verify` on the installed unit
# (when systemd-analyze is there); a modprobe.d file setting interval_ms
# (/etc/modprobe.d/vcpuperf-install-test.conf, removed afterwards).
# In the VM (scripts/vm-run.sh --kver VER; Debian's 6.12 with --smp 1, the
# others with two vCPUs in one QEMU thread, --tcg-single: with one thread
# per vCPU (MTTCG) x86 kernels livelock now and then while a static key is
# rewritten, see scripts/matrix.sh; opening and closing counters switches
# perf's scheduler hooks), tests/harness/install-guest.sh: modprobe, the
# parameter applied, vcpuperf-cat from /usr/local/bin gives rows, man -w,
# the systemd unit's helper against a real QEMU (episodes, restart,
# SIGTERM), rmmod.
# systemd itself is not run (the guest's init is busybox).
# Then `make uninstall KVER=VER` for each kernel, and the host must be as
# before: the same files under /usr/local/{bin,lib,share/man},
# /etc/modprobe.d, /etc/systemd/system, /lib/modules/VER/{extra,updates},
# the same depmod output (modules.* checksums), modinfo -k VER vcpuperf
# failing.  On any failure or interruption the EXIT trap uninstalls too.
# The VMs build their initramfs in a temporary cache (the host's cache in
# ~/.cache/vcpuperf is keyed by modules.dep and would keep a stale image).
#
# Refuses to run (exit 2) when vcpuperf is already installed for real.
# Prints "N passed, M failed" (host checks plus the guests'), also in
# DIR/result.log.  Exit status: 0 all passed, 1 a check failed, 2 cannot run.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
out=$top/out/install-test
while [ $# -gt 0 ]; do
	case "$1" in
	--out) [ $# -ge 2 ] || { echo "install-test: --out needs a directory" >&2; exit 2; }
		out=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "install-test: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "install-test: needs root" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out/" in
"$top"/*) ;;
/tmp/* | /run/* | /var/tmp/*)
	echo "install-test: --out $out: the VM guest cannot see /tmp, /run or /var/tmp" >&2
	exit 2 ;;
esac
cd "$top"

IVL=250
MODCONF=/etc/modprobe.d/vcpuperf-install-test.conf
PREFIX=/usr/local
FILES="$PREFIX/bin/vcpuperf-cat $PREFIX/bin/vcpuperf-plot $PREFIX/share/man/man1/vcpuperf-cat.1
$PREFIX/share/man/man1/vcpuperf-plot.1
$PREFIX/share/man/man4/vcpuperf.4 /etc/modprobe.d/vcpuperf.conf.example
$PREFIX/lib/vcpuperf $PREFIX/lib/systemd/system/vcpuperf@.service
$PREFIX/lib/systemd/system/vcpuperf-host.service
/etc/modprobe.d/vcpuperf.conf $MODCONF"

mapfile -t kvers < <(scripts/matrix.sh --list)
[ ${#kvers[@]} -gt 0 ] || { echo "install-test: no matrix kernel installed" >&2; exit 2; }

# Refuse to touch a real installation.
for f in $FILES; do
	if [ -e "$f" ]; then
		echo "install-test: $f exists (vcpuperf installed for real?); not touching it" >&2
		exit 2
	fi
done
for k in "${kvers[@]}"; do
	if compgen -G "/lib/modules/$k/extra/vcpuperf.ko*" >/dev/null ||
		compgen -G "/lib/modules/$k/updates/dkms/vcpuperf.ko*" >/dev/null; then
		echo "install-test: vcpuperf.ko already installed for $k; not touching it" >&2
		exit 2
	fi
done

# What install/uninstall may touch.
snapshot() {
	local k
	{
		find "$PREFIX/bin" "$PREFIX/lib" -maxdepth 1 -printf '%p %y %m\n'
		find "$PREFIX/share/man" /etc/modprobe.d -printf '%p %y %m\n'
		find "$PREFIX/lib/systemd" /etc/systemd/system -printf '%p %y %m\n'
		ls -d /var/lib/vcpuperf
		for k in "${kvers[@]}"; do
			find "/lib/modules/$k" -maxdepth 1 -printf '%p %y %m\n'
			find "/lib/modules/$k/extra" "/lib/modules/$k/updates" -printf '%p %y %m\n'
			(cd "/lib/modules/$k" && md5sum modules.*)
		done
	} 2>/dev/null | sort
}
# One at a time, and not while scripts/dkms-test.sh changes the same
# module trees (it takes the same lock: flock on /lib/modules, no lock file).
exec 9</lib/modules
flock -w 1800 9 || { echo "install-test: another install-test or dkms-test holds the lock on /lib/modules" >&2; exit 2; }
before=$(snapshot)

tmp=$(mktemp -d /tmp/vcpuperf-install-test.XXXXXX)
installed=""
cleanup() {
	local k
	if [ -n "$installed" ]; then
		for k in "${kvers[@]}"; do
			make -s uninstall KVER="$k" >>"$out/cleanup.log" 2>&1 || true
		done
	fi
	rm -f "$MODCONF"
	rm -rf "$tmp"
	# Whatever a broken uninstall left: the installed files, and the
	# directories that did not exist before (deepest first).
	for f in $FILES; do rm -rf "$f"; done
	for k in "${kvers[@]}"; do
		if compgen -G "/lib/modules/$k/extra/vcpuperf.ko*" >/dev/null; then
			rm -f "/lib/modules/$k/extra/vcpuperf.ko"*
			depmod -a "$k" || true
		fi
	done
	for d in "$PREFIX/share/man/man1" "$PREFIX/share/man/man4" \
		"$PREFIX/lib/systemd/system" "$PREFIX/lib/systemd" \
		$(printf '/lib/modules/%s/extra\n' "${kvers[@]}"); do
		case "$before" in *"$d d "*) ;; *) rmdir "$d" 2>/dev/null || true ;; esac
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

npass=0
nfail=0
rows=()
# ok, bad and check: scripts/lib.sh
t_all=$(date +%s)

# Each make below names its kernel with KVER=; a KDIR inherited from the
# environment (`make check` exports the default kernel's) would override
# the KDIR the Makefile derives from that KVER.
unset KDIR
echo "==== install-test: kernels ${kvers[*]}"
make -s tool >"$out/tool-build.log" 2>&1

# --- install for every kernel ------------------------------------------------
for k in "${kvers[@]}"; do
	installed=1
	if make install KVER="$k" >"$out/install-$k.log" 2>&1; then
		ok "make install KVER=$k"
	else
		tail -n 20 "$out/install-$k.log"
		bad "make install KVER=$k (log: $out/install-$k.log)"
		continue
	fi
	f=$(modinfo -k "$k" -F filename vcpuperf 2>/dev/null || true)
	check "$k: depmod knows $f" eval 'case "$f" in /lib/modules/$k/extra/vcpuperf.ko*) true ;; *) false ;; esac'
	vm=$(modinfo -k "$k" -F vermagic vcpuperf 2>/dev/null | awk '{ print $1 }')
	check "$k: vermagic $vm" test "$vm" = "$k"
done
for f in "$PREFIX/bin/vcpuperf-cat" "$PREFIX/bin/vcpuperf-plot" "$PREFIX/share/man/man1/vcpuperf-cat.1" \
	"$PREFIX/share/man/man1/vcpuperf-plot.1" \
	"$PREFIX/share/man/man4/vcpuperf.4" /etc/modprobe.d/vcpuperf.conf.example \
	"$PREFIX/lib/vcpuperf/vcpuperf-record" "$PREFIX/lib/systemd/system/vcpuperf@.service" \
	"$PREFIX/lib/systemd/system/vcpuperf-host.service"; do
	check "installed $f" test -s "$f"
done
check "modprobe.d example is not active (no 'options' line)" \
	eval '! grep -q "^options" /etc/modprobe.d/vcpuperf.conf.example'
if command -v systemd-analyze >/dev/null; then
	# an instance of the installed template, as systemd would load it
	ln -s "$PREFIX/lib/systemd/system/vcpuperf@.service" "$tmp/vcpuperf@vm1.service"
	if systemd-analyze verify "$tmp/vcpuperf@vm1.service" >"$out/verify.log" 2>&1 &&
		! grep -q . "$out/verify.log"; then
		ok "systemd-analyze verify vcpuperf@vm1.service"
	else
		cat "$out/verify.log"
		bad "systemd-analyze verify vcpuperf@vm1.service"
	fi
	if systemd-analyze verify "$PREFIX/lib/systemd/system/vcpuperf-host.service" \
		>"$out/verify-host.log" 2>&1 && ! grep -q . "$out/verify-host.log"; then
		ok "systemd-analyze verify vcpuperf-host.service"
	else
		cat "$out/verify-host.log"
		bad "systemd-analyze verify vcpuperf-host.service"
	fi
else
	echo "skip: systemd-analyze not installed"
fi

# --- boot every kernel --------------------------------------------------------
echo "options vcpuperf interval_ms=$IVL" >"$MODCONF"
for k in "${kvers[@]}"; do
	case "$k" in
	6.12.*) smp=(--smp 1) ;;
	*) smp=(--smp 2 --tcg-single) ;;
	esac
	echo
	echo "==== $k: VM (${smp[*]#--})"
	t0=$(date +%s)
	rm -rf "$out/vm-$k"
	set +e
	VCPUPERF_CACHE=$tmp/cache VP_INSTALL_INTERVAL_MS=$IVL \
		scripts/vm-run.sh --kver "$k" "${smp[@]}" --timeout 1200 \
		--out "$out/vm-$k" -- tests/harness/install-guest.sh
	rc=$?
	set -e
	line=$(result_line "$out/vm-$k/console.log")
	result_add "$line"
	[ "$rc" -eq 0 ] || bad "$k: guest exit $rc"
	rows+=("$k|${smp[*]#--}|${line:-no result line}|$(($(date +%s) - t0))s")
done
rm -f "$MODCONF"

# --- uninstall and compare ----------------------------------------------------
for k in "${kvers[@]}"; do
	check "make uninstall KVER=$k" eval 'make uninstall KVER="$k" >"$out/uninstall-$k.log" 2>&1'
	check "$k: modinfo -k $k vcpuperf fails after uninstall" \
		eval '! modinfo -k "$k" vcpuperf >/dev/null 2>&1'
done
installed=""
after=$(snapshot)
if [ "$after" = "$before" ]; then
	ok "host as before (files, directories, depmod output)"
else
	diff <(echo "$before") <(echo "$after") || true
	bad "host differs from before the test"
fi

vp_table_file "$out/result.log" \
	"install-test ($(($(date +%s) - t_all))s; logs in $out)" \
	"kernel|VM|guest checks|time" "${rows[@]}"
[ "$nfail" -eq 0 ] || { echo "install-test: FAILED"; exit 1; }
echo "install-test: all passed"
