#!/bin/sh
# Print the kernel version vcpuperf builds against by default, and with
# --kdir its build tree.  Run only from recipes and scripts, after
# scripts/setup.sh: it reads what is installed, so evaluating it earlier
# (when make parses the Makefile, say) would see a machine without the
# headers.
#
#   1. the running kernel, if it has a build tree (a lab host);
#   2. else the kernel Debian's linux-headers-amd64 points at (Debian 12's
#      own 6.1, even when other kernels of the test matrix are installed);
#   3. else the newest /lib/modules/*/build.
#
# A KVER (or KDIR) in the environment wins.  Exit status 1, with one line
# on stderr saying what to do, if there is no build tree at all.
set -eu

want=kver
case "${1-}" in
--kdir) want=kdir ;;
"") ;;
*) echo "usage: $0 [--kdir]" >&2; exit 2 ;;
esac

if [ -n "${KDIR-}" ] && [ "$want" = kdir ]; then
	echo "$KDIR"
	exit 0
fi

kver=${KVER-}
if [ -z "$kver" ] && [ -d "/lib/modules/$(uname -r)/build" ]; then
	kver=$(uname -r)
fi
if [ -z "$kver" ]; then
	kver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed -n 's/^linux-headers-\([^ ,]*\).*/\1/p')
fi
if [ -z "$kver" ]; then
	kver=$(ls -d /lib/modules/*/build 2>/dev/null |
		sed 's|^/lib/modules/||;s|/build$||' | sort -V | tail -n1)
fi
if [ -z "$kver" ]; then
	echo "no kernel build tree in /lib/modules: run scripts/setup.sh (installs linux-headers-amd64) or give KDIR=" >&2
	exit 1
fi
if [ "$want" = kdir ]; then
	echo "/lib/modules/$kver/build"
else
	echo "$kver"
fi
