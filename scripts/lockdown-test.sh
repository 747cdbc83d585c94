#!/bin/bash
# lockdown-test.sh - vcpuperf under kernel lockdown: boot the KUnit debug
# kernel (CONFIG_SECURITY_LOCKDOWN_LSM, CONFIG_MODULE_SIG) with
# lockdown=integrity and run tests/integration/lockdown.py in it: the
# unsigned module is refused, the one signed with the kernel's build key
# loads, debugfs control is refused (EPERM) while status and stream stay
# readable, /dev/vcpuperf is root-only, vcpuperf-cat falls back to it by
# itself and its counts agree with /proc, rmmod drains a device reader,
# and the kernel log is clean.
#
# Usage: scripts/lockdown-test.sh [--out DIR]
# Ends with an 'N passed, N failed' line (also in DIR/result.log); exits
# non-zero on any failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/lockdown
if [ "${1:-}" = --out ]; then
	out=$2
	shift 2
fi
rm -rf "$out"
mkdir -p "$out"
cd "$top"

result() {
	echo "$1" | tee "$out/result.log"
}

make -s tool
make -s -C tests/workload
# The modules live in the source tree, which the guest sees (--out may not
# be under it).
kmod=$top/out/lockdown-kmod
if ! bzimage=$(scripts/signed-kmod.sh "$kmod"); then
	result "0 passed, 1 failed"
	exit 1
fi

rc=0
VP_MODULE=$kmod/vcpuperf.ko VP_MODULE_UNSIGNED=$kmod/vcpuperf-unsigned.ko \
	scripts/vm-run.sh --kernel "$bzimage" --mem 2048 --timeout 900 \
	--append lockdown=integrity --out "$out/vm" -- \
	python3 tests/integration/lockdown.py || rc=$?
line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$out/vm/console.log" | tail -n1 || true)
if [ -z "$line" ]; then
	result "0 passed, 1 failed"
	echo "lockdown-test: no result from the VM (exit $rc): $out/vm/console.log" >&2
	exit 1
fi
result "$line"
[ "$rc" -eq 0 ] && [ "${line#* passed, }" = "0 failed" ]
