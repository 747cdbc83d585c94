#!/bin/bash
# The test command behind `make check`: build everything, run the host
# tests, then boot the test VM and run the integration tests in it.
# Exits non-zero if anything fails.
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib.sh
. scripts/lib.sh
KVER=${KVER:-$(make -s print-kver)}
export KVER
OUT=${VP_CHECK_OUT:-$(pwd)/out/check}
rm -rf "$OUT"
mkdir -p "$OUT"
fail=0
# The logs whose "N passed, M failed" lines the closing line sums: each
# step that runs a suite adds its own (counted LOG), so that a suite is
# added in one place, its step.
result_logs=()
counted() {
	result_logs+=("$1")
}

# The two expensive things that are cached outside the repository (the
# debug kernel, ~9 CPU-minutes cold, and sid's chroot, ~3 minutes mostly of
# downloading) are prepared in the background from the start, so that on a
# cold machine they overlap with the steps that do not need them; the steps
# that do need them wait on the same cache lock and then reuse the result.
# Warm, both return at once.
scripts/kunit-kernel.sh >"$OUT/prefetch-kernel.log" 2>&1 &
prefetch_kernel=$!
if [ "${VP_MATRIX_SID:-1}" != 0 ]; then
	tests/harness/sid-kernel.sh env >"$OUT/prefetch-sid.log" 2>&1 &
fi
scripts/arm64-bed.sh >"$OUT/prefetch-arm64.log" 2>&1 &

step "build: module (W=1, sparse) and vcpuperf-cat"
make module W=1 C=1 2>&1 | tee "$OUT/build.log"
if grep -E 'warning:|error:' "$OUT/build.log" | grep -v 'Skipping BTF'; then
	echo "build has warnings"
	exit 1
fi
make tool
make -C tests/workload
make -C tests/pmu
# The test PMU for the integration tests (tests/pmu; never installed).
tests/harness/testpmu.sh "/lib/modules/$KVER/build" tests/pmu W=1 C=1

# The arm64 bed runs one emulated CPU on one host thread, on a virtual
# clock (-icount): what it measures does not depend on the host's load.
# Its three steps (make arm64-check and the smokes of both arm64
# benchmarks, about 10 minutes of one host CPU) run one after the other in
# the background, beside the steps up to the matrix, whose VMs do not
# enforce timing either (the fuzzers and builds take one host CPU at a
# time); the results are read back before the matrix.  Each step's exit
# status goes to a file named after it; one that fails (errexit is off in
# here) neither ends the others nor the run.
arm64_steps() {
	set +e
	scripts/arm64-check.sh --out "$OUT/arm64" >"$OUT/arm64-check.log" 2>&1
	echo $? >"$OUT/arm64-check.rc"
	scripts/bench-arm64.sh --smoke --out "$OUT/bench-arm64" \
		>"$OUT/bench-arm64.log" 2>&1
	echo $? >"$OUT/bench-arm64.rc"
	scripts/bench-arm64.sh --lab --smoke --out "$OUT/bench-lab-arm64" \
		>"$OUT/bench-lab-arm64.log" 2>&1
	echo $? >"$OUT/bench-lab-arm64.rc"
}
step "arm64 bed: make arm64-check and both arm64 benchmarks' smokes (in the background until the matrix)"
arm64_steps &
arm64_pid=$!

step "fresh machine: the first make demo in a minimal Debian 12 root (make fresh-test)"
scripts/fresh-test.sh --out "$OUT/fresh" || step_failed "fresh-test"
counted "$OUT/fresh/result.log"

step "style: checkpatch --strict"
scripts/checkpatch.sh || step_failed "checkpatch"

for suite in "${vp_host_suites[@]}"; do
	read -r name file what <<<"$suite"
	step "host tests: $what"
	python3 "$file" 2>&1 | tee "$OUT/$name.log" || step_failed "host $name tests"
	counted "$OUT/$name.log"
done

step "DKMS: add/build/install/vermagic/remove on every matrix kernel"
scripts/dkms-test.sh --out "$OUT/dkms" || step_failed "dkms"

step "install: make install/uninstall on every matrix kernel, checked in the VM booted on each"
scripts/install-test.sh --out "$OUT/install" || step_failed "install"
counted "$OUT/install/result.log"

step "fuzz: libFuzzer (ASan+UBSan) on the parser, event names and decoder"
scripts/fuzz.sh "${VP_FUZZ_SECONDS:-45}" 2>&1 | tee "$OUT/fuzz.log" || step_failed "fuzz"

step "arm64 bed: the results (make arm64-check; smokes of make bench-arm64 and bench-lab-arm64, no figure fails them)"
wait "$arm64_pid" || true
# arm64_result NAME WHAT: a background step's exit status, read back.
arm64_result() {
	local rc
	rc=$(cat "$OUT/$1.rc" 2>/dev/null || echo "no exit status")
	echo "$2: exit $rc (log: $OUT/$1.log)"
	[ "$rc" = 0 ] || step_failed "$2"
}
grep -E '^(not )?ok [0-9]+ - |^#   |passed, |^arm64-check' "$OUT/arm64-check.log" || true
arm64_result arm64-check "arm64-check"
counted "$OUT/arm64/result.log"
tail -n 5 "$OUT/bench-arm64.log" || true
arm64_result bench-arm64 "bench-arm64 smoke"
tail -n 5 "$OUT/bench-lab-arm64.log" || true
arm64_result bench-lab-arm64 "bench-lab-arm64 smoke"

step "matrix: W=1 build on every installed kernel, integration tests on 6.12"
scripts/matrix.sh --quick --out "$OUT/matrix" || step_failed "matrix"
counted "$OUT/matrix/result.log"

step "VM: integration tests (Debian kernel ${KVER:-newest installed}, TCG)"
# vm_suite DIR: the integration suite in a VM of 2 multi-threaded TCG
# vCPUs, its console in DIR/console.log.
vm_suite() {
	scripts/vm-run.sh --kver "$KVER" --timeout 1200 --idle "$VP_IDLE_S" --out "$1" -- \
		python3 tests/integration/run.py
}
# QEMU 7.2's multi-threaded TCG can livelock the guest while the kernel
# patches a static key (docs/testing.md): the suite then ends at vm-run's
# time limit with no result line.  Such a run, if no test had failed in
# it, is made once more; its console stays in $OUT/vm-hung.
if ! vm_suite "$OUT/vm"; then
	if [ -n "$(result_line "$OUT/vm/console.log")" ] ||
		grep -qaE '^not ok ' "$OUT/vm/console.log"; then
		step_failed "VM integration"
	else
		echo "VM integration: no result line (the guest hung, see $OUT/vm-hung/console.log); once more"
		rm -rf "$OUT/vm-hung"
		mv "$OUT/vm" "$OUT/vm-hung"
		vm_suite "$OUT/vm" || step_failed "VM integration"
	fi
fi
counted "$OUT/vm/console.log"

step "bench: smoke of make bench (about a minute of VM time; no figure fails it)"
scripts/bench.sh --smoke || step_failed "bench smoke"

step "KUnit: the suite in a KASAN/lockdep/kmemleak kernel (built once, cached)"
wait "$prefetch_kernel" || true	# a failed build is reported by kunit.sh
scripts/kunit.sh --out "$OUT/kunit" || step_failed "KUnit"
python3 - "$OUT/kunit/results.json" >"$OUT/kunit.log" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
cases = [c for s in d.get("sub_groups", []) for c in s.get("test_cases", [])]
ok = sum(c["status"] in ("PASS", "SKIP") for c in cases)
print("%d passed, %d failed" % (ok, len(cases) - ok))
PY
cat "$OUT/kunit.log"
counted "$OUT/kunit.log"

step "lockdown: /dev/vcpuperf and the tool's fallback, booted with lockdown=integrity"
tests/harness/signed-vm-test.sh lockdown --out "$OUT/lockdown" || step_failed "lockdown"
counted "$OUT/lockdown/result.log"

step "Secure Boot stand-in: module.sig_enforce=1, unsigned / build key / unknown key"
tests/harness/signed-vm-test.sh secure-boot --out "$OUT/secure-boot" || step_failed "secure boot"
counted "$OUT/secure-boot/result.log"

step "VM: integration tests again on the debug kernel"
scripts/check-vm.sh --profile debug --out "$OUT/debug-vm" || step_failed "debug-kernel integration"
counted "$OUT/debug-vm/console.log"

step "stress: short form in the debug kernel (churn, rmmod, overflow, QEMU killed, control fuzz)"
scripts/stress.sh --out "$OUT/stress" || step_failed "stress"
counted "$OUT/stress/console.log"

# One closing line for the whole run, summed over the suites.
npass=0
nfail=0
for log in "${result_logs[@]}"; do
	line=$(result_line "$log")
	if [ -z "$line" ]; then
		echo "no result line in $log"
		fail=1
		continue
	fi
	result_add "$line"
done
echo
# Every failed test by name and the first line of its reason (the TAP
# comment that follows it), so that the tail of the output says which and
# why.
if grep -rqaE --include='*.log' '^(not ok|FAIL:|ERROR:) ' "$OUT"; then
	echo "failed tests (log: line, then its reason):"
	grep -rlaE --include='*.log' '^(not ok|FAIL:|ERROR:) ' "$OUT" | sort |
		while read -r log; do
			awk -v f="${log#"$OUT"/}" '
				{ sub(/\r$/, "") }
				why { if (/^#/) print "    " substr($0, 1, 300); why = 0 }
				/^(not ok|FAIL:|ERROR:) / {
					print f ":" substr($0, 1, 300); why = 1
				}' "$log"
		done | head -n 60
fi
if [ "${#failed_steps[@]}" -ne 0 ]; then
	printf 'failed step: %s\n' "${failed_steps[@]}"
fi
echo "$npass passed, $nfail failed"
if [ "$fail" -ne 0 ] || [ "$nfail" -ne 0 ]; then
	echo "make check: FAILED"
	exit 1
fi
echo "make check: all passed"
