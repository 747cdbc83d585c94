#!/bin/bash
# install-guest.sh - the guest half of scripts/install-test.sh: run inside a
# VM booted by scripts/vm-run.sh on a kernel that `make install` installed
# vcpuperf for on the host (the guest sees the host root read-only).
#
# Usage (in the guest, as root): tests/harness/install-guest.sh
#
#   VP_INSTALL_INTERVAL_MS  interval_ms the host's /etc/modprobe.d sets
#                           (default 250)
#   VP_OUT                  writable output directory (vm-run.sh sets it)
#
# Checks, each printed as "ok" or "FAIL": the module modprobe finds is the
# installed one (/lib/modules/$(uname -r)/extra) with this kernel's
# vermagic; `modprobe vcpuperf` loads it and applies the modprobe.d
# parameter; /usr/local/bin/vcpuperf-cat attaches to a thread and gives rows
# at that interval; man finds both pages; the systemd unit's helper
# (/usr/local/lib/vcpuperf/vcpuperf-record), run as the unit's ExecStart=
# runs it, records a real QEMU (-name vm1,debug-threads=on -pidfile, -smp 2,
# TCG, stopped with -S) to one JSONL file per run of that QEMU, with rows
# for vCPUs 0 and 1, ends the episode when QEMU is killed (emulating
# Restart=, it is run again for the next QEMU: a second file), and on
# SIGTERM stops and drains (the file ends with perf_finished) without
# touching QEMU; with no settings it finds libvirt's pidfile
# (/run/libvirt/qemu/NAME.pid); rmmod.  Ends with "N passed, M failed"; exit 1 if any
# failed.
set -uo pipefail

ivl=${VP_INSTALL_INTERVAL_MS:-250}
out=${VP_OUT:-/tmp/out}
kver=$(uname -r)
helper=/usr/local/lib/vcpuperf/vcpuperf-record
npass=0
nfail=0
pids=()

ok() { echo "ok: $*"; npass=$((npass + 1)); }
bad() { echo "FAIL: $*"; nfail=$((nfail + 1)); }
check() { # description command...
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

# wait_for SECONDS command...: poll until the command succeeds.
wait_for() {
	local n=$(($1 * 5))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		n=$((n - 1))
	done
	return 1
}

# JSONL checks (python3 from the host root).
jq_py() { # FILE PYTHON-EXPR-over-rows(r)/events(e)/lines(L) -> exit 0 if true
	python3 - "$1" "$2" <<'PY'
import json, sys
L = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        L.append(json.loads(line))
r = [x for x in L if "event" not in x]
e = [x for x in L if "event" in x]
ok = eval(sys.argv[2])
if not ok:
    print("  (%d rows, vcpus %s, events %s, last %s)" % (
        len(r), sorted({x.get("vcpu") for x in r}, key=str),
        sorted({x["event"] for x in e}), L[-1] if L else None))
sys.exit(0 if ok else 1)
PY
}

echo "== install-guest on $kver"

# --- the installed module -------------------------------------------------
f=$(modinfo -F filename vcpuperf 2>/dev/null || true)
case "$f" in
/lib/modules/"$kver"/extra/vcpuperf.ko*) ok "modinfo finds $f" ;;
*) bad "modinfo vcpuperf gives '$f', want /lib/modules/$kver/extra/vcpuperf.ko*" ;;
esac
vm=$(modinfo -F vermagic vcpuperf 2>/dev/null | awk '{ print $1 }')
check "vermagic '$vm' is $kver" test "$vm" = "$kver"
check "modprobe vcpuperf" modprobe vcpuperf
check "loaded (/sys/module/vcpuperf)" test -d /sys/module/vcpuperf
got=$(cat /sys/module/vcpuperf/parameters/interval_ms 2>/dev/null || true)
check "modprobe.d applied: interval_ms=$got, want $ivl" test "$got" = "$ivl"
check "debugfs control present" test -e /sys/kernel/debug/vcpuperf/control

# --- the installed tool -----------------------------------------------------
cat_bin=$(command -v vcpuperf-cat || true)
check "vcpuperf-cat on PATH is /usr/local/bin/vcpuperf-cat ($cat_bin)" \
	test "$cat_bin" = /usr/local/bin/vcpuperf-cat
sh -c 'while :; do :; done' &
spin=$!
pids+=("$spin")
rows=$out/rows.jsonl
/usr/local/bin/vcpuperf-cat --pid "$spin" --events task-clock,context-switches \
	--duration 3s -o "$rows" 2>"$out/cat.err"
rc=$?
kill -KILL "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
check "vcpuperf-cat --pid exit $rc" test "$rc" -eq 0
# its own collection on /dev/vcpuperf starts at the device's 100 ms
# (vcpuperf(4)); modprobe.d's interval_ms is the default collection's
check "rows of its own collection at 100 ms with task_clock > 0" \
	jq_py "$rows" "len(r) >= 2 and all(abs(x['interval_s'] - 0.1) < 1e-9 for x in r) and any(x['task_clock'] for x in r)"
sh -c 'while :; do :; done' &
spin=$!
pids+=("$spin")
rows0=$out/rows-default.jsonl
echo "attach pid=$spin events=task-clock" >/sys/kernel/debug/vcpuperf/control
timeout -s INT 3 /usr/local/bin/vcpuperf-cat --no-attach -o "$rows0" 2>"$out/cat0.err"
rc=$?
echo stop >/sys/kernel/debug/vcpuperf/control
kill -KILL "$spin" 2>/dev/null
wait "$spin" 2>/dev/null
check "vcpuperf-cat --no-attach on the default collection: exit $rc (SIGINT)" \
	test "$rc" -eq 0 -o "$rc" -eq 124
check "default collection's rows at the modprobe.d interval ($ivl ms) with task_clock > 0" \
	jq_py "$rows0" "len(r) >= 2 and all(abs(x['interval_s'] - $ivl / 1000) < 1e-9 for x in r) and any(x['task_clock'] for x in r)"

# --- man pages --------------------------------------------------------------
if command -v man >/dev/null; then
	# (Debian's /usr/local/man is a symlink to share/man)
	p1=$(man -w vcpuperf-cat 2>/dev/null || true)
	p4=$(man -w 4 vcpuperf 2>/dev/null || true)
	check "man -w vcpuperf-cat: $p1" \
		test "$(readlink -f "$p1")" = /usr/local/share/man/man1/vcpuperf-cat.1
	pp=$(man -w vcpuperf-plot 2>/dev/null || true)
	check "man -w vcpuperf-plot: $pp" \
		test "$(readlink -f "$pp")" = /usr/local/share/man/man1/vcpuperf-plot.1
	check "man -w 4 vcpuperf: $p4" \
		test "$(readlink -f "$p4")" = /usr/local/share/man/man4/vcpuperf.4
	check "man renders vcpuperf(4)" eval '[[ "$(MANWIDTH=80 man 4 vcpuperf 2>&1)" == *"CHARACTER DEVICE"* ]]'
else
	echo "skip: man-db not installed"
fi

# --- the systemd unit's helper against a real QEMU ----------------------------
conf=/tmp/vpconf
mkdir -p "$conf"
# the settings file the unit reads (/etc/vcpuperf/NAME.conf; /etc is the
# host's, read-only, here: VCPUPERF_CONF_DIR points the helper elsewhere)
printf '%s\n' '# test' 'PIDFILE=/run/vm1.pid' \
	'ARGS="--events task-clock,context-switches"' >"$conf/vm1.conf"
eps=$out/episodes
rm -rf "$eps"
start_helper() { # log: as ExecStart=/usr/local/lib/vcpuperf/vcpuperf-record %i
	VCPUPERF_CONF_DIR=$conf VCPUPERF_OUTDIR=$eps "$helper" vm1 2>>"$1" &
	hpid=$!
	pids+=("$hpid")
}
start_qemu() {
	qemu-system-x86_64 -name vm1,debug-threads=on -pidfile /run/vm1.pid \
		-display none -nodefaults -no-user-config -accel tcg -smp 2 -m 64 -S \
		</dev/null >/dev/null 2>&1 &
	qpid=$!
	pids+=("$qpid")
}
nfiles() { find "$eps" -name 'vm1-*.jsonl' 2>/dev/null | wc -l; }
# other_file [FILE]: the episode file that is not FILE
other_file() { find "$eps" -name 'vm1-*.jsonl' 2>/dev/null | grep -vxF "${1:-/}" | head -n1; }
has_vcpus01() { # [NOT-THIS-FILE]
	local f
	f=$(other_file "${1:-}")
	[ -n "$f" ] && jq_py "$f" "{0, 1} <= {x['vcpu'] for x in r}" >/dev/null
}
# helper_exits SECONDS: wait for the helper to end, its status in $hrc
helper_exits() {
	local n=$(($1 * 5))
	while kill -0 "$hpid" 2>/dev/null && [ "$n" -gt 0 ]; do
		sleep 0.2
		n=$((n - 1))
	done
	if kill -0 "$hpid" 2>/dev/null; then
		hrc=timeout
		return 1
	fi
	wait "$hpid"
	hrc=$?
}

# episode 1: the helper starts first and waits for the pidfile
start_helper "$out/helper1.log"
sleep 2
check "helper waits for the VM (no episode file yet)" test "$(nfiles)" -eq 0
start_qemu
check "episode 1 has rows for vCPUs 0 and 1" wait_for 120 has_vcpus01
ep1=$(other_file)
kill -KILL "$qpid"
wait "$qpid" 2>/dev/null
helper_exits 60
check "helper ends the episode when QEMU exits (exit $hrc)" test "$hrc" = 0
check "episode 1 ($(basename "$ep1")) drained: session perf_finished last" \
	jq_py "$ep1" "L[-1].get('event') == 'perf_finished' and L[-1].get('scope') == 'session' and len([x for x in e if x['event'] == 'perf_task_exited']) == 2"

# episode 2: what Restart= does, against the next QEMU (the pidfile of the
# killed one is stale meanwhile)
start_helper "$out/helper2.log"
start_qemu
check "episode 2 in a second file with rows for vCPUs 0 and 1" \
	wait_for 120 has_vcpus01 "$ep1"
ep2=$(other_file "$ep1")
check "two episode files" test "$(nfiles)" -eq 2
sleep 1
kill -TERM "$hpid"
helper_exits 60
check "SIGTERM: helper exits 0 ($hrc)" test "$hrc" = 0
check "SIGTERM: QEMU left running" kill -0 "$qpid"
check "SIGTERM: episode 2 drained (final rows, perf_finished per vCPU and session, detached: stop)" \
	jq_py "$ep2" "L[-1].get('event') == 'perf_finished' and L[-1].get('scope') == 'session' and sorted(x['vcpu'] for x in e if x['event'] == 'perf_finished' and x.get('scope') == 'thread') == [0, 1] and [x['reason'] for x in e if x['event'] == 'perf_detached'] == ['stop', 'stop']"
kill -KILL "$qpid" 2>/dev/null
wait "$qpid" 2>/dev/null

# libvirt's default: no settings file, the pidfile /run/libvirt/qemu/NAME.pid
mkdir -p /run/libvirt/qemu "$conf/empty"
VCPUPERF_CONF_DIR=$conf/empty VCPUPERF_OUTDIR=$eps/lv VCPUPERF_ARGS="--events task-clock" \
	"$helper" vm2 2>>"$out/helper3.log" &
hpid=$!
pids+=("$hpid")
qemu-system-x86_64 -name vm2,debug-threads=on -pidfile /run/libvirt/qemu/vm2.pid \
	-display none -nodefaults -no-user-config -accel tcg -smp 2 -m 64 -S \
	</dev/null >/dev/null 2>&1 &
qpid=$!
pids+=("$qpid")
lv_rows() {
	local f
	f=$(find "$eps/lv" -name 'vm2-*.jsonl' 2>/dev/null | head -n1)
	[ -n "$f" ] && jq_py "$f" "{0, 1} <= {x['vcpu'] for x in r}" >/dev/null
}
check "libvirt pidfile /run/libvirt/qemu/vm2.pid found by default: rows for vCPUs 0 and 1" \
	wait_for 120 lv_rows
kill -TERM "$hpid"
helper_exits 60
check "libvirt episode: helper exits 0 on SIGTERM ($hrc)" test "$hrc" = 0
kill -KILL "$qpid" 2>/dev/null
wait "$qpid" 2>/dev/null
sed 's/^/  helper: /' "$out"/helper*.log

# --- unload ---------------------------------------------------------------------
check "rmmod vcpuperf" rmmod vcpuperf
check "unloaded" test ! -d /sys/module/vcpuperf

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
