#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vcpuperf benchmark, guest side: run as root inside the TCG VM
(scripts/bench.sh boots it) from the repository root.

    bench.py [--smoke] --out DIR

For every configuration (TIDs x events x interval) one spin process (bench/spin)
provides the threads; then the collectors run one after another, interleaved
(A B C ... A B C ...), on the same threads, events and interval:

  vcpuperf      insmod vcpuperf.ko + vcpuperf-cat --tid ... -o FILE
  perf          perf stat --per-thread -p PID -I MS -j -e a,b,...
  perf-group    perf stat --per-thread -p PID -I MS -j -e '{a,b,...}'
  ureader       bench/ureader: one read() per (TID, event) per tick
  ureader-group bench/ureader --group: one PERF_FORMAT_GROUP read per TID
  floor         bench/floor/vpfloor.ko: create + perf_event_read_value(), discard

and 'idle' (spinners only) gives the background rate of function-call
interrupts.  Writes DIR/vm.json.  Exits 1 only on real breakage (a collector
that fails or produces nothing, a kernel warning), never on a figure."""

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
SMOKE = [(8, 4, 100, 1.2)]
COLLECTORS = ["vcpuperf", "perf", "perf-group", "ureader", "ureader-group",
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


def cal():
    with open("/proc/interrupts") as f:
        for line in f:
            if line.strip().startswith("CAL:"):
                parts = line.split()[1:]
                return sum(int(x) for x in parts if x.isdigit())
    return 0


def schedstat_ns(pid):
    try:
        with open("/proc/%d/schedstat" % pid) as f:
            return int(f.read().split()[0])
    except OSError:
        return None


def kthread_pid(comm):
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read().strip() == comm:
                    with open("/proc/%s/stat" % d) as g:
                        if g.read().rsplit(")", 1)[1].split()[1] == "2":
                            return int(d)
        except OSError:
            pass
    return None


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (65536, 65536))
    except (OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def task_cpu_ns(pid):
    """CPU time of every thread of process pid (schedstat), ns."""
    tot = 0
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            v = schedstat_ns_path("/proc/%d/task/%s/schedstat" % (pid, t))
            tot += v or 0
    except OSError:
        return None
    return tot


def schedstat_ns_path(path):
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def window(dur, interval_s, ready_fn, cpu_fn, alive_fn, extra_fn=None):
    """Steady-state window: wait until the collector produces (ready_fn),
    then measure CPU (cpu_fn), CAL and extra_fn() over [T1, T2] with
    T1 = ready + 1.5 intervals, T2 = T1 + dur/2."""
    t0 = time.monotonic()
    while not ready_fn():
        if not alive_fn() or time.monotonic() - t0 > dur / 2 + 60:
            return None
        time.sleep(0.02)
    time.sleep(1.5 * interval_s)
    w = {}
    t1, c1, k1 = time.monotonic(), cal(), cpu_fn()
    x1 = extra_fn() if extra_fn else None
    time.sleep(dur / 2)
    x2 = extra_fn() if extra_fn else None
    t2, c2, k2 = time.monotonic(), cal(), cpu_fn()
    if not alive_fn() or k1 is None or k2 is None:
        return None
    w.update(seconds=t2 - t1, cal=c2 - c1, cpu_ns=k2 - k1, t1=t1, t2=t2,
             startup_s=t1 - t0)
    if extra_fn:
        w["extra"] = (x1, x2)
    return w


def run_child(argv, deadline_s, stdout=None, sig=signal.SIGINT, win=None):
    """Start argv, wait for it (signal it after deadline_s, SIGKILL 30 s
    later); win=(dur, interval_s, ready_fn, kthread_cpu_fn) also measures
    a steady-state window.  Return (rc, cpu_ns of the child and all its
    threads, wall_s, cal_delta, stderr, window)."""
    c0, t0 = cal(), time.monotonic()
    errf = open("/tmp/child.err", "w+")
    p = subprocess.Popen(argv, stdout=stdout or subprocess.DEVNULL,
                         stderr=errf)
    timers = [threading.Timer(deadline_s, lambda: p.poll() is None and
                              p.send_signal(sig)),
              threading.Timer(deadline_s + 30, lambda: p.poll() is None and
                              p.kill())]
    for t in timers:
        t.start()
    w = None
    if win:
        dur, ivs, ready_fn, kcpu = win

        def cpu():
            a = task_cpu_ns(p.pid)
            b = kcpu() if kcpu else 0
            return None if a is None or b is None else a + b
        w = window(dur, ivs, ready_fn, cpu, lambda: p.poll() is None)
    _, status, ru = os.wait4(p.pid, 0)
    wall, c1 = time.monotonic() - t0, cal()
    for t in timers:
        t.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    errf.seek(0)
    err = errf.read()
    errf.close()
    cpu = int((ru.ru_utime + ru.ru_stime) * 1e9)
    return p.returncode, cpu, wall, c1 - c0, err, w


def file_has(path, needle):
    try:
        with open(path, "rb") as f:
            return needle in f.read(65536)
    except OSError:
        return False


def steady(res, w, ntid, nev):
    """Per-sample and per-(TID x tick) figures of the window."""
    if not w or not res.get("interval_mean_ns"):
        res["steady"] = None
        return res
    ticks = w["seconds"] * 1e9 / res["interval_mean_ns"]
    if w.get("ticks_window") is not None:
        ticks = w["ticks_window"]
    res["steady"] = dict(seconds=w["seconds"], ticks=ticks, cpu_ns=w["cpu_ns"],
                         cal=w["cal"], startup_s=w["startup_s"],
                         cpu_ns_per_sample=w["cpu_ns"] / max(ticks * ntid * nev, 1),
                         cal_per_tid_tick=w["cal"] / max(ticks * ntid, 1))
    return res


def rowstat(mode, interval_ns, path):
    return json.loads(sh("%s/rowstat %s %d %s" % (B, mode, interval_ns,
                                                   path)))


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


def run_vcpuperf(cfg, spin, tag, out):
    ntid, nev, ims, dur = cfg
    names = ",".join(e[0] for e in EVENTS[:nev])
    if os.path.isdir("/sys/module/vcpuperf"):
        sh("rmmod vcpuperf")
    sh("insmod %s" % VPKO)
    kp = kthread_pid("vcpuperf")
    k0 = schedstat_ns(kp)
    rows, evs = "/tmp/%s.rows.jsonl" % tag, "/tmp/%s.events.jsonl" % tag
    rc, cpu, wall, dcal, err, w = run_child(
        [CAT, "--tid", ",".join(map(str, spin.tids)), "--interval",
         "%dms" % ims, "--events", names, "--duration", "%dms" % (dur * 1000),
         "-o", rows, "--events-out", evs], dur + 60, sig=signal.SIGTERM,
        win=(dur, ims / 1000, lambda: file_has(rows, b"t_mono_ns"),
             lambda: schedstat_ns(kp)))
    k1 = schedstat_ns(kp)
    status = open(os.path.join(DEBUGFS, "status")).read()
    sh("rmmod vcpuperf")
    m = re.search(r"records: (\d+) produced, (\d+) dropped", status)
    g = re.search(r"passes: (\d+), missed grid points: (\d+)", status)
    st = rowstat("vcpuperf", ims * 1000000, rows)
    ndrop_ev = sum(1 for ln in open(evs) if '"perf_dropped"' in ln)
    os.unlink(rows)
    res = dict(rc=rc, cpu_ns=cpu + (k1 - k0), cpu_tool_ns=cpu,
               cpu_kthread_ns=k1 - k0, wall_s=wall, cal=dcal,
               ticks=st["ticks"], samples=st["lines"] * nev,
               interval_mean_ns=st["interval_mean_ns"],
               jitter_p99_ns=st["jitter_p99_ns"],
               jitter_max_ns=st["jitter_max_ns"],
               dropped=int(m.group(2)) if m else None,
               perf_dropped_events=ndrop_ev,
               missed_grid=int(g.group(2)) if g else None)
    steady(res, w, ntid, nev)
    if rc != 0 or st["lines"] == 0:
        problems.append("%s: vcpuperf-cat rc %d, %d rows: %s" %
                        (tag, rc, st["lines"], err[-500:]))
    return res


def run_perf(cfg, spin, tag, out, group):
    ntid, nev, ims, dur = cfg
    names = ",".join(e[0] for e in EVENTS[:nev])
    if group:
        names = "{%s}" % names
    path = "/tmp/%s.perf.json" % tag
    count = int(round(dur * 1000 / ims))
    rc, cpu, wall, dcal, err, w = run_child(
        ["perf", "stat", "--per-thread", "-p", str(spin.pid), "-I", str(ims),
         "--interval-count", str(count), "-j", "-e", names, "-o", path],
        dur + 20, win=(dur, ims / 1000, lambda: file_has(path, b'"interval"'),
                       None))
    st = rowstat("perf", ims * 1000000, path)
    ticks = st["ticks"]
    res = dict(rc=rc, cpu_ns=cpu, wall_s=wall, cal=dcal, ticks=ticks,
               samples=ticks * ntid * nev, lines=st["lines"],
               interval_mean_ns=st["interval_mean_ns"],
               jitter_p99_ns=st["jitter_p99_ns"],
               jitter_max_ns=st["jitter_max_ns"], dropped=None)
    steady(res, w, ntid, nev)
    os.unlink(path)
    if rc not in (0, -signal.SIGINT, 130) or ticks == 0:
        problems.append("%s: perf stat rc %d, %d ticks: %s" %
                        (tag, rc, ticks, err[-500:]))
    return res


def run_ureader(cfg, spin, tag, out, group):
    ntid, nev, ims, dur = cfg
    evs = ",".join("%d:%d" % (e[1], e[2]) for e in EVENTS[:nev])
    path = "/tmp/%s.ureader.json" % tag
    argv = [os.path.join(B, "ureader"), "--tids",
            ",".join(map(str, spin.tids)), "--events", evs, "--interval-us",
            str(ims * 1000), "--duration-ms", str(int(dur * 1000)), "--out",
            path, "--ready", path + ".ready"] + (["--group"] if group else [])
    for f in (path, path + ".ready"):
        if os.path.exists(f):
            os.unlink(f)
    rc, cpu, wall, dcal, err, w = run_child(
        argv, dur + 60, win=(dur, ims / 1000,
                             lambda: os.path.exists(path + ".ready"), None))
    st = json.load(open(path)) if os.path.exists(path) else {"ticks": 0}
    res = dict(rc=rc, cpu_ns=cpu, wall_s=wall, cal=dcal, ticks=st["ticks"],
               samples=st["ticks"] * ntid * nev,
               reads=st.get("reads"), missed_grid=st.get("missed"),
               interval_mean_ns=st.get("interval_mean_ns"),
               jitter_p99_ns=st.get("jitter_p99_ns"),
               jitter_max_ns=st.get("jitter_max_ns"), dropped=None,
               failed=st.get("failed"))
    steady(res, w, ntid, nev)
    if rc != 0 or st["ticks"] == 0:
        problems.append("%s: ureader rc %d: %s" % (tag, rc, err[-500:]))
    return res


def run_floor(cfg, spin, tag, out):
    ntid, nev, ims, dur = cfg
    evs = ",".join("%d:%d" % (e[1], e[2]) for e in EVENTS[:nev])
    if os.path.isdir("/sys/module/vpfloor"):
        sh("rmmod vpfloor")
    c0, t0 = cal(), time.monotonic()
    sh("insmod %s tids=%s events=%s interval_us=%d" %
       (FLOORKO, ",".join(map(str, spin.tids)), evs, ims * 1000))

    def par(n):
        return int(open("/sys/module/vpfloor/parameters/" + n).read())
    kp = par("kpid")
    w = window(dur, ims / 1000, lambda: par("ticks") >= 1,
               lambda: schedstat_ns(kp), lambda: True,
               extra_fn=lambda: par("ticks"))
    time.sleep(max(0.0, dur - (time.monotonic() - t0)))
    k1 = schedstat_ns(kp)
    ps = {n: par(n) for n in ("ticks", "missed", "counters", "failed",
                              "late_max_ns", "late_sum_ns")}
    c1, wall = cal(), time.monotonic() - t0
    sh("rmmod vpfloor")
    res = dict(rc=0, cpu_ns=k1, wall_s=wall, cal=c1 - c0, ticks=ps["ticks"],
               samples=ps["ticks"] * ntid * nev, missed_grid=ps["missed"],
               counters=ps["counters"], failed=ps["failed"],
               late_max_ns=ps["late_max_ns"],
               late_mean_ns=ps["late_sum_ns"] / max(ps["ticks"], 1),
               interval_mean_ns=None, jitter_p99_ns=None, dropped=None)
    if w:
        x1, x2 = w["extra"]
        w["ticks_window"] = x2 - x1
        res["interval_mean_ns"] = w["seconds"] * 1e9 / max(x2 - x1, 1)
    steady(res, w, ntid, nev)
    if ps["ticks"] == 0 or ps["counters"] == 0:
        problems.append("%s: floor did nothing: %r" % (tag, ps))
    return res


def run_idle(cfg, spin):
    dur = cfg[3]
    c0, t0 = cal(), time.monotonic()
    time.sleep(dur)
    return dict(cal=cal() - c0, wall_s=time.monotonic() - t0)


def run_latency(cfg, spin, tag):
    """vcpuperf-cat -o - | latrd: kernel read time to line arrival."""
    ntid, nev, ims, dur = cfg
    names = ",".join(e[0] for e in EVENTS[:nev])
    sh("insmod %s" % VPKO)
    cat = subprocess.Popen(
        [CAT, "--tid", ",".join(map(str, spin.tids)), "--interval",
         "%dms" % ims, "--events", names, "--duration", "%dms" % (dur * 1000),
         "--events-out", "/tmp/%s.lat.events" % tag, "-o", "-"],
        stdout=subprocess.PIPE)
    rd = subprocess.run([os.path.join(B, "latrd")], stdin=cat.stdout,
                        capture_output=True, text=True)
    cat.stdout.close()
    rc = cat.wait()
    sh("rmmod vcpuperf")
    res = json.loads(rd.stdout)
    res["rc"] = rc
    if rc != 0 or not res.get("rows"):
        problems.append("%s: latency run rc %d: %r" % (tag, rc, res))
    return res


def main():
    smoke = "--smoke" in sys.argv
    out = sys.argv[sys.argv.index("--out") + 1]
    configs = SMOKE if smoke else FULL
    reps = 1 if smoke else 2
    raise_nofile()
    mark = len(sh("dmesg").splitlines())
    t_start = time.monotonic()
    result = dict(mode="smoke" if smoke else "full", reps=reps,
                  kernel=os.uname().release, nproc=os.cpu_count(),
                  perf=sh("perf --version").strip(),
                  events=[e[0] for e in EVENTS], configs=[])
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
                        if coll == "vcpuperf":
                            r = run_vcpuperf(cfg, spin, tag, out)
                        elif coll.startswith("perf"):
                            r = run_perf(cfg, spin, tag, out,
                                         coll == "perf-group")
                        elif coll.startswith("ureader"):
                            r = run_ureader(cfg, spin, tag, out,
                                            coll == "ureader-group")
                        else:
                            r = run_floor(cfg, spin, tag, out)
                    except Exception as e:  # noqa: BLE001
                        problems.append("%s: %r" % (tag, e))
                        continue
                    c["runs"][coll].append(r)
                    log("  %-14s rep %d: %.1fs wall, %d ticks, cpu %.0f ms" %
                        (coll, rep, time.monotonic() - t0, r["ticks"],
                         r["cpu_ns"] / 1e6))
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
