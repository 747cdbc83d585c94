#!/bin/bash
# stress.sh - run tests/stress/stress.py in the test VM: attach/detach
# churn, random readers, rmmod with a blocked reader, ring overflow and
# recovery, a SIGKILLed QEMU, a control-file fuzzer (tests/stress/ctlfuzz).
#
# Usage: scripts/stress.sh [--long] [--kernel debug|debian] [--out DIR]
#                          [-- STRESS.PY ARGS...]
#   --long            1000 cycles, 25 rmmods, 100000 writes: make stress
#                     (default --short: every phase with fewer cycles, for
#                     make check)
#   --kernel debug    the KASAN/lockdep/kmemleak kernel's profile
#                     (scripts/lib.sh; the default), vcpuperf.ko built
#                     against it in a mirror
#   --kernel debian   the newest installed Debian kernel (make module)
# Exit status: stress.py's (0 all passed).

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
mode=--short
kernel=debug
out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--long) mode=--long; shift ;;
	--short) mode=--short; shift ;;
	--kernel) kernel=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--) shift; break ;;
	*) echo "usage: $0 [--long] [--kernel debug|debian] [--out DIR] [-- ARGS]" >&2; exit 2 ;;
	esac
done
out=${out:-$top/out/stress-$kernel}
# A phase that does not exist is an error before anything is built or
# booted.
python3 "$top/tests/stress/stress.py" "$mode" "$@" --check || exit 2
mkdir -p "$(dirname "$out")"

make -C "$top" tool >/dev/null
make -C "$top/tests/stress" >/dev/null

if [ "$kernel" = debug ]; then
	vp_profile debug
	vp_profile_kmod || { cat "$PROFILE_DIR/kmod/build.log"; exit 1; }
	vmenv=("${PROFILE_ENV[@]}")
	vmargs=("${PROFILE_VMRUN[@]}")
elif [ "$kernel" = debian ]; then
	KVER=${KVER:-$(make -s -C "$top" print-kver)}
	make -C "$top" module KVER="$KVER" >/dev/null
	vmenv=()
	vmargs=(--kver "$KVER" --mem 2048)
else
	echo "$0: --kernel debug or debian" >&2
	exit 2
fi

rm -rf "$out"
mkdir -p "$out"
cd "$top"
timeout_s=1500
[ "$mode" = --long ] && timeout_s=5400
exec env "${vmenv[@]}" scripts/vm-run.sh "${vmargs[@]}" --timeout "$timeout_s" \
	--out "$out" -- python3 tests/stress/stress.py "$mode" "$@"
