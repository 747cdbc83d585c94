#!/bin/bash
# arm64-check.sh - vcpuperf on a real PMU and a real KVM host: the arm64
# bed (make arm64-check, in make check).
#
# Usage: scripts/arm64-check.sh [--out DIR] [TEST_NAME...]
#
# Debian's own arm64 kernel (the 6.1 ABI of the host's default headers)
# boots at EL2 in qemu-system-aarch64 -M virt,virtualization=on
# -cpu max -icount shift=0: the armv8_pmuv3 driver with 7 counters and KVM
# in VHE mode, under emulation on this x86 machine.  This script
# cross-builds vcpuperf.ko against that kernel's headers (W=1, failing on a
# warning) and again with DKMS, vcpuperf-cat and the test VMM (tests/vmm)
# static, and the small guest a real QEMU boots on the bed's KVM
# (tests/qemu-guest), then
# runs tests/arm64/kvm.py in the bed twice: on one emulated CPU
# (exact per-thread instruction counts) and the self-read test on two.
# The bed's files come from scripts/arm64-bed.sh (cached).
#
#   --out DIR  results (default out/arm64): build.log, dkms.log,
#              console.log (one CPU), console-smp2.log, result.log
#              ("N passed, M failed")
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/result-lib.sh
. "$top/scripts/result-lib.sh"
out=$top/out/arm64
if [ "${1:-}" = --out ]; then
	[ $# -ge 2 ] || { echo "arm64-check: --out needs a directory" >&2; exit 2; }
	out=$2
	shift 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/console.log" "$out/console-smp2.log" "$out/result.log"
case "$out/" in
"$top"/*) ;;
*) echo "arm64-check: --out $out: must be inside the repository (the bed sees only it)" >&2
	exit 2 ;;
esac
t0=$(date +%s)

eval "$("$top/scripts/arm64-bed.sh")"

# -------------------------------------------------------------- builds ---
build=$top/out/arm64-build
mkdir -p "$build"
cross="ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-"
{
	"$top/scripts/stage-kmod.sh" "$build/kmod"
	# shellcheck disable=SC2086
	make -C "$ARM64_KDIR" M="$build/kmod" $cross W=1 modules
	make -C "$top/tools" O="$build/tool" CC=aarch64-linux-gnu-gcc LDFLAGS=-static
	make -C "$top/tests/vmm" O="$build/vmm"
	mkdir -p "$build/workload"
	aarch64-linux-gnu-gcc -O2 -Wall -Wextra -Werror -pthread -static \
		-o "$build/workload/workload" "$top/tests/workload/workload.c"
	make -C "$top/tests/qemu-guest" O="$build/qemu-guest" BUSYBOX="$ARM64_BUSYBOX"
	cp "$ARM64_KERNEL" "$build/qemu-guest/vmlinuz"
} >"$out/build.log" 2>&1 || { tail -n 30 "$out/build.log"; echo "arm64-check: build failed"; exit 1; }
if grep -E 'warning:|error:' "$out/build.log" | grep -v 'Skipping BTF'; then
	echo "arm64-check: the arm64 build has warnings ($out/build.log)"
	exit 1
fi

# DKMS as an arm64 lab host runs it (add, build for that kernel; here a
# cross build against the bed's headers), in a DKMS tree of its own: the
# module it builds is the one the first test loads.
dkms_build() {
	local d=$build/dkms name ver src
	name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$top/dkms.conf")
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
	src=$d/src/$name-$ver
	rm -rf "$d"
	mkdir -p "$src" "$d/tree"
	cp "$top/Kbuild" "$top/dkms.conf" "$src/"
	for sub in include/uapi lib module; do
		mkdir -p "$src/$sub"
		cp "$top/$sub"/*.[ch] "$src/$sub/"
	done
	# The MOK key DKMS signs with, made in the tree instead of /var/lib/dkms.
	ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		mok_signing_key=$d/mok.key mok_certificate=$d/mok.pub \
		dkms --sourcetree "$d/src" --dkmstree "$d/tree" add "$src" &&
	ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		mok_signing_key=$d/mok.key mok_certificate=$d/mok.pub \
		dkms --sourcetree "$d/src" --dkmstree "$d/tree" build "$name/$ver" \
		-k "$ARM64_KVER" -a aarch64 --kernelsourcedir "$ARM64_KDIR" &&
	cp "$d/tree/$name/$ver/$ARM64_KVER/aarch64/module/$name.ko" "$build/dkms-$name.ko"
}
dkms_build >"$out/dkms.log" 2>&1 ||
	{ tail -n 20 "$out/dkms.log"; echo "arm64-check: DKMS build failed"; exit 1; }
echo "arm64-check: built for $ARM64_KVER in $(($(date +%s) - t0)) s (DKMS: $(modinfo -F vermagic "$build/dkms-vcpuperf.ko"))"

export VP_MODULE=$build/kmod/vcpuperf.ko VP_CAT=$build/tool/vcpuperf-cat \
	VP_VMM=$build/vmm/vpvmm VP_GUEST_DIR=$build/qemu-guest \
	VP_WORKLOAD=$build/workload/workload \
	VP_DKMS_MODULE=$build/dkms-vcpuperf.ko
bed=(--arch arm64 --kernel "$ARM64_KERNEL" --modules-dir "$ARM64_MODDIR"
	--busybox "$ARM64_BUSYBOX" --root "$ARM64_ROOT" --mem 2048)

# ---------------------------------------------------------------- tests ---
# One CPU: every test but the self-read, which needs a vCPU on another
# CPU than the sampler's.
cd "$top"
rc=0
if [ $# -eq 0 ] || [ "$*" != vcpus_read_themselves ]; then
	names=()
	for n in "$@"; do [ "$n" = vcpus_read_themselves ] || names+=("$n"); done
	[ ${#names[@]} -gt 0 ] || names=(--all-but vcpus_read_themselves)
	scripts/vm-run.sh "${bed[@]}" --smp 1 --timeout 1200 --out "$out/vm" \
		--log "$out/console.log" -- python3 tests/arm64/kvm.py "${names[@]}" || rc=1
fi
if [ $# -eq 0 ] || [[ " $* " == *" vcpus_read_themselves "* ]]; then
	scripts/vm-run.sh "${bed[@]}" --smp 2 --timeout 600 --out "$out/vm2" \
		--log "$out/console-smp2.log" -- \
		python3 tests/arm64/kvm.py vcpus_read_themselves || rc=1
fi

npass=0
nfail=0
for log in "$out/console.log" "$out/console-smp2.log"; do
	[ -f "$log" ] || continue
	line=$(result_line "$log")
	if [ -z "$line" ]; then
		echo "arm64-check: no result line in $log"
		nfail=$((nfail + 1))
		continue
	fi
	result_add "$line"
done
echo "arm64-check: $(($(date +%s) - t0)) s"
echo "$npass passed, $nfail failed" | tee "$out/result.log"
[ "$rc" -eq 0 ] && [ "$nfail" -eq 0 ]
