#!/bin/bash
# signed-vm-test.sh - boot the KUnit debug kernel (CONFIG_MODULE_SIG, the
# lockdown LSM) with vcpuperf.ko signed by the kernel's build key, and run
# one of the tests that need that:
#
#   lockdown      booted with lockdown=integrity, tests/signed/lockdown.py:
#                 the unsigned module is refused, the one signed with the
#                 build key loads, debugfs control is refused (EPERM) while
#                 status and stream stay readable, /dev/vcpuperf is
#                 root-only, vcpuperf-cat falls back to it by itself and
#                 its counts agree with /proc, rmmod drains a device
#                 reader, and the kernel log is clean.
#   secure-boot   the Secure Boot stand-in, booted with module.sig_enforce=1,
#                 tests/signed/secureboot.py: the unsigned vcpuperf.ko
#                 and one signed with a freshly generated key the kernel
#                 does not know are refused with EKEYREJECTED (and the
#                 kernel log says why); the one signed with the build key
#                 (in the built-in keyring as an enrolled MOK would be)
#                 loads untainted and counts.  Real UEFI Secure Boot with
#                 shim and MOK enrolment is not exercised.
#
# Usage: tests/harness/signed-vm-test.sh lockdown|secure-boot [--out DIR]
# Ends with an 'N passed, N failed' line (also in DIR/result.log); exits
# non-zero on any failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/result-lib.sh
. "$top/scripts/result-lib.sh"
what=${1:-}
case "$what" in
lockdown)
	append=lockdown=integrity
	test=tests/signed/lockdown.py
	;;
secure-boot)
	append=module.sig_enforce=1
	test=tests/signed/secureboot.py
	;;
*)
	echo "usage: $0 lockdown|secure-boot [--out DIR]" >&2
	exit 2
	;;
esac
shift
out=$top/out/$what
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
kmod=$top/out/$what-kmod
if ! bzimage=$(tests/harness/signed-kmod.sh "$kmod"); then
	result "0 passed, 1 failed"
	exit 1
fi

rc=0
VP_MODULE=$kmod/vcpuperf.ko VP_MODULE_UNSIGNED=$kmod/vcpuperf-unsigned.ko \
	VP_MODULE_OTHERKEY=$kmod/vcpuperf-otherkey.ko \
	scripts/vm-run.sh --kernel "$bzimage" --mem 2048 --timeout 900 \
	--append "$append" --out "$out/vm" -- python3 "$test" || rc=$?
line=$(result_line "$out/vm/console.log")
if [ -z "$line" ]; then
	result "0 passed, 1 failed"
	echo "$what test: no result from the VM (exit $rc): $out/vm/console.log" >&2
	exit 1
fi
result "$line"
[ "$rc" -eq 0 ] && [ "${line#* passed, }" = "0 failed" ]
