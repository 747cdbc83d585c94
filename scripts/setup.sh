#!/bin/sh
# Install every Debian package vcpuperf needs, for `make demo` (profile
# demo), `make demo-arm64` (profile demo-arm64: demo's and the arm64
# bed's) or `make check` (profile check, the default: everything).
# Idempotent, and fast when everything is present (no apt-get update then).
#
#   scripts/setup.sh [demo|demo-arm64|check]
#
# Kernels of the test matrix (scripts/matrix.sh, scripts/dkms-test.sh):
#   Debian 12's own 6.1 (linux-image-amd64 / linux-headers-amd64: the default
#   build and boot kernel, see scripts/kver.sh), and the 6.12 of
#   bookworm-backports, installed by its versioned package names only: the
#   linux-*-amd64 metapackages stay on 6.1.  bookworm-backports is added with
#   the archive URI the machine's own sources use (scripts/debian-mirror.sh).
#
# Every refusal is one line on stderr that says what to do: not root, no
# Debian 12 apt source, a package no source offers (named), not enough
# space for the caches (where they go and how much they need).
set -eu

profile=${1:-check}

# The arm64 bed (scripts/arm64-bed.sh, arm64-check.sh): the emulator, the
# cross compiler and its C library; the arm64 kernel and root are
# downloaded into the cache (dpkg's arm64 architecture is added for that).
ARM64_PKGS="qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
DEMO_PKGS="build-essential make gcc kmod linux-headers-amd64 linux-image-amd64
qemu-system-x86 busybox-static cpio xz-utils procps util-linux
python3 python3-matplotlib"
CHECK_PKGS="$DEMO_PKGS bc flex bison libelf-dev libssl-dev linux-perf sparse
linux-source-6.1 clang-14 libclang-rt-14-dev dkms groff-base man-db
debootstrap curl git prometheus prometheus-node-exporter
$ARM64_PKGS"

# Space the caches under $VCPUPERF_CACHE need when built from nothing
# (measured: the initramfs images; the debug kernel's source and build, the
# sid chroot, the checkpatch tree, the fresh-test Debian root and the arm64
# bed's kernel and root).
DEMO_CACHE_MB=64
ARM64_CACHE_MB=1024
CHECK_CACHE_MB=13312

case "$profile" in
demo) PKGS=$DEMO_PKGS; cache_mb=$DEMO_CACHE_MB ;;
demo-arm64) PKGS="$DEMO_PKGS $ARM64_PKGS debootstrap curl"; cache_mb=$ARM64_CACHE_MB ;;
check) PKGS=$CHECK_PKGS; cache_mb=$CHECK_CACHE_MB ;;
*) echo "usage: $0 [demo|demo-arm64|check]" >&2; exit 2 ;;
esac

BPO_SUITE=bookworm-backports
BPO_LIST=/etc/apt/sources.list.d/vcpuperf-backports.sources
CACHE=${VCPUPERF_CACHE:-${HOME:-/tmp}/.cache/vcpuperf}

here=$(cd "$(dirname "$0")" && pwd)

say() { echo "setup: $*"; }
die() { echo "setup: $*" >&2; exit 1; }

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed'
}

# Is a backports 6.12 kernel (image and headers of the same version, the
# generic amd64 flavour) installed?
have_bpo_kernel() {
	for img in $(dpkg-query -W -f='${Package}\n' 'linux-image-6.12.*-amd64' 2>/dev/null); do
		k=${img#linux-image-}
		case "$k" in *-cloud-amd64 | *-rt-amd64) continue ;; esac
		installed "$img" && installed "linux-headers-$k" && return 0
	done
	return 1
}

need_root() {
	[ "$(id -u)" -eq 0 ] ||
		die "run as root (sudo make ...): needed to $*"
}

updated=""
apt_update() {
	[ -z "$updated" ] || return 0
	apt-get update -qq || die "apt-get update failed (see above): check the apt sources and the network or proxy"
	updated=1
}

# The packages of "$@" that no configured source offers.
no_candidate() {
	for p in "$@"; do
		c=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: //p')
		case "$c" in "" | "(none)") printf ' %s' "$p" ;; esac
	done
}

# Enough free space where the caches go?  Counts what is there already.
check_space() {
	d=$CACHE
	while [ ! -d "$d" ]; do d=$(dirname "$d"); done
	have=$(du -sm "$CACHE" 2>/dev/null | cut -f1 || true)
	need=$((cache_mb - ${have:-0}))
	[ "$need" -gt 0 ] || return 0
	free=$(df -Pm "$d" | awk 'NR == 2 { print $4 }')
	[ "$free" -ge "$need" ] ||
		die "not enough space for the caches in $CACHE: $profile needs ${cache_mb} MB there, $free MB free on $(df -P "$d" | awk 'NR == 2 { print $6 }'); free some or set VCPUPERF_CACHE to a directory with room"
}

export DEBIAN_FRONTEND=noninteractive

command -v apt-get >/dev/null || die "apt-get not found: vcpuperf's setup needs Debian 12"
check_space

# The backports suite (deb822, like /etc/apt/sources.list.d/debian.sources),
# from the archive this machine already uses.
mirror=$("$here/debian-mirror.sh") || exit 1
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
BPO_ENTRY="Types: deb
URIs: $mirror
Suites: $BPO_SUITE
Components: main"
[ ! -r "$keyring" ] || BPO_ENTRY="$BPO_ENTRY
Signed-By: $keyring"
if [ "$(cat "$BPO_LIST" 2>/dev/null)" != "$BPO_ENTRY" ]; then
	need_root "add $BPO_SUITE to apt's sources"
	say "adding $BPO_SUITE from $mirror ($BPO_LIST)"
	printf '%s\n' "$BPO_ENTRY" >"$BPO_LIST"
	apt_update
fi

# dpkg's arm64 architecture, for apt-get download of the arm64 bed's
# packages (never installed on this machine).
if [ "$profile" != demo ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
	need_root "add dpkg's arm64 architecture (the arm64 test bed's downloads)"
	say "adding dpkg's arm64 architecture (for the arm64 bed's downloads)"
	dpkg --add-architecture arm64
	updated=""
	apt_update
fi

missing=""
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	need_root "install:$missing"
	say "installing ($profile):$missing"
	apt_update
	# shellcheck disable=SC2086
	bad=$(no_candidate $missing)
	[ -z "$bad" ] || die "no apt source offers:$bad (Debian 12 main has them: check /etc/apt/sources.list*)"
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing ||
		die "apt-get install failed for:$missing (the reason is above)"
fi

if [ "$profile" = check ] && ! have_bpo_kernel; then
	need_root "install the $BPO_SUITE 6.12 kernel"
	apt_update
	# The versioned kernel the backports' linux-headers-amd64 points at.
	ver=$(apt-cache madison linux-headers-amd64 |
		awk -F' *[|] *' -v s="$BPO_SUITE/" 'index($3, s) && $2 ~ /^6\.12\./ { print $2; exit }')
	[ -n "$ver" ] || die "no 6.12 linux-headers-amd64 in $BPO_SUITE at $mirror: does that mirror carry $BPO_SUITE?"
	kver=$(apt-cache show "linux-headers-amd64=$ver" |
		sed -n 's/^Depends: linux-headers-\([^ ,]*\).*/\1/p' | head -n1)
	[ -n "$kver" ] || die "cannot resolve the $BPO_SUITE kernel version"
	say "installing the $BPO_SUITE kernel $kver"
	# pkg/suite (not -t, which would also upgrade the installed
	# linux-*-amd64 metapackages, linux-perf and linux-libc-dev to 6.12).
	apt-get install -y -qq --no-install-recommends \
		"linux-image-$kver/$BPO_SUITE" "linux-headers-$kver/$BPO_SUITE" ||
		die "apt-get install failed for: linux-image-$kver linux-headers-$kver (the reason is above)"
fi

# The default kernel must stay Debian 12's own.
case "$(dpkg-query -W -f='${Version}' linux-headers-amd64 2>/dev/null)" in
6.1.*) ;;
*) echo "setup: warning: linux-headers-amd64 is not Debian 12's 6.1 any more" \
	"(the default build kernel changed)" >&2 ;;
esac
