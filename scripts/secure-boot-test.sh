#!/bin/bash
# secure-boot-test.sh - the Secure Boot stand-in: boot the KUnit debug
# kernel (CONFIG_MODULE_SIG, its build key in the built-in keyring as an
# enrolled MOK would be) with module.sig_enforce=1 and run
# tests/integration/secureboot.py in it: the unsigned vcpuperf.ko and one
# signed with a freshly generated key the kernel does not know are refused
# with EKEYREJECTED (and the kernel log says why); the one signed with the
# build key loads untainted and counts.  Real UEFI Secure Boot with shim
# and MOK enrolment is not exercised.
#
# Usage: scripts/secure-boot-test.sh [--out DIR]
# Ends with an 'N passed, N failed' line (also in DIR/result.log); exits
# non-zero on any failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/out/secure-boot
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
kmod=$top/out/secure-boot-kmod
if ! bzimage=$(scripts/signed-kmod.sh "$kmod"); then
	result "0 passed, 1 failed"
	exit 1
fi

rc=0
VP_MODULE=$kmod/vcpuperf.ko VP_MODULE_UNSIGNED=$kmod/vcpuperf-unsigned.ko \
	VP_MODULE_OTHERKEY=$kmod/vcpuperf-otherkey.ko \
	scripts/vm-run.sh --kernel "$bzimage" --mem 2048 --timeout 900 \
	--append module.sig_enforce=1 --out "$out/vm" -- \
	python3 tests/integration/secureboot.py || rc=$?
line=$(grep -aE '^[0-9]+ passed, [0-9]+ failed' "$out/vm/console.log" | tail -n1 || true)
if [ -z "$line" ]; then
	result "0 passed, 1 failed"
	echo "secure-boot-test: no result from the VM (exit $rc): $out/vm/console.log" >&2
	exit 1
fi
result "$line"
[ "$rc" -eq 0 ] && [ "${line#* passed, }" = "0 failed" ]
