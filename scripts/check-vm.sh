#!/bin/bash
# check-vm.sh - `make check-vm T="NAME ..." [PROFILE=6.1|6.12|sid|debug|arm64]
# [SMP=N]`: chosen integration tests in one boot of a chosen kernel
# profile (scripts/lib.sh; arm64: the arm64 bed, scripts/arm64-check.sh).
# T empty: all of that boot's tests.  The names are the test functions
# (tests/integration/run.py and the modules it imports; kvm.py on arm64).
# Ends with the suite's "N passed, N failed" line; the console log is in
# out/check-vm/PROFILE/console.log.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$top"
profile=${PROFILE:-6.1}
read -r -a names <<<"${T:-}"
make -s tool
make -s -C tests/workload
make -s -C tests/pmu
if [ "$profile" = arm64 ]; then
	exec scripts/arm64-check.sh --out out/check-vm/arm64 "${names[@]}"
fi
vp_profile "$profile" "${SMP:-}"
vp_profile_build
out=$top/out/check-vm/$profile
rm -rf "$out"
vp_profile_vm --timeout 2400 --out "$out" -- python3 tests/integration/run.py "${names[@]}"
