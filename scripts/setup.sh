#!/bin/sh
# Install every Debian package vcpuperf needs to build and test.
# Idempotent: packages already present are skipped by apt.
set -eu

PKGS="build-essential make gcc bc flex bison libelf-dev libssl-dev
linux-headers-amd64 linux-image-amd64 linux-perf
qemu-system-x86 busybox-static cpio kmod xz-utils sparse python3 procps
linux-source-6.1 util-linux clang-14 libclang-rt-14-dev"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "setup: need root to install:$missing" >&2
	exit 1
fi
echo "setup: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing
