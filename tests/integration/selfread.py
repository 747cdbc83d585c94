"""Integration tests of how running threads are read (module/pass.c,
module/selfread.c): a thread on another CPU reads its own counters from a
task work (kick: one reschedule interrupt; lazy: none, it comes by itself
at the next timer tick), a thread that is not running is read directly,
and every case the thread cannot or does not read itself in time falls
back to the direct read, counted by reason.

Oracles: /proc/interrupts (rescheduling and function-call interrupts, the
cross-CPU reads' cost), each thread's schedstat, the status file's counts
of the module's own decisions only where nothing else can tell."""

import math
import os
import re
import shutil
import subprocess
import tempfile
import time

from vptest import (OUT, Cat, TestFailure, Workload, check,
                    check_timing, control, dmesg_clean_since, dmesg_mark,
                    load, needs_cpus, needs_feature, pct, read_file, sh,
                    task_clock_agrees, test, unload)

MS = 1000000
EVENTS = "task-clock,context-switches,page-faults,cpu-migrations"
# Tries at an rmmod that meets a read still held (see below).
RMMOD_ATTEMPTS = 5
# The functions queued to run on another CPU by the function-call IPI
# (a call on the CPU itself is not queued; 6.6 and later): a histogram
# trigger on this tracepoint, keyed by the function.
IPI_EVENT = "/sys/kernel/tracing/events/csd/csd_queue_cpu"
IPI_HIST = "hist:keys=func.sym"
# What perf_event_read() runs on the CPU of a counter it reads there.
PERF_READ_IPI = "__perf_event_read"



def ipis():
    """(rescheduling, function-call) interrupts so far, all CPUs."""
    out = {}
    with open("/proc/interrupts") as f:
        ncpu = len(f.readline().split())
        for line in f:
            fields = line.split()
            if fields and fields[0] in ("RES:", "CAL:"):
                out[fields[0]] = sum(int(x) for x in fields[1:1 + ncpu])
    return out.get("RES:", 0), out.get("CAL:", 0)


def ipi_callbacks_start():
    """Count the functions queued to run on another CPU by the
    function-call IPI from now on (a histogram on csd:csd_queue_cpu):
    False where the kernel has no such tracepoint (before 6.6) or no
    histogram triggers."""
    try:
        with open(IPI_EVENT + "/trigger", "w") as f:
            f.write(IPI_HIST)
    except OSError:
        return False
    return True


def ipi_callbacks_stop():
    with open(IPI_EVENT + "/trigger", "w") as f:
        f.write("!" + IPI_HIST)


def ipi_callbacks():
    """{function: times queued to run on another CPU} so far."""
    out = {}
    with open(IPI_EVENT + "/hist") as f:
        for m in re.finditer(r"func:\s*\[[0-9a-f]+\]\s*(\S+)\s*\}\s*"
                             r"hitcount:\s*(\d+)", f.read()):
            out[m.group(1)] = out.get(m.group(1), 0) + int(m.group(2))
    return out


def read_stats(owner=None):
    """The read and read-fallback counts of a collection from status: the
    one owned by pid @owner, else the default collection."""
    block = None
    for part in re.split(r"\n(?=collection \d+:)", read_file("status")):
        head = part.split("\n", 1)[0]
        if owner is None and head.startswith("collection 0:"):
            block = part
        elif owner is not None and "owner pid %d " % owner in head:
            block = part
    check(block is not None, "collection of %s not in status" % owner)
    m = re.search(r"^read: (\w+) \(now (\w+)\); (\d+) direct \(not on a "
                  r"CPU\), (\d+) by the thread itself \((\d+) kicks, (\d+) us",
                  block, re.M)
    f = re.search(r"^read fallbacks: (\d+) timeout, (\d+) switched out, "
                  r"(\d+) pending, (\d+) kthread, (\d+) exiting"
                  r"(?:, (\d+) user worker)?", block, re.M)
    check(m and f, "no read lines in status:\n" + block)
    return {"mode": m.group(1), "now": m.group(2), "direct": int(m.group(3)),
            "self": int(m.group(4)), "kicks": int(m.group(5)),
            "self_us": int(m.group(6)), "timeout": int(f.group(1)),
            "switched": int(f.group(2)), "pending": int(f.group(3)),
            "kthread": int(f.group(4)), "exiting": int(f.group(5)),
            "user_worker": int(f.group(6) or 0)}


def run_mode(mode, interval_ms, seconds, baseline=False, by_callback=False):
    """Two threads spinning (one always on the other CPU than the sampler)
    read in @mode: interrupts per thread and tick over the middle of the
    run (with @by_callback also the perf reads among the function-call
    IPIs: ipi_callbacks()), the rows' lateness, the module's counts,
    task-clock against schedstat."""
    done = os.path.join(OUT, "self-%s.done.json" % mode)
    if os.path.exists(done):
        os.unlink(done)
    # The threads stay blocked after their work until the tool has
    # stopped: what it counted lies between their blocked states, as the
    # schedstat they read before and after the work does (their exit path
    # is not in it: slow on the debug kernel).
    w = Workload("self-" + mode, "--threads", "2", "--wait-go", "--burn-ms",
                 str(int(seconds * 1000)), "--done", done, "--hold-ms",
                 "600000")
    c = None
    rc = 0
    try:
        if not baseline:
            c = Cat("self-" + mode, "--tid", ",".join(map(str, w.tids)),
                    "--interval", "%dms" % interval_ms, "--events", EVENTS,
                    "--read", mode)
            c.wait_started(2)
        w.go()
        time.sleep(seconds * 0.2)
        p0 = ipi_callbacks() if by_callback else {}
        r0, c0, t0 = ipis() + (time.time(),)
        time.sleep(seconds * 0.5)
        r1, c1, t1 = ipis() + (time.time(),)
        p1 = ipi_callbacks() if by_callback else {}
        stats = read_stats(c.proc.pid) if c else None
        w.wait_done(done)
        time.sleep(0.2)
        rc = c.stop() if c else 0
        rep = w.end()
    finally:
        w.kill()
        if c and c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()
    check(rc == 0, "%s: vcpuperf-cat exit %d" % (mode, rc))
    ticks = (t1 - t0) * 1000.0 / interval_ms
    res = (r1 - r0) / (2 * ticks)
    cal = (c1 - c0) / (2 * ticks)
    reads = (p1.get(PERF_READ_IPI, 0) - p0.get(PERF_READ_IPI, 0)) / \
        (2 * ticks)
    if baseline:
        return {"res": res, "cal": cal}
    rows = c.rows()
    late = [r["late_ns"] for r in rows if r.get("late_ns") is not None]
    counted = []
    for th in rep["threads"]:
        tc = sum(r["task_clock"] for r in rows if r["tid"] == th["tid"])
        ort = th["after"]["sum_exec_runtime_ns"] - \
            th["before"]["sum_exec_runtime_ns"]
        ocs = sum(th["after"][k] - th["before"][k] for k in
                  ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"))
        counted.append((th["tid"], tc, ort, ocs))
    print("  %-6s: task_clock - schedstat: %s" %
          (mode, ", ".join("tid %d %+.3f ms" % (tid, (tc - ort) / MS)
                           for tid, tc, ort, _ in counted)))
    # The kernel's task-clock itself runs ahead of its schedstat runtime
    # under TCG (the guest's TSC is unstable; the rows sum to the counter's
    # raw value exactly): measured over 4 s of a thread blocked before and
    # after its work, +0.1% to +0.8% on 6.1 and +0.9% to +2.8% on the
    # debug kernel.  Hence a relative bound above, not an absolute one.
    # Below, the suite's bound (task_clock_agrees): 6.12 with two vCPUs in
    # one QEMU thread and a busy host came out 3.0% to 4.8% below over
    # about 500 switches (direct mode, 3 of 12 runs).
    for tid, tc, ort, ocs in counted:
        check(task_clock_agrees(tc, ort, ocs, above=0.05 * ort),
              "%s: tid %d task_clock %d, schedstat %d, %d switches" %
              (mode, tid, tc, ort, ocs))
    return {"res": res, "cal": cal, "reads": reads, "stats": stats,
            "rows": len(rows),
            "late": (pct(late, 0.5), pct(late, 0.99), max(late))}


@test
@needs_cpus(2)
def running_threads_read_themselves():
    """direct: one function-call interrupt per counter of a thread running
    on another CPU; kick: the thread reads itself, one rescheduling
    interrupt per tick instead and no function-call ones; lazy: close to
    no interrupt at all.  Counts agree with schedstat in every mode."""
    load()
    ms, secs = 50, 4.0
    by_cb = ipi_callbacks_start()
    try:
        base = run_mode("direct", ms, secs, baseline=True)
        out = {m: run_mode(m, ms, secs, by_callback=by_cb)
               for m in ("direct", "kick", "lazy")}
    finally:
        if by_cb:
            ipi_callbacks_stop()
    print("  background (spinners only): RES %.3f, CAL %.3f per thread x "
          "tick" % (base["res"], base["cal"]))
    for m, r in out.items():
        s = r["stats"]
        print("  %-6s: RES %.3f CAL %.3f per thread x tick (background "
              "subtracted: %.3f; perf reads among the CAL: %s); %d direct, "
              "%d self-read, %d kicks, fallbacks %d timeout %d pending; "
              "late p50 %.2f p99 %.2f max %.2f ms; %d rows" %
              (m, r["res"], r["cal"],
               r["res"] + r["cal"] - base["res"] - base["cal"],
               "%.3f" % r["reads"] if by_cb else "not traced here",
               s["direct"], s["self"], s["kicks"], s["timeout"],
               s["pending"], r["late"][0] / MS, r["late"][1] / MS,
               r["late"][2] / MS, r["rows"]))
    d, k, z = out["direct"], out["kick"], out["lazy"]
    check(d["stats"]["self"] == 0, "direct mode read by the thread")
    check(k["stats"]["self"] > 0 and z["stats"]["self"] > 0,
          "no self-read in kick/lazy mode")
    # The thread running on the other CPU costs direct mode one
    # function-call interrupt per counter (4) per tick, the others none.
    # Rescheduling interrupts: every mode has the sampler's and the
    # tool's wake-ups; kick adds one per running thread per tick, lazy
    # none (it came by itself: only late threads are kicked).
    #
    # On 7.2 the scheduler's wake-ups of another CPU (the sampler's, the
    # tool's) also come as function-call interrupts: measured 0.73 to 1.38
    # per thread x tick in lazy mode with no kick and 0 cross-CPU reads,
    # against 2.2 to 2.9 in direct mode; 6.1 and 6.12 show none.  Where
    # the kernel traces the function an IPI runs (csd:csd_queue_cpu, 6.6
    # and later), the cross-CPU reads are perf's reads (__perf_event_read)
    # queued to another CPU; elsewhere all function-call interrupts above
    # the background.
    if by_cb:
        fc = {m: r["reads"] for m, r in out.items()}
        what = "perf-read IPIs"
    else:
        fc = {m: r["cal"] - base["cal"] for m, r in out.items()}
        what = "function-call interrupts"
    check(fc["direct"] >= 0.3, "direct: %.3f %s per thread x tick (4 "
          "counters, one thread of two elsewhere: up to 2)" %
          (fc["direct"], what))
    # Kick and lazy mode read a running thread on its own CPU: the
    # cross-CPU reads left are at most half of direct mode's.
    check(fc["kick"] <= 0.5 * fc["direct"] and
          fc["lazy"] <= 0.5 * fc["direct"],
          "cross-CPU reads left (%s): kick %.3f, lazy %.3f (direct %.3f)" %
          (what, fc["kick"], fc["lazy"], fc["direct"]))
    # Rescheduling interrupts also come from the scheduler's own wake-ups
    # of the sampler, the tool and the spinners (noisy under TCG): the
    # kicks are counted where they are sent.
    check(k["stats"]["kicks"] >= k["stats"]["self"] / 2,
          "kick mode: %d kicks for %d self-reads" %
          (k["stats"]["kicks"], k["stats"]["self"]))
    check(z["stats"]["kicks"] <= z["stats"]["self"] / 4,
          "lazy kicked %d times for %d self-reads" %
          (z["stats"]["kicks"], z["stats"]["self"]))


def dd_in_kernel(name, count, bs="256M", src="/dev/zero"):
    """dd reading @src (/dev/zero, or a file of holes on tmpfs) in huge
    blocks: its thread is in the kernel (clearing the buffer) most of the
    time, on a CPU, not returning to user mode to run task work."""
    p = subprocess.Popen(["dd", "if=" + src, "of=/dev/null", "bs=" + bs,
                          "count=%d" % count], stderr=subprocess.DEVNULL)
    time.sleep(0.3)
    return p


def holes(size):
    """A file of @size bytes of holes on tmpfs (/tmp in the test VM): read
    like /dev/zero, but each read() moves its file position when it
    returns (read_pos())."""
    d = tempfile.mkdtemp(prefix="holes.")
    path = os.path.join(d, "holes")
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def read_pos(pid, path):
    """The file position of process @pid on @path: set when a read()
    returns, before the return to user mode (where queued task work
    runs), on every kernel (/proc/PID/io needs TASK_IO_ACCOUNTING, which
    the debug kernel lacks); -1 while it has no descriptor there (not
    yet opened, or closed), None once the process has exited."""
    fds = "/proc/%d/fd" % pid
    try:
        for fd in os.listdir(fds):
            if os.readlink(os.path.join(fds, fd)) != path:
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("pos:"):
                        return int(line.split()[1])
    except FileNotFoundError:
        return None
    return -1


def wait_for(fn, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.02)
    raise TestFailure("timed out waiting for " + what)


@test
@needs_cpus(2)
def stuck_in_kernel_falls_back():
    """A thread that stays in the kernel past the next pass is read
    directly (fallback 'timeout', then 'pending' while its work waits); its
    rows still come, one per grid point, each read by the next pass at the
    latest."""
    load()
    dd = dd_in_kernel("stuck", 6)
    c = Cat("stuck", "--tid", str(dd.pid), "--interval", "20ms",
            "--events", EVENTS, "--read", "kick")
    try:
        c.wait_started(1)
        time.sleep(2)
        s = read_stats(c.proc.pid)
    finally:
        rc = c.stop()
        dd.kill()
        dd.wait()
    check(rc == 0, "vcpuperf-cat exit %d" % rc)
    rows = c.rows()
    late = [r["late_ns"] for r in rows if r.get("late_ns") is not None]
    print("  dd in read(): %d timeout, %d pending, %d self-read, %d direct; "
          "%d rows, late p50 %.2f p99 %.2f max %.2f ms" %
          (s["timeout"], s["pending"], s["self"], s["direct"], len(rows),
           pct(late, 0.5) / MS, pct(late, 0.99) / MS, max(late) / MS))
    check(s["timeout"] + s["switched"] + s["pending"] > 0,
          "no fallback counted: %s" % s)
    check(len(rows) >= 10, "only %d rows in 2 s at 20 ms" % len(rows))
    check_timing(len(rows) >= 50, "only %d rows in 2 s at 20 ms" % len(rows))
    # read directly by the next pass, one interval (20 ms) later
    check_timing(pct(late, 0.5) < 30 * MS,
                 "rows late: p50 %d ns" % pct(late, 0.5))


def rmmod_with_read_held(src):
    """work_pending_at_close_detach_exit_rmmod's last part, with dd
    reading @src (holes()): rmmod refused while dd's read holds the
    module, then done once it has returned; (seconds to unload, seconds
    rmmod took to refuse)."""
    for attempt in range(RMMOD_ATTEMPTS):
        if attempt and not os.path.isdir("/sys/module/vcpuperf"):
            load()
            control("read kick")
            control("interval 10ms")
        dd = dd_in_kernel("rmmod", 2, "512M", src)
        try:
            check(control("attach tid=%d events=%s" % (dd.pid, EVENTS))
                  == 0, "attach dd")
            # dd and the sampler on CPUs of their own: a pass finds dd on
            # its CPU (in the kernel) and queues its read, which stays
            # queued (a sampler sharing dd's CPU finds it switched out
            # and reads it directly: nothing is queued to hold).
            os.sched_setaffinity(dd.pid, {1})
            pin_kthread("vcpuperf/0", {0})
            seen = {}

            def held():
                seen["pos"] = read_pos(dd.pid, src)
                if seen["pos"] is None:
                    return "ended"
                return re.search(r"reads queued on threads: \d+, [1-9]\d* "
                                 r"holding the module:.* %d dd " % dd.pid,
                                 read_file("status"))
            if wait_for(held, 30, "the pending read to hold the module") \
                    == "ended":
                print("  attempt %d: dd ended before status named its "
                      "read; again (%s)" % (attempt + 1, read_stats()))
                control("detach tid=%d" % dd.pid)
                continue
            t0 = time.time()
            p = sh("rmmod vcpuperf", check_rc=False)
            refused = time.time() - t0
            same_read = read_pos(dd.pid, src) == seen["pos"]
            if p.returncode == 0 and not same_read:
                print("  attempt %d: dd's read returned before rmmod; "
                      "again" % (attempt + 1))
                continue
            check(p.returncode != 0 and "in use" in p.stderr,
                  "rmmod with a stuck read: exit %d %r" % (p.returncode,
                                                           p.stderr))
            check(control("stop") == 0, "stop")
            dd.wait(timeout=120)
            t0 = time.time()
            unload()
            took = time.time() - t0
            break
        finally:
            if dd.poll() is None:
                dd.kill()
            dd.wait()
    else:
        raise TestFailure("dd's read returned before rmmod (or dd ended "
                          "before status named it) in all %d attempts" %
                          RMMOD_ATTEMPTS)
    return took, refused


@test
@needs_cpus(2)
def work_pending_at_close_detach_exit_rmmod():
    """A read queued on a thread that stays in the kernel is still pending
    when its collection is closed (the tool SIGKILLed), when the thread is
    detached, when the thread exits: each goes through cleanly (the late
    work touches nothing).  Pending for more than 100 ms it holds the
    module: rmmod fails at once ("in use", no wait), the status file names
    the thread, and rmmod goes through once the thread has run it.  The
    kernel log stays clean."""
    mark = dmesg_mark()
    load()
    # closed by SIGKILL with the work pending
    dd = dd_in_kernel("close", 4, "512M")
    try:
        c = Cat("pend-close", "--tid", str(dd.pid), "--interval", "10ms",
                "--events", EVENTS, "--read", "kick")
        c.wait_started(1)
        wait_for(lambda: read_stats(c.proc.pid)["pending"] > 0, 30,
                 "a pending read (close)")
        c.proc.kill()
        c.wait()
    finally:
        dd.kill()
        dd.wait()
    # detached, then the thread exits, through the default collection
    control("read kick")
    control("interval 10ms")
    for what in ("detach", "exit"):
        dd = dd_in_kernel(what, 1 if what == "exit" else 4, "512M")
        try:
            check(control("attach tid=%d events=%s" % (dd.pid, EVENTS)) == 0,
                  "attach dd")
            wait_for(lambda: read_stats()["pending"] > 0, 30,
                     "a pending read (%s)" % what)
            if what == "detach":
                check(control("detach tid=%d" % dd.pid) == 0, "detach")
            else:
                dd.wait(timeout=60)   # exits with the work queued
                wait_for(lambda: "tid %d " % dd.pid not in read_file("status"),
                         10, "the exited thread's end")
        finally:
            if dd.poll() is None:
                dd.kill()
            dd.wait()
    # A read pending for more than 100 ms holds the module: rmmod fails
    # at once ("in use") instead of waiting for the thread, and status
    # names it; once dd's read has returned, rmmod goes through.  dd reads
    # a file of holes: its file position, taken before status is seen to
    # name it and after rmmod, says whether the same read lasted
    # throughout.  If one returned in between (a kernel that clears
    # memory fast), or dd ended before status named it, the hold could
    # have ended before rmmod, which is no finding, and the attempt is
    # made again with the module loaded anew.
    src = holes(2 * 512 << 20)
    try:
        took, refused = rmmod_with_read_held(src)
    finally:
        shutil.rmtree(os.path.dirname(src))
    print("  closed, detached, exited with a read pending; rmmod with a "
          "stuck read refused in %.2f s, then done in %.2f s" %
          (refused, took))
    dmesg_clean_since(mark)


def pin_kthread(comm, cpus):
    """Pin the kernel thread named @comm (a collection's sampler,
    'vcpuperf/N') to @cpus."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                if f.read().strip() != comm:
                    continue
        except OSError:
            continue
        os.sched_setaffinity(int(pid), cpus)
        return
    raise TestFailure("no kernel thread %s" % comm)


@test
@needs_cpus(2)
def exited_thread_ends_once_in_order():
    """A thread asked to read itself (kick, a 5 s interval) that exits
    before the next pass, followed by a command (an attach of another
    thread at 6 s, which ends exited targets first): its records are its
    self-read sample, then exactly one final sample and one
    perf_task_exited, its cumulative counts never decreasing."""
    load()
    done = os.path.join(OUT, "exitorder.done.json")
    if os.path.exists(done):
        os.unlink(done)
    w = Workload("exitorder", "--threads", "1", "--wait-go", "--burn-ms",
                 "5500", "--exit-thread", "--done", done, "--hold-ms",
                 "600000")
    other = subprocess.Popen(["sleep", "120"])
    c = Cat("exitorder", "--no-attach", "--raw")
    tid = w.tids[0]
    try:
        # The spinning thread on CPU 1, the sampler on CPU 0: the pass
        # at 5 s finds it running and asks it to read itself.
        os.sched_setaffinity(tid, {1})
        pin_kthread("vcpuperf/0", {0})
        for cmd in ("read kick", "interval 5s",
                    "attach tid=%d events=task-clock,page-faults" % tid):
            check(control(cmd) == 0, cmd)
        c.wait_started(1)
        # Grid points are multiples of the interval in CLOCK_MONOTONIC
        # (time.monotonic()), the first one 2.5 to 7.5 s after the
        # attach; it reads the blocked thread directly.  Go half a second
        # after a grid point, so that the next one finds the thread 4.5 s
        # into its 5.5 s of spinning.
        wait_for(lambda: read_stats()["direct"] > 0, 30, "the first pass")
        now = time.monotonic()
        go_at = math.floor(now / 5) * 5 + 0.5
        if go_at < now:
            go_at += 5
        time.sleep(go_at - now)
        w.go()
        t0 = time.time()
        # kicked at that pass: its values are collected at the next one
        # (5 s later), unless a command ends it first
        wait_for(lambda: read_stats()["kicks"] > 0, 30,
                 "the spinning thread asked to read itself")
        check(time.time() - t0 < 5.9, "asked only after %.1f s" %
              (time.time() - t0))
        time.sleep(max(0.0, 6.0 - (time.time() - t0)))
        check(control("attach tid=%d events=task-clock" % other.pid) == 0,
              "attach of another thread")
        w.wait_done(done)
        check(control("stop") == 0, "stop")
        rc = c.wait(60)
    finally:
        w.kill()
        other.kill()
        other.wait()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    exits = [e for e in c.events("perf_task_exited") if e["tid"] == tid]
    check(len(exits) == 1, "%d perf_task_exited for tid %d" %
          (len(exits), tid))
    rows = [r for r in c.rows() if r["tid"] == tid]
    vals = [r["raw"]["task-clock"]["value"] for r in rows]
    check(vals == sorted(vals), "tid %d: cumulative task-clock %s" %
          (tid, vals))
    final = exits[0]["final"]["task-clock"]
    check(vals[-1] == final, "last row %d, perf_task_exited %d" %
          (vals[-1], final))
    print("  tid %d: %d rows, cumulative task-clock %s ns, one "
          "perf_task_exited" % (tid, len(rows), vals))


# rmmod with the worker busy: an RCU-tasks grace period and the sampler's
# end (about 0.5 s under TCG); a worker that never slept would hold the
# grace period until it did.
RMMOD_BUSY_WORKER_S = 10

VHOSTLOAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                         "workload", "vhostload")


def find_thread(name, pid=None):
    """The tid of the thread named @name (of process @pid, else any)."""
    dirs = ["/proc/%d/task" % pid] if pid else \
        ["/proc/%s/task" % p for p in os.listdir("/proc") if p.isdigit()]
    for d in dirs:
        try:
            for t in os.listdir(d):
                with open("%s/%s/comm" % (d, t)) as f:
                    if f.read().strip() == name:
                        return int(t)
        except OSError:
            continue
    return None


@test
@needs_cpus(2)
@needs_feature("vhost_vsock")
def vhost_worker_never_asked():
    """A real vhost worker (/dev/vhost-vsock owned and kept busy by
    tests/workload/vhostload) never returns to user mode: it is never
    asked to read itself but read directly, counted as a user worker
    (Linux 6.4 on, where it is a thread of the process that pid= attaches)
    or as a kernel thread (before); no read stays queued on it and rmmod
    goes through at once."""
    load()
    ready = os.path.join(OUT, "vhostload.ready.json")
    if os.path.exists(ready):
        os.unlink(ready)
    v = subprocess.Popen([VHOSTLOAD, "--seconds", "30", "--ready", ready],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    c = None
    try:
        wait_for(lambda: os.path.exists(ready) or v.poll() is not None, 30,
                 "vhostload")
        if v.poll() is not None:
            raise TestFailure("vhostload: %s" % v.stdout.read())
        os.sched_setaffinity(v.pid, {0})
        worker = find_thread("vhost-%d" % v.pid, v.pid)
        user_worker = worker is not None
        if not user_worker:
            worker = find_thread("vhost-%d" % v.pid)
        check(worker, "no vhost-%d thread: %s" % (
            v.pid, sh("ps -eLo pid,tid,comm | grep -e vhost -e %d" % v.pid,
                      check_rc=False).stdout))
        os.sched_setaffinity(worker, {1})
        target = ["--pid", str(v.pid)] if user_worker else \
            ["--tid", str(worker)]
        c = Cat("vhost", *target, "--interval", "10ms", "--events",
                "task-clock", "--read", "kick")
        c.wait_started(2 if user_worker else 1)
        pin_kthread("vcpuperf/%d" % collection_of(c.proc.pid), {0})
        # Three seconds at least; up to twenty until the sampler has
        # found the worker on its CPU (how often it does depends on how
        # QEMU interleaves the two vCPUs).
        found = "user_worker" if user_worker else "kthread"
        t0 = time.time()
        while True:
            time.sleep(0.5)
            s = read_stats(c.proc.pid)
            waited = time.time() - t0
            if waited >= 20 or (waited >= 3 and s[found] > 0):
                break
        with open("/proc/%d/stat" % worker) as f:
            where = f.read().strip()
        queued = re.search(r"reads queued on threads: (\d+)",
                           read_file("status"))
        rc = c.stop()
        check(rc == 0, "vcpuperf-cat exit %d" % rc)
        t0 = time.time()
        unload(tries=1)
        took = time.time() - t0
    finally:
        if c and c.proc.poll() is None:
            c.proc.kill()
        v.kill()
        v.wait()
    busy = sum(r["task_clock"] or 0 for r in c.rows() if r["tid"] == worker)
    print("  vhost-%d (%s): %.0f ms on a CPU in %.1f s; %d user-worker and %d "
          "kthread fallbacks, %d self-reads, %d kicks, %s reads queued; "
          "rmmod %.2f s" % (v.pid, "user worker" if user_worker else
                            "kernel thread", busy / MS, waited,
                            s["user_worker"],
                            s["kthread"], s["self"], s["kicks"],
                            queued.group(1) if queued else "?", took))
    check(busy > 0.1 * waited * 1000 * MS,
          "the worker was not kept busy: %d ns in %.1f s" % (busy, waited))
    check(s[found] > 0, "never found the worker running in %.1f s: %s; "
          "its stat: %s" % (waited, s, where))
    check(queued and queued.group(1) == "0",
          "reads queued: %s" % (queued.group(0) if queued else None))
    check(took < RMMOD_BUSY_WORKER_S, "rmmod took %.1f s" % took)


def collection_of(owner):
    """The number of the collection owned by pid @owner."""
    m = re.search(r"collection (\d+): /dev/vcpuperf, owner pid %d " % owner,
                  read_file("status"))
    check(m, "no collection of pid %d" % owner)
    return int(m.group(1))


@test
@needs_cpus(2)
@needs_feature("ksm")
def kernel_thread_read_directly():
    """Kernel threads never run task work: a busy one is read directly
    and counted as such, never asked to read itself."""
    load()
    ksm = "/sys/kernel/mm/ksm"
    pid = int(sh("pgrep -x ksmd").stdout.split()[0])
    with open(ksm + "/sleep_millisecs") as f:
        old = f.read().strip()
    sh("echo 0 > %s/sleep_millisecs; echo 1 > %s/run" % (ksm, ksm))
    c = Cat("kthread", "--tid", str(pid), "--interval", "10ms", "--events",
            "task-clock", "--read", "kick")
    try:
        c.wait_started(1)
        time.sleep(2)
        s = read_stats(c.proc.pid)
    finally:
        rc = c.stop()
        sh("echo 0 > %s/run; echo %s > %s/sleep_millisecs" % (ksm, old, ksm))
    check(rc == 0, "vcpuperf-cat exit %d" % rc)
    print("  ksmd: %d kthread fallbacks, %d direct, %d self-read" %
          (s["kthread"], s["direct"], s["self"]))
    check(s["self"] == 0 and s["kicks"] == 0, "a kernel thread asked: %s" % s)
    check(len(c.rows()) > 50, "rows")

