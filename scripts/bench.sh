#!/bin/sh
# bench.sh - vcpuperf benchmark: vcpuperf in each read mode (direct, kick,
# lazy) vs perf stat vs a userspace reader (with and without JSONL output)
# vs an in-kernel floor, in one QEMU/TCG VM boot.
#
# Usage: scripts/bench.sh [--smoke] [--out DIR]
#
#   (default)  full run: 8x4x100ms, 64x8x10ms, 256x8x10ms, 512x8x10ms
#              (TIDs x events x interval), 3 interleaved reps each;
#              results in bench/results/results.{md,json}
#   --smoke    8x4x100ms and 16x4x10ms, 1 rep, short runs (about a
#              minute of VM time);
#              results in bench/results/smoke/ so the full results stay
#   --out DIR  write results.{md,json} to DIR instead
#
# While developing, VP_BENCH_ONLY=512x8x10ms[,...] runs only those
# configurations (VP_BENCH_REPS=N reps); never for committed results.
#
# Builds the module and vcpuperf-cat (make module tool), the floor module
# (bench/floor, same KDIR) and bench's helpers, measures vcpuperf-cat's
# decode throughput on the host, boots the VM once and runs bench/bench.py
# in it.  Fails only on real breakage (build, a collector failing or
# producing nothing, a kernel warning), never on a figure.
set -eu
cd "$(dirname "$0")/.."
KVER=${KVER:-$(make -s print-kver)}
export KVER
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

smoke=""
out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) smoke=--smoke; shift ;;
	--out) [ $# -ge 2 ] || { echo "bench.sh: --out needs a directory" >&2; exit 2; }
		out=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "bench.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
if [ -z "$out" ]; then
	if [ -n "$smoke" ]; then out=bench/results/smoke; else out=bench/results; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# What is measured: the tree as it is now, before the build (a commit made
# while the benchmark runs is not what it measured).
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=true

# Same kernel as the top-level Makefile.
KDIR=${KDIR:-/lib/modules/$KVER/build}
[ -d "$KDIR" ] || { echo "bench.sh: no kernel build tree (KDIR)" >&2; exit 1; }

echo "==== bench: build (KDIR=$KDIR)"
nice make -s module tool KDIR="$KDIR"
nice make -s -C "$KDIR" M="$PWD/bench/floor" modules
nice make -s -C bench

work=$(mktemp -d "${TMPDIR:-/tmp}/vcpuperf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "==== bench: vcpuperf-cat decode throughput (host)"
if [ -n "$smoke" ]; then rows=200000; else rows=2000000; fi
nice python3 bench/decode_bench.py --rows $rows --out "$work/decode.json" >/dev/null

echo "==== bench: VM run${smoke:+ (smoke)}"
rc=0
# A soft lockup or hung task panics the guest (vm-run exits 125 at once,
# the trace on the console at loglevel 5) instead of idling to the timeout.
if [ -n "$smoke" ]; then tmo=900; else tmo=3600; fi
scripts/vm-run.sh --kver "$KVER" --timeout $tmo --out "$work/vm" \
	--append "loglevel=5 softlockup_panic=1 hung_task_panic=1" -- \
	python3 bench/bench.py $smoke --out /tmp/out || rc=$?
if [ "$rc" -ne 0 ] && [ -f "$work/vm/console.log" ]; then
	mkdir -p "$out/fail"
	cp "$work/vm/console.log" "$out/fail/console.log"
	echo "bench.sh: VM rc $rc; console log in $out/fail/console.log" >&2
fi
if [ ! -f "$work/vm/vm.json" ]; then
	echo "bench.sh: the VM run produced no results (rc $rc)" >&2
	exit 1
fi
end=$(date +%s)
printf '{"script_seconds": %d, "commit": "%s", "dirty": %s, "load_start": "%s", "load_end": "%s"}\n' \
	$((end - start)) "$commit" $dirty "$load_start" "$(cut -d' ' -f1-3 /proc/loadavg)" >"$work/meta.json"
python3 bench/report.py "$work/vm/vm.json" "$work/decode.json" "$out" "$work/meta.json"
echo "==== bench: results in $out/results.md ($((end - start)) s)"
[ "$rc" -eq 0 ] || { echo "bench.sh: FAILED (VM rc $rc, see problems in $out/results.md)" >&2; exit 1; }
