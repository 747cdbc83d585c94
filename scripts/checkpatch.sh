#!/bin/sh
# Run the kernel's own scripts/checkpatch.pl --strict (from Debian's
# linux-source-6.1, unpacked once into the cache) over the sources.
# Kernel code gets no exceptions.  The userspace tool is exempt only from
# rules that cannot apply to userspace C (kernel integer types, PRId64
# "CamelCase", volatile sig_atomic_t, its own __printf definition, a
# digit table split across lines).
set -eu

cd "$(dirname "$0")/.."
cache=${VCPUPERF_CACHE:-$HOME/.cache/vcpuperf}
tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n1)
[ -n "$tarball" ] || { echo "checkpatch: no linux-source tarball: run scripts/setup.sh"; exit 1; }
top=$(basename "$tarball" .tar.xz)
dir=$cache/checkpatch/$top
if [ ! -x "$dir/$top/scripts/checkpatch.pl" ]; then
	mkdir -p "$dir"
	tar -C "$dir" -xJf "$tarball" "$top/scripts/checkpatch.pl" \
		"$top/scripts/spelling.txt" "$top/scripts/const_structs.checkpatch"
fi
cp="$dir/$top/scripts/checkpatch.pl --strict --no-tree --terse --show-types"

fail=0
# shellcheck disable=SC2086
$cp -f module/*.c module/*.h lib/*.c lib/*.h include/uapi/*.h tests/pmu/vp_testpmu.c \
	tests/kunit/*.c tests/kunit/*.h bench/floor/vpfloor.c \
	>"${TMPDIR:-/tmp}/checkpatch.$$" 2>&1 || true
# shellcheck disable=SC2086
$cp --ignore PREFER_KERNEL_TYPES,CAMELCASE,SPLIT_STRING,MISSING_SPACE,VOLATILE,PREFER_DEFINED_ATTRIBUTE_MACRO \
	-f tools/*.c tools/*.h tools/util/*.c tools/util/*.h tests/pmu/modprobe_honour.c tests/vmm/vpvmm.c tests/vmm/vpvmm_guest.h >>"${TMPDIR:-/tmp}/checkpatch.$$" 2>&1 || true
if grep -v '^total: 0 errors, 0 warnings, 0 checks' "${TMPDIR:-/tmp}/checkpatch.$$" |
	grep .; then
	fail=1
fi
rm -f "${TMPDIR:-/tmp}/checkpatch.$$"
if [ "$fail" -ne 0 ]; then
	echo "checkpatch: not clean"
	exit 1
fi
echo "checkpatch --strict: clean"
