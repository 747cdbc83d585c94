"""Multiplexing, never-counted counters and modifier honesty, end to end
(issue 13), with the test PMU of tests/pmu (vp_testpmu.ko, $VP_TESTPMU).

Each test can be run alone by name (run.py NAME).  The test PMU counts RATE per nanosecond that an
event is on one of its slots, so the true value of an interval is RATE
times the thread's run time in it, which task-clock (a software event,
never multiplexed) measures in the same read pass.  Its own totals (adds,
refused adds, final counts) are read from its debugfs file."""

import errno
import json
import os
import time

from vptest import (Cat, TestFailure, Workload, check, control,
                    debug_allocator, load, not_on_debug, read_file, sh, test,
                    unload, REPO)

MS = 1000000

TESTPMU = os.environ.get("VP_TESTPMU",
                         os.path.join(REPO, "tests", "pmu", "vp_testpmu.ko"))
PROBE = os.path.join(REPO, "tests", "pmu", "modprobe_honour")
PMU_SYSFS = "/sys/bus/event_source/devices/vp_testpmu"
PMU_TABLE = "/sys/kernel/debug/vp_testpmu/events"
NEVER = 256             # config bit: every add() is refused
# Largest error of an interval's scaled value against RATE x task-clock.
# The test PMU times its slots with local_clock() in add() and del(),
# perf's enabled and running times are taken a few steps apart, and the
# task clock stops after and starts after both at a switch: each switch
# leaves a small difference.  An interval in which the thread only
# started or stopped holds more switches per ms run; on a kernel with
# KASAN and lockdep each switch takes longer (5.43% was measured there in
# one CI run at c980e13, at most 2% on the others), hence EDGE_TOL_DEBUG.
SCALE_TOL = 0.02
EDGE_TOL = 0.05
EDGE_TOL_DEBUG = 0.10



class TestPMU:
    """The test PMU loaded with @params for a with-block; vcpuperf (whose
    counters pin the test PMU's module) is unloaded before it."""

    def __init__(self, params="slots=2", mux_ms=None):
        self.params = params
        self.mux_ms = mux_ms

    def __enter__(self):
        self.close()
        sh("insmod %s %s" % (TESTPMU, self.params))
        with open(os.path.join(PMU_SYSFS, "type")) as f:
            self.type = int(f.read())
        path = os.path.join(PMU_SYSFS, "perf_event_mux_interval_ms")
        with open(path) as f:
            self.default_mux = int(f.read())
        if self.mux_ms is not None:
            with open(path, "w") as f:
                f.write(str(self.mux_ms))
        return self

    def ev(self, config, mods=""):
        return "%d:%d%s" % (self.type, config, ":" + mods if mods else "")

    def table(self):
        with open(PMU_TABLE) as f:
            lines = f.read().split("\n")
        keys = lines[0].split()
        return [dict(zip(keys, (int(x) for x in ln.split())))
                for ln in lines[1:] if ln.strip()]

    def close(self):
        unload()
        if os.path.isdir("/sys/module/vp_testpmu"):
            sh("rmmod vp_testpmu", timeout=60)

    def __exit__(self, *exc):
        self.close()
        return False


def sampler_pid():
    """The sampling kthread of the newest collection ("vcpuperf/N": each
    collection has its own; the tool's was opened last)."""
    best = None
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % p) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith("vcpuperf/") and comm[9:].isdigit():
            n = int(comm[9:])
            if n and (best is None or n > best[0]):
                best = (n, int(p))
    if best is None:
        raise TestFailure("no vcpuperf sampler kthread")
    return best[1]


def pin_together(tid):
    """The thread and the sampler on one CPU: the thread does not run
    while its counters are read, so a pass reads one instant of it (under
    TCG with 2 vCPUs a pass reading active counters on the other vCPU
    takes up to 40 ms, during which the thread runs on)."""
    os.sched_setaffinity(tid, {0})
    os.sched_setaffinity(sampler_pid(), {0})


def deltas(rows, name):
    """Per row: (value, enabled, running) increase of event @name (--raw)."""
    out, prev = [], (0, 0, 0)
    for r in rows:
        c = r["raw"][name]
        cur = (c["value"], c["enabled"], c["running"]) if c else prev
        out.append(tuple(a - b for a, b in zip(cur, prev)))
        prev = cur
    return out


def run_burn(name, c, w, go_delay=0.0):
    try:
        c.wait_started(1)
        pin_together(w.tids[0])
        time.sleep(go_delay)
        w.go()
        w.wait()
        time.sleep(0.3)
    finally:
        w.kill()
        rc = c.stop()
    check(rc == 0, "%s: vcpuperf-cat exit %d: %s" % (name, rc, c.stderr))


@test
def pmu_multiplexing_scaled():
    """4 events on 2 slots of a CPU-bound thread: multiplexed rows,
    time_running < time_enabled, one perf_multiplexed with its ratio,
    every interval's scaled value within 2% of RATE x task-clock (5% in
    the intervals in which the thread ran for less than half), nothing
    lost against the PMU's own totals; before the thread starts and after
    it stops, ran:false with true zeros (not null)."""
    with TestPMU("slots=2") as pmu:
        load()
        # 4 s of CPU time took 4.6 s of wall time on one vCPU shared with
        # the sampler and vcpuperf-cat (6.12 and 7.2 side by side on the
        # host); held to 8 s after go, the thread gives 2 idle rows of
        # 500 ms after its burn even if that takes 6.9 s.
        w = Workload("pmumux", "--threads", "1", "--wait-go", "--burn-ms",
                     "4000", "--hold-ms", "8000")
        evs = [pmu.ev(r) for r in (1, 2, 3, 4)]
        c = Cat("pmumux", "--tid", str(w.tids[0]), "--interval", "500ms",
                "--raw", "--events", ",".join(evs) + ",task-clock")
        run_burn("pmumux", c, w, go_delay=1.6)
        rows = c.rows()
        keys = [e.replace(":", "_") for e in evs]
        ran = [r for r in rows if r["ran"]]
        idle = [r for r in rows if r["ran"] is False]
        # the thread is blocked from the burn's end to its exit, whose
        # row ran (the exit path's few microseconds)
        first = next((i for i, r in enumerate(rows) if r["ran"]), len(rows))
        before = sum(1 for r in rows[:first] if r["ran"] is False)
        after = sum(1 for r in rows[first:] if r["ran"] is False)
        print("  %d rows: %d ran, %d idle before the burn, %d after" %
              (len(rows), len(ran), before, after))
        check(len(ran) >= 7, "%d rows ran" % len(ran))
        check(before >= 2 and after >= 2,
              "idle rows: %d before the burn, %d after (want 2 each)" %
              (before, after))
        for r in idle:
            check(all(r[k] == 0 and r[k] is not None for k in keys) and
                  r["task_clock"] == 0,
                  "idle row not true zeros: %s" % r)
        worst, worst_edge, errs, edge_at = 0.0, 0.0, [], ""
        for r in ran:
            tc = r["task_clock"]
            if tc < 20 * MS:
                continue    # started or stopped early in this interval
            full = tc >= 250 * MS
            check(r["multiplexed"] is True, "row not multiplexed: %s" % r)
            check(r["time_running_ns"] < r["time_enabled_ns"],
                  "running %d >= enabled %d" % (r["time_running_ns"],
                                                r["time_enabled_ns"]))
            for rate, k in enumerate(keys, 1):
                check(r[k] is not None, "%s null in a row that ran "
                      "%.1f ms" % (k, tc / MS))
                err = r[k] / rate / tc - 1
                if full:
                    errs.append(err)
                    worst = max(worst, abs(err))
                elif abs(err) >= worst_edge:
                    worst_edge = abs(err)
                    edge_at = " (%s: task-clock %.1f ms, running %.1f of " \
                        "%.1f ms enabled)" % (k, tc / MS,
                                              r["time_running_ns"] / MS,
                                              r["time_enabled_ns"] / MS)
        print("  %d full intervals x 4 events: scaled vs RATE x task-clock: "
              "max |error| %.3f%%, mean %+.3f%%; partial intervals: max "
              "%.3f%%%s" % (len(errs) // 4, 100 * worst,
                            100 * sum(errs) / len(errs), 100 * worst_edge,
                            edge_at))
        check(worst <= SCALE_TOL, "scaled value off by %.2f%% (> %.0f%%)" %
              (100 * worst, 100 * SCALE_TOL))
        edge_tol = EDGE_TOL_DEBUG if debug_allocator() else EDGE_TOL
        check(worst_edge <= edge_tol, "partial interval off by %.2f%% "
              "(> %.0f%%)" % (100 * worst_edge, 100 * edge_tol))
        mux = c.events("perf_multiplexed")
        check(len(mux) == 1, "want one perf_multiplexed, got %d" % len(mux))
        # the counters multiplexed in the first interval that had any (a
        # short first interval may rotate only some; every row above is
        # multiplexed in each of them)
        check(mux[0]["events"] and set(mux[0]["events"]) <= set(evs),
              mux[0])
        ratio = mux[0]["min_running_ratio"]
        check(0 < ratio < 1, "min_running_ratio %s" % ratio)
        print("  perf_multiplexed min_running_ratio %.3f" % ratio)
        last = rows[-1]["raw"]
        unload()
        tab = {"%d:%d" % (pmu.type, e["config"]): e for e in pmu.table()}
        for e in evs:
            t = tab[e]
            check(t["live"] == 0, "%s still live" % e)
            check(t["count"] == last[e]["value"],
                  "%s: the PMU counted %d, the last row says %d" %
                  (e, t["count"], last[e]["value"]))
            check(t["refused"] > 0 and t["adds"] > 10,
                  "%s: %d adds, %d refused: no rotation?" %
                  (e, t["adds"], t["refused"]))


def mux_run(name, mux_ms):
    """Burn on 4 events / 2 slots with the given rotation interval; return
    (per-row running ratios, mean ns on the PMU per add, min ratio)."""
    with TestPMU("slots=2", mux_ms=mux_ms) as pmu:
        load()
        w = Workload(name, "--threads", "1", "--wait-go", "--burn-ms",
                     "1600", "--hold-ms", "1700")
        evs = [pmu.ev(r) for r in (1, 2, 3, 4)]
        c = Cat(name, "--tid", str(w.tids[0]), "--interval", "50ms",
                "--raw", "--events", ",".join(evs))
        run_burn(name, c, w)
        rows = c.rows()
        ratios = []
        for e in evs:
            for v, en, run in deltas(rows, e):
                if en >= 40 * MS:
                    ratios.append(run / en)
        unload()
        tab = {"%d:%d" % (pmu.type, e["config"]): e for e in pmu.table()}
        running = sum(rows[-1]["raw"][e]["running"] for e in evs)
        adds = sum(tab[e]["adds"] for e in evs)
        mux = c.events("perf_multiplexed")
        check(len(mux) == 1, "%s: %d perf_multiplexed" % (name, len(mux)))
        return ratios, running / max(adds, 1), mux[0]["min_running_ratio"]


@test
@not_on_debug("the rotation period's effect on the ratios; "
              "pmu_multiplexing_scaled runs the multiplexing there")
def pmu_mux_interval_granularity():
    """perf_event_mux_interval_ms is the rotation period: at 4 ms every
    50 ms interval gives each event about half of its time, at 100 ms most
    intervals find an event on for all or none of it."""
    fine, stint_fine, min_fine = mux_run("mux4", 4)
    coarse, stint_coarse, min_coarse = mux_run("mux100", 100)
    edge = sum(1 for r in coarse if r < 0.1 or r > 0.9) / len(coarse)
    fine_edge = sum(1 for r in fine if r < 0.1 or r > 0.9)
    spread = max(abs(r - 0.5) for r in fine)
    mean_dev = sum(abs(r - 0.5) for r in fine) / len(fine)
    print("  mux 4 ms: %d ratios, |ratio - 0.5| max %.3f mean %.3f, %.1f ms "
          "per add, min ratio %.3f" % (len(fine), spread, mean_dev,
                                        stint_fine / MS, min_fine))
    print("  mux 100 ms: %d ratios, %.0f%% below 0.1 or above 0.9, %.1f ms "
          "per add, min ratio %.3f" % (len(coarse), 100 * edge,
                                       stint_coarse / MS, min_coarse))
    check(len(fine) >= 10 and len(coarse) >= 10, "too few intervals")
    # 50 ms = 12 rotations at 4 ms; the sampler and vcpuperf-cat preempt
    # the thread on its CPU, and a loaded host delays the rotation timer:
    # measured up to 0.36 off 0.5 (7.2), mean 0.086, and 2 of 124
    # all-or-none intervals (6.1, host compiling a kernel).
    check(mean_dev <= 0.15 and fine_edge <= 0.05 * len(fine),
          "mux 4 ms: mean |ratio - 0.5| %.3f, %d all-or-none" %
          (mean_dev, fine_edge))
    check(edge >= 0.5, "mux 100 ms: only %.0f%% all-or-none" % (100 * edge))
    # ns per add() is printed, not checked: 6.12 and 7.2 also take events
    # off and on between rotations (4.3 ms per add at a 100 ms period).


@test
def pmu_never_scheduled():
    """PMU counters that never get a slot while software events of the
    same thread count: null in every row the thread ran (never 0),
    perf_first_row counters_populated:false, perf_no_counters after exactly
    VP_NO_COUNTERS_INTERVALS (10, module/vcpuperf.h) ran intervals with its cause, and the
    software events counting all along."""
    pages = 1500
    with TestPMU("slots=2") as pmu:
        load()
        w = Workload("pmunever", "--threads", "1", "--wait-go", "--pages",
                     str(pages), "--burn-ms", "2000", "--hold-ms", "2400")
        evs = [pmu.ev(NEVER | 1), pmu.ev(NEVER | 2)]
        c = Cat("pmunever", "--tid", str(w.tids[0]), "--interval", "100ms",
                "--events", ",".join(evs) + ",task-clock,page-faults")
        run_burn("pmunever", c, w)
        rows = c.rows()
        keys = [e.replace(":", "_") for e in evs]
        nran = 0
        tenth = None
        for i, r in enumerate(rows):
            if r["ran"]:
                nran += 1
                if nran == 10:
                    tenth = i
                check(all(r[k] is None for k in keys),
                      "never-scheduled counter not null: %s" % r)
                check(r["task_clock"] > 0, "task-clock stopped: %s" % r)
            else:
                check(all(r[k] == 0 for k in keys), "idle row: %s" % r)
        check(nran >= 12, "%d rows ran" % nran)
        check(sum(r["page_faults"] for r in rows) >= pages, "page faults")
        fr = c.events("perf_first_row")
        check(len(fr) == 1 and fr[0]["counters_populated"] is False and
              fr[0]["counters"] == [], "perf_first_row %s" % fr)
        nc = c.events("perf_no_counters")
        check(len(nc) == 1, "want one perf_no_counters: %s" % nc)
        nc = nc[0]
        check(nc["intervals_ran"] == 10 and nc["reason"] == "never_counted"
              and sorted(nc["events"]) == sorted(evs) and nc["likely_cause"],
              "perf_no_counters %s" % nc)
        check(rows[tenth]["seq"] < nc["seq"] < rows[tenth + 1]["seq"],
              "perf_no_counters (seq %d) not right after the 10th ran row "
              "(seq %d)" % (nc["seq"], rows[tenth]["seq"]))
        check(not c.events("perf_unavailable"), "perf_unavailable")
        unload()
        for e in pmu.table():
            check(e["adds"] == 0 and e["refused"] > 0,
                  "never event %s got a slot" % e)


@test
def pmu_pinned_conflict():
    """Three pinned events on two slots: the one perf puts in error state
    is reported (perf_unavailable, pinned_no_slot, errno null) and is null
    in every row the thread ran; the two others count unmultiplexed."""
    with TestPMU("slots=2") as pmu:
        load()
        w = Workload("pmupin", "--threads", "1", "--wait-go", "--burn-ms",
                     "1200", "--hold-ms", "1500")
        evs = [pmu.ev(r, "D") for r in (1, 2, 3)]
        c = Cat("pmupin", "--tid", str(w.tids[0]), "--interval", "100ms",
                "--raw", "--events", ",".join(evs) + ",task-clock")
        run_burn("pmupin", c, w)
        rows = c.rows()
        un = c.events("perf_unavailable")
        check(len(un) == 1, "want one perf_unavailable: %s" % un)
        u = un[0]
        check(u["reason"] == "pinned_no_slot" and u["errno"] is None and
              u["counter"] in evs and "pinned" in u["detail"],
              "perf_unavailable %s" % u)
        bad = u["counter"].replace(":", "_")
        ran = [r for r in rows if r["ran"]]
        check(len(ran) >= 8, "%d rows ran" % len(ran))
        check(all(r[bad] is None for r in ran), "%s not null" % bad)
        for e in evs:
            if e == u["counter"]:
                continue
            k = e.replace(":", "_")
            check(all(r[k] is not None for r in ran), "%s null" % k)
            for v, en, run in deltas(rows, e):
                check(run == en, "%s multiplexed: %d of %d" % (e, run, en))
        print("  %s in error state; status: %s" % (
            u["counter"], [ln.strip() for ln in read_file("status")
                           .splitlines() if "error" in ln]))
        unload()
        tab = {"%d:%d:D" % (pmu.type, e["config"]): e for e in pmu.table()}
        check(tab[u["counter"]]["adds"] == 0, "errored event had a slot")


# The ratio of two scaled values against the rates' ratio.
RATIO_TOL = SCALE_TOL


def ratio_ok(num, den, got, want):
    if num is None or den is None or den == 0:
        return got is None
    return (got is not None and abs(got - num / den) <= 1e-5 * got and
            abs(got / want - 1) <= RATIO_TOL)


@test
def pmu_ipc_cache_miss_rate():
    """ipc and cache_miss_rate are ratios of the scaled values (the test
    PMU counts cycles 3, instructions 2, references 5, misses 1 per ns:
    ipc 2/3, miss rate 1/5, within 2%), null in every interval in which
    either operand did not count."""
    with TestPMU("slots=2 claim_generic=1", mux_ms=100):
        load()
        w = Workload("pmuipc", "--threads", "1", "--wait-go", "--burn-ms",
                     "1600", "--hold-ms", "1800")
        c = Cat("pmuipc", "--tid", str(w.tids[0]), "--interval", "50ms",
                "--events", "cycles,instructions,cache-references,"
                "cache-misses,task-clock")
        run_burn("pmuipc", c, w)
        rows = [r for r in c.rows() if r["ran"]]
        check(len(rows) >= 20, "%d rows ran" % len(rows))
        seen = {"ipc": [0, 0], "cache_miss_rate": [0, 0]}
        for r in rows:
            for key, a, b, want in (
                    ("ipc", "instructions", "cycles", 2 / 3),
                    ("cache_miss_rate", "cache_misses", "cache_references",
                     1 / 5)):
                check(ratio_ok(r[a], r[b], r[key], want),
                      "%s %s from %s=%s / %s=%s" % (key, r[key], a, r[a], b,
                                                    r[b]))
                if r[key] is None and (r[a] is not None or
                                       r[b] is not None):
                    seen[key][0] += 1
                elif r[key] is not None:
                    seen[key][1] += 1
        print("  rows with one operand null (ratio null) / ratio set: "
              "ipc %d/%d, cache_miss_rate %d/%d" %
              tuple(seen["ipc"] + seen["cache_miss_rate"]))
        for key, (null, ok) in seen.items():
            check(null > 0 and ok > 0, "%s: %d null with an operand, %d "
                  "set" % (key, null, ok))


@test
def pmu_modifiers_reach_the_pmu():
    """Generic hardware, hardware-cache, raw and dynamic-type events with
    u, k, G, H, D reach the PMU driver with exactly the exclude bits and
    pinning they ask for; a PMU that declares it cannot exclude gets them
    refused by perf core (EINVAL, invalid_attr), its plain event counts."""
    # exclude bits as the test PMU lists them: 1 exclude_user,
    # 2 exclude_kernel, 4 exclude_hv, 8 exclude_host, 16 exclude_guest
    want = {"cycles:u": (0, 0, 0x6, 0), "instructions:k": (0, 1, 0x5, 0),
            "cache-references:G": (0, 2, 0x8, 0),
            "cache-misses:H": (0, 3, 0x10, 0), "branches:D": (0, 4, 0, 1),
            "L1-dcache-loads:k": (3, 0, 0x5, 0), "r1a8:u": (4, 0x1a8, 0x6, 0)}
    with TestPMU("slots=16 claim_generic=1") as pmu:
        want["%s:uG" % pmu.ev(1)] = (pmu.type, 1, 0x6 | 0x8, 0)
        load()
        # A thread that exits before the test PMU is unloaded: on 6.1 a
        # task's hardware context keeps pointing at the PMU it was made
        # for.
        w = Workload("pmumods", "--threads", "1", "--wait-go")
        try:
            ret = control("attach tid=%d events=%s" %
                          (w.tids[0], ",".join(want)))
            check(ret == 0, "attach: %s" % os.strerror(ret))
            got = {(e["type"], e["config"]): e for e in pmu.table()}
        finally:
            unload()
            w.go()
            w.wait()
        for name, (typ, cfg, excl, pinned) in want.items():
            e = got.get((typ, cfg))
            check(e is not None, "%s never reached the PMU" % name)
            check(e["excl"] == excl and e["pinned"] == pinned,
                  "%s reached the PMU with excl %#x pinned %d, want %#x %d"
                  % (name, e["excl"], e["pinned"], excl, pinned))
    with TestPMU("slots=4 claim_generic=1 no_exclude=1"):
        load()
        w = Workload("pmunoex", "--threads", "1", "--wait-go", "--burn-ms",
                     "400", "--hold-ms", "600")
        c = Cat("pmunoex", "--tid", str(w.tids[0]), "--interval", "100ms",
                "--events", "cycles,cycles:u,instructions:H,cycles:D")
        run_burn("pmunoex", c, w)
        un = {e["counter"]: e for e in c.events("perf_unavailable")}
        check(sorted(un) == ["cycles:u", "instructions:H"], un)
        check(all(e["errno"] == "EINVAL" and e["reason"] == "invalid_attr"
                  for e in un.values()), un)
        rows = [r for r in c.rows() if r["ran"]]
        check(rows and all(r["cycles"] and r["cycles_D"] for r in rows),
              "plain and pinned cycles must count")


# Event classes and the vcpuperf spelling of the probe's events.
PROBE_EVENTS = {"cycles": "hardware", "L1-dcache-loads": "hw-cache",
                "r003c": "raw", "page-faults": "software",
                "context-switches": "software", "task-clock": "clock",
                "cpu-clock": "clock", "sched:sched_switch": "tracepoint",
                "syscalls:sys_enter_getppid": "tracepoint"}


CPUS = "/sys/devices/system/cpu"


def cpus_offline():
    """Take every online CPU but the first offline; return them.  The
    probe opens and closes perf tracepoint events dozens of times, and
    each time the kernel rewrites the tracepoint's static key and call
    (text_poke_bp): on the 6.1 VM's two multi-threaded TCG vCPUs that
    livelocked the guest twice (one vCPU kept executing the int3 of a site
    in __schedule already restored, the other waited in text_poke_bp for
    it; the matrix kernels boot one vCPU for the same reason).  With one
    CPU online no other executes the code being rewritten."""
    cpus = [d for d in sorted(os.listdir(CPUS))
            if d.startswith("cpu") and d != "cpu0" and
            os.path.exists(os.path.join(CPUS, d, "online")) and cpu_online(d)]
    set_online(cpus, False)
    return cpus


def set_online(cpus, online):
    for d in cpus:
        with open(os.path.join(CPUS, d, "online"), "w") as f:
            f.write("1" if online else "0")


def cpu_online(d):
    with open(os.path.join(CPUS, d, "online")) as f:
        return f.read().strip() == "1"


@test
def modifier_table():
    """Which modifiers this kernel honours, found by perf_event_open() with
    known user/kernel workloads (tests/pmu/modprobe_honour); vcpuperf
    refuses every one it ignores, with EINVAL and a reason naming the event
    and the modifier, and none it honours.  Keywords it would ignore are left out and
    flagged (perf_started and rows: modifiers_not_applied)."""
    offline = cpus_offline()
    try:
        p = sh(PROBE, timeout=300)
    finally:
        set_online(offline, True)
    print("  offline during the probe: %s" % (" ".join(offline) or "none"))
    check(all(cpu_online(d) for d in offline), "CPUs not back online: %s" %
          [d for d in offline if not cpu_online(d)])
    verdicts = {}
    for ln in p.stdout.splitlines():
        v = json.loads(ln)
        verdicts[(v["event"], v["mod"])] = v
    out = os.path.join(os.environ.get("VP_OUT", "/tmp"), "modifiers.json")
    with open(out, "w") as f:
        json.dump(list(verdicts.values()), f, indent=1)
    print("  %-28s %-10s  u  k  G  H  D" % ("event", "class"))
    for ev, cls in PROBE_EVENTS.items():
        print("  %-28s %-10s %s" % (ev, cls, " ".join(
            "%2s" % {"honoured": "ok", "ignored": "IG", "same": "=",
                     "untestable": "-", "refused": "RF"}.get(
                         verdicts[(ev, m)]["verdict"], "?")
            for m in "ukGHD")))
    unclear = [v for v in verdicts.values() if v["verdict"] == "unclear"]
    check(not unclear, "unclear verdicts: %s" % unclear)
    # A class ignores a modifier when one of its events shows it.  H cannot
    # be told from the plain count on a host thread: the kernel ignores it
    # wherever it ignores G (neither is looked at by the same code).
    ign = {(cls, m) for (ev, m), v in verdicts.items()
           for cls in [PROBE_EVENTS[ev]] if v["verdict"] == "ignored"}
    ign |= {(cls, "H") for (cls, m) in list(ign) if m == "G"}
    print("  ignored: %s" % " ".join(sorted("%s:%s" % x for x in ign)))
    load()
    pid = os.getpid()
    refused = set()
    for ev, cls in PROBE_EVENTS.items():
        for m in "ukGHD":
            v = verdicts[(ev, m)]
            if v["why"] == "no such tracepoint":
                continue    # this kernel has no syscall tracepoints
            name = "%s:%s" % (ev, m)
            ret = control("attach tid=%d events=%s" % (pid, name))
            if ret == 0:
                check(control("detach tid=%d" % pid) == 0, "detach")
                # Never accept what this kernel shows it ignores.
                check((cls, m) not in ign, "%s: the kernel ignores %s for "
                      "%s events, vcpuperf accepted it" % (name, m, cls))
                continue
            err = read_file("status")
            check(ret == errno.EINVAL and name in err and
                  ("modifier %s refused" % m) in err,
                  "%s: %s: %s" % (name, os.strerror(ret),
                                  [ln for ln in err.splitlines()
                                   if "last_error" in ln]))
            # Never refuse what this event shows honoured; a modifier no
            # workload here can judge ("same", "untestable": a kernel
            # without syscall tracepoints) follows the measured table.
            check(v["verdict"] != "honoured", "%s is honoured here, "
                  "vcpuperf refused it" % name)
            refused.add("%s:%s" % (cls, m))
    print("  refused by vcpuperf: %s" % " ".join(sorted(refused)))
    # Keywords: left out and flagged (a fresh module: an empty stream).
    load()
    w = Workload("pmukw", "--threads", "1", "--wait-go", "--burn-ms",
                 "300", "--hold-ms", "500")
    c = Cat("pmukw", "--tid", str(w.tids[0]), "--interval", "100ms",
            "--events", "task-clock,page-faults,context-switches",
            "--user-only")
    run_burn("pmukw", c, w)
    st = c.events("perf_started")[0]
    check(st.get("modifiers_not_applied") == {"task-clock": "u"},
          "perf_started: %s" % st)
    check(all(r["modifiers_not_applied"] == {"task_clock": "u"}
              for r in c.rows()), "rows lack modifiers_not_applied")
    if os.path.exists("/sys/module/kvm") or \
            sh("modprobe kvm", check_rc=False).returncode == 0:
        path = "/sys/module/kvm/parameters/enable_mediated_pmu"
        if os.path.exists(path):
            with open(path) as f:
                print("  kvm.enable_mediated_pmu = %s" % f.read().strip())
