#!/bin/sh
# Runs inside the test VM (see scripts/demo.sh): a nested QEMU boots a
# Linux guest with two vCPUs; vcpuperf-cat samples its vCPU threads and
# prints rows (per vCPU, and per VM with --per-vm) and lifecycle events as
# JSONL.
#  - x86_64 (make demo): QEMU under TCG boots the Debian kernel; three
#    seconds of its vCPU threads (CPU <n>/TCG); this VM has no PMU, so the
#    hardware events say why they do not count;
#  - arm64 (make demo-arm64): QEMU with KVM on the arm64 bed boots the
#    guest of tests/qemu-guest, whose vCPU 0 runs a user-mode workload of
#    known length while vCPU 1 idles; the whole run of the guest, counted
#    on the bed's real PMU, guest and host apart.
set -eu

uuid=5a7c1f0e-3d2b-4c6a-9e8f-0b1a2c3d4e5f
if [ "$(uname -m)" = aarch64 ]; then
	insmod "$VP_MODULE"
	qemu-system-aarch64 -name guest=demo,debug-threads=on -uuid "$uuid" \
		-enable-kvm -M virt -cpu host -smp 2 -m 256 \
		-kernel "$VP_GUEST_DIR/vmlinuz" -initrd "$VP_GUEST_DIR/guest.cpio" \
		-append "console=ttyAMA0 panic=-1 rdinit=/init loglevel=4" \
		-display none -nodefaults -no-user-config -no-reboot \
		-serial "file:$VP_OUT/guest-console.log" &
	vcpu=KVM
	cat=$VP_CAT
	# Three PMU events and --per-vm: 6 counters per vCPU thread of 7.
	events=task-clock,instructions:G,instructions:Gu,instructions:H
else
	insmod ./vcpuperf.ko
	kernel=$(ls /boot/vmlinuz-*-amd64 | sort -V | tail -n1)
	qemu-system-x86_64 -name guest=demo,debug-threads=on -uuid "$uuid" \
		-accel tcg -smp 2 -m 256 \
		-kernel "$kernel" -append "console=ttyS0 quiet" -display none \
		-nodefaults -no-user-config -serial null &
	vcpu=TCG
	cat=tools/vcpuperf-cat
	events=task-clock,context-switches,page-faults,cycles,instructions
fi
qpid=$!
# QEMU names its vCPU threads once they start.
tries=0
until grep -qs "CPU 1/$vcpu" /proc/$qpid/task/*/comm; do
	tries=$((tries + 1))
	[ "$tries" -lt 200 ] || { echo "demo: no vCPU threads"; exit 1; }
	sleep 0.1
done
if [ "$vcpu" = KVM ]; then
	echo "demo: QEMU pid $qpid (KVM); vcpuperf-cat --qemu $qpid --per-vm --interval 200ms until the guest powers off"
	"$cat" --qemu "$qpid" --per-vm --interval 200ms --events "$events" |
		tee "$VP_OUT/demo.jsonl" &
	wait "$qpid" || true
	sleep 0.3
	pkill -INT -x vcpuperf-cat || true
	wait
	echo "demo: the guest said:"
	cat "$VP_OUT/guest-console.log"
else
	echo "demo: QEMU pid $qpid; vcpuperf-cat --qemu $qpid --per-vm --interval 500ms --duration 3s"
	"$cat" --qemu "$qpid" --per-vm --interval 500ms --duration 3s \
		--events "$events" | tee "$VP_OUT/demo.jsonl"
	kill "$qpid"
	wait "$qpid" 2>/dev/null || true
fi
rmmod vcpuperf
