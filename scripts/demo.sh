#!/bin/sh
# `make demo`: build, boot the test VM, start a real QEMU inside it with
# named vCPU threads, attach vcpuperf to them and print the JSONL; then a
# per-vCPU summary and the plot of the episode beside the JSONL.
#
# `make demo-arm64` (scripts/demo.sh --arm64): the same on the arm64 bed
# (scripts/arm64-bed.sh): Debian's arm64 kernel at EL2 with a real PMU and
# KVM, where QEMU runs a small Linux guest with -enable-kvm and the rows
# carry real guest and host instructions per vCPU.
set -eu

cd "$(dirname "$0")/.."
arch=x86_64
case "${1:-}" in
"") ;;
--arm64) arch=arm64 ;;
*) echo "usage: $0 [--arm64]" >&2; exit 2 ;;
esac
OUT=$(pwd)/out/demo
[ "$arch" = x86_64 ] || OUT=$(pwd)/out/demo-arm64
rm -rf "$OUT"
mkdir -p "$OUT"
make tool
if [ "$arch" = x86_64 ]; then
	KVER=${KVER:-$(make -s print-kver)}
	export KVER
	make module
	scripts/vm-run.sh --kver "$KVER" --timeout 600 --out "$OUT" -- sh scripts/demo-guest.sh
else
	eval "$(scripts/arm64-bed.sh)"
	build=$(pwd)/out/arm64-build
	cross="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
	scripts/stage-kmod.sh "$build/kmod"
	# shellcheck disable=SC2086
	make -C "$ARM64_KDIR" M="$build/kmod" $cross modules
	make -C tools O="$build/tool" CC=aarch64-linux-gnu-gcc LDFLAGS=-static
	make -C tests/qemu-guest O="$build/qemu-guest" BUSYBOX="$ARM64_BUSYBOX"
	cp "$ARM64_KERNEL" "$build/qemu-guest/vmlinuz"
	VP_MODULE=$build/kmod/vcpuperf.ko VP_CAT=$build/tool/vcpuperf-cat \
		VP_GUEST_DIR=$build/qemu-guest \
		scripts/vm-run.sh --arch arm64 --kernel "$ARM64_KERNEL" \
		--modules-dir "$ARM64_MODDIR" --busybox "$ARM64_BUSYBOX" \
		--root "$ARM64_ROOT" --timeout 600 --out "$OUT" -- sh scripts/demo-guest.sh
fi
echo
echo "demo: rows and lifecycle events are in $OUT/demo.jsonl"
echo
echo "demo: per-vCPU summary (tools/vcpuperf-plot --summary):"
tools/vcpuperf-plot "$OUT/demo.jsonl" --summary -o "$OUT/demo.png"
echo
echo "demo: the plot of the episode is $OUT/demo.png"
