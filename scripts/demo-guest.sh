#!/bin/sh
# Runs inside the test VM (see scripts/demo.sh): a nested QEMU boots the
# Debian kernel with two vCPUs; vcpuperf-cat samples its vCPU threads for
# three seconds and prints rows (per vCPU, and per VM with --per-vm) and
# lifecycle events as JSONL.
set -eu

insmod ./vcpuperf.ko
kernel=$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -n1)
qemu-system-x86_64 -name guest=demo,debug-threads=on \
	-uuid 5a7c1f0e-3d2b-4c6a-9e8f-0b1a2c3d4e5f -accel tcg -smp 2 -m 256 \
	-kernel "$kernel" -append "console=ttyS0 quiet" -display none \
	-nodefaults -no-user-config -serial null &
qpid=$!
# QEMU names its vCPU threads once they start.
tries=0
until grep -qs 'CPU 1/TCG' /proc/$qpid/task/*/comm; do
	tries=$((tries + 1))
	[ "$tries" -lt 200 ] || { echo "demo: no vCPU threads"; exit 1; }
	sleep 0.1
done
echo "demo: QEMU pid $qpid; vcpuperf-cat --qemu $qpid --per-vm --interval 500ms --duration 3s"
tools/vcpuperf-cat --qemu "$qpid" --per-vm --interval 500ms --duration 3s \
	--events task-clock,context-switches,page-faults,cycles,instructions \
	| tee "$VP_OUT/demo.jsonl"
kill "$qpid"
wait "$qpid" 2>/dev/null || true
rmmod vcpuperf
