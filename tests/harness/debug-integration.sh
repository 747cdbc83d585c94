#!/bin/bash
# debug-integration.sh - run the integration tests once on the KUnit debug
# kernel (KASAN, lockdep, kmemleak, DEBUG_ATOMIC_SLEEP), with vcpuperf.ko
# built against that kernel.  The tests' own kernel-log check fails on any
# KASAN report, lockdep splat, BUG, WARNING or atomic-sleep message, and on
# a kmemleak report after the last rmmod.
#
# Usage: tests/harness/debug-integration.sh [--out DIR] [TEST_NAME...]
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/out/debug-integration
if [ "${1:-}" = --out ]; then
	out=$2
	shift 2
fi

bzimage=$("$top/scripts/kunit-kernel.sh")
kbuild=${bzimage%/arch/x86/boot/bzImage}

# Build in a mirror of the sources, so no object mixes with the ones built
# against the Debian kernel in the source tree.
stage=$top/out/debug-kmod
"$top/scripts/stage-kmod.sh" "$stage"
make -C "$kbuild" M="$stage" W=1 modules
# The test PMU of tests/integration/pmu.py, and its modifier probe.
"$top/tests/harness/testpmu.sh" "$kbuild" "$top/out/debug-testpmu" W=1
make -C "$top/tests/pmu"

rm -rf "$out"
mkdir -p "$out"
cd "$top"
VP_MODULE=$stage/vcpuperf.ko VP_KMEMLEAK=1 VP_SLOW_KERNEL=1 \
	VP_TESTPMU=$top/out/debug-testpmu/vp_testpmu.ko \
	scripts/vm-run.sh --kernel "$bzimage" --mem 2048 --timeout 2400 \
	--out "$out" -- python3 tests/integration/run.py "$@"
