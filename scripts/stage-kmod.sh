#!/bin/bash
# stage-kmod.sh DIR - mirror the module's sources and dkms.conf (its
# version) into DIR (symlinks), so that vcpuperf.ko can be built there
# against another kernel (make -C KDIR M=DIR modules) without its objects
# mixing with those built in the source tree against Debian's kernel.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$1
mkdir -p "$stage"
ln -sfn "$top/Kbuild" "$stage/Kbuild"
ln -sfn "$top/dkms.conf" "$stage/dkms.conf"
for d in include/uapi lib module; do
	mkdir -p "$stage/$d"
	find "$stage/$d" -maxdepth 1 -type l -delete
	for f in "$top/$d"/*.c "$top/$d"/*.h; do
		[ -e "$f" ] && ln -sfn "$f" "$stage/$d/"
	done
done
exit 0
