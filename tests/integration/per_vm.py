"""Integration tests of the lab pipeline's needs: the VM identity of a
qemu= target (QEMU's -name and -uuid, read from the command line at
attach) and the whole-VM totals of --per-vm, which count every thread of
the process, short-lived ones included.

The oracles: the command line the test gave the workload; the process's
own accounting in /proc/PID/stat (minflt + majflt and utime + stime, which
include the threads that have exited), read while the process is
quiescent (every thread blocked) right after the attach and right before
the stop, so that the counters and /proc see the same work."""

import os
import time

from vptest import (Cat, TestFailure, Workload, check, debug_allocator,
                    load, test, OUT)

MS = 1000000
UUID = "c7a5fdbd-edaf-9455-926a-d65c16db1809"
CLK_TCK = os.sysconf("SC_CLK_TCK")
TICK_NS = 1000000000 // CLK_TCK
FORK_PAGES = 3000
# Episodes tried when /proc saw fewer faults than pages written (below).
EPISODE_ATTEMPTS = 3



def proc_stat(pid):
    """(minflt + majflt, utime + stime in ticks) of the whole process:
    /proc/PID/stat fields 10, 12, 14 and 15 (exited threads included)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state)
    return (int(fields[7]) + int(fields[9]),
            int(fields[11]) + int(fields[12]))


def pervm_episode(attempt, spawn, spawn_pages):
    """One episode of per_vm_totals_match_proc: the workload (two vCPU
    threads, the spawner and its short-lived threads, a fork()ed child)
    recorded with --per-vm; returns the workload, the stopped Cat and
    proc_stat() right before go and once the work is done."""
    done = os.path.join(OUT, "pervm.done.json")
    if os.path.exists(done):
        os.unlink(done)
    name = "pervm%d" % attempt if attempt else "pervm"
    w = Workload(name, "--threads", "2", "--wait-go", "--pages", "1000",
                 "--sleeps", "50", "--burn-ms", "100", "--exit-thread",
                 "--spawner", "--spawn", str(spawn), "--spawn-pages",
                 str(spawn_pages), "--spawn-gap-us", "2000",
                 "--fork-pages", str(FORK_PAGES), "--done", done,
                 "--hold-ms", "120000", "--", "-name",
                 "guest=vm1,debug-threads=on", "-uuid", UUID, "-S")
    c = Cat(name, "--qemu", str(w.pid), "--per-vm", "--emulator-threads",
            "--interval", "100ms", "--raw", "--events",
            "page-faults,task-clock,context-switches,cycles")
    try:
        # two vCPU threads, the spawner and the main thread
        c.wait_started(4)
        before = proc_stat(w.pid)
        w.go()
        w.wait_done(done)
        time.sleep(0.3)         # the main thread is back asleep
        after = proc_stat(w.pid)
        time.sleep(0.25)
        rc = c.stop()
    finally:
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    return w, c, before, after


@test
def per_vm_totals_match_proc():
    """--per-vm counts the whole process: its vCPU threads, its emulator
    threads and 60 threads that each live a few ms (far less than the
    100 ms interval) and touch 64 pages, but not the child process it
    fork()s, which touches 3000 pages (/proc counts its faults in cminflt).
    The per-VM page faults over the episode equal the process's minflt +
    majflt delta exactly.  Its
    task-clock agrees with utime + stime within two USER_HZ ticks (each
    /proc reading is truncated to a tick, utime and stime separately) and
    1 ms, less what the counters cannot see: the end of each exiting
    thread's exit path, after perf_event_exit_task() (measured under TCG:
    1.0-1.1 ms per thread; allowed: 2 ms per thread that exited), more
    what the kernel's task-clock runs ahead of its runtime under TCG (3%,
    8% on a kernel with KASAN and lockdep).
    The per-VM scheduler runtime (sched_run_ns) is what utime + stime
    are scaled to: equal within the two ticks' truncation and 1 ms.
    The per-thread rows cannot see the short-lived threads; the per-VM
    rows carry the VM identity of the libvirt-style command line.
    An episode in which /proc saw fewer faults than the pages written
    (the CPU did not take them all: seen once, under load) is not the
    one described here and is run again, up to EPISODE_ATTEMPTS times;
    the counters must equal /proc in every episode."""
    load()
    spawn, spawn_pages = int(os.environ.get("VP_SPAWN", 60)), 64
    floor = 2 * 1000 + spawn * spawn_pages
    for attempt in range(EPISODE_ATTEMPTS):
        w, c, (pf0, t0), (pf1, t1) = pervm_episode(attempt, spawn,
                                                    spawn_pages)
        rows = c.rows()
        vm = [r for r in rows if r["tid"] is None]
        check(len(vm) >= 1, "no per-VM rows")
        # the raw cumulative counts of the last per-VM row: the episode
        raw = vm[-1]["raw"]
        pf = raw["page-faults"]["value"]
        opf = pf1 - pf0
        check(pf == opf, "per-VM page_faults %d != /proc %d (the fork()ed "
              "child touched %d pages)" % (pf, opf, FORK_PAGES))
        if opf >= floor:
            break
        # Every page was written, but the CPU took fewer faults than
        # that (once in make check, under load: 5687 against 5840, about
        # three short-lived threads' worth); /proc and the counters agree
        # on it, but the episode is not the one the test describes.
        print("  attempt %d: /proc saw %d faults, fewer than the %d pages "
              "written (the counters: %d); again" %
              (attempt + 1, opf, floor, pf))
    else:
        raise TestFailure("/proc saw fewer faults than the %d pages written "
                          "in all %d episodes" % (floor, EPISODE_ATTEMPTS))
    threads = [r for r in rows if r["tid"] is not None]
    check(len(vm) >= 5, "%d per-VM rows" % len(vm))
    for r in vm:
        check((r["role"], r["vcpu"], r["vm"], r["uuid"], r["pid"]) ==
              ("vm", None, "vm1", UUID, w.pid), "per-VM row: %s" % r)
        for k in ("source", "available_in_deployment", "interval_s",
                  "cycles", "instructions", "cache_references",
                  "cache_misses", "branches", "branch_misses",
                  "page_faults", "context_switches", "ipc",
                  "cache_miss_rate", "t_mono_ns", "t_wall_ns"):
            check(k in r, "per-VM row lacks %s" % k)
        check(r["cycles"] is None and r["instructions"] is None,
              "hardware events under TCG must be null")
    check(all(r["vm"] == "vm1" and r["uuid"] == UUID for r in threads),
          "thread rows lack the VM identity")
    roles = {(r["role"], r["vcpu"] is None) for r in threads}
    check(roles == {("vcpu", False), ("emulator", True)},
          "roles %s" % roles)
    check(vm[-1]["threads_exited"] >= 1,
          "vCPU 0 exited but threads_exited is %s" % vm[-1]["threads_exited"])
    tc = raw["task-clock"]["value"]
    spf = sum(r["page_faults"] for r in vm)
    otc = (t1 - t0) * TICK_NS
    # threads found by a scan just before they exit may have no counter
    tpf = sum(r["page_faults"] or 0 for r in threads)
    print("  per-VM page_faults %d (rows, scaled: %d), /proc/PID/stat "
          "minflt+majflt delta %d; per-thread rows sum %d (short-lived "
          "threads: %d x %d pages)" % (pf, spf, opf, tpf, spawn,
                                       spawn_pages))
    print("  per-VM task_clock %.1f ms, utime+stime delta %.1f ms "
          "(%d ticks of %d ms), difference %.1f ms; %d per-VM rows" %
          (tc / MS, otc / MS, t1 - t0, TICK_NS // MS, (tc - otc) / MS,
           len(vm)))
    exited = spawn + 1          # the short-lived threads and vCPU 0
    # Above: the kernel's task-clock runs ahead of the runtime that
    # utime + stime are scaled to under TCG (unstable TSC): up to 2.8%
    # measured (selfread.py), so 3% of it on top.  At every switch the task
    # clock stops after and starts after the runtime does, so the slower
    # the scheduler the more it is ahead: on a kernel with KASAN and
    # lockdep 5.5% was measured (1160.7 ms against 1100 ms), so 8% there.
    ahead = 0.08 if debug_allocator() else 0.03
    check(-2 * TICK_NS - MS - exited * 2 * MS <= tc - otc <=
          2 * TICK_NS + MS + ahead * otc,
          "per-VM task_clock %d ns vs utime+stime %d ns (%d threads "
          "exited)" % (tc, otc, exited))
    # The scheduler's runtime of every thread, the exited ones' from the
    # kernel's process totals: what utime + stime are scaled to, so equal
    # to them but for the truncation of each to a tick.
    run = sum(r["sched_run_ns"] for r in vm)
    print("  per-VM sched_run_ns %.1f ms, utime+stime delta %.1f ms, "
          "difference %.1f ms" % (run / MS, otc / MS, (run - otc) / MS))
    check(abs(run - otc) <= 2 * TICK_NS + MS,
          "per-VM sched_run_ns %d vs utime+stime %d (%d threads exited)" %
          (run, otc, exited))
    # a pass can catch a short-lived thread alive (it then has rows for
    # what it did after): most of their faults are in no thread's rows
    check(pf - tpf >= spawn * spawn_pages // 2,
          "per-thread rows saw the short-lived threads? %d vs %d" % (tpf, pf))
    starts = c.events("perf_process_started")
    check(len(starts) == 1 and starts[0]["vm"] == "vm1" and
          starts[0]["process_totals"] and starts[0]["threads"] == 4,
          "perf_process_started: %s" % starts)


@test
def vm_identity_forms():
    """The VM identity of a qemu= target from the command line forms QEMU
    takes: -name guest=NAME,debug-threads=on -uuid U (libvirt), -name
    NAME,debug-threads=on, -name NAME, --name with guest= after another
    key, and none (null)."""
    load()
    forms = [
        (["-name", "guest=lv1,debug-threads=on", "-uuid", UUID],
         "lv1", UUID),
        (["-name", "plain2,debug-threads=on"], "plain2", None),
        (["-name", "bare3", "-m", "64"], "bare3", None),
        (["--name", "debug-threads=on,guest=late4", "--uuid", UUID],
         "late4", UUID),
        (["-m", "64"], None, None),
    ]
    for i, (argv, want_vm, want_uuid) in enumerate(forms):
        w = Workload("ident%d" % i, "--threads", "1", "--hold-ms", "20000",
                     "--", *argv)
        c = Cat("ident%d" % i, "--qemu", str(w.pid), "--events",
                "task-clock", "--interval", "50ms")
        try:
            c.wait_started(1)
            time.sleep(0.3)
            rc = c.stop()
        finally:
            w.kill()
        check(rc == 0, "exit %d" % rc)
        rows = c.rows()
        check(rows, "no rows")
        got = {(r["vm"], r["uuid"]) for r in rows}
        check(got == {(want_vm, want_uuid)}, "%s: rows say %s, want %s" %
              (" ".join(argv), got, (want_vm, want_uuid)))
        ev = c.events("perf_started")
        check(all(e["vm"] == want_vm and e["uuid"] == want_uuid for e in ev),
              "%s: perf_started %s" % (argv, ev))
        print("  %-45s vm %s, uuid %s" % (" ".join(argv), want_vm,
                                          want_uuid))
    # pid= attaches carry no identity, whatever the command line
    w = Workload("identpid", "--threads", "1", "--hold-ms", "20000", "--",
                 "-name", "x")
    c = Cat("identpid", "--pid", str(w.pid), "--events", "task-clock",
            "--interval", "50ms")
    try:
        c.wait_started(1)
        time.sleep(0.3)
        rc = c.stop()
    finally:
        w.kill()
    check(rc == 0 and all(r["vm"] is None for r in c.rows()),
          "pid= rows carry a vm")
