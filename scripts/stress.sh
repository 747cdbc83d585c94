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
#   --kernel debug    the KASAN/lockdep/kmemleak kernel of scripts/kunit-kernel.sh
#                     (default), with vcpuperf.ko built against it in a mirror
#   --kernel debian   the newest installed Debian kernel (make module)
# Exit status: stress.py's (0 all passed).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
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
mkdir -p "$(dirname "$out")"

make -C "$top" tool >/dev/null
make -C "$top/tests/stress" >/dev/null

if [ "$kernel" = debug ]; then
	bzimage=$("$top/scripts/kunit-kernel.sh")
	kbuild=${bzimage%/arch/x86/boot/bzImage}
	# Same mirror as make check-vm PROFILE=debug: no object mixes with
	# the ones built against the Debian kernel in the source tree.
	stage=$top/out/debug-kmod
	"$top/scripts/stage-kmod.sh" "$stage"
	make -C "$kbuild" M="$stage" W=1 modules >"$out.build.log" 2>&1 ||
		{ cat "$out.build.log"; exit 1; }
	export VP_MODULE=$stage/vcpuperf.ko VP_KMEMLEAK=1
	vmargs=(--kernel "$bzimage")
elif [ "$kernel" = debian ]; then
	KVER=${KVER:-$(make -s -C "$top" print-kver)}
	make -C "$top" module KVER="$KVER" >/dev/null
	vmargs=(--kver "$KVER")
else
	echo "$0: --kernel debug or debian" >&2
	exit 2
fi

rm -rf "$out"
mkdir -p "$out"
cd "$top"
timeout_s=1500
[ "$mode" = --long ] && timeout_s=5400
exec scripts/vm-run.sh "${vmargs[@]}" --mem 2048 --timeout "$timeout_s" \
	--out "$out" -- python3 tests/stress/stress.py "$mode" "$@"
