#!/bin/bash
# check-vm.sh - chosen integration tests in one boot of a chosen kernel
# profile: `make check-vm T="NAME ..." [PROFILE=6.1|6.12|sid|debug|arm64]
# [SMP=N]`, and in make check the integration tests on the debug kernel.
#
# Usage: scripts/check-vm.sh [--profile NAME] [--smp N] [--out DIR] [--]
#                            [TEST_NAME...]
#
#   --profile NAME  6.1 (default), 6.12, sid, debug (scripts/lib.sh), or
#                   arm64 (the arm64 bed: scripts/arm64-check.sh)
#   --smp N         the vCPUs booted (default: the profile's)
#   --out DIR       the boot's output (default out/check-vm/NAME); its
#                   console log is DIR/console.log
#
# No TEST_NAME: all of that boot's tests.  The names are the test
# functions (tests/integration/run.py and the modules it imports;
# tests/arm64/kvm.py on arm64).  Ends with the suite's "N passed, N failed" line.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$top"
profile=""
smp=""
out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--profile | --smp | --out)
		[ $# -ge 2 ] || { log "$1 needs an argument"; exit 2; }
		case "$1" in
		--profile) profile=$2 ;;
		--smp) smp=$2 ;;
		--out) out=$2 ;;
		esac
		shift 2
		;;
	-h | --help) vp_help; exit 0 ;;
	--) shift; break ;;
	-*) log "unknown option '$1' (see --help)"; exit 2 ;;
	*) break ;;
	esac
done
profile=${profile:-6.1}
out=${out:-$top/out/check-vm/$profile}
make -s tool
make -s -C tests/workload
make -s -C tests/pmu
if [ "$profile" = arm64 ]; then
	exec scripts/arm64-check.sh --out "$out" "$@"
fi
vp_profile "$profile" "$smp"
vp_profile_build
rm -rf "$out"
vp_profile_vm --timeout 2400 --idle "$VP_IDLE_S" --out "$out" -- python3 tests/integration/run.py "$@"
