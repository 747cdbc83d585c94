#!/bin/bash
# vm-run.sh - run a command inside a throw-away QEMU/TCG guest that boots a
# Debian kernel and uses the host's root filesystem (read-only, virtio-9p).
#
# Usage:
#   scripts/vm-run.sh [--kver VER] [--kernel PATH [--modules-dir DIR]]
#                     [--arch arm64 --root DIR --busybox FILE]
#                     [--smp N] [--tcg-single] [--mem MB] [--timeout SEC]
#                     [--out DIR]
#                     [--append 'KERNEL ARGS'] [--log FILE] [--keep-cache]
#                     -- COMMAND [ARGS...]
#
#   --kver VER         boot /boot/vmlinuz-VER with modules from /lib/modules/VER
#                      (default: the kernel linux-image-amd64 depends on, else
#                      the newest /boot/vmlinuz-*-amd64 that has a
#                      /lib/modules/<ver> directory)
#   --kernel PATH      boot this bzImage instead (custom kernel)
#   --modules-dir DIR  module tree for --kernel (the /lib/modules/<ver> dir);
#                      optional if virtio-pci/9p are built in
#   --smp N            guest vCPUs (default 2)
#   --tcg-single       run every guest vCPU in one host thread (TCG
#                      thread=single) instead of one thread per vCPU
#   --mem MB           guest memory (default 2048)
#   --timeout SEC      kill qemu after SEC seconds (default 600) -> exit 124
#   --idle SEC         kill qemu when the console log has not grown for SEC
#                      seconds (a hung guest; backtraces asked for first,
#                      as before a timeout) -> exit 124
#   --out DIR          host dir shared writable at /tmp/out in the guest
#                      (default: fresh mktemp -d; its path is printed)
#   --append ARGS      extra kernel command line
#   --log FILE         console log (default $OUT/console.log)
#   --arch arm64       the arm64 bed (scripts/arm64-bed.sh): qemu-system-aarch64
#                      -M virt,virtualization=on,gic-version=3 -cpu max
#                      -icount shift=0, the kernel at EL2 with a real PMU
#                      driver and KVM (VHE); --kernel and --modules-dir name
#                      the arm64 kernel, --root the arm64 root shared as /,
#                      --busybox its static busybox; --smp defaults to 1
#                      (exact per-thread instruction counts: QEMU counts one
#                      instruction stream for all emulated CPUs)
#   --root DIR         the guest's root filesystem (default: the host's /);
#                      the working directory is then shared on its own
#   --busybox FILE     the initramfs's static busybox (default: the host's)
#
# COMMAND: with exactly one argument it is a shell script string
# (`vm-run.sh -- 'uname -r; exit 3'`); with several arguments they are quoted
# individually and run as one command (`vm-run.sh -- ls -l "a b"`).  Either
# way it is run by the guest's /bin/sh -c (the host's dash), with stdin
# /dev/null, stdout/stderr on the serial console, in the host's $PWD, with
# HOME=/tmp, VP_OUT=/tmp/out, and every VP_* variable of the host environment.
#
# Guest filesystem: host / read-only (9p, cache=loose); fresh proc, sysfs,
# devtmpfs+devpts, /dev/shm, debugfs, tracefs; tmpfs on /tmp, /run, /var/tmp;
# --out at /tmp/out (9p, writable, uncached).
#
# Exit status: the command's exit status; 124 on timeout; 125 if the guest
# never reported a status (crash/panic/boot failure); 2 on usage errors.
#
# The initramfs (busybox-static + the needed virtio/9p modules) is cached in
# ${VCPUPERF_CACHE:-$HOME/.cache/vcpuperf}/initramfs/ keyed by kernel version
# and a hash of this script and the module tree's modules.dep/builtin.
set -eu

prog=vm-run
die() { echo "$prog: $*" >&2; exit 2; }
log() { echo "$prog: $*" >&2; }

usage() {
	sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"
}

kver=""
kernel=""
moddir=""
arch=x86_64
rootdir=/
busybox=""
smp=""
accel=tcg
mem=2048
timeout_s=600
idle_s=""
out=""
append=""
logfile=""

while [ $# -gt 0 ]; do
	case "$1" in
	--kver) [ $# -ge 2 ] || die "$1 needs an argument"; kver=$2; shift 2 ;;
	--kernel) [ $# -ge 2 ] || die "$1 needs an argument"; kernel=$2; shift 2 ;;
	--modules-dir) [ $# -ge 2 ] || die "$1 needs an argument"; moddir=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] || die "$1 needs an argument"; smp=$2; shift 2 ;;
	--arch) [ $# -ge 2 ] || die "$1 needs an argument"; arch=$2; shift 2 ;;
	--root) [ $# -ge 2 ] || die "$1 needs an argument"; rootdir=$2; shift 2 ;;
	--busybox) [ $# -ge 2 ] || die "$1 needs an argument"; busybox=$2; shift 2 ;;
	--tcg-single) accel=tcg,thread=single; shift ;;
	--mem) [ $# -ge 2 ] || die "$1 needs an argument"; mem=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || die "$1 needs an argument"; timeout_s=$2; shift 2 ;;
	--idle) [ $# -ge 2 ] || die "$1 needs an argument"; idle_s=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || die "$1 needs an argument"; out=$2; shift 2 ;;
	--append) [ $# -ge 2 ] || die "$1 needs an argument"; append=$2; shift 2 ;;
	--log) [ $# -ge 2 ] || die "$1 needs an argument"; logfile=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) die "unknown option '$1' (see --help; the command goes after --)" ;;
	esac
done
[ $# -ge 1 ] || die "no command given (usage: $0 [options] -- COMMAND [ARGS...])"

case "$arch" in
x86_64) smp=${smp:-2} ;;
arm64)
	smp=${smp:-1}
	[ -n "$kernel" ] && [ -n "$moddir" ] && [ -n "$busybox" ] && [ "$rootdir" != / ] ||
		die "--arch arm64 needs --kernel, --modules-dir, --busybox and --root (scripts/arm64-bed.sh)"
	[ "$accel" = tcg ] || die "--tcg-single: the arm64 bed runs one TCG thread anyway (-icount)"
	;;
*) die "--arch: x86_64 or arm64" ;;
esac
case "$smp$mem$timeout_s$idle_s" in *[!0-9]*) die "--smp/--mem/--timeout/--idle need integers" ;; esac
[ -d "$rootdir" ] || die "root '$rootdir' not found"
rootdir=$(cd "$rootdir" && pwd)

# ---------------------------------------------------------------- kernel ---
if [ -n "$kernel" ]; then
	[ -z "$kver" ] || die "--kver and --kernel are mutually exclusive"
	[ -r "$kernel" ] || die "kernel '$kernel' not readable"
	if [ -n "$moddir" ]; then
		[ -d "$moddir" ] || die "modules dir '$moddir' not found"
		moddir=$(cd "$moddir" && pwd)
		kver=$(basename "$moddir")
	else
		kver=custom
	fi
else
	[ -z "$moddir" ] || die "--modules-dir needs --kernel"
	# Default: Debian 12's own kernel (what linux-image-amd64 points at),
	# even when other kernels of the test matrix are installed.
	if [ -z "$kver" ]; then
		k=$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null |
			sed -n 's/^linux-image-\([^ ,]*\).*/\1/p')
		[ -n "$k" ] && [ -r "/boot/vmlinuz-$k" ] && [ -d "/lib/modules/$k" ] &&
			kver=$k
	fi
	if [ -z "$kver" ]; then
		for k in $(find /boot -maxdepth 1 -name 'vmlinuz-*-amd64' -printf '%f\n' |
			sed 's/^vmlinuz-//' | sort -V); do
			[ -d "/lib/modules/$k" ] && kver=$k
		done
		[ -n "$kver" ] || die "no /boot/vmlinuz-*-amd64 with matching /lib/modules dir (run scripts/setup.sh)"
	fi
	kernel=/boot/vmlinuz-$kver
	moddir=/lib/modules/$kver
	[ -r "$kernel" ] || die "$kernel not readable"
	[ -d "$moddir" ] || die "$moddir not found"
fi

qemu=qemu-system-x86_64
[ "$arch" = x86_64 ] || qemu=qemu-system-aarch64
command -v $qemu >/dev/null || die "$qemu missing (run scripts/setup.sh)"
if [ -n "$busybox" ]; then
	[ -r "$busybox" ] || die "busybox '$busybox' not readable"
else
	for b in /bin/busybox /usr/bin/busybox; do
		# must be the static one (busybox-static): the initramfs has no libc
		if [ -x "$b" ] && LC_ALL=C ldd "$b" 2>&1 | grep -q 'not a dynamic'; then
			busybox=$b
			break
		fi
	done
	[ -n "$busybox" ] || die "no static busybox found (apt-get install busybox-static)"
fi

# ------------------------------------------------------------- initramfs ---
# Modules needed to mount a virtio-9p root.  Dependencies are resolved via
# modules.dep; anything built in (modules.builtin) or absent is skipped.
WANT_MODULES="virtio_pci 9pnet_virtio 9p"

# Print the module file (relative to $moddir) for module name $1, or nothing.
modfile() {
	[ -f "$moddir/modules.dep" ] || return 0
	awk -F: -v n="$1" '{
		f = $1; b = f; sub(/.*\//, "", b); sub(/\.ko(\.(xz|zst|gz))?$/, "", b)
		gsub(/-/, "_", b); m = n; gsub(/-/, "_", m)
		if (b == m) { print f; exit }
	}' "$moddir/modules.dep"
}

# Print the dependency-ordered list of module files needed for $WANT_MODULES.
resolve_modules() {
	[ -f "$moddir/modules.dep" ] || return 0
	files=""
	for m in $WANT_MODULES; do
		f=$(modfile "$m")
		if [ -n "$f" ]; then
			files="$files $f"
		elif [ -f "$moddir/modules.builtin" ] &&
			grep -Eq "/${m}\.ko$|/$(echo "$m" | tr _ -)\.ko$" "$moddir/modules.builtin"; then
			:
		else
			log "note: module $m neither a module nor built in for $kver"
		fi
	done
	# Depth-first: dependencies (in modules.dep order, which lists the
	# deepest last) before dependents, each file once.
	awk -F': *' -v want="$files" '
		{ dep[$1] = $2 }
		function visit(f,   n, i, d) {
			if (f in seen) return
			seen[f] = 1
			n = split(dep[f], d, " ")
			for (i = n; i >= 1; i--) visit(d[i])
			print f
		}
		END { n = split(want, w, " "); for (i = 1; i <= n; i++) visit(w[i]) }
	' "$moddir/modules.dep"
}

self_hash=$(sha256sum "$0" | cut -c1-16)
tree_hash=$( {
	echo "$arch $kver $moddir $busybox"
	cat "$moddir/modules.dep" "$moddir/modules.builtin" 2>/dev/null || true
} | sha256sum | cut -c1-16)
cache=${VCPUPERF_CACHE:-${HOME:-/tmp}/.cache/vcpuperf}/initramfs
initrd=$cache/initramfs-$kver-$tree_hash-$self_hash.cpio

build_initramfs() {
	mkdir -p "$cache"
	stage=$(mktemp -d "$cache/.stage.XXXXXX")
	# shellcheck disable=SC2064
	trap "rm -rf '$stage'" EXIT
	mkdir -p "$stage/bin" "$stage/dev" "$stage/proc" "$stage/sys" \
		"$stage/newroot" "$stage/mod" "$stage/tmp"
	cp "$busybox" "$stage/bin/busybox"
	# The applets, as the busybox of this architecture lists them (its
	# own binary cannot run on the host: the list comes from the host's
	# busybox of the same Debian release, or the applets this script uses).
	if [ "$arch" = x86_64 ]; then
		applets=$("$busybox" --list)
	else
		applets=$(busybox --list 2>/dev/null ||
			echo "sh mount umount insmod mkdir cat echo sleep stty chroot mv sync reboot poweroff")
	fi
	for a in $applets; do
		[ "$a" = busybox ] || ln -sf busybox "$stage/bin/$a"
	done
	if [ "$(id -u)" -eq 0 ]; then
		mknod -m 600 "$stage/dev/console" c 5 1
		mknod -m 666 "$stage/dev/null" c 1 3
	fi
	: >"$stage/mod/order"
	for f in $(resolve_modules); do
		src=$moddir/$f
		name=$(basename "$f")
		case "$name" in
		*.ko.xz) xz -dc "$src" >"$stage/mod/${name%.xz}"; name=${name%.xz} ;;
		*.ko.zst) zstd -qdc "$src" >"$stage/mod/${name%.zst}"; name=${name%.zst} ;;
		*.ko.gz) gzip -dc "$src" >"$stage/mod/${name%.gz}"; name=${name%.gz} ;;
		*) cp "$src" "$stage/mod/$name" ;;
		esac
		echo "$name" >>"$stage/mod/order"
	done
	write_init >"$stage/init"
	chmod 755 "$stage/init"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc --quiet -R 0:0) >"$stage/../.initrd.$$"
	mv -f "$stage/../.initrd.$$" "$initrd"
	rm -rf "$stage"
	trap - EXIT
	# Drop stale images (older script versions) for the same module tree.
	for old in "$cache"/initramfs-"$kver"-"$tree_hash"-*.cpio; do
		[ "$old" = "$initrd" ] || rm -f "$old"
	done
	log "built $(basename "$initrd") ($(du -k "$initrd" | cut -f1) KiB; modules:$(cpio -it --quiet <"$initrd" | sed -n 's|^mod/\(.*\)\.ko$| \1|p' | tr -d '\n'))"
}

# The guest's /init (busybox sh, PID 1).
write_init() {
	cat <<'EOF'
#!/bin/busybox sh
# vm-run guest init (generated by scripts/vm-run.sh)
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

# Without ACPI (a minimal custom kernel) power-off only halts the CPUs:
# reboot instead, which -no-reboot turns into QEMU exiting.
off() {
	[ -d /sys/firmware/acpi ] || reboot -f
	poweroff -f
}

fail() {
	echo "vm-run-init: FATAL: $*"
	[ -d /sys/firmware/acpi ] || reboot -f
	echo o >/proc/sysrq-trigger
	poweroff -f
	sleep 10
}

while read -r m; do
	[ -n "$m" ] || continue
	insmod "/mod/$m" || echo "vm-run-init: warning: insmod $m failed"
done </mod/order

R=/newroot
tries=0
until mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose hostroot $R 2>/dev/null; do
	tries=$((tries + 1))
	[ $tries -lt 100 ] || fail "cannot mount hostroot 9p share"
	sleep 0.05
done

mount -t proc proc $R/proc
mount -t sysfs sysfs $R/sys
mount -t devtmpfs devtmpfs $R/dev
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts $R/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $R/dev/shm
mount -t debugfs debugfs $R/sys/kernel/debug 2>/dev/null ||
	echo "vm-run-init: warning: no debugfs"
if [ -d $R/sys/kernel/tracing ]; then
	mount -t tracefs tracefs $R/sys/kernel/tracing 2>/dev/null || true
fi
mount -t tmpfs -o mode=1777 tmpfs $R/tmp
mount -t tmpfs -o mode=755 tmpfs $R/run
mount -t tmpfs -o mode=1777 tmpfs $R/var/tmp
mkdir -p $R/tmp/out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out $R/tmp/out ||
	fail "cannot mount out 9p share"
[ -r $R/tmp/out/.cmd ] || fail "no command file in out share"
# A working directory under a tmpfs mounted above is shared on its own.
if [ -r $R/tmp/out/.workdir ]; then
	wd=$(cat $R/tmp/out/.workdir)
	mkdir -p "$R$wd"
	mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
		work "$R$wd" || fail "cannot mount work share at $wd"
fi

stty -onlcr 2>/dev/null
read -r up _ </proc/uptime
echo "vm-run-init: guest ready after ${up}s (kernel $(uname -r)); running command"

chroot $R /usr/bin/env -i HOME=/tmp TERM=dumb LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	VP_OUT=/tmp/out /bin/sh /tmp/out/.cmd </dev/null
rc=$?

echo "$rc" >$R/tmp/out/.rc.tmp && mv $R/tmp/out/.rc.tmp $R/tmp/out/.rc
sync
umount $R/tmp/out 2>/dev/null
echo "vm-run-init: command exited with status $rc; powering off"
off
sleep 2
echo o >/proc/sysrq-trigger
sleep 10
EOF
}

if [ ! -f "$initrd" ]; then
	build_initramfs
fi

# ----------------------------------------------------------- out + cmd ---
if [ -z "$out" ]; then
	out=$(mktemp -d "${TMPDIR:-/tmp}/vm-run.XXXXXX")
	log "output dir: $out"
else
	mkdir -p "$out"
fi
out=$(cd "$out" && pwd)
[ -n "$logfile" ] || logfile=$out/console.log
mkdir -p "$(dirname "$logfile")"
: >"$logfile"
rm -f "$out/.rc" "$out/.rc.tmp"

sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

if [ $# -eq 1 ]; then
	cmd=$1
else
	cmd=""
	for a in "$@"; do cmd="$cmd $(sq "$a")"; done
	cmd=${cmd# }
fi
{
	echo "# generated by vm-run.sh"
	echo "cd -- $(sq "$PWD") 2>/dev/null || { echo \"vm-run: warning: cannot cd to \"$(sq "$PWD") >&2; cd /tmp; }"
	env | sed -n 's/^\(VP_[A-Za-z0-9_]*\)=.*/\1/p' | while read -r v; do
		[ "$v" = VP_OUT ] && continue
		eval "val=\${$v}"
		# shellcheck disable=SC2154
		echo "export $v=$(sq "$val")"
	done
	echo "exec /bin/sh -c $(sq "$cmd")"
} >"$out/.cmd"

# ----------------------------------------------------------------- qemu ---
qesc() { printf '%s' "$1" | sed 's/,/,,/g'; }

# The guest mounts fresh tmpfs on /tmp, /run and /var/tmp: a working
# directory there (a CI clone in /tmp, say) is shared separately.
# Another root than the host's has no working directory at all: shared
# the same way, on a mount point made in that root.
workfs=""
rm -f "$out/.workdir"
case "$rootdir:$PWD" in
/:/tmp | /:/run | /:/var/tmp)
	log "warning: $PWD is a fresh tmpfs in the guest; starting in /tmp"
	;;
/:/tmp/* | /:/run/* | /:/var/tmp/* | /*:/?*)
	[ "$rootdir" = / ] || mkdir -p "$rootdir$PWD"
	printf '%s\n' "$PWD" >"$out/.workdir"
	workfs="local,path=$(qesc "$PWD"),mount_tag=work,security_model=none,readonly=on,multidevs=remap"
	;;
esac

if [ "$arch" = x86_64 ]; then
	cmdline="console=ttyS0,115200 loglevel=4 panic=-1 rdinit=/init 8250.nr_uarts=1"
	machine=(-machine pc -accel "$accel" -cpu max)
else
	cmdline="console=ttyAMA0 loglevel=4 panic=-1 rdinit=/init"
	machine=(-machine virt,virtualization=on,gic-version=3 -cpu max -icount shift=0)
fi
# A custom kernel built with ACPI (the debug kernel: ACPI's MADT brings up
# the second CPU) and KASAN evaluates QEMU's PCI routing method (_PRT) so
# slowly under TCG that ACPICA's loop timeout fires and the boot stalls:
# route PCI interrupts without ACPI (acpi=noirq); CPUs still come from the
# MADT.
kconfig=$(dirname "$kernel")/../../../.config
if [ -f "$kconfig" ] && grep -q '^CONFIG_ACPI=y' "$kconfig" &&
	grep -q '^CONFIG_KASAN=y' "$kconfig"; then
	cmdline="$cmdline acpi=noirq"
fi
[ -z "$append" ] || cmdline="$cmdline $append"

# A guest still running this many seconds before the timeout is hung: the
# x86 guest is asked over QEMU's monitor, with SysRq keys on its keyboard,
# for the backtraces of its CPUs and its blocked tasks (console log level
# raised first), so that the console log says where it hung.
hang_dump_s=30
# hang_dump: the x86 guest's backtraces on its console (SysRq over the
# monitor); nothing on arm64.
hang_dump() {
	[ "$arch" = x86_64 ] || return 0
	python3 - "$mondir/monitor" <<'PY' || true
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
for key in ("9", "l", "w"):
    s.sendall(b"sendkey alt-sysrq-%s\n" % key.encode())
    time.sleep(3)
PY
}
mondir=$(mktemp -d "${TMPDIR:-/tmp}/vm-run-mon.XXXXXX")
monitor=(-monitor none)
dumper=""
if [ "$arch" = x86_64 ]; then
	cmdline="$cmdline sysrq_always_enabled"
	monitor=(-monitor "unix:$(qesc "$mondir/monitor"),server=on,wait=off")
	if [ "$timeout_s" -gt $((2 * hang_dump_s)) ]; then
		(
			trap 'kill "$nap" 2>/dev/null; exit 0' TERM
			sleep $((timeout_s - hang_dump_s)) &
			nap=$!
			wait "$nap"
			hang_dump
		) >/dev/null 2>&1 &
		dumper=$!
	fi
fi

# With --idle, a watcher kills the guest once its console has been silent
# for idle_s seconds (after asking for its backtraces), and says so in a
# file: a livelocked guest then costs minutes rather than the whole
# --timeout.  QEMU then runs in the background so that the watcher can
# signal it.
qemu_argv=("$qemu" -nodefaults -no-user-config -display none
	"${machine[@]}" -smp "$smp" -m "$mem"
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	-chardev "stdio,id=con,signal=on,logfile=$(qesc "$logfile")"
	-serial chardev:con "${monitor[@]}" -no-reboot
	-virtfs "local,path=$(qesc "$rootdir"),mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
	-virtfs "local,path=$(qesc "$out"),mount_tag=out,security_model=none,multidevs=remap")
[ -z "$workfs" ] || qemu_argv+=(-virtfs "$workfs")
idler=""
idle_mark="$mondir/idle"
set +e
if [ -n "$idle_s" ]; then
	timeout -k 10 "$timeout_s" "${qemu_argv[@]}" </dev/null &
	qpid=$!
	(
		last=0
		quiet=0
		while kill -0 "$qpid" 2>/dev/null; do
			sleep 10
			size=$(stat -c %s "$logfile" 2>/dev/null || echo 0)
			if [ "$size" != "$last" ]; then
				last=$size
				quiet=0
				continue
			fi
			quiet=$((quiet + 10))
			if [ "$quiet" -ge "$idle_s" ]; then
				hang_dump
				touch "$idle_mark"
				kill -TERM "$qpid"
				exit 0
			fi
		done
	) >/dev/null 2>&1 &
	idler=$!
	wait "$qpid"
	qrc=$?
	kill "$idler" 2>/dev/null
	wait "$idler" 2>/dev/null
	if [ -e "$idle_mark" ]; then
		set -e
		kill "$dumper" 2>/dev/null || true
		rm -rf "$mondir"
		log "IDLE: no console output for ${idle_s}s, qemu killed (console log: $logfile); its tail:"
		tail -n 120 "$logfile" >&2 || true
		exit 124
	fi
else
	timeout --foreground -k 10 "$timeout_s" "${qemu_argv[@]}" </dev/null
	qrc=$?
fi
set -e
if [ -n "$dumper" ]; then
	kill "$dumper" 2>/dev/null || true
	wait "$dumper" 2>/dev/null || true
fi
rm -rf "$mondir"

if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
	log "TIMEOUT after ${timeout_s}s, qemu killed (console log: $logfile); its tail:"
	tail -n 120 "$logfile" >&2 || true
	exit 124
fi
if [ -f "$out/.rc" ]; then
	rc=$(cat "$out/.rc")
	case "$rc" in '' | *[!0-9]*) rc=125 ;; esac
	exit "$rc"
fi
log "guest did not report an exit status (qemu rc $qrc); console tail:"
tail -n 40 "$logfile" >&2 || true
exit 125
