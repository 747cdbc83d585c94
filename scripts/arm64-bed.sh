#!/bin/bash
# arm64-bed.sh - the arm64 test bed's files, cached: Debian's own arm64
# kernel of the same 6.1 ABI as the host's default headers (image, modules
# with their modules.dep, headers wired to the host's kbuild tools so the
# module cross-builds), the static arm64 busybox of the bed's initramfs, and
# an arm64 Debian root (python3 for the tests, qemu-system-arm for a real
# QEMU on the bed's KVM, perf, kmod, procps).
#
# Usage: scripts/arm64-bed.sh        set up (or reuse); print ARM64_KVER=
#                                    ARM64_KERNEL= ARM64_MODDIR= ARM64_KDIR=
#                                    ARM64_BUSYBOX= ARM64_ROOT= lines for eval
#
# Nothing is installed on the host: the packages are downloaded with apt
# (scripts/setup.sh adds the arm64 architecture to dpkg for that) and
# unpacked with dpkg-deb into the cache.  The root is debootstrap's first
# stage (--foreign) with every package it downloaded unpacked, maintainer
# scripts not run: the bed runs programs from it (python3, qemu, perf), it
# is not booted as a system, and running the second stage under emulation
# took over 30 minutes here.
#
# Cache: ${VCPUPERF_CACHE:-$HOME/.cache/vcpuperf}/arm64/
#   kernel-<version>/  the kernel, keyed by its package version (the host's
#                      linux-kbuild-6.1 version, whose tools the headers
#                      use; the newest of the same ABI where the mirror
#                      has no arm64 build of that version)
#   root-<key>/        the root, keyed by the package list, the layout
#                      version below, the mirror and the Date: of
#                      bookworm's InRelease there (a point release makes a
#                      new root; an unreachable mirror reuses the newest)
# Cold: about a minute and 1 GB.  Needs root (chown in dpkg-deb, debootstrap).

prog=arm64-bed
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
cache=$VCPUPERF_CACHE/arm64
root_pkgs="python3,qemu-system-arm,linux-perf,kmod,procps"
# Bump when the cache's layout or the way it is made changes.
layout=1

[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, dpkg-deb ownership)"
dpkg --print-foreign-architectures | grep -qx arm64 ||
	die "dpkg has no arm64 architecture: run scripts/setup.sh"
mkdir -p "$cache"

# Unpack a .deb into a directory, keeping the directory symlinks of a
# merged /usr (dpkg-deb -x would replace /bin -> usr/bin by a directory).
unpack() {
	dpkg-deb --fsys-tarfile "$1" | tar -x --keep-directory-symlink -C "$2"
}

# --------------------------------------------------------------- kernel ---
# The host's default headers name the ABI (6.1.0-N); the arm64 image and
# headers of that ABI at the version of the host's kbuild tools.
abi=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
	sed -n 's/^linux-headers-\([0-9.]*-[0-9]*\)-amd64.*/\1/p')
[ -n "$abi" ] || die "linux-headers-amd64 is not installed: run scripts/setup.sh"
kbuild_ver=$(dpkg-query -W -f='${Version}' "linux-kbuild-${abi%%.0-*}" 2>/dev/null) ||
	die "linux-kbuild-${abi%%.0-*} is not installed: run scripts/setup.sh"
kver=$abi-arm64
# The arm64 image and headers at the kbuild tools' version; where the
# mirror does not (yet) have them at it (a security update published for
# amd64 first), the newest of the same ABI: the headers' tools are the
# host's kbuild anyway, and an ABI keeps its interfaces.
arm64_versions() {
	apt-cache madison "linux-$1-$kver:arm64" 2>/dev/null |
		awk -F'|' '{ gsub(/ /, "", $2); print $2 }'
}
kernel_ver=$kbuild_ver
if ! arm64_versions image | grep -qxF "$kbuild_ver" ||
	! arm64_versions headers | grep -qxF "$kbuild_ver"; then
	kernel_ver=$( (arm64_versions image; arm64_versions headers) |
		sort | uniq -d | sort -V | tail -n 1)
	[ -n "$kernel_ver" ] ||
		die "no linux-image/headers-$kver for arm64 in apt's sources (is bookworm-security in them?)"
	log "linux-image/headers-$kver: $kernel_ver for arm64 (the host's kbuild is $kbuild_ver)"
fi
kdir=$cache/kernel-$kernel_ver
exec 8>"$cache/.kernel.lock"
flock 8
if [ ! -f "$kdir/.complete" ]; then
	t0=$(date +%s)
	rm -rf "$kdir"
	mkdir -p "$kdir/debs" "$kdir/tree"
	log "downloading linux-image/headers-$kver $kernel_ver and busybox-static (arm64)"
	(cd "$kdir/debs" && apt-get download -q \
		"linux-image-$kver:arm64=$kernel_ver" \
		"linux-headers-$kver:arm64=$kernel_ver" \
		busybox-static:arm64) >"$kdir/apt.log" 2>&1 ||
		{ tail -n 5 "$kdir/apt.log" >&2; die "apt-get download failed (is bookworm-security in apt's sources?)"; }
	for d in "$kdir"/debs/*.deb; do unpack "$d" "$kdir/tree"; done
	rm -rf "$kdir/debs"
	# The headers' build tools are host programs: the host's own kbuild of
	# the same version (its Makefile already includes the -common tree the
	# host's amd64 headers installed).
	h=$kdir/tree/usr/src/linux-headers-$kver
	ln -sfn "/usr/lib/linux-kbuild-${abi%%.0-*}/scripts" "$h/scripts"
	ln -sfn "/usr/lib/linux-kbuild-${abi%%.0-*}/tools" "$h/tools"
	depmod -b "$kdir/tree" "$kver"
	touch "$kdir/.complete"
	log "kernel $kver ready in $(($(date +%s) - t0)) s ($kdir)"
fi
for old in "$cache"/kernel-*; do
	[ "$old" = "$kdir" ] || rm -rf "$old"
done
flock -u 8

# ----------------------------------------------------------------- root ---
mirror=$("$here/debian-mirror.sh") || exit 1
release_date=$(curl -fsS --max-time 20 "$mirror/dists/bookworm/InRelease" 2>/dev/null |
	sed -n 's/^Date: //p' | head -n1 || true)
if [ -n "$release_date" ]; then
	key=$(echo "$layout $mirror $release_date $root_pkgs" | sha256sum | cut -c1-16)
else
	key=$(ls -t "$cache"/root-*/.complete 2>/dev/null | head -n1 | xargs -r dirname |
		xargs -r basename | sed 's/^root-//' || true)
	[ -n "$key" ] || die "cannot reach $mirror and no root is cached"
	log "$mirror unreachable: reusing the cached root $key"
fi
root=$cache/root-$key
exec 9>"$cache/.root.lock"
flock 9
if [ ! -f "$root/.complete" ]; then
	t0=$(date +%s)
	command -v debootstrap >/dev/null || die "debootstrap missing (run scripts/setup.sh)"
	rm -rf "$root"
	mkdir -p "$root"
	log "debootstrap --arch=arm64 --foreign bookworm ($mirror, Release of $release_date) into $root"
	debootstrap --arch=arm64 --foreign --variant=minbase --include="$root_pkgs" \
		bookworm "$root" "$mirror" >"$cache/root-$key.log" 2>&1 ||
		{ tail -n 20 "$cache/root-$key.log" >&2; die "debootstrap failed (log: $cache/root-$key.log)"; }
	# Inside a container debootstrap makes /proc a symlink to the host's.
	if [ -L "$root/proc" ]; then
		rm "$root/proc"
		mkdir "$root/proc"
	fi
	for d in "$root"/var/cache/apt/archives/*.deb; do unpack "$d" "$root"; done
	rm -f "$root"/var/cache/apt/archives/*.deb
	# What the skipped maintainer scripts would have made and the tests use.
	cp "$root/usr/share/base-passwd/passwd.master" "$root/etc/passwd"
	cp "$root/usr/share/base-passwd/group.master" "$root/etc/group"
	touch "$root/.complete"
	log "root ready in $(($(date +%s) - t0)) s ($(du -sm "$root" | cut -f1) MB)"
fi
for old in "$cache"/root-*; do
	case "$old" in "$root" | "$root.log") ;; *) rm -rf "$old" ;; esac
done
flock -u 9

echo "ARM64_KVER=$kver"
echo "ARM64_KERNEL=$kdir/tree/boot/vmlinuz-$kver"
echo "ARM64_MODDIR=$kdir/tree/lib/modules/$kver"
echo "ARM64_KDIR=$kdir/tree/usr/src/linux-headers-$kver"
echo "ARM64_BUSYBOX=$kdir/tree/bin/busybox"
echo "ARM64_ROOT=$root"
