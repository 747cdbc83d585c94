#!/bin/bash
# fresh-test.sh - `make fresh-test`: the README's `make demo` the first time,
# on a minimal Debian 12 with only the README's prerequisites installed.
#
#   scripts/fresh-test.sh [--out DIR] [--timeout SEC]
#
# 1. A minimal Debian 12 root (`debootstrap --variant=minbase bookworm`
#    from the archive this machine's apt sources use), made once and kept
#    as a tarball in ${VCPUPERF_CACHE:-$HOME/.cache/vcpuperf}/fresh/, keyed
#    by the mirror, the suite, the variant and the layout version below.
# 2. Each run unpacks it into a new root (nothing of an earlier run is
#    left), with /proc, /sys and /dev mounted, the host's resolver and
#    apt's network settings (proxy, Check-Valid-Until) copied in, and the
#    host's /var/cache/apt/archives bind-mounted as the root's (downloads
#    are shared with the host; every install still runs).
# 3. In the root, as root: the README's prerequisite line (the line
#    starting `apt-get` under "The two commands", run as it is), then `git clone` of
#    this repository's HEAD (committed work only, as CI sees it) and
#    `make demo` in the clone.
# 4. Passes only if make demo exited 0 and printed JSONL rows (a tid, a
#    task_clock) for vCPU 0 and vCPU 1 of the nested QEMU.
#
# Output in DIR (default out/fresh): demo.log (everything make demo
# printed), prereq.log, result.log (one "N passed, N failed" line).
# Needs root (debootstrap, chroot, mounts).

prog=fresh-test
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
here=$top/scripts
out=$top/out/fresh
timeout_s=2400
# Bump when the way the base root is made changes.
layout=1
suite=bookworm
variant=minbase

die() { echo "$prog: $*" >&2; exit 1; }
log() { echo "$prog: $*"; }

while [ $# -gt 0 ]; do
	case "$1" in
	--out) [ $# -ge 2 ] || die "$1 needs an argument"; out=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || die "$1 needs an argument"; timeout_s=$2; shift 2 ;;
	*) die "usage: $0 [--out DIR] [--timeout SEC]" ;;
	esac
done

[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap, chroot and mounts need it)"
command -v debootstrap >/dev/null || die "debootstrap missing: run scripts/setup.sh"
mirror=$("$here/debian-mirror.sh") || exit 1

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
result=$out/result.log
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok: $*" | tee -a "$result"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*" | tee -a "$result"; }
finish() {
	echo "$pass passed, $fail failed" | tee -a "$result"
	[ "$fail" -eq 0 ]
	exit
}
: >"$result"

# The README's prerequisites: the one `apt-get` line of its "The two
# commands" section (the README is the single source of truth).
prereq=$(awk '/^## The two commands/ { s = 1; next } /^## / { s = 0 }
	s && /^apt-get / { sub(/ *#.*/, ""); print; exit }' "$top/README.md")
[ -n "$prereq" ] || die "README.md names no 'apt-get' prerequisite line under 'The two commands'"
log "README prerequisites: $prereq"

cache=$VCPUPERF_CACHE/fresh
mkdir -p "$cache"
key=$(echo "$layout $suite $variant $mirror" | sha256sum | cut -c1-16)
base=$cache/base-$key.tar
archives=/var/cache/apt/archives
mkdir -p "$archives/partial"

exec 9>"$cache/.lock"
flock 9

if [ ! -f "$base" ]; then
	log "debootstrap --variant=$variant $suite from $mirror (cached as $base)"
	stage=$(mktemp -d "$cache/.stage.XXXXXX")
	t0=$(date +%s)
	if ! debootstrap --variant="$variant" --cache-dir="$archives" \
		"$suite" "$stage" "$mirror" >"$out/debootstrap.log" 2>&1; then
		tail -n 20 "$out/debootstrap.log" >&2
		rm -rf "$stage"
		die "debootstrap failed (log: $out/debootstrap.log)"
	fi
	# The base as debootstrap leaves it, without its downloads.
	rm -f "$stage"/var/cache/apt/archives/*.deb
	chmod 755 "$stage"
	tar -C "$stage" -cf "$base.tmp" . && mv "$base.tmp" "$base"
	rm -rf "$stage"
	for old in "$cache"/base-*.tar; do [ "$old" = "$base" ] || rm -f "$old"; done
	log "base root made in $(($(date +%s) - t0)) s ($(du -m "$base" | cut -f1) MB)"
fi

root=$cache/root
mounts=()
cleanup() {
	local i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount -R "${mounts[$i]}" 2>/dev/null || umount -lR "${mounts[$i]}" 2>/dev/null || true
	done
	mounts=()
	# Keep a failed root for a look until the next run; drop a good one.
	if [ "${keep_root:-0}" = 0 ]; then
		rm -rf --one-file-system "$root"
	fi
}
trap cleanup EXIT
# A root left by an interrupted run may still have mounts.
if [ -d "$root" ]; then
	for m in $(awk -v r="$root/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r); do
		umount -lR "$m" 2>/dev/null || true
	done
	rm -rf --one-file-system "$root"
fi
mkdir -p "$root"
tar -C "$root" -xf "$base"
# A real root directory is world-readable (the stage was a mktemp -d).
chmod 755 "$root"

# The host's network, as the root's first apt-get needs it.
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
apt-config dump | grep -E '^Acquire::(https?|ftp)::Proxy|^Acquire::Check-Valid-Until|^Acquire::Check-Date' \
	>"$root/etc/apt/apt.conf.d/00host-network" || rm -f "$root/etc/apt/apt.conf.d/00host-network"
for v in http https; do
	eval "val=\${${v}_proxy-}"
	[ -z "$val" ] || echo "Acquire::$v::Proxy \"$val\";" >>"$root/etc/apt/apt.conf.d/00host-network"
done
# This repository's HEAD (what CI would clone), as a bundle the root's own
# git clones from; worktrees included.
git -C "$top" bundle create "$root/root/vcpuperf.bundle" HEAD 2>"$out/bundle.log" ||
	die "git bundle of $top failed"

mnt() { mount "$@"; mounts+=("${*: -1}"); }
mnt -t proc proc "$root/proc"
mnt --rbind /sys "$root/sys"
mount --make-rslave "$root/sys"
mnt --rbind /dev "$root/dev"
mount --make-rslave "$root/dev"
mnt --bind "$archives" "$root/var/cache/apt/archives"
# A real machine's /tmp and /run start empty.
mnt -t tmpfs tmpfs "$root/tmp"
mnt -t tmpfs tmpfs "$root/run"

in_root() {
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		/bin/sh -c "$1"
}

t0=$(date +%s)
log "in the fresh root: $prereq"
if in_root "export DEBIAN_FRONTEND=noninteractive; $prereq" >"$out/prereq.log" 2>&1; then
	ok "README prerequisites installed ($(($(date +%s) - t0)) s)"
else
	tail -n 20 "$out/prereq.log"
	bad "README prerequisites ($prereq): see $out/prereq.log"
	keep_root=1
	finish
fi
for c in git make; do
	in_root "command -v $c" >/dev/null || bad "the prerequisites did not bring $c"
done
# Nothing else of the project's packages may be there yet.
for p in gcc qemu-system-x86 linux-headers-amd64; do
	if in_root "dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -q 'ok installed'"; then
		bad "$p is installed before make demo ran (not a fresh machine)"
	fi
done

if ! in_root "git clone -q /root/vcpuperf.bundle /root/vcpuperf && rm /root/vcpuperf.bundle" >>"$out/prereq.log" 2>&1; then
	bad "git clone in the fresh root (see $out/prereq.log)"
	keep_root=1
	finish
fi

# A bad environment gets one line saying what to do, and changes nothing
# that matters: run scripts/setup.sh demo in the fresh root (nothing of the
# project's packages is installed yet) under each, and expect exit 1 and
# exactly one line on stderr matching the pattern.
#   bad_env NAME PATTERN SHELL-PREFIX [CLONE]
bad_env() {
	local name=$1 pattern=$2 prefix=$3 clone=${4:-/root/vcpuperf} err rc
	set +e
	in_root "cd $clone && $prefix scripts/setup.sh demo" \
		>"$out/badenv-$name.out" 2>"$out/badenv-$name.err"
	rc=$?
	set -e
	err=$(cat "$out/badenv-$name.err")
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$out/badenv-$name.err")" -eq 1 ] &&
		printf '%s\n' "$err" | grep -Eq "$pattern"; then
		ok "bad environment, $name: $err"
	else
		bad "bad environment, $name: exit $rc, stderr: $err"
	fi
}
# A user's own clone (root's home is not theirs to read).
in_root 'cp -a /root/vcpuperf /tmp/vcpuperf-user && chown -R 65534:65534 /tmp/vcpuperf-user'
bad_env not-root 'run as root' 'setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp' /tmp/vcpuperf-user
in_root 'mkdir -p /tmp/apt-none/parts /tmp/apt-pin &&
	printf "Dir::Etc::sourcelist \"/dev/null\";\nDir::Etc::sourceparts \"/tmp/apt-none/parts\";\n" >/tmp/apt-none.conf &&
	printf "Package: cpio\nPin: release *\nPin-Priority: -1\n" >/tmp/apt-pin/cpio &&
	printf "Dir::Etc::preferencesparts \"/tmp/apt-pin\";\n" >/tmp/apt-pin.conf'
bad_env no-debian-source 'no Debian 12 apt source: add' 'APT_CONFIG=/tmp/apt-none.conf'
bad_env package-unavailable 'no apt source offers: cpio' 'APT_CONFIG=/tmp/apt-pin.conf'
in_root 'mkdir -p /tmp/tiny && mount -t tmpfs -o size=1m tmpfs /tmp/tiny'
bad_env no-space 'not enough space for the caches in /tmp/tiny/c: demo needs [0-9]+ MB' 'VCPUPERF_CACHE=/tmp/tiny/c'
in_root 'umount /tmp/tiny'
for p in gcc qemu-system-x86 linux-headers-amd64; do
	if in_root "dpkg-query -W -f='\${Status}' $p 2>/dev/null | grep -q 'ok installed'"; then
		bad "a refused setup installed $p"
	fi
done
log "cloned $(git -C "$top" rev-parse --short HEAD); make demo (log: $out/demo.log)"

t1=$(date +%s)
set +e
timeout --foreground -k 10 "$timeout_s" \
	chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	/bin/sh -c 'cd /root/vcpuperf && make demo' </dev/null >"$out/demo.log" 2>&1
rc=$?
set -e
demo_s=$(($(date +%s) - t1))
if [ $rc -eq 0 ]; then
	ok "the first make demo in the fresh root exited 0 ($demo_s s)"
else
	tail -n 30 "$out/demo.log"
	bad "the first make demo in the fresh root exited $rc after $demo_s s (log: $out/demo.log)"
	keep_root=1
fi

# Rows for both vCPU threads of the nested QEMU, read from what the demo
# printed (the JSONL lines of its output).
if python3 - "$out/demo.log" <<'PY'; then
import json, sys
rows = {}
for line in open(sys.argv[1], errors="replace"):
    line = line.strip()
    if not line.startswith("{"):
        continue
    try:
        r = json.loads(line)
    except ValueError:
        continue
    if r.get("tid") and r.get("vcpu") is not None and r.get("task_clock") is not None:
        rows.setdefault(r["vcpu"], []).append(r)
print("fresh-test: JSONL rows per vCPU:",
      ", ".join("vcpu %s: %d" % (v, len(rows[v])) for v in sorted(rows)) or "none")
sys.exit(0 if 0 in rows and 1 in rows else 1)
PY
	ok "make demo printed JSONL rows for vCPU 0 and vCPU 1"
else
	bad "make demo did not print JSONL rows for both vCPU threads"
	keep_root=1
fi
# The demo ends with a per-vCPU summary and the plot beside its JSONL.
if grep -Eq '^vCPU 0 +[0-9]+ ' "$out/demo.log" &&
	in_root "test -s /root/vcpuperf/out/demo/demo.png"; then
	ok "make demo printed the per-vCPU summary and wrote out/demo/demo.png"
else
	bad "make demo printed no per-vCPU summary or wrote no out/demo/demo.png"
fi
log "fresh root total: $(($(date +%s) - t0)) s"
finish
