"""Counting, checked against oracles outside vcpuperf: page faults,
context switches and task-clock per vCPU thread against what each thread
of tests/workload read from /proc around its known work; perf stat run
side by side on the same threads; a tracepoint against context
switches."""

import os
import signal
import subprocess
import time

from vptest import (Cat, Workload, by_tid, check, delta, load,
                    not_on_debug, perf_stat_enabled, read_file, run_workload,
                    sh, task_clock_agrees, test, within, CAT, REPO)

MS = 1000000


@test
def counts_match_proc_oracles():
    """page faults, context switches and task-clock per vCPU thread agree
    with what each thread read from /proc around its known work."""
    load()
    pages, sleeps, burn = 3000, 200, 400
    w = Workload("counts", "--threads", "2", "--wait-go", "--pages",
                 str(pages), "--sleeps", str(sleeps), "--burn-ms", str(burn),
                 "--hold-ms", "1500")
    c = Cat("counts", "--qemu", str(w.pid), "--interval", "100ms",
            "--events", "task-clock,page-faults,context-switches,cycles,"
            "instructions")
    rep = run_workload(c, w, 2)
    rows = by_tid(c.rows())
    for th in rep["threads"]:
        tid = th["tid"]
        trows = rows.get(tid, [])
        check(len(trows) >= 10, "tid %d: %d rows" % (tid, len(trows)))
        check(all(r["vcpu"] == th["vcpu"] for r in trows),
              "tid %d: vcpu mapping wrong" % tid)
        check(all(r["pid"] == rep["pid"] for r in trows), "pid wrong")
        pf = sum(r["page_faults"] for r in trows)
        opf = delta(th, "minflt") + delta(th, "majflt")
        check(opf >= pages, "oracle saw %d faults for %d pages" % (opf, pages))
        check(opf <= pf <= opf + 100,
              "tid %d: page_faults %d, /proc says %d (+100 allowed for "
              "thread start/exit)" % (tid, pf, opf))
        cs = sum(r["context_switches"] for r in trows)
        ocs = (delta(th, "voluntary_ctxt_switches") +
               delta(th, "nonvoluntary_ctxt_switches"))
        check(ocs >= sleeps, "oracle saw %d switches" % ocs)
        check(ocs <= cs <= ocs + 30,
              "tid %d: context_switches %d, /proc says %d" % (tid, cs, ocs))
        tc = sum(r["task_clock"] for r in trows)
        ort = delta(th, "sum_exec_runtime_ns")
        check(ort >= burn * MS, "oracle runtime %d" % ort)
        check(task_clock_agrees(tc, ort, ocs),
              "tid %d: task_clock %d ns, schedstat says %d over %d "
              "switches" % (tid, tc, ort, ocs))
        print("  tid %d: page_faults %d (/proc %d), context_switches %d "
              "(/proc %d), task_clock %.1f ms (schedstat %.1f ms), %d rows" %
              (tid, pf, opf, cs, ocs, tc / MS, ort / MS, len(trows)))
        check(all(r["cycles"] is None and r["instructions"] is None
                  for r in trows), "hardware events must be null")
        check(all(r["ipc"] is None for r in trows), "ipc must be null")
        check(any(r["ran"] for r in trows), "never ran?")
    ev = c.events()
    unav = [e for e in ev if e["event"] == "perf_unavailable"]
    check(len(unav) == 4, "want 4 perf_unavailable, got %d" % len(unav))
    for e in unav:
        check(e["errno"] in ("ENOENT", "EOPNOTSUPP"), "errno %s" % e["errno"])
        check(e["reason"] and e["detail"], "no reason")
    names = [e["event"] for e in ev]
    for n in ("perf_started", "perf_first_row", "perf_task_exited",
              "perf_finished", "perf_detached"):
        check(n in names, "no %s event" % n)
    fin = [e for e in ev if e["event"] == "perf_finished"
           and e.get("tid") in rows]
    for e in fin:
        check(e["intervals_seen"] == len(rows[e["tid"]]),
              "finished says %d intervals, %d rows" %
              (e["intervals_seen"], len(rows[e["tid"]])))


def perf_stat_per_thread(path):
    """Parse `perf stat --per-thread -x,` output: {tid: {event: value}}."""
    out = {}
    with open(path) as f:
        for line in f:
            parts = line.strip().split(",")
            if len(parts) < 4 or "-" not in parts[0]:
                continue
            tid = int(parts[0].rsplit("-", 1)[1])
            try:
                val = float(parts[1])
            except ValueError:
                continue
            name = parts[3].split(":")[0]
            if parts[2] == "msec":
                val *= MS
            out.setdefault(tid, {})[name] = val
    return out


@test
@not_on_debug("perf stat's counts beside ours; its counters and ours are "
              "made and read as in every other test")
def agrees_with_perf_stat():
    """perf stat run side by side on the same threads and software events
    agrees within 5% (page faults within 20, context switches within 10)."""
    load()
    w = Workload("perfstat", "--threads", "2", "--wait-go", "--pages",
                 "2000", "--sleeps", "100", "--burn-ms", "800",
                 "--hold-ms", "500")
    tids = ",".join(str(t) for t in w.tids)
    evs = "task-clock,page-faults,context-switches"
    pstat = os.path.join(os.environ.get("VP_OUT", "/tmp"), "perfstat.txt")
    # perf starts slowly under emulation: go only once it says its
    # counters are enabled (open is not enough: 1819 of 2000 faults once).
    perf = perf_stat_enabled(["perf", "stat", "--per-thread", "-t", tids,
                              "-e", evs, "-x", ",", "-o", pstat])
    c = Cat("perfstat", "--tid", tids, "--events", evs, "--interval",
            "100ms")
    try:
        c.wait_started(2)
        w.go()
        w.wait()
        time.sleep(0.3)
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=30)
        rc = c.stop()
    finally:
        w.kill()
        if perf.poll() is None:
            perf.kill()
            perf.wait()
    check(rc == 0, "vcpuperf-cat exit %d" % rc)
    ps = perf_stat_per_thread(pstat)
    rows = by_tid(c.rows())
    for tid in w.tids:
        check(tid in ps, "perf stat has no tid %d: %s" % (tid, ps))
        tc = sum(r["task_clock"] for r in rows[tid])
        pf = sum(r["page_faults"] for r in rows[tid])
        cs = sum(r["context_switches"] for r in rows[tid])
        p = ps[tid]
        print("  tid %d: vcpuperf task_clock %.1f ms / perf %.1f ms, "
              "page_faults %d / %d, context_switches %d / %d" %
              (tid, tc / MS, p["task-clock"] / MS, pf, p["page-faults"], cs,
               p["context-switches"]))
        check(within(tc, p["task-clock"], 0.05, 20 * MS),
              "tid %d task_clock %d vs perf %d" % (tid, tc, p["task-clock"]))
        check(within(pf, p["page-faults"], 0.05, 20),
              "tid %d page_faults %d vs perf %d" % (tid, pf, p["page-faults"]))
        check(within(cs, p["context-switches"], 0.05, 10),
              "tid %d cs %d vs perf %d" % (tid, cs, p["context-switches"]))


KVM_KEYS = ("kvm_exits", "kvm_userspace_exits", "kvm_mmio", "kvm_halts",
            "kvm_hypercalls")


def kvm_loaded(want):
    """Load or unload kvm.ko so that its tracepoints exist as @want says;
    False if this kernel cannot (kvm built in, or no module)."""
    loaded = os.path.exists("/sys/module/kvm")
    if loaded != want:
        sh("modprobe %s kvm" % ("" if want else "-r"), check_rc=False)
    return os.path.exists("/sys/module/kvm") == want


@test
def tracepoint_events():
    """sched:sched_switch counts like context-switches; a tracepoint that
    does not exist is refused (ENOENT) before anything is attached;
    --kvm-exits without kvm loaded says, per thread and KVM event, that
    the tracepoint is missing (perf_unavailable, no_tracepoint; null in
    the rows) and counts the rest; with kvm loaded (no guest on this TCG
    bed) its events count 0."""
    load()
    unloaded = kvm_loaded(False)
    w = Workload("tp", "--threads", "1", "--wait-go", "--sleeps", "300",
                 "--hold-ms", "1000")
    c = Cat("tp", "--tid", str(w.tids[0]), "--events",
            "sched:sched_switch,context-switches", "--kvm-exits",
            "--interval", "100ms")
    run_workload(c, w, 1, settle=0)
    rows = c.rows()
    tp = sum(r["sched_sched_switch"] for r in rows)
    cs = sum(r["context_switches"] for r in rows)
    # 300 sleeps switch out about 300 times: a sleep whose timer has
    # already fired by the time the thread would block does not switch.
    check(cs >= 285 and within(tp, cs, 0.02, 3), "tracepoint %d vs cs %d" %
          (tp, cs))
    if unloaded:
        un = {e["counter"]: e for e in c.events("perf_unavailable")}
        check(sorted(un) == sorted(k.replace("_", "-") for k in KVM_KEYS)
              and all(e["reason"] == "no_tracepoint" and
                      "kvm" in e["detail"] for e in un.values()),
              "kvm not loaded: %s" % un)
        check(all(r[k] is None for r in rows for k in KVM_KEYS),
              "kvm not loaded: a KVM key not null")
        print("  kvm not loaded: %d perf_unavailable no_tracepoint, the KVM "
              "keys null in %d rows" % (len(un), len(rows)))
    else:
        print("  kvm cannot be unloaded here: its missing tracepoints "
              "not checked")
    if kvm_loaded(True):
        c = Cat("tpkvm", "--tid", str(os.getpid()), "--events", "cs",
                "--kvm-exits", "--interval", "100ms", "--duration", "500ms")
        check(c.wait() == 0, "vcpuperf-cat: %s" % c.stderr)
        rows = c.rows()
        check(rows and not c.events("perf_unavailable") and
              all(r[k] == 0 for r in rows for k in KVM_KEYS),
              "kvm loaded, no guest: %s, %s" %
              (c.events("perf_unavailable"), rows[-1:]))
        print("  kvm loaded: the KVM keys 0 in %d rows" % len(rows))
        kvm_loaded(False)
    else:
        print("  kvm cannot be loaded here: its tracepoints not counted")
    p = sh("%s --pid 1 --events nosuch:tracepoint --duration 1s" % CAT,
           check_rc=False)
    check(p.returncode != 0 and "nosuch:tracepoint" in p.stderr,
          "missing tracepoint: %s" % p.stderr)
    check("attach" not in read_file("control"), "something attached")


@test
@not_on_debug("the scheduler's figures against /proc; per_vm_totals_match_"
              "proc runs the same code there")
def sched_fields_match_schedstat():
    """The rows' scheduler figures, summed per thread, against what each
    thread of tests/workload read from /proc/TID/schedstat and status
    around its known work, its CPU shared with a busy competitor (a
    shell loop pinned to the same CPU): CPU time, time waiting for the
    CPU (which the competitor makes large), timeslices and switches, at
    least the work's and no more than its thread's start and exit add;
    every row that ran on CPU 0.  The per-VM rows (--per-vm) sum every
    thread of the process: worker 0 exits after its work and short-lived
    threads come and go, and the VM's totals hold both workers' work.  A
    second recording of the same process at the same time, --no-sched,
    has no scheduler key anywhere."""
    load()
    sleeps, burn = 100, 300
    w = Workload("sched", "--threads", "2", "--wait-go", "--sleeps",
                 str(sleeps), "--burn-ms", str(burn), "--hold-ms", "1000",
                 "--exit-thread", "--spawner", "--spawn", "10")
    sh("taskset -a -p 1 %d" % w.pid)
    hog = subprocess.Popen(["taskset", "-c", "0", "sh", "-c",
                            "while :; do :; done"])
    try:
        plain = Cat("sched-off", "--qemu", str(w.pid), "--interval",
                    "100ms", "--events", "task-clock", "--per-vm",
                    "--no-sched")
        c = Cat("sched", "--qemu", str(w.pid), "--interval", "100ms",
                "--events", "task-clock,context-switches", "--per-vm",
                "--emulator-threads")
        plain.wait_started(2)
        rep = run_workload(c, w, 2)
    finally:
        hog.kill()
        hog.wait()
        rc = plain.stop()
    check(rc == 0, "the --no-sched recording: exit %d" % rc)
    keys = ("sched_run_ns", "sched_wait_ns", "sched_timeslices",
            "sched_voluntary_switches", "sched_involuntary_switches",
            "sched_migrations")
    bad = [r for r in plain.rows() if any(k in r for k in keys + ("cpu",))]
    check(plain.rows() and not bad, "--no-sched: %d rows of %d with "
          "scheduler keys" % (len(bad), len(plain.rows())))
    check(all(e.get("sched_run_ns", None) is None
              for e in plain.events("perf_finished")),
          "--no-sched: perf_finished with scheduler totals")
    rows = by_tid(c.rows())
    vm_rows = [r for r in c.rows() if r["tid"] is None]
    check(vm_rows and all(k in r and "cpu" not in r
                          for r in vm_rows for k in keys),
          "per-VM rows without the scheduler's keys (or with cpu)")
    vm = [e for e in c.events("perf_finished") if e["scope"] == "vm"]
    check(len(vm) == 1, "%d perf_finished of scope vm" % len(vm))
    for k in keys:
        check(vm[0][k] == sum(r[k] for r in vm_rows),
              "per-VM %s: perf_finished %s, rows sum to %d" %
              (k, vm[0][k], sum(r[k] for r in vm_rows)))
    fin = {e["tid"]: e for e in c.events("perf_finished")
           if e["scope"] == "thread"}
    work = {k: sum(delta(th, o) for th in rep["threads"]) for k, o in (
        ("wait", "run_delay_ns"), ("vol", "voluntary_ctxt_switches"))}
    rowed = {k: sum(e[k] for e in fin.values()) for k in keys}
    print("  VM: wait %.1f ms (the workers' work %.1f, the threads with "
          "rows %.1f), voluntary switches %d (%d, %d), %d rows; worker 0 "
          "exited: %s" %
          (vm[0]["sched_wait_ns"] / MS, work["wait"] / MS,
           rowed["sched_wait_ns"] / MS, vm[0]["sched_voluntary_switches"],
           work["vol"], rowed["sched_voluntary_switches"], len(vm_rows),
           rep["threads"][0]["exited"]))
    # The kernel keeps no wait of a thread that has exited: the sum has
    # it as the last pass saw it, which for worker 0 (it exits right
    # after its work) is its work's wait but for at most the interval
    # before its exit (measured: 15.5 ms short).  Above that: the main
    # thread's, the spawner's and its ten short-lived threads' (those
    # without rows: 10 ms allowed), below the final figures of the
    # threads that have rows (worker 0's exit path is not in the sum).
    check(work["wait"] - 100 * MS <= vm[0]["sched_wait_ns"] <=
          rowed["sched_wait_ns"] + 10 * MS,
          "per-VM sched_wait_ns %d, the workers' work %d, the rowed "
          "threads' %d" % (vm[0]["sched_wait_ns"], work["wait"],
                           rowed["sched_wait_ns"]))
    # Switches of exited threads stay in the kernel's process totals: the
    # rowed threads' and at most 3 per short-lived thread.
    check(work["vol"] <= vm[0]["sched_voluntary_switches"] <=
          rowed["sched_voluntary_switches"] + 30,
          "per-VM voluntary switches %d, the workers' %d, the rowed "
          "threads' %d" % (vm[0]["sched_voluntary_switches"], work["vol"],
                           rowed["sched_voluntary_switches"]))
    for th in rep["threads"]:
        tid = th["tid"]
        trows = rows.get(tid, [])
        check(trows and all("sched_run_ns" in r for r in trows),
              "tid %d: rows without scheduler figures" % tid)
        run = sum(r["sched_run_ns"] for r in trows)
        wait = sum(r["sched_wait_ns"] for r in trows)
        slices = sum(r["sched_timeslices"] for r in trows)
        cs = sum(r["sched_voluntary_switches"] +
                 r["sched_involuntary_switches"] for r in trows)
        ort = delta(th, "sum_exec_runtime_ns")
        owait = delta(th, "run_delay_ns")
        oslices = delta(th, "timeslices")
        ocs = (delta(th, "voluntary_ctxt_switches") +
               delta(th, "nonvoluntary_ctxt_switches"))
        print("  tid %d: run %.1f ms (schedstat %.1f, task-clock %.1f), "
              "wait %.1f ms (%.1f), timeslices %d (%d), switches %d (%d), "
              "%d rows" %
              (tid, run / MS, ort / MS,
               sum(r["task_clock"] for r in trows) / MS, wait / MS,
               owait / MS, slices, oslices, cs, ocs, len(trows)))
        check(owait >= 20 * MS, "tid %d: the competitor made it wait only "
              "%.1f ms" % (tid, owait / MS))
        # Outside the oracle's two readings the thread also runs: from
        # go to its first reading, its own reads of /proc, its exit
        # (measured on 6.1 beside the competitor: 2.1 to 14.2 ms).  perf's
        # task-clock over the rows' own span is no tighter oracle there:
        # under TCG it came out 8.6 ms below (the per-CPU clocks drift,
        # docs/testing.md), so it is printed, not checked.
        # Worker 0 then exits: its exit path, after its last reading, is
        # in its rows and in no reading (measured beside the arm64
        # benchmark, which slows the guest: 62 ms of CPU time, 122 ms of
        # wait behind the competitor), so only its floor is checked.
        top = float("inf") if th["exited"] else 1
        check(ort <= run <= ort + top * 20 * MS,
              "tid %d: sched_run_ns %d, schedstat says %d" % (tid, run, ort))
        check(owait <= wait <= owait + top * 50 * MS,
              "tid %d: sched_wait_ns %d, schedstat says %d" %
              (tid, wait, owait))
        check(oslices <= slices <= oslices + top * 30,
              "tid %d: sched_timeslices %d, schedstat says %d" %
              (tid, slices, oslices))
        check(ocs <= cs <= ocs + top * 30,
              "tid %d: switches %d, /proc says %d" % (tid, cs, ocs))
        check(all(r["cpu"] == 0 for r in trows if r["sched_run_ns"]),
              "tid %d: ran on a CPU other than 0: %s" %
              (tid, sorted({r["cpu"] for r in trows})))
        # perf's context-switches event against the scheduler's count,
        # read in the same sample: equal while the thread lives (a switch
        # between the two reads moves one to the next row); the switches
        # of its exit after perf_event_exit_task() ended its counters are
        # the scheduler's alone (measured: 2 for a worker, 5 for a thread
        # preempted in its exit by the competitor).
        live = trows[:-1]
        pcs = sum(r["context_switches"] for r in live)
        scs = sum(r["sched_voluntary_switches"] +
                  r["sched_involuntary_switches"] for r in live)
        print("    context_switches %d, the scheduler's %d while it lived; "
              "%d and %d in its last row" %
              (pcs, scs, trows[-1]["context_switches"],
               trows[-1]["sched_voluntary_switches"] +
               trows[-1]["sched_involuntary_switches"]))
        check(abs(pcs - scs) <= 1,
              "tid %d: context_switches %d, the scheduler's %d" %
              (tid, pcs, scs))
        check(pcs + trows[-1]["context_switches"] <= cs,
              "tid %d: context_switches above the scheduler's" % tid)


# what took a waiting thread's CPU, as the rows' keys name it
WHO_KINDS = ("same_vm", "other_vm", "kernel", "host", "idle")
TESTPMU = os.environ.get("VP_TESTPMU",
                         os.path.join(REPO, "tests", "pmu", "vp_testpmu.ko"))
# The CPU of the victim and of its competitor: the last (the harness on
# the others; 6.12 and 7.2 boot with one, see docs/testing.md).
WHO_CPU = os.cpu_count() - 1
# How long each competitor burns: past the victim's work, however slow.
WHO_BURN_MS = 20000
# Most a scheduler's pass may add to a wait the probes measure (below).
WHO_PASS_NS = 100000


def who_run(name, competitor):
    """One vCPU thread of a workload (VM "victim-NAME") that sleeps 50 x
    2 ms and burns 200 ms, pinned to WHO_CPU beside @competitor ("none", "host": a shell
    loop; "other_vm": a busy vCPU thread of workload VM "vm-b"; "same_vm":
    a busy "iothread" of its own process; "kernel": the test PMU module's
    burning kernel thread), recorded --who.  Returns (its rows, its
    report's thread, its perf_finished)."""
    args = ["--threads", "1", "--wait-go", "--sleeps", "50",
            "--sleep-us", "2000", "--burn-ms", "200", "--hold-ms", "0"]
    if competitor == "same_vm":
        args += ["--iothread-ms", str(WHO_BURN_MS)]
    w = Workload("who-" + name, *args, "--", "qemu-system-x86_64", "-name",
                 "guest=victim-" + name)
    # The vCPU alone (its main thread, which polls, is another competitor
    # of the same VM), or with its iothread the whole process.
    sh("taskset %s -p %d %d" % ("-a" if competitor == "same_vm" else "",
                                 1 << WHO_CPU,
                                 w.pid if competitor == "same_vm" else
                                 w.tids[0]))
    hog, other, pmu = None, None, False
    try:
        if competitor == "host":
            hog = subprocess.Popen(["taskset", "-c", str(WHO_CPU), "sh",
                                    "-c", "while :; do :; done"])
        elif competitor == "other_vm":
            other = Workload("who-vmb", "--threads", "1", "--wait-go",
                             "--burn-ms", str(WHO_BURN_MS), "--hold-ms", "0",
                             "--", "qemu-system-x86_64", "-name",
                             "guest=vm-b")
            sh("taskset -p %d %d" % (1 << WHO_CPU, other.tids[0]))
            other.go()
        elif competitor == "kernel":
            sh("insmod %s" % TESTPMU)
            pmu = True
            with open("/sys/kernel/debug/vp_testpmu/burn", "w") as f:
                f.write("%d %d" % (WHO_CPU, WHO_BURN_MS))
        c = Cat("who-" + name, "--qemu", str(w.pid), "--interval", "100ms",
                "--events", "task-clock", "--who")
        rep = run_workload(c, w, 1)
    finally:
        w.kill()
        if hog:
            hog.kill()
            hog.wait()
        if other:
            other.kill()
        if pmu:
            sh("rmmod vp_testpmu", timeout=60)
    th = rep["threads"][0]
    rows = [r for r in c.rows() if r["tid"] == th["tid"]]
    fin = [e for e in c.events("perf_finished")
           if e.get("tid") == th["tid"]]
    check(rows and len(fin) == 1, "%s: %d rows, perf_finished %s" %
          (name, len(rows), fin))
    check(not c.events("perf_sched_partial"), "%s: %s" %
          (name, c.events("perf_sched_partial")))
    return rows, th, fin[0]


@test
@not_on_debug("the split against the scheduler's figures allows a "
              "production kernel's pass per timeslice; KUnit's "
              "vpk_who_shares_a_cpu runs the probes under KASAN and lockdep")
def who_took_the_cpu():
    """--who: a vCPU thread's wait for its CPU, and its involuntary
    switches, split by what ran instead, with one competitor of a known
    kind at a time pinned to its CPU (a host process, a vCPU of another
    VM, another thread of its own VM, a kernel thread) and with none.
    The oracles: /proc/TID/schedstat's run_delay and status's
    nonvoluntary switches around the thread's work (the workload reads
    them itself), and the kernel's own run_delay and nivcsw in the same
    rows (read from the task, not by the probes).  The split sums to the
    wait; the competitor's kind holds the most of it (at least 80% on a
    CPU of its own, 60% on a guest of one CPU) and of the switches;
    another VM is named by its -name; with no competitor the thread
    waits next to nothing (on a guest of two CPUs: on one the harness
    competes)."""
    load()
    for kind in ("host", "other_vm", "same_vm", "kernel", "none"):
        rows, th, fin = who_run(kind, kind)
        split = {k: sum(r["sched_wait_%s_ns" % k] for r in rows)
                 for k in WHO_KINDS}
        pre = {k: sum(r["sched_preempted_%s" % k] for r in rows)
               for k in WHO_KINDS if k != "idle"}
        total, npre = sum(split.values()), sum(pre.values())
        wait = sum(r["sched_wait_ns"] for r in rows)
        invol = sum(r["sched_involuntary_switches"] for r in rows)
        owait = delta(th, "run_delay_ns")
        oinvol = delta(th, "nonvoluntary_ctxt_switches")
        vms = {}
        for r in rows:
            for vm, ns in r["sched_wait_vms"].items():
                vms[vm] = vms.get(vm, 0) + ns
        slices = sum(r["sched_timeslices"] for r in rows)
        print("  %s: wait %.1f ms split %s (rows' sched_wait_ns %.1f, "
              "/proc over the work %.1f); involuntary switches %s (rows "
              "%d, /proc %d); other VMs %s; %d rows, %d timeslices" %
              (kind, total / MS,
               {k: round(v / MS, 1) for k, v in split.items() if v},
               wait / MS, owait / MS, {k: v for k, v in pre.items() if v},
               invol, oinvol, {k: round(v / MS, 1) for k, v in vms.items()},
               len(rows), slices), flush=True)
        # The split against the kernel's run_delay of the same rows: a
        # wait begins at its wake-up or preemption (the kernel's at the
        # enqueue just before) and ends at the switch in, where the
        # kernel's ends when the scheduler's pass begins: each timeslice
        # adds that pass's time to the split (measured under TCG: 35-45
        # us on 6.1, with a competitor or none).
        check(abs(total - wait) <= 0.05 * wait + slices * WHO_PASS_NS,
              "%s: the split sums to %d ns, sched_wait_ns to %d, %d "
              "timeslices" % (kind, total, wait, slices))
        check(total >= owait - 2 * MS,
              "%s: the split sums to %d ns, /proc's wait over the work "
              "alone %d" % (kind, total, owait))
        check(abs(npre - invol) <= 1 and npre >= oinvol,
              "%s: %d switches split, %d involuntary in the rows, %d in "
              "/proc over the work" % (kind, npre, invol, oinvol))
        for k in WHO_KINDS:
            check(fin["sched_wait_%s_ns" % k] == split[k],
                  "%s: perf_finished %s %d, rows %d" %
                  (kind, k, fin["sched_wait_%s_ns" % k], split[k]))
        if kind == "none":
            # Next to nothing: a tenth of its own CPU time at most (a
            # competitor makes it wait about as long as it runs).  On a
            # guest of one CPU (6.12, 7.2) there is no such case: the
            # harness, the tool and the sampler share the CPU (measured on
            # 7.2 beside a busy host: 23 and 29 ms of 220-300 ms of run
            # time), and only the checks above hold.
            run = sum(r["sched_run_ns"] for r in rows)
            check(not WHO_CPU or
                  total - split["idle"] <= max(20 * MS, 0.1 * run),
                  "%s: waited %d ns behind other tasks, ran %d ns" %
                  (kind, total - split["idle"], run))
            continue
        check(owait >= 20 * MS, "%s: the competitor made it wait only "
              "%d ns" % (kind, owait))
        # With a CPU of its own beside the harness's, the competitor takes
        # at least 80% of the wait (measured on 6.1: 97-100%); on a guest
        # of one CPU (6.12, 7.2) the harness, the tool and the sampler
        # compete too (measured: 76-100%, 76% beside a busy host), so
        # there the competitor's kind has the most and at least 60%.
        share = 0.8 if WHO_CPU else 0.6
        check(split[kind] == max(split.values()) and
              split[kind] >= share * total,
              "%s: %d ns of %d put to it" % (kind, split[kind], total))
        # Switches: the harness's own tasks preempt it too where they
        # share its CPU (6.12 and 7.2 boot with one; measured there: 76%
        # to the kernel thread, the rest to the harness and the VM's main
        # thread), so the competitor's kind has the most and at least half.
        check(pre[kind] == max(pre.values()) and pre[kind] >= 0.5 * npre,
              "%s: %d of %d switches put to it" % (kind, pre[kind], npre))
        if kind == "other_vm":
            check(set(vms) == {"vm-b"} and vms["vm-b"] == split[kind],
                  "the other VM by name: %s, %d ns in all" %
                  (vms, split[kind]))
        else:
            check(sum(vms.values()) == split["other_vm"],
                  "%s: other VMs %s, %d ns in all" %
                  (kind, vms, split["other_vm"]))
