#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vcpuperf benchmark, guest side: run as root inside the TCG VM
(scripts/bench.sh boots it) from the repository root.

    bench.py [--smoke] --out DIR

For every configuration (TIDs x events x interval) one spin process (bench/spin)
provides the threads; then the collectors run one after another, interleaved
(A B C ... A B C ...), on the same threads, events and interval:

  vcpuperf-direct  vcpuperf-cat --read direct (one cross-CPU call per counter
                   of a running thread: the path before issue 15)
  vcpuperf-kick    vcpuperf-cat --read kick (the thread reads itself, one
                   reschedule interrupt)
  vcpuperf-lazy    vcpuperf-cat --read lazy (no interrupt unless late)
  perf             perf stat --per-thread -p PID -I MS -j -e a,b,...
  perf-group       perf stat --per-thread -p PID -I MS -j -e '{a,b,...}'
  ureader          bench/ureader: one read() per (TID, event) per tick
  ureader-group    bench/ureader --group: one PERF_FORMAT_GROUP read per TID
  ureader-group-jsonl  the same, also writing vcpuperf-cat's JSONL rows
  floor            bench/floor/vpfloor.ko: create + perf_event_read_value(), discard

The module is loaded once; every vcpuperf-cat opens its own collection
(its sampler kthread vcpuperf/N, N from the status file's "owner pid").
'idle' (spinners only) gives the background rate of rescheduling (RES) and
function-call (CAL) interrupts.  Each run has a steady window (from 1.5
intervals after the first output, half the run long) over which CPU,
interrupts, ticks and lateness are measured.  Then one more vcpuperf-cat
run with the default read mode (auto) pipes its rows into bench/latrd for
the end-to-end latency and notes the mode auto picked.  Writes
DIR/vm.json.  Exits 1 only on real breakage (a collector that fails or
produces nothing, a kernel warning), never on a figure."""

import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time

REPO = os.getcwd()
B = os.path.join(REPO, "bench")
CAT = os.path.join(REPO, "tools", "vcpuperf-cat")
VPKO = os.path.join(REPO, "vcpuperf.ko")
FLOORKO = os.path.join(B, "floor", "vpfloor.ko")
DEBUGFS = "/sys/kernel/debug/vcpuperf"

# Software events only: the VM has no PMU.  (name, perf type, config)
EVENTS = [("task-clock", 1, 1), ("context-switches", 1, 3),
          ("page-faults", 1, 2), ("cpu-clock", 1, 0),
          ("cpu-migrations", 1, 4), ("minor-faults", 1, 5),
          ("major-faults", 1, 6), ("alignment-faults", 1, 7)]

FULL = [  # tids, events, interval_ms, seconds per run
    (8, 4, 100, 6.0), (64, 8, 10, 4.0), (256, 8, 10, 3.0), (512, 8, 10, 3.0)]
SMOKE = [(8, 4, 100, 1.2), (16, 4, 10, 0.8)]
VP_MODES = ["direct", "kick", "lazy"]
COLLECTORS = ["vcpuperf-" + m for m in VP_MODES] + [
    "perf", "perf-group", "ureader", "ureader-group", "ureader-group-jsonl",
    "floor"]

problems = []


def log(*a):
    print("bench:", *a, flush=True)


def sh(cmd, check=True):
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    if check and p.returncode:
        raise RuntimeError("%s: rc %d: %s%s" % (cmd, p.returncode, p.stdout,
                                                 p.stderr))
    return p.stdout


def mono_ns():
    return time.monotonic_ns()


def irqs():
    """Rescheduling and function-call interrupts so far, all CPUs."""
    r = {"res": 0, "cal": 0}
    with open("/proc/interrupts") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0] in ("RES:", "CAL:"):
                r[parts[0][:3].lower()] = sum(int(x) for x in parts[1:]
                                              if x.isdigit())
    return r


def schedstat_ns_path(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def schedstat_ns(pid):
    return None if pid is None else schedstat_ns_path(
        "/proc/%d/schedstat" % pid)


def task_schedstat(pid):
    """(CPU time in ns, times scheduled in) of every thread of process
    pid, summed (schedstat's first and third fields); None if it is
    gone."""
    ns = slices = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/schedstat" % (pid, t)) as f:
                    v = f.read().split()
                ns += int(v[0])
                slices += int(v[2])
            except (OSError, ValueError, IndexError):
                pass
    except OSError:
        return None
    return ns, slices


def task_cpu_ns(pid):
    """CPU time of every thread of process pid (schedstat), ns."""
    st = task_schedstat(pid)
    return st and st[0]


def kthreads(prefix):
    """{comm: pid} of the kernel threads whose name starts with prefix."""
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % d) as f:
                comm = f.read().strip()
            if not comm.startswith(prefix):
                continue
            with open("/proc/%s/stat" % d) as g:
                if g.read().rsplit(")", 1)[1].split()[1] == "2":
                    found[comm] = int(d)
        except OSError:
            pass
    return found


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))
    except (OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


STATUS_RE = {
    "owner": re.compile(r"owner pid (\d+)"),
    "passes": re.compile(r"^passes: (\d+), missed grid points: (\d+)", re.M),
    "records": re.compile(r"^records: (\d+) produced, (\d+) dropped", re.M),
    "ring": re.compile(r"^ring: \d+ bytes, \d+ used, (\d+) records queued",
                       re.M),
    "read": re.compile(
        r"^read: (\w+) \(now (\w+)\); (\d+) direct \(not on a CPU\), (\d+) by "
        r"the thread itself \((\d+) kicks, (\d+) us in the threads\)", re.M),
    "fb": re.compile(r"^read fallbacks: (\d+) timeout, (?:(\d+) switched "
                     r"out, )?(\d+) pending, (\d+) kthread, (\d+) exiting",
                     re.M),
}


def status(coll_id=None):
    """The status file's collections: {N: {...}}, or the one numbered
    coll_id.  Parses each collection's head only (not its targets)."""
    t0 = mono_ns()
    with open(os.path.join(DEBUGFS, "status")) as f:
        text = f.read()
    return parse_status(text, t0, mono_ns(), coll_id)


def parse_status(text, t0, t1, coll_id=None):
    """status() of the status file's @text, read from @t0 to @t1
    (CLOCK_MONOTONIC ns)."""
    colls = {}
    for block in text.split("\n\n"):
        m = re.match(r"collection (\d+): ", block)
        if not m:
            continue
        n = int(m.group(1))
        if coll_id is not None and n != coll_id:
            continue
        head = block.split("\ntargets:", 1)[0]
        c = {"id": n, "read_at_ns": (t0 + t1) // 2, "read_ns": t1 - t0}
        o = STATUS_RE["owner"].search(head.split("\n", 1)[0])
        c["owner"] = int(o.group(1)) if o else None
        m = STATUS_RE["passes"].search(head)
        if m:
            c["passes"], c["missed"] = int(m.group(1)), int(m.group(2))
        m = STATUS_RE["records"].search(head)
        if m:
            c["produced"], c["dropped"] = int(m.group(1)), int(m.group(2))
        m = STATUS_RE["ring"].search(head)
        if m:
            c["queued"] = int(m.group(1))
        m = STATUS_RE["read"].search(head)
        if m:
            c["mode"], c["mode_now"] = m.group(1), m.group(2)
            for k, g in (("direct", 3), ("self", 4), ("kicks", 5),
                         ("self_us", 6)):
                c[k] = int(m.group(g))
        m = STATUS_RE["fb"].search(head)
        if m:
            for k, g in (("fb_timeout", 1), ("fb_switched", 2),
                         ("fb_pending", 3), ("fb_kthread", 4),
                         ("fb_exiting", 5)):
                c[k] = int(m.group(g) or 0)
        colls[n] = c
    return colls.get(coll_id) if coll_id is not None else colls


def window(dur, interval_s, ready_fn, alive_fn, snap_fn, outer_fn=None,
           setup_fn=None):
    """Steady-state window: wait until the collector produces (ready_fn),
    call setup_fn once, then snap_fn() (interrupts, CPU) at T1 = ready +
    1.5 intervals and at T2 = T1 + dur/2.  outer_fn() (the status file) is
    read right after setup and right after T2: reading it holds the
    collection's lock (about 0.1 s at 512 threads under TCG), which delays
    the sampler, so T1 waits until the sampler has caught up (one interval
    plus twice that read after it)."""
    t0 = time.monotonic()
    while not ready_fn():
        if not alive_fn() or time.monotonic() - t0 > dur / 2 + 60:
            return None
        time.sleep(0.02)
    ready = time.monotonic()
    ctx = setup_fn() if setup_fn else None
    o1 = outer_fn(ctx) if outer_fn else None
    guard = interval_s + 2 * (o1["read_ns"] / 1e9 if o1 else 0.0)
    time.sleep(max(0.0, 1.5 * interval_s - (time.monotonic() - ready),
                   guard))
    t1, s1 = mono_ns(), snap_fn(ctx)
    time.sleep(dur / 2)
    s2, t2 = snap_fn(ctx), mono_ns()
    o2 = outer_fn(ctx) if outer_fn else None
    if not alive_fn() or None in s1.values() or None in s2.values():
        return None
    return dict(t1=t1, t2=t2, seconds=(t2 - t1) / 1e9, startup_s=ready - t0,
                ready=ready, d={k: s2[k] - s1[k] for k in s1}, o1=o1, o2=o2,
                ctx=ctx)


def alive(pid):
    """Is the child pid still running?  (Without reaping it.)"""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG |
                         os.WNOWAIT) is None
    except ChildProcessError:
        return False


def signal_child(pid, sig):
    if alive(pid):
        os.kill(pid, sig)


def run_child(argv, deadline_s, stdout=None, sig=signal.SIGINT, win=None,
              after_fn=None):
    """Start argv, wait for it (signal it after deadline_s, SIGKILL 30 s
    later); win=(dur, interval_s, ready_fn, snap_fn(pid, ctx), outer_fn,
    setup_fn(pid)) also measures a steady-state window; after_fn(w) runs
    after the window and then every 0.1 s until the child exits.  Return
    (rc, cpu_ns of the child and all its threads, wall_s, stderr,
    window)."""
    t0 = time.monotonic()
    errf = open("/tmp/child.err", "w+")
    p = subprocess.Popen(argv, stdout=stdout or subprocess.DEVNULL,
                         stderr=errf)
    timers = [threading.Timer(deadline_s, signal_child, (p.pid, sig)),
              threading.Timer(deadline_s + 30, signal_child,
                              (p.pid, signal.SIGKILL))]
    for t in timers:
        t.start()
    w = None
    if win:
        dur, ivs, ready_fn, snap, outer, setup = win
        w = window(dur, ivs, ready_fn, lambda: alive(p.pid),
                   lambda ctx: snap(p.pid, ctx), outer,
                   (lambda: setup(p.pid)) if setup else None)
    if after_fn:
        after_fn(w)
        while alive(p.pid):
            time.sleep(0.1)
            after_fn(w)
    _, st, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    for t in timers:
        t.cancel()
    p.returncode = os.waitstatus_to_exitcode(st)
    errf.seek(0)
    err = errf.read()
    errf.close()
    cpu = int((ru.ru_utime + ru.ru_stime) * 1e9)
    return p.returncode, cpu, wall, err, w


def file_has(path, needle):
    try:
        with open(path, "rb") as f:
            return needle in f.read(65536)
    except OSError:
        return False


def steady(res, w, ntid, nev, ticks, rows=None):
    """Per-sample and per-(TID x tick) figures of the window.  ticks: grid
    points read in it; rows: (TID, tick) rows read in it (ticks x TIDs if
    not given)."""
    if not w or not ticks:
        res["steady"] = None
        return res
    rows = rows if rows is not None else ticks * ntid
    d = w["d"]
    s = dict(seconds=w["seconds"], t1=w["t1"], t2=w["t2"], ticks=ticks,
             rows=rows, startup_s=w["startup_s"], res=d["res"], cal=d["cal"],
             ticks_asked=w["seconds"] * 1e3 / res["interval_ms"])
    cpu = {k[4:]: v for k, v in d.items() if k.startswith("cpu_")}
    s["cpu_ns"] = cpu
    s["cpu_ns_total"] = sum(cpu.values())
    samples = max(rows * nev, 1)
    s["cpu_ns_per_sample"] = {k: v / samples for k, v in cpu.items()}
    s["cpu_ns_per_sample_total"] = s["cpu_ns_total"] / samples
    s["res_per_tid_tick_raw"] = d["res"] / max(rows, 1)
    s["cal_per_tid_tick_raw"] = d["cal"] / max(rows, 1)
    res["steady"] = s
    return res


def rowstat(mode, interval_ns, path, lo=None, hi=None):
    extra = " %d %d" % (lo, hi) if lo is not None else ""
    return json.loads(sh("%s/rowstat %s %d %s%s" % (B, mode, interval_ns,
                                                     path, extra)))


def snap_irq_cpu(pid, kpid_fn=None):
    s = irqs()
    s["cpu_tool"] = task_cpu_ns(pid)
    if kpid_fn:
        s["cpu_kthread"] = schedstat_ns(kpid_fn())
    return s


class Spin:
    def __init__(self, n):
        ready = "/tmp/spin.ready"
        if os.path.exists(ready):
            os.unlink(ready)
        self.p = subprocess.Popen([os.path.join(B, "spin"), "-n", str(n),
                                   "--idle", "--ready", ready])
        deadline = time.time() + 120
        while not os.path.exists(ready):
            if self.p.poll() is not None or time.time() > deadline:
                raise RuntimeError("spin did not start")
            time.sleep(0.05)
        with open(ready) as f:
            info = json.load(f)
        self.pid, self.tids = info["pid"], info["tids"]

    def stop(self):
        self.p.kill()
        self.p.wait()


def find_collection(pid):
    """The collection vcpuperf-cat pid opened, and its sampler kthread:
    the newest vcpuperf/N, checked against the status file's owner pid."""
    ks = kthreads("vcpuperf/")
    ids = sorted((int(c.split("/")[1]), p) for c, p in ks.items()
                 if c.split("/")[1].isdigit())
    if not ids or ids[-1][0] == 0:
        return {"id": None, "kpid": None}
    n, kp = ids[-1]
    st = status(n)
    if not st or st.get("owner") != pid:
        problems.append("collection %d is owned by %r, not vcpuperf-cat %d"
                        % (n, st and st.get("owner"), pid))
    return {"id": n, "kpid": kp, "last_k": None}


def run_vcpuperf(cfg, spin, tag, mode):
    ntid, nev, ims, dur = cfg
    names = ",".join(e[0] for e in EVENTS[:nev])
    rows, evs = "/tmp/%s.rows.jsonl" % tag, "/tmp/%s.events.jsonl" % tag
    last = {}

    def snap(pid, ctx):
        s = irqs()
        s["cpu_tool"] = task_cpu_ns(pid)
        s["cpu_kthread"] = schedstat_ns(ctx["kpid"])
        return s

    def after(w):
        if w and w["ctx"]:
            v = schedstat_ns(w["ctx"]["kpid"])
            if v is not None:
                last["kthread"] = v
        # dur seconds of rows, however long attaching took
        if w and "term" not in last and time.monotonic() >= w["ready"] + dur:
            last["term"] = True
            signal_child(last["pid"], signal.SIGTERM)

    def setup(pid):
        last["pid"] = pid
        return find_collection(pid)

    rc, cpu, wall, err, w = run_child(
        [CAT, "--tid", ",".join(map(str, spin.tids)), "--interval",
         "%dms" % ims, "--events", names, "--read", mode, "-o", rows,
         "--events-out", evs],
        dur + 60, sig=signal.SIGTERM,
        win=(dur, ims / 1000, lambda: file_has(rows, b"late_ns"), snap,
             lambda ctx: status(ctx["id"]), setup),
        after_fn=after)
    ivn = ims * 1000000
    st = rowstat("vcpuperf", ivn, rows, w["t1"], w["t2"]) if w else \
        rowstat("vcpuperf", ivn, rows)
    ndrop_ev = sum(1 for ln in open(evs) if '"perf_dropped"' in ln) \
        if os.path.exists(evs) else 0
    for f in (rows, evs):
        if os.path.exists(f):
            os.unlink(f)
    res = dict(rc=rc, interval_ms=ims, mode=mode, cpu_tool_ns=cpu,
               wall_s=wall, rows_total=st["lines"], late=st.get("late"),
               ticks=st["ticks"], interval_mean_ns=st["interval_mean_ns"],
               jitter_p99_ns=st["jitter_p99_ns"],
               jitter_max_ns=st["jitter_max_ns"],
               perf_dropped_events=ndrop_ev)
    if w and w["o1"] and w["o2"]:
        o1, o2 = w["o1"], w["o2"]
        res["collection"] = o2["id"]
        res["status"] = {k: o2.get(k, 0) - o1.get(k, 0) for k in (
            "passes", "missed", "produced", "dropped", "direct", "self",
            "kicks", "self_us", "fb_timeout", "fb_switched", "fb_pending",
            "fb_kthread", "fb_exiting")}
        res["status"]["mode_now"] = o2.get("mode_now")
        res["status"]["seconds"] = (o2["read_at_ns"] - o1["read_at_ns"]) / 1e9
        res["status"]["read_ns"] = [o1["read_ns"], o2["read_ns"]]
        res["dropped"] = o2.get("dropped")
        # The module's share: its sampler kthread and the self-read work
        # in the target threads ("us in the threads"), the latter read
        # outside [T1, T2] (see window()): scaled to the window.
        span = res["status"]["seconds"]
        res["status"]["window_share"] = w["seconds"] / span if span else None
        w["d"]["cpu_module_self"] = (res["status"]["self_us"] * 1000 *
                                     (w["seconds"] / span if span else 1.0))
        w["d"]["cpu_module_kthread"] = w["d"].pop("cpu_kthread")
        # The whole run (approximate: the kthread until its last sighting,
        # the self-reads until T2).
        if "kthread" in last:
            res["cpu_total_ns"] = cpu + last["kthread"] + o2.get(
                "self_us", 0) * 1000
            res["samples_total"] = st["lines"] * nev
    else:
        res["dropped"] = None
    lw = st.get("late_window") or {}
    steady(res, w if res.get("status") else None, ntid, nev,
           lw.get("grid_points"), lw.get("rows"))
    if res["steady"]:
        res["steady"]["late"] = lw
    if rc != 0 or st["lines"] == 0:
        problems.append("%s: vcpuperf-cat rc %d, %d rows: %s" %
                        (tag, rc, st["lines"], err[-500:]))
    return res


def run_perf(cfg, spin, tag, group):
    ntid, nev, ims, dur = cfg
    names = ",".join(e[0] for e in EVENTS[:nev])
    if group:
        names = "{%s}" % names
    path = "/tmp/%s.perf.json" % tag
    count = int(round(dur * 1000 / ims))
    rc, cpu, wall, err, w = run_child(
        ["perf", "stat", "--per-thread", "-p", str(spin.pid), "-I", str(ims),
         "--interval-count", str(count), "-j", "-e", names, "-o", path],
        dur + 20, win=(dur, ims / 1000, lambda: file_has(path, b'"interval"'),
                       lambda pid, ctx: snap_irq_cpu(pid), None, None))
    st = rowstat("perf", ims * 1000000, path)
    ticks = st["ticks"]
    res = dict(rc=rc, interval_ms=ims, cpu_total_ns=cpu, wall_s=wall,
               ticks=ticks, samples_total=ticks * ntid * nev,
               lines=st["lines"], interval_mean_ns=st["interval_mean_ns"],
               jitter_p99_ns=st["jitter_p99_ns"],
               jitter_max_ns=st["jitter_max_ns"], dropped=None)
    # perf stat -I does not read on a grid: ticks in the window from its
    # achieved mean interval.
    wt = (w["seconds"] * 1e9 / st["interval_mean_ns"]
          if w and st["interval_mean_ns"] else None)
    steady(res, w, ntid, nev, wt)
    os.unlink(path)
    if rc not in (0, -signal.SIGINT, 130) or ticks == 0:
        problems.append("%s: perf stat rc %d, %d ticks: %s" %
                        (tag, rc, ticks, err[-500:]))
    return res


def run_ureader(cfg, spin, tag, group, jsonl):
    ntid, nev, ims, dur = cfg
    evs = ",".join("%d:%d" % (e[1], e[2]) for e in EVENTS[:nev])
    path = "/tmp/%s.ureader.json" % tag
    rows = "/tmp/%s.ureader.jsonl" % tag
    argv = [os.path.join(B, "ureader"), "--tids",
            ",".join(map(str, spin.tids)), "--events", evs, "--interval-us",
            str(ims * 1000), "--duration-ms", str(int(dur * 1000)), "--out",
            path, "--ready", path + ".ready", "--window", path + ".win"] + \
        (["--group"] if group else []) + \
        (["--jsonl", rows, "--pid", str(spin.pid), "--names",
          ",".join(e[0] for e in EVENTS[:nev])] if jsonl else [])
    for f in (path, path + ".ready", path + ".win"):
        if os.path.exists(f):
            os.unlink(f)

    def after(w):
        if w and not os.path.exists(path + ".win"):
            with open(path + ".win", "w") as f:
                f.write("%d %d\n" % (w["t1"], w["t2"]))

    rc, cpu, wall, err, w = run_child(
        argv, dur + 60, win=(dur, ims / 1000,
                             lambda: os.path.exists(path + ".ready"),
                             lambda pid, ctx: snap_irq_cpu(pid), None, None),
        after_fn=after)
    st = json.load(open(path)) if os.path.exists(path) else {"ticks": 0}
    res = dict(rc=rc, interval_ms=ims, cpu_total_ns=cpu, wall_s=wall,
               ticks=st["ticks"], samples_total=st["ticks"] * ntid * nev,
               reads=st.get("reads"), missed_grid=st.get("missed"),
               interval_mean_ns=st.get("interval_mean_ns"),
               jitter_p99_ns=st.get("jitter_p99_ns"),
               jitter_max_ns=st.get("jitter_max_ns"), dropped=None,
               failed=st.get("failed"), rows_written=st.get("rows"))
    sw = st.get("window") or {}
    if w and sw.get("lo") != w["t1"]:
        sw = {}    # the window file came too late
    steady(res, w, ntid, nev, sw.get("ticks"), sw.get("rows"))
    if res["steady"]:
        res["steady"]["late"] = dict(rows=sw["rows"], p50_ns=sw["late_p50_ns"],
                                     p99_ns=sw["late_p99_ns"],
                                     max_ns=sw["late_max_ns"],
                                     grid_points=sw["ticks"],
                                     missed=sw["missed"])
    if jsonl and os.path.exists(rows):
        rs = rowstat("vcpuperf", ims * 1000000, rows)
        res["jsonl_rows"] = rs["lines"]
        os.unlink(rows)
        if rs["lines"] == 0:
            problems.append("%s: ureader wrote no JSONL rows" % tag)
    if rc != 0 or st["ticks"] == 0:
        problems.append("%s: ureader rc %d: %s" % (tag, rc, err[-500:]))
    return res


def run_floor(cfg, spin, tag):
    ntid, nev, ims, dur = cfg
    evs = ",".join("%d:%d" % (e[1], e[2]) for e in EVENTS[:nev])
    if os.path.isdir("/sys/module/vpfloor"):
        sh("rmmod vpfloor")
    t0 = time.monotonic()
    sh("insmod %s tids=%s events=%s interval_us=%d" %
       (FLOORKO, ",".join(map(str, spin.tids)), evs, ims * 1000))
    pdir = "/sys/module/vpfloor/parameters/"

    def par(n):
        return open(pdir + n).read().strip()

    kp = int(par("kpid"))

    def snap(pid, ctx):
        s = irqs()
        s["cpu_kthread"] = schedstat_ns(kp)
        s["ticks"] = int(par("ticks"))
        return s
    w = window(dur, ims / 1000, lambda: int(par("ticks")) >= 1, lambda: True,
               lambda ctx: snap(None, ctx))
    time.sleep(max(0.0, dur - (time.monotonic() - t0)))
    k1 = schedstat_ns(kp)
    ps = {n: int(par(n)) for n in ("ticks", "missed", "counters", "failed",
                                   "late_max_ns", "late_sum_ns")}
    if w:
        with open(pdir + "win_lo_ns", "w") as f:
            f.write(str(w["t1"]))
        with open(pdir + "win_hi_ns", "w") as f:
            f.write(str(w["t2"]))
    lp = [int(x) for x in par("late_pct").split()]
    wall = time.monotonic() - t0
    sh("rmmod vpfloor")
    res = dict(rc=0, interval_ms=ims, cpu_total_ns=k1, wall_s=wall,
               ticks=ps["ticks"], samples_total=ps["ticks"] * ntid * nev,
               missed_grid=ps["missed"], counters=ps["counters"],
               failed=ps["failed"], late_max_ns=ps["late_max_ns"],
               late_mean_ns=ps["late_sum_ns"] / max(ps["ticks"], 1),
               interval_mean_ns=None, jitter_p99_ns=None, dropped=None)
    wt = None
    if w:
        wt = w["d"].pop("ticks")
        res["interval_mean_ns"] = w["seconds"] * 1e9 / max(wt, 1)
    steady(res, w, ntid, nev, wt)
    if res["steady"]:
        res["steady"]["late"] = dict(grid_points=lp[0], p50_ns=lp[1],
                                     p99_ns=lp[2], max_ns=lp[3],
                                     per="pass start")
    if ps["ticks"] == 0 or ps["counters"] == 0:
        problems.append("%s: floor did nothing: %r" % (tag, ps))
    return res


def run_idle(cfg, spin):
    dur = cfg[3]
    i0, t0 = irqs(), time.monotonic()
    time.sleep(dur)
    i1 = irqs()
    return dict(res=i1["res"] - i0["res"], cal=i1["cal"] - i0["cal"],
                wall_s=time.monotonic() - t0)


def run_latency(cfg, spin, tag):
    """vcpuperf-cat (read auto) -o - | latrd: kernel read time to line
    arrival; and the mode auto picked at this interval."""
    ntid, nev, ims, dur = cfg
    names = ",".join(e[0] for e in EVENTS[:nev])
    cat = subprocess.Popen(
        [CAT, "--tid", ",".join(map(str, spin.tids)), "--interval",
         "%dms" % ims, "--events", names, "--duration", "%dms" % (dur * 1000),
         "--events-out", "/tmp/%s.lat.events" % tag, "-o", "-"],
        stdout=subprocess.PIPE)
    picked = {}

    def look():
        for c in status().values():
            if c.get("owner") == cat.pid:
                picked.update(mode=c.get("mode"), now=c.get("mode_now"))
    tm = threading.Timer(dur / 2, look)
    tm.start()
    rd = subprocess.run([os.path.join(B, "latrd")], stdin=cat.stdout,
                        capture_output=True, text=True)
    cat.stdout.close()
    rc = cat.wait()
    tm.join()
    res = json.loads(rd.stdout)
    res["rc"] = rc
    res["auto_picked"] = picked.get("now")
    if rc != 0 or not res.get("rows"):
        problems.append("%s: latency run rc %d: %r" % (tag, rc, res))
    return res


def run_one(coll, cfg, spin, tag):
    if coll.startswith("vcpuperf-"):
        return run_vcpuperf(cfg, spin, tag, coll.split("-", 1)[1])
    if coll.startswith("perf"):
        return run_perf(cfg, spin, tag, coll == "perf-group")
    if coll.startswith("ureader"):
        return run_ureader(cfg, spin, tag, coll != "ureader",
                           coll == "ureader-group-jsonl")
    return run_floor(cfg, spin, tag)


def main():
    smoke = "--smoke" in sys.argv
    out = sys.argv[sys.argv.index("--out") + 1]
    configs = SMOKE if smoke else FULL
    reps = 1 if smoke else 3
    only = os.environ.get("VP_BENCH_ONLY")    # development: "512x8x10ms,..."
    if only:
        configs = [c for c in configs
                   if "%dx%dx%dms" % c[:3] in only.split(",")]
        reps = int(os.environ.get("VP_BENCH_REPS", reps))
    log("start, guest uptime %s s" % open("/proc/uptime").read().split()[0])
    raise_nofile()
    mark = len(sh("dmesg").splitlines())
    t_start = time.monotonic()
    result = dict(mode="smoke" if smoke else "full", reps=reps,
                  kernel=os.uname().release, nproc=os.cpu_count(),
                  perf=sh("perf --version").strip(),
                  events=[e[0] for e in EVENTS], collectors=COLLECTORS,
                  configs=[])
    if os.path.isdir("/sys/module/vcpuperf"):
        sh("rmmod vcpuperf")
    sh("insmod %s" % VPKO)
    for cfg in configs:
        ntid, nev, ims, dur = cfg
        name = "%dx%dx%dms" % (ntid, nev, ims)
        log("config", name, "%.1fs per run" % dur)
        spin = Spin(ntid)
        c = dict(name=name, tids=ntid, events=nev, interval_ms=ims,
                 duration_s=dur, runs={k: [] for k in COLLECTORS},
                 idle=[], latency=None)
        try:
            c["idle"].append(run_idle(cfg, spin))
            for rep in range(reps):
                for coll in COLLECTORS:
                    tag = "%s.%s.%d" % (name, coll, rep)
                    t0 = time.monotonic()
                    try:
                        r = run_one(coll, cfg, spin, tag)
                    except Exception as e:  # noqa: BLE001
                        problems.append("%s: %r" % (tag, e))
                        continue
                    c["runs"][coll].append(r)
                    s = r.get("steady") or {}
                    log("  %-19s rep %d: %.1fs wall, %s ticks in window, "
                        "cpu %.0f ms" % (coll, rep, time.monotonic() - t0,
                                         s.get("ticks"),
                                         s.get("cpu_ns_total", 0) / 1e6))
            c["idle"].append(run_idle(cfg, spin))
            try:
                c["latency"] = run_latency(cfg, spin, name)
                log("  latency", c["latency"])
            except Exception as e:  # noqa: BLE001
                problems.append("%s latency: %r" % (name, e))
        finally:
            spin.stop()
        result["configs"].append(c)
        with open(os.path.join(out, "vm.json"), "w") as f:
            json.dump(result, f, indent=1)
    try:
        result["status_end"] = status()
        sh("rmmod vcpuperf")
    except Exception as e:  # noqa: BLE001
        problems.append("rmmod vcpuperf: %r" % e)
    lines = sh("dmesg").splitlines()[mark:]
    bad = [ln for ln in lines if any(b in ln for b in (
        "WARNING:", "BUG:", "Oops", "Call Trace", "general protection"))]
    if bad:
        problems.append("kernel log: " + "\n".join(bad[:20]))
    result["bench_seconds"] = time.monotonic() - t_start
    result["problems"] = problems
    with open(os.path.join(out, "vm.json"), "w") as f:
        json.dump(result, f, indent=1)
    log("done in %.1fs, %d problem(s)" % (result["bench_seconds"],
                                          len(problems)))
    for p in problems:
        log("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
