#!/bin/sh
# Install every Debian package vcpuperf needs to build and test.
# Idempotent and fast when everything is present (no apt-get update then).
#
# Kernels of the test matrix (scripts/matrix.sh, scripts/dkms-test.sh):
#   Debian 12's own 6.1 (linux-image-amd64 / linux-headers-amd64: the default
#   build and boot kernel, see the Makefile), and the 6.12 of
#   bookworm-backports, installed by its versioned package names only: the
#   linux-*-amd64 metapackages stay on 6.1.
set -eu

PKGS="build-essential make gcc bc flex bison libelf-dev libssl-dev
linux-headers-amd64 linux-image-amd64 linux-perf
qemu-system-x86 busybox-static cpio kmod xz-utils sparse python3 procps
linux-source-6.1 util-linux clang-14 libclang-rt-14-dev dkms groff-base man-db
debootstrap curl"

BPO_SUITE=bookworm-backports
BPO_LIST=/etc/apt/sources.list.d/vcpuperf-backports.sources
BPO_ENTRY="Types: deb
URIs: http://deb.debian.org/debian
Suites: $BPO_SUITE
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"

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
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: need root to $*" >&2
		exit 1
	fi
}

updated=""
apt_update() {
	[ -z "$updated" ] || return 0
	apt-get update -qq
	updated=1
}

export DEBIAN_FRONTEND=noninteractive

# The backports suite (deb822, like /etc/apt/sources.list.d/debian.sources).
if [ "$(cat "$BPO_LIST" 2>/dev/null)" != "$BPO_ENTRY" ]; then
	need_root "add $BPO_SUITE to apt's sources"
	echo "setup: adding $BPO_SUITE ($BPO_LIST)"
	printf '%s\n' "$BPO_ENTRY" >"$BPO_LIST"
	apt_update
fi

missing=""
for p in $PKGS; do
	installed "$p" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	need_root "install:$missing"
	echo "setup: installing:$missing"
	apt_update
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing
fi

if ! have_bpo_kernel; then
	need_root "install the $BPO_SUITE 6.12 kernel"
	apt_update
	# The versioned kernel the backports' linux-headers-amd64 points at.
	ver=$(apt-cache madison linux-headers-amd64 |
		awk -F' *[|] *' -v s="$BPO_SUITE/" 'index($3, s) && $2 ~ /^6\.12\./ { print $2; exit }')
	[ -n "$ver" ] || { echo "setup: no 6.12 linux-headers-amd64 in $BPO_SUITE" >&2; exit 1; }
	kver=$(apt-cache show "linux-headers-amd64=$ver" |
		sed -n 's/^Depends: linux-headers-\([^ ,]*\).*/\1/p' | head -n1)
	[ -n "$kver" ] || { echo "setup: cannot resolve the $BPO_SUITE kernel version" >&2; exit 1; }
	echo "setup: installing the $BPO_SUITE kernel $kver"
	# pkg/suite (not -t, which would also upgrade the installed
	# linux-*-amd64 metapackages, linux-perf and linux-libc-dev to 6.12).
	apt-get install -y -qq --no-install-recommends \
		"linux-image-$kver/$BPO_SUITE" "linux-headers-$kver/$BPO_SUITE"
fi

# The default kernel must stay Debian 12's own.
case "$(dpkg-query -W -f='${Version}' linux-headers-amd64 2>/dev/null)" in
6.1.*) ;;
*) echo "setup: warning: linux-headers-amd64 is not Debian 12's 6.1 any more" \
	"(the default build kernel changed)" >&2 ;;
esac
