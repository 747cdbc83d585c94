#!/bin/bash
# testpmu.sh - build the test PMU (tests/pmu/vp_testpmu.ko) against a kernel
# build tree, in a mirror of its sources so that objects of different
# kernels never mix.  The test PMU is for the integration tests only: it is
# never installed and never part of DKMS (the top-level Kbuild and
# dkms.conf do not name it).
#
# Usage: tests/harness/testpmu.sh KDIR OUTDIR [MAKE ARGS...]   e.g. W=1 C=1
#        -> OUTDIR/vp_testpmu.ko, OUTDIR/build.log; exit status of make,
#           or 1 if the build printed a warning.
set -euo pipefail

[ $# -ge 2 ] || { echo "usage: $0 KDIR OUTDIR [MAKE ARGS...]" >&2; exit 2; }
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$1
out=$2
shift 2
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ "$out" != "$top/tests/pmu" ]; then
	find "$out" -maxdepth 1 -type l -delete
	for f in "$top"/tests/pmu/Kbuild "$top"/tests/pmu/*.c; do
		ln -sfn "$f" "$out/"
	done
fi
make -C "$kdir" M="$out" clean >/dev/null 2>&1 || true
rc=0
make -C "$kdir" M="$out" "$@" modules >"$out/build.log" 2>&1 || rc=$?
if [ $rc -ne 0 ]; then
	tail -n 30 "$out/build.log" >&2
	exit $rc
fi
if grep -E 'warning:|error:' "$out/build.log" | grep -v 'Skipping BTF' >&2; then
	echo "testpmu: the build has warnings" >&2
	exit 1
fi
exit 0
