#!/bin/bash
# bench-arm64.sh - the benchmark on the arm64 bed: every collector's cost
# in instructions and in VM exits, on vCPU threads that run guest code
# (make bench-arm64).
#
# Usage: scripts/bench-arm64.sh [--lab] [--smoke] [--out DIR]
#
#   (default)  8, 64 and 256 vCPU threads x 4 and 8 events x 10 and
#              100 ms (400 M to 15,000 M guest instructions a run:
#              bench/arm64.py WORK_M), every collector: two runs, each
#              its own boot with six passes (each collector started at
#              its own sixth of the scheduler tick), side by side (the
#              bed has one CPU, and icount makes its figures independent
#              of the host's load); 2 to 6 hours on a 2-core host
#              (a bed runs 180 to 400 M guest instructions a second,
#              with the host's load); results in
#              bench/results/arm64.{md,json}
#   --smoke    8x4x100ms and 64x8x10ms, one pass; bench/results/smoke-arm64
#   --lab      the lab's shape instead (make bench-lab-arm64): 16 and 64
#              VMs of 4 vCPU threads, each its own VMM, x 4 and 8 events
#              x 10 and 100 ms, recorded per VM and host-wide
#              (bench/arm64_lab.py); results in
#              bench/results/arm64-lab.{md,json}; two passes a boot;
#              with --smoke 16x4x4x100ms
#   --out DIR  write arm64.{md,json} to DIR (inside the repository)
#
# VP_BENCH_ONLY=64x8x10ms[,...] runs only those configurations: a run
# made in parts at one commit (each with its own --out DIR) is one report
# from bench/arm64_report.py given every part's raw runs, boot by boot.
# While developing, VP_BENCH_COLLECTORS=none,vcpuperf-kick[,...] only those
# collectors (and vcpuperf-MODE-nosched and vcpuperf-MODE-kvm,
# vcpuperf-cat --no-sched and --kvm-exits, which run only when named),
# VP_BENCH_PASSES=N N passes per boot,
# VP_BENCH_RUNS=N N boots; never for committed results.
#
# The bed (scripts/arm64-bed.sh, cached) is Debian's arm64 kernel at EL2
# in qemu-system-aarch64 -icount shift=0 on one emulated CPU: one
# instruction is one nanosecond, so CPU time is an instruction count.
# This script cross-builds the module, vcpuperf-cat, the test VMM, the
# userspace reader and the floor module for it, boots it once, runs
# bench/arm64.py there and writes the report (bench/arm64_report.py).
# The bed's kernel command line: psi=0 and cgroup_disable=memory stop two
# periodic works (bench/arm64.py quiet_bed()); nokaslr and norandmaps
# place the kernel and every process the same in both boots, so that a
# run's path through the kernel does not depend on where things landed.
# Fails only on real breakage, never on a figure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
smoke=""
out=""
lab=""
while [ $# -gt 0 ]; do
	case "$1" in
	--smoke) smoke=--smoke; shift ;;
	--lab) lab=1; shift ;;
	--out) [ $# -ge 2 ] || { echo "bench-arm64: --out needs a directory" >&2; exit 2; }
		out=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "bench-arm64: unknown option '$1'" >&2; exit 2 ;;
	esac
done
if [ -z "$out" ]; then
	if [ -n "$smoke" ]; then out=bench/results/smoke-arm64; else out=bench/results; fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
case "$out/" in
"$top"/*) ;;
*) echo "bench-arm64: --out $out: must be inside the repository (the bed sees only it)" >&2
	exit 2 ;;
esac
start=$(date +%s)
# What is measured: the tree as it is now, before the build.
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || dirty=true

eval "$("$top/scripts/arm64-bed.sh")"

build=$top/out/arm64-bench
mkdir -p "$build"
cross="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
echo "==== bench-arm64: build for $ARM64_KVER"
{
	"$top/scripts/stage-kmod.sh" "$build/kmod"
	mkdir -p "$build/floor"
	ln -sfn "$top/bench/floor/Kbuild" "$build/floor/Kbuild"
	ln -sfn "$top/bench/floor/vpfloor.c" "$build/floor/vpfloor.c"
	ln -sfn "$top/bench/vpmods.h" "$build/vpmods.h"
	# shellcheck disable=SC2086
	make -C "$ARM64_KDIR" M="$build/kmod" $cross modules
	# shellcheck disable=SC2086
	make -C "$ARM64_KDIR" M="$build/floor" $cross modules
	make -C "$top/tools" O="$build/tool" CC=aarch64-linux-gnu-gcc LDFLAGS=-static
	make -C "$top/tests/vmm" O="$build/vmm"
	make -C "$top/bench" O="$build/bench" CC=aarch64-linux-gnu-gcc LDFLAGS=-static \
		"$build/bench/ureader"
} >"$build/build.log" 2>&1 || { tail -n 30 "$build/build.log"; echo "bench-arm64: build failed" >&2; exit 1; }

# the lab: 64 VMMs and up to 64 perf stat processes at once
if [ -n "$lab" ]; then
	name=arm64-lab script=bench/arm64_lab.py mem=4096
else
	name=arm64 script=bench/arm64.py mem=2048
fi
export VP_MODULE=$build/kmod/vcpuperf.ko VP_CAT=$build/tool/vcpuperf-cat \
	VP_VMM=$build/vmm/vpvmm VP_UREADER=$build/bench/ureader \
	VP_FLOOR=$build/floor/vpfloor.ko
work=$out/.vm
rm -rf "$work"
if [ -n "$smoke" ]; then runs=1 passes=1 tmo=1800; else runs=2 passes=6 tmo=14400; fi
# The lab's configurations hold four times as many vCPU threads' work:
# two passes a boot (at 0 and half a tick).
[ -n "$lab" ] && [ -z "$smoke" ] && passes=2
passes=${VP_BENCH_PASSES:-$passes}
runs=${VP_BENCH_RUNS:-$runs}
echo "==== bench-arm64: $runs bed run(s)${smoke:+ (smoke)}"
pids=()
for i in $(seq 1 $runs); do
	mkdir -p "$work/$i"
	scripts/vm-run.sh --arch arm64 --kernel "$ARM64_KERNEL" --modules-dir "$ARM64_MODDIR" \
		--busybox "$ARM64_BUSYBOX" --root "$ARM64_ROOT" --mem $mem --smp 1 \
		--append "psi=0 cgroup_disable=memory nokaslr norandmaps" --timeout $tmo --out "$work/$i" \
		--log "$work/$i/console.log" -- \
		python3 $script $smoke --passes "$passes" --out /tmp/out >"$work/$i/vm-run.log" 2>&1 &
	pids+=($!)
done
rc=0
jsons=""
for i in $(seq 1 $runs); do
	wait "${pids[$((i - 1))]}" || rc=$?
	if [ ! -f "$work/$i/$name.json" ]; then
		echo "bench-arm64: run $i produced no results ($work/$i/console.log)" >&2
		exit 1
	fi
	jsons=${jsons:+$jsons,}$work/$i/$name.json
done
end=$(date +%s)
printf '{"script_seconds": %d, "commit": "%s", "dirty": %s, "qemu": "%s", "runs": "%s"}\n' \
	$((end - start)) "$commit" $dirty \
	"$(qemu-system-aarch64 --version | head -n 1)" \
	"$runs boot(s) side by side, $passes pass(es) each" >"$work/meta.json"
python3 bench/arm64_report.py "$jsons" "$work/meta.json" "$out" "$name"
for i in $(seq 1 $runs); do
	mv "$work/$i/console.log" "$out/$name-console-$i.log" 2>/dev/null || true
	mv "$work/$i/$name.json" "$out/$name-raw-$i.json"
done
rm -rf "$work"
echo "==== bench-arm64: results in $out/$name.md ($((end - start)) s)"
[ "$rc" -eq 0 ] || { echo "bench-arm64: FAILED (bed rc $rc, see problems in $out/$name.md)" >&2; exit 1; }
