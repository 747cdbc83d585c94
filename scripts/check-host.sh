#!/bin/bash
# check-host.sh - `make check-host`: the tests that need no VM: the
# module built with W=1 and sparse failing on any warning, vcpuperf-cat
# with -Wall -Wextra -Werror, checkpatch --strict, the tool's
# host tests (decoder, man pages, plot, the suites' TAP output; the
# Prometheus test with VP_CHECK_PROM=1) and a short fuzz of every harness
# (VP_FUZZ_SECONDS, default 10).  Ends with one "N passed, N failed" line.
# VP_TESTS="GLOB ..." (make check-host T=...): only the host tests whose
# Class.test_name or test_name matches, and no fuzz.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/result-lib.sh
. scripts/result-lib.sh
OUT=${VP_CHECK_OUT:-$(pwd)/out/check-host}
rm -rf "$OUT"
mkdir -p "$OUT"
fail=0
failed=()
step() { echo; echo "==== [${SECONDS} s] $*"; }
step_failed() { echo "step failed: $1"; failed+=("$1"); fail=1; }

step "build: module (W=1, sparse), vcpuperf-cat (-Werror), workloads"
if make module W=1 C=1 2>&1 | tee "$OUT/build.log" | grep -E 'warning:|error:' |
	grep -v 'Skipping BTF'; then
	step_failed "build warnings"
fi
make tool >>"$OUT/build.log" 2>&1 || step_failed "vcpuperf-cat build"
make -C tests/workload >>"$OUT/build.log" 2>&1 || step_failed "workload build"

step "style: checkpatch --strict"
scripts/checkpatch.sh || step_failed "checkpatch"

step "host tests: every suite of vp_host_suites (scripts/result-lib.sh)"
logs=()
for suite in "${vp_host_suites[@]}"; do
	read -r name file _ <<<"$suite"
	[ "$name" != prom ] || [ "${VP_CHECK_PROM:-0}" = 1 ] || continue
	python3 "$file" >"$OUT/$name.log" 2>&1 || step_failed "$name tests"
	logs+=("$OUT/$name.log")
done
for log in "${logs[@]}"; do echo "$(basename "$log"): $(result_line "$log")"; done

# Chosen host tests only (make check-host T=...): no fuzz.
if [ -z "${VP_TESTS:-}" ]; then
	step "fuzz: every harness, ${VP_FUZZ_SECONDS:-10} s each"
	VP_FUZZ_OUT=$OUT/fuzz scripts/fuzz.sh "${VP_FUZZ_SECONDS:-10}" >"$OUT/fuzz.log" 2>&1 ||
		step_failed "fuzz"
	tail -n 6 "$OUT/fuzz.log"
fi

npass=0
nfail=0
for log in "${logs[@]}"; do result_add "$(result_line "$log")"; done
echo
[ ${#failed[@]} -eq 0 ] || printf 'failed step: %s\n' "${failed[@]}"
echo "$npass passed, $nfail failed"
[ "$fail" -eq 0 ] && [ "$nfail" -eq 0 ]
