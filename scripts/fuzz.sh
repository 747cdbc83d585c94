#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/fuzz.sh [SECONDS]
#
# Build the libFuzzer harnesses in fuzz/ (clang, ASan + UBSan, from the
# same lib/ and tools/ sources the module and vcpuperf-cat use), then for
# each harness:
#   1. replay every input under fuzz/regressions/<harness>/ (past crashes);
#   2. fuzz for SECONDS (default 45) with -max_total_time, starting from a
#      scratch copy of fuzz/corpus/<harness>/: the checked-in corpus is
#      never written to.
# Logs, scratch corpora and crash artifacts go to $VP_FUZZ_OUT (default
# out/fuzz/).  Exits non-zero if any harness crashed, leaked, hit UB or
# broke an invariant, printing the executions of each harness.
#
# To keep an interesting input found in a run, copy it from
# out/fuzz/<harness>.corpus/ into fuzz/corpus/<harness>/ by hand; a crash
# goes to fuzz/regressions/<harness>/ once fixed.
set -u

cd "$(dirname "$0")/.." || exit 2
secs=${1:-45}
case $secs in
'' | *[!0-9]*)
	echo "usage: $0 [SECONDS]" >&2
	exit 2
	;;
esac
OUT=${VP_FUZZ_OUT:-$(pwd)/out/fuzz}
HARNESSES="fuzz_cmd fuzz_event fuzz_decode fuzz_qemu"

echo "==== fuzz: build"
nice make -C fuzz || { echo "fuzz: build failed"; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"

# Options per harness.  -timeout catches hangs (a parse never takes 1 s);
# fuzz_cmd reaches past VCPUPERF_CMD_MAX; the decoder's own warnings on
# stderr are discarded (sanitizer reports and broken invariants are not).
opts() {
	case $1 in
	fuzz_cmd) echo "-max_len=17000" ;;
	fuzz_event) echo "-max_len=4096" ;;
	fuzz_qemu) echo "-max_len=4096" ;;
	fuzz_decode) echo "-max_len=16384 -close_fd_mask=2" ;;
	esac
}

# Executions from libFuzzer's final stats (-print_final_stats=1) or its
# "Done N runs" line.
execs() {
	n=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$1" |
	    tail -n1)
	[ -n "$n" ] || n=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$1" | tail -n1)
	echo "${n:-?}"
}

# fuzz_one HARNESS: its regressions, then SECONDS of fuzzing; what it says
# goes to $OUT/HARNESS.out, its summary line to $OUT/HARNESS.summary.
fuzz_one() {
	h=$1
	bin=fuzz/$h
	# shellcheck disable=SC2046
	set -- $(opts "$h")
	status=ok

	echo
	echo "==== $h: regressions"
	regs=$(find "fuzz/regressions/$h" -type f 2>/dev/null | sort)
	if [ -n "$regs" ]; then
		# shellcheck disable=SC2086
		if ! "$bin" "$@" -artifact_prefix="$OUT/$h-regression-" \
		     $regs >"$OUT/$h.regressions.log" 2>&1; then
			grep -E 'ERROR|runtime error|invariant broken|Running:' \
				"$OUT/$h.regressions.log" | tail -n 5
			echo "$h: a regression input fails again (log: $OUT/$h.regressions.log)"
			status=REGRESSION
		else
			echo "$(echo "$regs" | wc -l) input(s) pass"
		fi
	else
		echo "none"
	fi

	echo "==== $h: fuzzing for ${secs}s"
	scratch=$OUT/$h.corpus
	mkdir -p "$scratch"
	cp fuzz/corpus/"$h"/* "$scratch"/
	nice "$bin" "$@" -max_total_time="$secs" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$OUT/$h-" \
		"$scratch" >"$OUT/$h.log" 2>&1
	rc=$?
	n=$(execs "$OUT/$h.log")
	if [ "$rc" -ne 0 ]; then
		grep -E 'ERROR|runtime error|invariant broken|SUMMARY|Test unit written' \
			"$OUT/$h.log" | head -n 8
		echo "$h: FAILED (exit $rc, log: $OUT/$h.log)"
		status=FAILED
	else
		echo "$n executions"
	fi
	echo "$status" >"$OUT/$h.status"
	printf '%-12s %-10s %12s executions\n' "$h" "$status" "$n" \
		>"$OUT/$h.summary"
}

# Each harness is one process on one CPU: they run as many at a time as
# the host has CPUs (a harness's executions do not depend on the others),
# and report in the order above.
ncpu=$(nproc 2>/dev/null || echo 1)
running=0
for h in $HARNESSES; do
	fuzz_one "$h" >"$OUT/$h.out" 2>&1 &
	running=$((running + 1))
	if [ "$running" -ge "$ncpu" ]; then
		wait
		running=0
	fi
done
wait

fail=0
summary=""
for h in $HARNESSES; do
	cat "$OUT/$h.out"
	line=$(cat "$OUT/$h.summary" 2>/dev/null ||
	       printf '%-12s %-10s %12s executions' "$h" "NO-RESULT" "?")
	[ "$(cat "$OUT/$h.status" 2>/dev/null)" = ok ] || fail=1
	summary="$summary$line
"
done

echo
echo "==== fuzz summary (${secs}s per harness; logs in $OUT)"
printf '%s' "$summary"
if [ "$fail" -ne 0 ]; then
	echo "fuzz: FAILED"
	exit 1
fi
echo "fuzz: ok"
