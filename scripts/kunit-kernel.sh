#!/bin/bash
# kunit-kernel.sh - build (or reuse) the debug kernel the KUnit suite runs in.
#
# Usage: scripts/kunit-kernel.sh
#
# Prints the path of the bzImage on stdout (progress goes to stderr).
#
# The kernel is Debian's linux-source-6.1 (/usr/src/linux-source-6.1.tar.xz,
# see scripts/setup.sh) configured from `make tinyconfig` plus the fragment
# tests/kunit/debug.config, which is the only config source: after
# `make olddefconfig` every option of the fragment must have kept its value,
# or the build fails.  It is built out of tree in
#   ${VCPUPERF_CACHE:-$HOME/.cache/vcpuperf}/kunit-kernel/<key>/{src,build}
# where <key> hashes the linux-source package version, the fragment and this
# script; a finished build there is reused as is.  The build directory is a
# complete KDIR for out-of-tree modules (modules_prepare done, Module.symvers
# present):  make -C <key>/src O=<key>/build M=/path/to/module
# (or equivalently make -C <key>/build M=...).
#
# Environment: VCPUPERF_CACHE (cache root), KUNIT_JOBS (make -j, default 2).
set -euo pipefail

prog=kunit-kernel
log() { echo "$prog: $*" >&2; }
die() { echo "$prog: error: $*" >&2; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
self=$here/$(basename "$0")
frag=$top/tests/kunit/debug.config
pkg=linux-source-6.1
tarball=/usr/src/$pkg.tar.xz
jobs=${KUNIT_JOBS:-2}

[ -r "$frag" ] || die "config fragment $frag missing"
pkgver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) ||
	die "$pkg is not installed (run scripts/setup.sh)"
[ -r "$tarball" ] || die "$tarball missing (reinstall $pkg)"

key=$( { echo "$pkg $pkgver"; cat "$frag" "$self"; } | sha256sum | cut -c1-16)
root=${VCPUPERF_CACHE:-${HOME:-/tmp}/.cache/vcpuperf}/kunit-kernel
dir=$root/$key
src=$dir/src
build=$dir/build
bzimage=$build/arch/x86/boot/bzImage
mkdir -p "$root"

# One builder per key at a time; a second caller waits and then reuses.
exec 9>"$root/.$key.lock"
flock 9

if [ -f "$dir/.complete" ] && [ -f "$bzimage" ]; then
	log "reusing $dir"
	echo "$bzimage"
	exit 0
fi

# Anything left from an interrupted build is discarded.
rm -rf "$dir"
mkdir -p "$src" "$build"
buildlog=$dir/build.log
: >"$buildlog"
start=$(date +%s)

run() {
	if ! nice -n 19 "$@" >>"$buildlog" 2>&1; then
		tail -n 40 "$buildlog" >&2
		die "failed: $* (full log: $buildlog)"
	fi
}

log "extracting $pkg $pkgver into $src"
run tar -xaf "$tarball" -C "$src" --strip-components=1

log "configuring: tinyconfig + $(basename "$frag")"
run make -C "$src" O="$build" tinyconfig
run "$src/scripts/kconfig/merge_config.sh" -m -O "$build" "$build/.config" "$frag"
run make -C "$src" O="$build" olddefconfig

# Every option of the fragment must have survived olddefconfig.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) opt=${line%%=*}; want=${line#*=} ;;
	"# CONFIG_"*" is not set") opt=${line#\# }; opt=${opt%% *}; want=n ;;
	*) continue ;;
	esac
	got=$(sed -n "s/^$opt=//p" "$build/.config")
	[ -n "$got" ] || got=n
	if [ "$got" != "$want" ]; then
		log "config: $opt=$want requested but olddefconfig made it $got"
		bad=1
	fi
done <"$frag"
[ $bad -eq 0 ] || die "config fragment $frag not satisfiable (unmet dependencies above)"

log "building (make -j$jobs, log in $buildlog)"
run make -C "$src" O="$build" -j"$jobs" all
run make -C "$src" O="$build" -j"$jobs" modules_prepare
[ -f "$bzimage" ] || die "no bzImage after the build"
[ -f "$build/Module.symvers" ] || die "no Module.symvers after the build"
touch "$dir/.complete"
log "built in $(( $(date +%s) - start ))s: $bzimage"

# Older keys (previous fragments or script versions) are dropped.
for old in "$root"/*/; do
	old=${old%/}
	[ "$old" = "$dir" ] || [ ! -f "$old/.complete" ] || rm -rf "$old"
done
echo "$bzimage"
