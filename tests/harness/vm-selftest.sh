#!/bin/sh
# vm-selftest.sh - smoke test for scripts/vm-run.sh: boots the guest twice,
# checks that a command runs (kernel, vCPUs, debugfs visible) and that the
# guest command's exit status is propagated.  Prints PASS/FAIL; exit 0 on PASS.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
vmrun=$top/scripts/vm-run.sh
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vm-selftest.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0

check() { # name expected actual
	if [ "$2" = "$3" ]; then
		echo "vm-selftest: $1: ok"
	else
		echo "vm-selftest: $1: FAILED (expected $2, got $3)"
		fail=1
	fi
}

rc=0
"$vmrun" --out "$tmp/a" -- \
	'uname -r; cat /proc/cpuinfo | grep -c processor; ls /sys/kernel/debug | head' \
	</dev/null >"$tmp/a.out" 2>&1 || rc=$?
cat "$tmp/a.out"
check "boot+command exit status" 0 "$rc"
if grep -qx 'tracing' "$tmp/a.out" || grep -qx 'bdi' "$tmp/a.out"; then
	check "debugfs listed" yes yes
else
	check "debugfs listed" yes no
fi
check "vCPU count" 2 "$(grep -x '[0-9][0-9]*' "$tmp/a.out" | head -n 1)"

rc=0
"$vmrun" --out "$tmp/b" -- 'exit 3' </dev/null || rc=$?
check "exit status propagation" 3 "$rc"

if [ "$fail" -eq 0 ]; then
	echo PASS
else
	echo FAIL
	exit 1
fi
