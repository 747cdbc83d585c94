#!/bin/sh
# `make demo`: build, boot the test VM, start a real QEMU inside it with
# named vCPU threads, attach vcpuperf to them and print the JSONL; then a
# per-vCPU summary and the plot of the episode beside the JSONL.
set -eu

cd "$(dirname "$0")/.."
KVER=${KVER:-$(make -s print-kver)}
export KVER
make module tool
OUT=$(pwd)/out/demo
rm -rf "$OUT"
mkdir -p "$OUT"
scripts/vm-run.sh --kver "$KVER" --timeout 600 --out "$OUT" -- sh scripts/demo-guest.sh
echo
echo "demo: rows and lifecycle events are in $OUT/demo.jsonl"
echo
echo "demo: per-vCPU summary (tools/vcpuperf-plot --summary):"
tools/vcpuperf-plot "$OUT/demo.jsonl" --summary -o "$OUT/demo.png"
echo
echo "demo: the plot of the episode is $OUT/demo.png"
