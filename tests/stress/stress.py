#!/usr/bin/python3
"""vcpuperf stress test: runs as root inside the test VM (scripts/stress.sh,
which uses scripts/vm-run.sh), from the repository root, after the module,
vcpuperf-cat and tests/stress/churn are built.

Usage: stress.py [--short | --long] [--only PHASE[,PHASE...]] [--check]

--check checks the arguments (a phase --only names that does not exist is
an error, exit 2) and runs nothing: scripts/stress.sh asks it on the host
before it boots the VM.

Phases (each bounded in time):
  churn      N attach/detach cycles (qemu= / pid= / tid= lists, interval
             1-10 ms) against tests/stress/churn, whose threads come and go
             within microseconds, while readers open the stream, read a few
             bytes at a time and close at random; a reader blocked in read()
             is killed with SIGKILL
  rmmod      rmmod + insmod repeated with a blocked vcpuperf-cat --no-attach
             reader and attached targets: rmmod is refused at once while
             the reader is open; after a stop the reader sees EOF with
             every sequence gap explained, and rmmod succeeds
  overflow   ring_kb=256, 1 ms, 256 threads, a stopped (SIGSTOP) reader: the
             ring overflows; after SIGCONT rows flow again and every drop is
             reported exactly
  qemu       a real QEMU killed with SIGKILL while attached
  fuzz       random and mutated control commands during a collection: each
             write's errno is one of the documented set, rows keep flowing
  collections  N open/attach/close cycles of /dev/vcpuperf from 8 processes
             at once, random SIGKILLs, rmmod attempts meanwhile (refused
             at once while a file is open); no collection left,
             unreclaimable slab back within 1 MiB

Pass: every phase passes, the kernel log has no KASAN / lockdep / BUG /
WARNING / atomic-sleep report, kmemleak (if present) finds nothing after
the final rmmod, the module is gone and slab use is back near its start.
Prints TAP (tests/tap.py): one test per phase, then the kernel-log and
leak checks, and the closing '# N passed, N failed'."""

import errno
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

REPO = os.getcwd()
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import vptest  # noqa: E402
from vptest import (Cat, TestFailure, check, control, load,  # noqa: E402
                    module_loaded, read_file, sh, unload, DEBUGFS, OUT)

# Rows go to the guest's tmpfs, not the 9p share: at 1 ms with hundreds of
# threads they are tens of MB, and they are only counted, in tails.
vptest.OUT = "/tmp/stress"
os.makedirs(vptest.OUT, exist_ok=True)


def rows_size(cat):
    try:
        return os.path.getsize(cat.rows_path)
    except OSError:
        return 0


CATS = []


def keep_events():
    """After a failed phase: its readers' event files to the output share
    (the rows stay behind: too large)."""
    for cat in CATS:
        if os.path.exists(cat.events_path):
            sh("cp %s %s/" % (cat.events_path, OUT), check_rc=False)
    del CATS[:]


def cleanup(cat):
    for p in (cat.rows_path, cat.events_path):
        try:
            os.unlink(p)
        except OSError:
            pass

CHURN = os.path.join(REPO, "tests", "stress", "churn")
STREAM = os.path.join(DEBUGFS, "stream")
CTRL = os.path.join(DEBUGFS, "control")
SW_EVENTS = ["task-clock", "context-switches", "page-faults",
             "cpu-migrations", "cpu-clock"]
BAD = ("KASAN", "BUG:", "WARNING:", "sleeping function called from invalid "
       "context", "possible circular locking", "inconsistent lock state",
       "possible recursive locking", "lockdep", "Oops", "general protection",
       "UBSAN", "Call Trace", "INFO: task", "kmemleak:", "refcount_t")
STATS = {}
RNG = random.Random(int(os.environ.get("VP_STRESS_SEED", "0")) or None)


def log(msg):
    print(msg, flush=True)


class Laps:
    """Where a phase spends its time: 'step 1.2s, step 3.4s'."""

    def __init__(self):
        self.t = time.time()
        self.laps = []

    def __call__(self, what):
        now = time.time()
        self.laps.append("%s %.1fs" % (what, now - self.t))
        log("  .. " + self.laps[-1])
        self.t = now

    def __str__(self):
        return ", ".join(self.laps)


def ename(e):
    return "ok" if e == 0 else errno.errorcode.get(e, str(e))


class Churn:
    """tests/stress/churn: persistent and short-lived 'CPU n/KVM' threads."""

    def __init__(self, name, persist=4, spawners=2):
        self.ready = os.path.join(OUT, name + ".churn.json")
        if os.path.exists(self.ready):
            os.unlink(self.ready)
        self.proc = subprocess.Popen([CHURN, "--persist", str(persist),
                                      "--spawners", str(spawners),
                                      "--ready", self.ready])
        deadline = time.time() + 180
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None or time.time() > deadline:
                self.kill()
                raise TestFailure("churn died or never got ready")
            time.sleep(0.02)
        with open(self.ready) as f:
            info = json.load(f)
        self.pid = info["pid"]
        self.tids = info["tids"]

    def live(self):
        try:
            return [int(t) for t in os.listdir("/proc/%d/task" % self.pid)]
        except OSError:
            return []

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def session_finished(cat):
    fin = [e for e in cat.events("perf_finished") if e.get("scope") ==
           "session"]
    return fin[0] if fin else None


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


# ------------------------------------------------------------- churn ---

class RandomReader(threading.Thread):
    """Opens the stream, reads a few small chunks, closes, at random."""

    def __init__(self):
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.lock = threading.Lock()    # held while the stream is open
        self.opens = self.bytes = self.busy = 0
        self.error = None

    def run(self):
        try:
            while not self.stop.is_set():
                with self.lock:
                    try:
                        fd = os.open(STREAM, os.O_RDONLY | os.O_NONBLOCK)
                    except OSError as e:
                        if e.errno != errno.EBUSY:
                            raise
                        self.busy += 1
                        fd = None
                    if fd is not None:
                        self.opens += 1
                        try:
                            for _ in range(RNG.randrange(1, 20)):
                                try:
                                    self.bytes += len(os.read(
                                        fd, RNG.choice((1, 7, 8, 24, 63, 64,
                                                        100, 4096))))
                                except BlockingIOError:
                                    time.sleep(0.001)
                        finally:
                            os.close(fd)
                time.sleep(RNG.random() * 0.01)
        except Exception as e:  # reported by the phase
            self.error = e


BLOCKED_READER = r"""
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.read(fd, 3)
print("open", flush=True)
while True:
    os.read(fd, 4096)
"""


def kill_blocked_reader():
    """A reader that drains the stream and blocks in read() is killed."""
    p = subprocess.Popen([sys.executable, "-c", BLOCKED_READER, STREAM],
                         stdout=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline().strip() == "open", "blocked reader failed")
        blocked = False
        deadline = time.time() + 10
        while time.time() < deadline and not blocked:
            time.sleep(0.05)
            try:
                with open("/proc/%d/syscall" % p.pid) as f:
                    blocked = (f.read().split()[0] == "0" and
                               proc_state(p.pid) == "S")
            except OSError:
                pass
        p.kill()
        p.wait()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return blocked


def phase_churn(n):
    load()
    ch = Churn("churn", persist=4, spawners=2)
    rd = RandomReader()
    rd.start()
    errs = {}
    killed = blocked = 0
    done = 0
    try:
        for i in range(n):
            check(rd.error is None, "reader: %r" % rd.error)
            check(ch.proc.poll() is None, "churn died")
            check(control("interval %dms" % RNG.randint(1, 10)) == 0,
                  "interval")
            evs = ",".join(RNG.sample(SW_EVENTS, RNG.randint(1, 3)))
            kind = RNG.choice(("qemu", "pid", "tid", "tid"))
            words = ""
            if kind == "tid":
                live = ch.live()
                tids = RNG.sample(live, min(len(live), RNG.randint(1, 8)))
                target = "tid=" + ",".join(str(t) for t in tids)
            else:
                target = "%s=%d" % (kind, ch.pid)
                # whole-process totals: counters inherited by the churning
                # threads, the scheduler's figures summed over them
                words = RNG.choice(("", " process_totals",
                                    " process_totals no_sched"))
            e = control("attach %s events=%s%s" % (target, evs, words))
            errs[("attach", ename(e))] = errs.get(("attach", ename(e)), 0) + 1
            check(e in (0, errno.ESRCH, errno.EEXIST),
                  "attach %s: %s" % (target, ename(e)))
            time.sleep(RNG.random() * 0.03)
            det = target if RNG.random() < 0.7 else "all"
            e = control("detach " + det)
            errs[("detach", ename(e))] = errs.get(("detach", ename(e)), 0) + 1
            check(e in (0, errno.ESRCH), "detach %s: %s" % (det, ename(e)))
            if i % max(1, n // 4) == n // 8:
                # Nothing attached: a reader drains the ring and blocks.
                control("detach all")
                with rd.lock:
                    blocked += kill_blocked_reader()
                    killed += 1
            done += 1
    finally:
        rd.stop.set()
        rd.join(30)
        ch.kill()
        STATS["cycles"] = STATS.get("cycles", 0) + done
    unload()
    log("  %d attach/detach cycles; outcomes %s; random reader: %d opens, "
        "%d bytes, %d EBUSY; %d readers SIGKILLed (%d seen blocked in read)"
        % (done, sorted(errs.items()), rd.opens, rd.bytes, rd.busy, killed,
           blocked))
    check(done == n, "only %d cycles" % done)
    check(rd.opens > 0 and rd.bytes > 0, "random reader read nothing")
    check(blocked >= 1, "no reader was ever blocked in read when killed")


# ------------------------------------------------------------- rmmod ---

def phase_rmmod(n):
    ch = Churn("rmmod", persist=4, spawners=1)
    gaps = 0
    try:
        for i in range(n):
            load("qemu=%d interval_ms=%d events=task-clock,context-switches"
                 % (ch.pid, RNG.randint(1, 10)))
            tids = ch.live()[:6]
            control("attach tid=%s events=page-faults" %
                    ",".join(str(t) for t in tids))  # EEXIST/ESRCH fine
            cat = Cat("rmmod%d" % i, "--no-attach")
            deadline = time.time() + 30
            while rows_size(cat) == 0 and time.time() < deadline:
                check(cat.proc.poll() is None, "reader exited early")
                time.sleep(0.05)
            check(rows_size(cat), "no rows before rmmod")
            time.sleep(RNG.random() * 0.3)
            t0 = time.time()
            p = sh("rmmod vcpuperf", check_rc=False, timeout=90)
            check(p.returncode != 0 and "in use" in p.stderr,
                  "rmmod %d with a reader open not refused: %s" %
                  (i, p.stderr))
            refused = time.time() - t0
            check(module_loaded(), "unloaded under a reader")
            check(control("stop") == 0, "stop")
            rc = cat.wait(timeout=30)
            check(rc == 0, "reader exit %d (unexplained gap?): %s" %
                  (rc, cat.stderr))
            check(session_finished(cat), "no session perf_finished")
            det = cat.events("perf_detached")
            check(any(d["reason"] == "stop" for d in det),
                  "no detached(stop)")
            gaps += len(cat.events("perf_seq_gap"))
            unload()
            check(not module_loaded(), "still loaded")
            if i == 0:
                log("  rmmod with a blocked reader refused in %.2fs" %
                    refused)
            STATS["rmmod"] = STATS.get("rmmod", 0) + 1
            cleanup(cat)
    finally:
        ch.kill()
    log("  %d rmmod/insmod cycles with a reader and targets, %d explained "
        "gaps" % (n, gaps))


# ---------------------------------------------------------- overflow ---

def status_ring():
    """(bytes used, drops) from the status file."""
    used = drops = None
    for ln in read_file("status").splitlines():
        if ln.startswith("ring:"):
            used = int(ln.split(",")[1].split()[0])
        elif ln.startswith("records:") and "dropped" in ln:
            drops = int(ln.split(",")[1].split()[0])
            break
    check(used is not None and drops is not None, "no ring line in status")
    return used, drops


def phase_overflow(recover_interval):
    """256 vCPU threads at 1 ms into a 256 KiB ring, read by vcpuperf-cat.
    The reader runs first and reads every started record; then it is
    stopped (SIGSTOP): the ring overflows.  After SIGCONT, still at 1 ms
    (unless --recover-interval says otherwise), it catches up:
    the drop count stops growing, rows flow again, and every drop is
    reported in the stream exactly (the tool fails on an unexplained
    gap)."""
    lap = Laps()
    load("ring_kb=256")
    ch = Churn("overflow", persist=256, spawners=0)
    lap("256 threads up")
    cat = None
    timeline = []
    try:
        cat = Cat("overflow", "--no-attach")    # the reader runs first
        CATS.append(cat)
        # Attach at a pace the reader keeps up with, so that it reads every
        # started record; then 1 ms, and the reader stops.
        check(control("interval 100ms") == 0, "interval")
        check(control("attach qemu=%d events=task-clock,context-switches" %
                      ch.pid) == 0, "attach")
        lap("attach")
        cat.wait_started(256, timeout=300)
        lap("256 started read")
        check(control("interval 1ms") == 0, "interval")
        time.sleep(1)
        _, before = status_ring()
        os.kill(cat.proc.pid, signal.SIGSTOP)       # the slow reader
        # (reading status with 256 targets takes seconds under TCG: wait
        # first, read once)
        time.sleep(3)
        deadline = time.time() + 60
        while status_ring()[1] == before and time.time() < deadline:
            time.sleep(1)
        _, at_resume = status_ring()
        check(at_resume > before, "no drops with a stopped reader")
        lap("overflow")
        if recover_interval:
            check(control("interval %s" % recover_interval) == 0,
                  "interval")
        resume = time.monotonic_ns()
        os.kill(cat.proc.pid, signal.SIGCONT)
        # Caught up: a 5 s window in which the drop count stays put while
        # rows keep coming.
        deadline = time.time() + 300
        quiet_from = None       # (when, drops, rows bytes) drops last moved
        while time.time() < deadline:
            used, d = status_ring()
            size = rows_size(cat)
            now = time.monotonic_ns()
            timeline.append(((now - resume) / 1e9, used, d, size))
            if quiet_from is None or d != quiet_from[1]:
                quiet_from = (now, d, size)
            elif now - quiet_from[0] >= 5e9 and size > quiet_from[2]:
                break
            time.sleep(0.5)
        check(now - quiet_from[0] >= 5e9 and size > quiet_from[2],
              "drops never stopped after the reader resumed: %s" %
              timeline[-10:])
        recovered, drops_recovered = quiet_from[0], quiet_from[1]
        lap("recovery")
        # The session ends while the ring is full: the reader stops again
        # until records are dropped, then the session is stopped.  The ring
        # keeps room for the session's finished record and its last
        # dropped record; the per-thread final records that do not fit
        # are dropped and counted like any other.
        os.kill(cat.proc.pid, signal.SIGSTOP)
        _, d_full = status_ring()
        deadline = time.time() + 60
        while status_ring()[1] == d_full and time.time() < deadline:
            time.sleep(0.5)
        _, d_full = status_ring()
        check(control("stop") == 0, "stop")
        _, d_stop = status_ring()
        os.kill(cat.proc.pid, signal.SIGCONT)
        rc = cat.wait(timeout=300)
        _, provoked = status_ring()
        lap("full again, stop")
    finally:
        if cat and cat.proc.poll() is None:
            os.kill(cat.proc.pid, signal.SIGCONT)
            cat.proc.kill()
        ch.kill()
    unload()
    lap("rmmod")
    check(rc == 0, "reader exit %d (unexplained gap?): %s" % (rc, cat.stderr))
    dropped = cat.events("perf_dropped")
    reported = sum(d["count"] for d in dropped)
    gaps = cat.events("perf_seq_gap")
    fin = session_finished(cat)
    rows, fresh, _ = watched_gap(cat, ch.tids, recovered, 2**62)
    STATS["drops_provoked"] = STATS.get("drops_provoked", 0) + provoked
    STATS["drops_reported"] = STATS.get("drops_reported", 0) + reported
    log("  timeline after SIGCONT (s, ring bytes used, drops, rows file "
        "bytes): %s" % " ".join("%.1f/%d/%d/%d" % x for x in
                                timeline[::max(1, len(timeline) // 12)]))
    log("  drops provoked %d (status; %d before the stop, %d at resume, %d "
        "when recovered %.1fs after resume), reported %d in %d perf_dropped, "
        "%d seq gaps all explained: %s, session finished drops %s, %d rows "
        "after recovery; ring full again at %d drops, %d right after the "
        "stop" %
        (provoked, before, at_resume, drops_recovered,
         (recovered - resume) / 1e9, reported, len(dropped), len(gaps),
         all(g["explained"] for g in gaps), fin and fin["drops"], fresh,
         d_full, d_stop))
    lap("counting")
    log("  time: %s" % lap)
    check(all(g["explained"] for g in gaps), "unexplained gaps")
    check(reported == provoked, "reported %d != provoked %d" %
          (reported, provoked))
    check(fin and fin["drops"] == provoked, "session drops %s" %
          (fin and fin["drops"]))
    check(fresh >= 256, "only %d rows after recovery" % fresh)
    check(d_full > drops_recovered, "the ring never filled up again")
    cleanup(cat)


# -------------------------------------------------------------- qemu ---

def phase_qemu():
    load()
    q = subprocess.Popen(["qemu-system-x86_64", "-name", "s,debug-threads=on",
                          "-smp", "2", "-m", "32", "-display", "none",
                          "-nodefaults", "-no-user-config", "-accel", "tcg"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cat = None
    try:
        deadline = time.time() + 60
        names = set()
        while time.time() < deadline and \
                not {"CPU 0/TCG", "CPU 1/TCG"} <= names:
            time.sleep(0.1)
            names = set()
            for t in os.listdir("/proc/%d/task" % q.pid):
                try:
                    with open("/proc/%d/task/%s/comm" % (q.pid, t)) as f:
                        names.add(f.read().strip())
                except OSError:
                    pass
        check({"CPU 0/TCG", "CPU 1/TCG"} <= names, "no vCPU threads")
        cat = Cat("qemu", "--qemu", str(q.pid), "--events",
                  "task-clock,context-switches", "--interval", "5ms")
        cat.wait_started(2)
        time.sleep(1 + RNG.random())
        q.send_signal(signal.SIGKILL)
        q.wait()
        time.sleep(0.5)
        rc = cat.stop()
    finally:
        if q.poll() is None:
            q.kill()
            q.wait()
        if cat and cat.proc.poll() is None:
            cat.proc.kill()
    unload()
    ex = cat.events("perf_task_exited")
    log("  QEMU SIGKILLed while attached: %d rows, %d perf_task_exited, "
        "detached %s" % (len(cat.rows()), len(ex),
                         sorted(e["reason"] for e in
                                cat.events("perf_detached"))))
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, cat.stderr))
    check(len(ex) == 2, "want 2 perf_task_exited")


# -------------------------------------------------------------- fuzz ---

CTLFUZZ = os.path.join(REPO, "tests", "stress", "ctlfuzz")


def seeds(pid, tids):
    t = ",".join(str(x) for x in tids)
    return [
        "attach qemu=%d events=task-clock,context-switches" % pid,
        "attach pid=%d events=cycles:u,instructions:k guest_only" % pid,
        "attach tid=%s events=r1234,1:3,sched:sched_switch pinned" % t,
        "attach tid=%s events=L1-dcache-load-misses:GH user_only" % t,
        "attach qemu=%d host_only kernel_only" % pid,
        "attach tid=%d events=kvm:kvm_exit,page-faults:D" % tids[0],
        "interval 5ms\n", "interval 250us", "interval 1s", "interval 3",
        "attach pid=1 events=task-clock",
        "attach tid=%s,%s events=cs,faults,cpu-migrations" % (t, t),
    ]


AWK_GAP = r"""
BEGIN { n = split(tids, a, ","); for (i = 1; i <= n; i++) want[a[i]] = 1 }
match($0, /"tid":[0-9]+/) {
    t = substr($0, RSTART + 6, RLENGTH - 6)
    if (!(t in want)) next
    match($0, /"t_mono_ns":[0-9]+/)
    ts = substr($0, RSTART + 12, RLENGTH - 12) + 0
    rows++
    if (ts >= t0 && ts <= t1) {
        if (t in last && ts - last[t] > gap) gap = ts - last[t]
        last[t] = ts
        inwin++
    }
}
END { printf "%d %d %d\n", rows, inwin, gap }
"""


def watched_gap(cat, tids, t0, t1):
    """Rows of tids, rows of tids within [t0, t1] (CLOCK_MONOTONIC ns) and
    the longest gap between two rows of the same tid in that window (awk:
    the rows file is too large for Python under TCG)."""
    p = subprocess.run(["awk", "-v", "tids=" + ",".join(map(str, tids)),
                        "-v", "t0=%d" % t0, "-v", "t1=%d" % t1, AWK_GAP,
                        cat.rows_path], capture_output=True, text=True,
                       timeout=600, check=True)
    rows, inwin, gap = (int(x) for x in p.stdout.split())
    return rows, inwin, gap


WATCHDOG = r"""
while sleep %d; do
echo "== watchdog: task stacks"
ls -l /tmp/stress
head -c 1500 /sys/kernel/debug/vcpuperf/status
for p in /proc/[0-9]*; do
    c=$(cat $p/comm 2>/dev/null)
    case "$c" in ctlfuzz|python3|vcpuperf*|churn) ;; *) continue ;; esac
    echo "-- ${p#/proc/} $c $(cut -d' ' -f3 $p/stat)"
    cat $p/stack 2>/dev/null
    for t in $p/task/*; do
        echo "   task ${t##*/} $(cat $t/comm) $(cut -d' ' -f3 $t/stat)"
        cat $t/stack 2>/dev/null | sed 's/^/     /'
    done
done
echo w > /proc/sysrq-trigger 2>/dev/null && dmesg | tail -n 150
echo "== watchdog end"
done
"""


def ctlfuzz(*args):
    """Run tests/stress/ctlfuzz to the end; its JSON summary."""
    p = subprocess.run([CTLFUZZ, "--control", CTRL] + list(args),
                       capture_output=True, text=True, timeout=3600)
    check(p.stdout.strip(), "ctlfuzz printed nothing (rc %d): %s" %
          (p.returncode, p.stderr))
    check(p.returncode == 0, "ctlfuzz failed (rc %d): %s" %
          (p.returncode, p.stderr.strip()))
    return json.loads(p.stdout)


def write_cost(label):
    """Mean and max kernel time of one rejected control write, in us."""
    r = ctlfuzz("--count", "300", "--fixed", "bogus command")
    check(r["errno"] == {"EINVAL": 300}, "bogus command: %s" % r["errno"])
    return "%s %.0f us mean, %.0f us max" % (
        label, r["write_ns_total"] / 1e3 / r["writes"],
        r["write_ns_max"] / 1e3)


def undo_fuzzed(keep):
    """Detach what valid fuzzed attaches added (all but the line starting
    with keep) and reset the interval: the next batch starts from the same
    state and the sampling pass stays short.  Returns the detaches done."""
    n = 0
    for ln in read_file("control").splitlines():
        if ln.startswith("attach ") and not ln.startswith(keep + " "):
            target = ln.split()[1]
            e = control("detach " + target)
            check(e in (0, errno.ESRCH), "detach %s: %s" % (target,
                                                            ename(e)))
            n += e == 0
    check(control("interval 10ms") == 0, "interval reset")
    return n


def phase_fuzz(n, batch=int(os.environ.get("VP_FUZZ_BATCH", "1000"))):
    """tests/stress/ctlfuzz writes n random and mutated commands to the
    control file, in batches, while a qemu= collection (2 vCPU threads,
    10 ms) runs: every errno is a documented one, the collection is never
    lost, and its rows keep coming throughout.  Between batches whatever a
    valid fuzzed attach added is detached again (each command waits for the
    sampler's lock, so hundreds of fuzz-attached threads would make every
    write wait for a long sampling pass)."""
    load()
    costs = [write_cost("idle module:")]
    log("  " + costs[0])
    ch = Churn("fuzz", persist=2, spawners=0)
    cat = Cat("fuzz", "--no-attach")
    CATS.append(cat)
    keep = "attach qemu=%d" % ch.pid
    attach = keep + " events=task-clock,context-switches"
    res = {"writes": 0, "filtered": 0, "resets": 0, "wall_ns": 0, "slow": 0,
           "write_ns_total": 0, "write_ns_max": 0, "errno": {}}
    stalls = longest = windows = detached = batches = 0
    try:
        check(control("interval 10ms") == 0, "interval")
        check(control(attach) == 0, "attach")
        cat.wait_started(2)
        costs.append(write_cost("collection running:"))
        log("  " + costs[1])
        sd = seeds(ch.pid, ch.tids)
        t0 = time.monotonic_ns()
        last = rows_size(cat)
        run = 0
        deadline = time.time() + 3600
        while res["writes"] < n:
            fz = subprocess.Popen(
                [CTLFUZZ, "--control", CTRL, "--count",
                 str(min(batch, n - res["writes"])), "--seed",
                 str(RNG.randrange(1, 2**32)), "--reset-every", "200",
                 "--reset", "interval 10ms", "--slow-ms", os.environ.get("VP_FUZZ_SLOW_MS", "100"), "--"] + sd,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # Rows must keep coming: the file grows in every 2 s window, or
            # at the latest within 15 windows (a fuzzed interval up to 60 s
            # is undone by ctlfuzz's reset every 200 writes; 30 s leaves
            # room for a starved TCG guest).
            t_batch = time.time()
            dumped = False
            while fz.poll() is None:
                time.sleep(2)
                if not dumped and time.time() - t_batch > 60:
                    dumped = True
                    for f in ("stack", "syscall", "wchan", "stat"):
                        try:
                            with open("/proc/%d/%s" % (fz.pid, f)) as pf:
                                log("  ctlfuzz slow, /proc/%s:\n%s" %
                                    (f, pf.read().strip()))
                        except OSError as ex:
                            log("  /proc/%s: %s" % (f, ex))
                    log(read_file("status")[:3000])
                # (not "%s" % stderr.read() in the message: evaluated on
                # every call, it blocks until the reader exits)
                if cat.proc.poll() is not None:
                    raise TestFailure("reader died: %s" %
                                      cat.proc.stderr.read())
                size = rows_size(cat)
                windows += 1
                if size > last:
                    run = 0
                else:
                    run += 1
                    stalls += 1
                    longest = max(longest, run)
                last = size
                check(run < 15, "no rows for 30 s after %d writes" %
                      res["writes"])
                check(time.time() < deadline, "ctlfuzz too slow")
            out, err = fz.communicate()
            check(out.strip(), "ctlfuzz printed nothing (rc %d): %s" %
                  (fz.returncode, err))
            r = json.loads(out)
            check(fz.returncode == 0, "ctlfuzz failed (rc %d): %s" %
                  (fz.returncode, err.strip()))
            if err.strip() and res["slow"] < 20:
                log("\n".join("  " + ln for ln in err.strip().splitlines()))
            for k in ("writes", "filtered", "resets", "wall_ns",
                      "write_ns_total", "slow"):
                res[k] += r[k]
            res["write_ns_max"] = max(res["write_ns_max"], r["write_ns_max"])
            for k, v in r["errno"].items():
                res["errno"][k] = res["errno"].get(k, 0) + v
            batches += 1
            detached += undo_fuzzed(keep)
            log("  batch %d: %d writes, %.1fs, %.0f us per write, %d slow, "
                "%d detached after" % (batches, r["writes"], r["wall_ns"] / 1e9,
                                       r["write_ns_total"] / 1e3 / max(1, r["writes"]),
                                       r["slow"], detached))
        t1 = time.monotonic_ns()
        # The watched collection survived: attaching it again is EEXIST.
        e = control(attach)
        check(e == errno.EEXIST, "collection not attached any more: "
              "re-attach gives %s" % ename(e))
        time.sleep(0.5)
        check(control("stop") == 0, "stop")
        rc = cat.wait(timeout=300)
    finally:
        if cat.proc.poll() is None:
            cat.proc.kill()
        ch.kill()
    unload()
    rows, inwin, gap = watched_gap(cat, ch.tids, t0, t1)
    written = res["writes"]
    STATS["writes"] = STATS.get("writes", 0) + written
    log("  %d control writes in %d batches, %.1fs (+%d interval resets, %d "
        "candidates filtered as stop/detach, %d fuzz-attached targets "
        "detached between batches), by errno %s" %
        (written, batches, res["wall_ns"] / 1e9, res["resets"],
         res["filtered"], detached, res["errno"]))
    log("  kernel time per write: fuzz %.0f us mean, %.1f ms max, %d over "
        "100 ms; one rejected write: %s" %
        (res["write_ns_total"] / 1e3 / max(1, written),
         res["write_ns_max"] / 1e6, res["slow"], "; ".join(costs)))
    log("  rows: %d of %d 2 s windows without new rows (longest run %d); "
        "watched threads %s: %d rows, %d during the writes, longest gap "
        "%.1f ms" % (stalls, windows, longest, ch.tids, rows, inwin,
                     gap / 1e6))
    check(rc == 0, "reader exit %d: %s" % (rc, cat.stderr))
    check(inwin > 0, "no rows of the watched threads during the writes")
    check(gap < 30e9, "watched threads had no row for %.1f s" % (gap / 1e9))
    cleanup(cat)


# ------------------------------------------------------- collections ---

# A refused rmmod does not wait for the openers (the integration tests
# bound it at vptest.RMMOD_REFUSED_S on an idle machine); here, with every
# CPU busy with the workers, starting the rmmod process alone has taken
# 7.2 s under the debug kernel.  That rmmod does not wait for the openers
# is proven there, bounded tightly; this bound only catches a hang.
RMMOD_REFUSED_BUSY_S = 30.0


# One of the concurrent users: tests/stress/collworker (its file says what
# a cycle is).  It prints "cycle N" after each (the driver counts what a
# SIGKILL left) and exits 3 at the first errno outside the documented set.
COLLWORKER = os.path.join(REPO, "tests", "stress", "collworker")

# The chance that the driver's pass (every 0.2 s) SIGKILLs one worker, so
# that kills land in every part of a cycle; never more kills than cycles
# done, so that the last workers are not killed faster than they finish
# (a kill every pass and no bound took 371 s and 529 kills).
KILL_CHANCE = 0.6


def slab_unreclaimable():
    """SUnreclaim in KiB once every slab cache has been shrunk, which also
    empties KASAN's quarantine of freed objects (kasan_cache_shrink)."""
    for d in os.listdir("/sys/kernel/slab"):
        try:
            with open("/sys/kernel/slab/%s/shrink" % d, "w") as f:
                f.write("1")
        except OSError:
            pass
    with open("/proc/meminfo") as f:
        for ln in f:
            if ln.startswith("SUnreclaim:"):
                return int(ln.split()[1])
    raise TestFailure("no SUnreclaim")


def phase_collections(n, procs=8, rmmods=3):
    """@n open/attach/close cycles from @procs processes at once, random
    SIGKILLs, @rmmods rmmod attempts meanwhile (each refused at once while
    a file is open, or through and the module loaded again); then no
    collection left and unreclaimable slab back within 1 MiB once the
    module is out."""
    unload()
    slab0 = slab_unreclaimable()
    load()
    ch = Churn("coll", persist=4, spawners=2)
    steady = vptest.Workload("coll-steady", "--threads", "2",
                             "--hold-ms", "600000")
    quota = (n + procs - 1) // procs
    workers = {}
    counts = {}         # (worker index, pid) -> cycles it reported
    kills = rounds = 0

    def follow(key, out):
        for ln in out:
            if ln.startswith("cycle "):
                counts[key] = int(ln.split()[1])

    def done_by(i):
        return sum(v for (j, _), v in counts.items() if j == i)

    def spawn(i):
        p = subprocess.Popen(
            [COLLWORKER, "/dev/vcpuperf",
             str(ch.pid), str(steady.tids[0]), str(quota - done_by(i)),
             str(RNG.randrange(1 << 30))], stdout=subprocess.PIPE, text=True)
        r = threading.Thread(target=follow, args=((i, p.pid), p.stdout),
                             daemon=True)
        r.start()
        workers[i] = (p, r)

    try:
        for i in range(procs):
            spawn(i)
        deadline = time.time() + 1200
        next_rmmod = [n * (k + 1) // (rmmods + 1) for k in range(rmmods)]
        while time.time() < deadline:
            # Done when every worker has exited and none was killed short
            # of its quota (judged on one poll() each: a worker killed
            # after the check would otherwise end the phase unreplaced).
            pending = False
            for i, (p, r) in list(workers.items()):
                rc = p.poll()
                check(rc in (None, 0, -signal.SIGKILL),
                      "worker %d failed (exit %s)" % (i, rc))
                if rc is None:
                    pending = True
                elif rc == -signal.SIGKILL:
                    r.join(5)
                    if done_by(i) < quota:
                        spawn(i)
                        pending = True
            total = sum(counts.values())
            if not pending:
                break
            if next_rmmod and total >= next_rmmod[0]:
                next_rmmod.pop(0)
                t0 = time.time()
                p = sh("rmmod vcpuperf", check_rc=False, timeout=120)
                took = time.time() - t0
                # Refused at once while a file is open; else through
                # (module exit then waits an RCU-tasks grace period).
                check(p.returncode == 0 or "in use" in p.stderr,
                      "rmmod: %s" % p.stderr)
                check(p.returncode == 0 or took < RMMOD_REFUSED_BUSY_S,
                      "refused rmmod took %.1f s" % took)
                if p.returncode == 0:
                    time.sleep(RNG.random() * 0.2)
                    load()
                rounds += 1
                log("  rmmod round %d at %d cycles: %s in %.2fs" %
                    (rounds, total, "through" if p.returncode == 0 else
                     "refused", took))
            elif kills < total and RNG.random() < KILL_CHANCE:
                alive = [p for p, _ in workers.values() if p.poll() is None]
                if alive:
                    RNG.choice(alive).kill()
                    kills += 1
            time.sleep(0.2)
        for p, r in workers.values():
            if p.poll() is None:
                p.kill()
            p.wait()
            r.join(5)
        total = sum(counts.values())
        check(total >= n, "only %d cycles done" % total)
        left = [k for k in re.findall(r"^collection (\d+):",
                                      read_file("status"), re.M)
                if k != "0"]
        check(not left, "collections left behind: %s" % left)
    finally:
        for p, _ in workers.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        steady.kill()
        ch.kill()
    unload()
    slab1 = slab_unreclaimable()
    STATS["coll_cycles"] = total
    STATS["coll_slab"] = slab1 - slab0
    log("  %d open/attach/close cycles by %d processes, %d SIGKILLs, %d "
        "rmmod attempts; unreclaimable slab %+d KiB after rmmod" %
        (total, procs, kills, rounds, slab1 - slab0))
    check(rounds == rmmods, "only %d rmmod rounds" % rounds)
    check(slab1 - slab0 <= 1024, "unreclaimable slab %+d KiB after the "
          "module is gone" % (slab1 - slab0))


# -------------------------------------------------------------- main ---

def meminfo():
    sh("sync; echo 3 > /proc/sys/vm/drop_caches", check_rc=False)
    return vptest.meminfo()


def dmesg_lines():
    return sh("dmesg").stdout.splitlines()


def main(argv):
    long_run = "--long" in argv
    only = None
    if "--only" in argv:
        only = argv[argv.index("--only") + 1].split(",")
    n_cycles, n_rmmod, n_writes, n_coll = ((1000, 25, 100000, 1000)
                                           if long_run else
                                           (200, 5, 20000, 200))
    if long_run:
        # five times the short form's work per phase (at most 50 s there)
        vptest.HANG_S = max(vptest.HANG_S, 1800)
    for opt, conv in (("--cycles", int), ("--rmmods", int),
                      ("--writes", int)):
        if opt in argv:
            v = conv(argv[argv.index(opt) + 1])
            if opt == "--cycles":
                n_cycles = v
            elif opt == "--rmmods":
                n_rmmod = v
            else:
                n_writes = v
    recover = None         # recovery at the same 1 ms
    if "--recover-interval" in argv:
        recover = argv[argv.index("--recover-interval") + 1]
    phases = [
        ("churn", lambda: phase_churn(n_cycles)),
        ("rmmod", lambda: phase_rmmod(n_rmmod)),
        ("overflow", lambda: phase_overflow(recover)),
        ("qemu", phase_qemu),
        ("fuzz", lambda: phase_fuzz(n_writes)),
        ("collections", lambda: phase_collections(n_coll)),
    ]
    # --only: every name must be a phase's (a misspelt one ran nothing).
    unknown = sorted(set(only or ()) - {name for name, _ in phases})
    if unknown:
        print("stress.py: no phase %s (phases: %s)" %
              (", ".join(unknown), ", ".join(n for n, _ in phases)),
              file=sys.stderr)
        return 2
    # --check: the arguments only, on the host before a VM is booted.
    if "--check" in argv:
        return 0
    unload()
    mark = len(dmesg_lines())
    mem0 = meminfo()
    kmemleak = os.path.exists("/sys/kernel/debug/kmemleak")
    if kmemleak:  # forget what boot left behind
        with open("/sys/kernel/debug/kmemleak", "w") as f:
            f.write("clear")
    t_all = time.time()

    def as_test(name, fn):
        def phase():
            fn()
        phase.__name__ = name
        return phase

    watchdog = [os.environ.get("VP_STRESS_WATCHDOG")]

    def start(phase):
        if watchdog[0]:
            # every N seconds: stacks of the test's processes, the status
            # file (started here, inside the TAP output: its lines are
            # comments)
            subprocess.Popen(["sh", "-c", WATCHDOG % int(watchdog[0])])
            watchdog[0] = None
        log("== %s" % phase.__name__)
        del CATS[:]

    def after_failure(phase, e):
        keep_events()
        if module_loaded():
            control("stop")
            unload()

    # After everything: clean log, no leak, no module, slab back.
    def kernel_log_clean():
        unload()
        lines = dmesg_lines()[mark:]
        bad = [i for i, ln in enumerate(lines) if any(b in ln for b in BAD)]
        if bad:
            i = bad[0]
            raise TestFailure("kernel log:\n" + "\n".join(
                lines[max(0, i - 5):i + 60]))
        log("  %d new lines" % len(lines))

    def no_leak():
        try:
            if kmemleak:
                with open("/sys/kernel/debug/kmemleak", "w") as f:
                    f.write("scan")
                time.sleep(6)
                with open("/sys/kernel/debug/kmemleak", "w") as f:
                    f.write("scan")
                with open("/sys/kernel/debug/kmemleak") as f:
                    rep = f.read()
                check(not rep.strip(), "kmemleak:\n" + rep[:6000])
            lsmod = sh("lsmod", check_rc=False).stdout
            check(not any(ln.split()[0] == "vcpuperf" for ln in
                          lsmod.splitlines()[1:] if ln.split()),
                  "vcpuperf still in lsmod")
            mem1 = meminfo()
            ds = mem1["Slab"] - mem0["Slab"]
            dsu = mem1["SUnreclaim"] - mem0["SUnreclaim"]
            da = mem1["MemAvailable"] - mem0["MemAvailable"]
            log("  memory after final rmmod: Slab %+d KiB, SUnreclaim %+d "
                "KiB, MemAvailable %+d KiB" % (ds, dsu, da))
            # KASAN's quarantine keeps freed objects in slab pages for a
            # while.
            check(dsu < 32768, "unreclaimable slab grew by %d KiB" % dsu)
            log("  kmemleak %s, module unloaded, slab back" %
                ("clean" if kmemleak else "absent"))
        finally:
            log("cycles done %d, rmmod/insmod %d, control writes %d, drops "
                "provoked %d vs reported %d, collection cycles %d (slab %+d "
                "KiB), %.0fs" %
                (STATS.get("cycles", 0), STATS.get("rmmod", 0),
                 STATS.get("writes", 0), STATS.get("drops_provoked", 0),
                 STATS.get("drops_reported", 0), STATS.get("coll_cycles", 0),
                 STATS.get("coll_slab", 0), time.time() - t_all))

    tests = [as_test(name, fn) for name, fn in phases
             if not only or name in only]
    return vptest.run(tests, final=[kernel_log_clean, no_leak],
                      before_each=start, on_failure=after_failure)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
