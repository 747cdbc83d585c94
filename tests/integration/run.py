#!/usr/bin/python3
"""vcpuperf integration tests: run as root inside the test VM, from the
repository root, after `make`.  Usage: run.py [TEST_NAME...]

Each test loads the freshly built module, drives it with vcpuperf-cat and
checks the rows against an independent oracle.  Prints a closing line
'N passed, N failed'."""

import errno
import fcntl
import os
import re
import select
import signal
import stat
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vptest import (Cat, TestFailure, Workload, check,  # noqa: E402
                    control, dev_control, dmesg_clean_since, dmesg_mark,
                    load, open_errno, read_file, sh, unload, run_workload,
                    run_tests, within, by_tid, delta, DEBUGFS, DEVICE,
                    MODULE, CAT)

MS = 1000000

# struct vcpuperf_error and _IOR(VCPUPERF_IOC_MAGIC, 1, it) of the uapi
# header, written out independently of the code under test.
VP_ERROR_SIZE = 4 + 4 + 160
VCPUPERF_IOC_LAST_ERROR = (2 << 30) | (VP_ERROR_SIZE << 16) | (0xB6 << 8) | 1

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


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
        check(0.97 * ort <= tc <= ort + 100 * MS,
              "tid %d: task_clock %d ns, schedstat says %d" % (tid, tc, ort))
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


def perf_fds(pid):
    n = 0
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                if "perf_event" in os.readlink("/proc/%d/fd/%s" % (pid, fd)):
                    n += 1
            except OSError:
                pass
    except OSError:
        pass
    return n


@test
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
    perf = subprocess.Popen(["perf", "stat", "--per-thread", "-t", tids,
                             "-e", evs, "-x", ",", "-o", pstat],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    c = Cat("perfstat", "--tid", tids, "--events", evs, "--interval",
            "100ms")
    try:
        c.wait_started(2)
        # perf starts slowly under emulation: go only once it has opened
        # its 3 x 2 counters.
        deadline = time.time() + 60
        while perf_fds(perf.pid) < 6:
            check(perf.poll() is None, "perf stat died: %s" %
                  (perf.poll() is not None and perf.stderr.read()))
            check(time.time() < deadline, "perf stat never attached")
            time.sleep(0.05)
        w.go()
        w.wait()
        time.sleep(0.3)
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=30)
        rc = c.stop()
    finally:
        w.kill()
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


@test
def hotplug_and_thread_exit():
    """A vCPU thread started after attach is picked up (perf_vcpu_added);
    a thread that exits mid-run gives perf_task_exited with final counts."""
    load()
    w = Workload("hotplug", "--threads", "2", "--wait-go", "--pages", "500",
                 "--late-thread-ms", "400", "--exit-thread", "--hold-ms",
                 "2000")
    c = Cat("hotplug", "--qemu", str(w.pid), "--events",
            "page-faults,task-clock", "--interval", "50ms")
    try:
        c.wait_started(2)
        w.go()
        rep = w.wait()
    finally:
        w.kill()
        rc = c.stop(signal.SIGTERM)
    check(rc == 0, "vcpuperf-cat exit %d after SIGTERM" % rc)
    check([e for e in c.events("perf_finished")
           if e.get("scope") == "session"], "no session perf_finished")
    late = [t for t in rep["threads"] if t["vcpu"] == 2]
    check(len(late) == 1, "workload reports no late thread")
    added = c.events("perf_vcpu_added")
    check(any(e["tid"] == late[0]["tid"] and e["vcpu"] == 2 for e in added),
          "no perf_vcpu_added for tid %d: %s" % (late[0]["tid"], added))
    rows = by_tid(c.rows())
    check(len(rows.get(late[0]["tid"], [])) >= 5, "late thread has no rows")
    t0 = [t for t in rep["threads"] if t["vcpu"] == 0][0]
    exited = [e for e in c.events("perf_task_exited")
              if e["tid"] == t0["tid"]]
    check(exited, "no perf_task_exited for the exiting thread")
    final = exited[0]["final"]["page-faults"]
    check(final >= 500, "final page-faults %s < 500" % final)
    last0 = max(r["t_mono_ns"] for r in rows[t0["tid"]])
    last1 = max(r["t_mono_ns"] for r in rows[rep["threads"][1]["tid"]])
    check(last0 < last1, "rows of the exited thread continue")


BAD_COMMANDS = [
    ("", errno.EINVAL), ("\n", errno.EINVAL), ("attach", errno.EINVAL),
    ("attach tid=", errno.EINVAL), ("attach tid=abc", errno.EINVAL),
    ("attach tid=0", errno.EINVAL), ("attach tid=-5", errno.EINVAL),
    ("attach tid=1,1", errno.EINVAL), ("attach tid=99999999999", errno.EINVAL),
    ("attach pid=1,2", errno.EINVAL), ("attach qemu=", errno.EINVAL),
    ("attach tid=1 pid=1", errno.EINVAL), ("attach tid=1 events=", errno.EINVAL),
    ("attach tid=1 events=cycles,,instructions", errno.EINVAL),
    ("attach tid=1 events=bogus-event", errno.ENOENT),
    ("attach tid=1 events=nosuchsys:nosuchtp", errno.ENOENT),
    ("attach tid=1 events=cycles:x", errno.EINVAL),
    ("attach tid=1 events=cycles:uk", errno.EINVAL),
    ("attach tid=1 guest_only host_only", errno.EINVAL),
    ("attach tid=1 frobnicate", errno.EINVAL),
    ("attach tid=1 events=cycles,instructions,cache-references,cache-misses,"
     "branches,branch-misses,page-faults,context-switches,task-clock,"
     "cpu-clock,cpu-migrations,minor-faults,major-faults,alignment-faults,"
     "emulation-faults,bus-cycles,ref-cycles", errno.E2BIG),
    ("attach tid=2000000000", errno.ESRCH),
    ("detach tid=2000000000", errno.ESRCH), ("detach", errno.EINVAL),
    ("detach all extra", errno.EINVAL), ("interval", errno.EINVAL),
    ("interval 0", errno.EINVAL), ("interval 61s", errno.EINVAL),
    ("interval 500us", errno.EINVAL), ("interval 10xs", errno.EINVAL),
    ("stop now", errno.EINVAL), ("frobnicate", errno.EINVAL),
    ("attach tid=1\nstop", errno.EINVAL), (b"attach tid=1\x00", errno.EINVAL),
    (b"attach tid=1 events=cycles\xff", errno.EINVAL),
    ("attach qemu=1", errno.ESRCH), ("x" * 17000, errno.E2BIG),
    ("attach tid=1 process_totals", errno.EINVAL),
    ("attach pid=1 all_threads", errno.EINVAL),
    ("attach qemu=1 process_totals process_totals", errno.EINVAL),
]


@test
def malformed_commands_change_nothing():
    """Every malformed command is rejected with its documented errno, its
    reason shows in status, and the running collection is untouched (the
    default collection, through debugfs; the device's own collections are
    device_commands_match_debugfs)."""
    load()
    w = Workload("bad", "--threads", "2", "--hold-ms", "20000")
    check(control("interval 50ms") == 0, "interval refused")
    check(control("attach qemu=%d events=task-clock,context-switches" %
                  w.pid) == 0, "attach refused")
    c = Cat("bad", "--no-attach")
    try:
        c.wait_started(2)
        time.sleep(0.5)
        config = read_file("control")
        rows_before = len(c.rows())
        bad = BAD_COMMANDS + [("attach qemu=%d" % w.pid, errno.EEXIST),
                              ("attach tid=%d" % w.tids[0], errno.EEXIST)]
        check(len(bad) >= 20, "too few bad commands")
        for cmd, want in bad:
            got = control(cmd)
            check(got == want, "%r: errno %s, want %s" %
                  (cmd[:60], errno.errorcode.get(got, got),
                   errno.errorcode[want]))
            status = read_file("status")
            check("last_error: " + errno.errorcode[want] in status,
                  "status lacks the reason for %r" % cmd[:40])
            check(read_file("control") == config,
                  "%r changed the configuration" % cmd[:40])
        time.sleep(0.5)
        check(len(c.rows()) > rows_before + 10, "rows stopped flowing")
        check(c.proc.poll() is None, "vcpuperf-cat died")
    finally:
        rc = c.stop()
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d" % rc)
    check(not c.events("perf_seq_gap"), "sequence gaps")


@test
def stream_single_reader_nonblock_poll():
    """A second open gets EBUSY; O_NONBLOCK gives EAGAIN; poll wakes."""
    load()
    path = os.path.join(DEBUGFS, "stream")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        hdr = os.read(fd, 4096)
        check(len(hdr) >= 64 and hdr[32:36] == b"VCPF", "no header record")
        try:
            os.read(fd, 4096)
            raise TestFailure("read on an empty stream did not fail")
        except BlockingIOError:
            pass
        try:
            os.close(os.open(path, os.O_RDONLY))
            raise TestFailure("second reader was allowed")
        except OSError as e:
            check(e.errno == errno.EBUSY, "second open: %s" % e)
        w = Workload("poll", "--threads", "1", "--hold-ms", "3000")
        try:
            check(control("interval 10ms") == 0, "interval")
            check(control("attach tid=%d events=task-clock" % w.tids[0]) == 0,
                  "attach")
            p = select.poll()
            p.register(fd, select.POLLIN)
            check(p.poll(5000), "poll did not wake")
            check(len(os.read(fd, 65536)) > 0, "no data after poll")
            check(control("stop") == 0, "stop")
            deadline = time.time() + 5
            while time.time() < deadline:
                try:
                    if os.read(fd, 65536) == b"":
                        break
                except BlockingIOError:
                    time.sleep(0.05)
            else:
                raise TestFailure("no EOF after stop")
        finally:
            w.kill()
    finally:
        os.close(fd)


@test
def permissions():
    """Unprivileged users get EACCES; root without CAP_PERFMON gets EPERM."""
    load()
    status = os.path.join(DEBUGFS, "status")
    p = sh("setpriv --reuid=65534 --regid=65534 --clear-groups cat %s" %
           status, check_rc=False)
    check(p.returncode != 0 and "Permission denied" in p.stderr,
          "nobody could read status: %s" % p.stderr)
    for f in ("status", "control", "stream"):
        p = sh("setpriv --bounding-set=-all --inh-caps=-all cat %s" %
               os.path.join(DEBUGFS, f), check_rc=False, timeout=10)
        check(p.returncode != 0 and "Operation not permitted" in p.stderr,
              "capless root could open %s: %s" % (f, p.stderr))
    p = sh("setpriv --reuid=65534 --regid=65534 --clear-groups %s --pid 1 "
           "--duration 1s" % CAT, check_rc=False)
    check(p.returncode == 1 and ("root" in p.stderr or "CAP_PERFMON" in
                                 p.stderr), "tool message: %s" % p.stderr)


@test
def tool_says_what_to_do():
    """vcpuperf-cat names the fix: module not loaded, debugfs not mounted."""
    unload()
    p = sh("%s --pid 1 --duration 1s" % CAT, check_rc=False)
    check(p.returncode == 1 and "modprobe vcpuperf" in p.stderr,
          "module not loaded: %s" % p.stderr)
    load()
    sh("umount /sys/kernel/debug")
    try:
        # without the device to fall back to (tool_falls_back_to_device)
        p = sh("%s --pid 1 --duration 1s --device /nonexistent" % CAT,
               check_rc=False)
    finally:
        sh("mount -t debugfs none /sys/kernel/debug")
    check(p.returncode == 1 and "mount -t debugfs" in p.stderr and
          "/nonexistent" in p.stderr, "debugfs not mounted: %s" % p.stderr)


def wait_threads(pid, names, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = set()
        try:
            for t in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                    got.add(f.read().strip())
        except OSError:
            pass
        if names <= got:
            return
        time.sleep(0.1)
    raise TestFailure("qemu threads %s never appeared" % names)


@test
def real_qemu_vcpus_and_kill():
    """A real QEMU (-name ...,debug-threads=on): its 'CPU n/TCG' threads
    become vCPUs 0 and 1; killing QEMU gives perf_task_exited for both."""
    load()
    q = subprocess.Popen(["qemu-system-x86_64", "-name", "vpt,debug-threads=on",
                          "-accel", "tcg", "-smp", "2", "-m", "32",
                          "-display", "none", "-nodefaults",
                          "-no-user-config"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_threads(q.pid, {"CPU 0/TCG", "CPU 1/TCG"})
        c = Cat("qemu", "--qemu", str(q.pid), "--events",
                "task-clock,context-switches,cycles", "--interval", "100ms")
        c.wait_started(2)
        time.sleep(1.5)
        q.kill()
        q.wait()
        time.sleep(0.5)
        rc = c.stop()
    finally:
        if q.poll() is None:
            q.kill()
            q.wait()
    check(rc == 0, "vcpuperf-cat exit %d" % rc)
    rows = c.rows()
    check({r["vcpu"] for r in rows} == {0, 1},
          "vcpus %s" % {r["vcpu"] for r in rows})
    check(any(r["task_clock"] for r in rows), "vCPUs never ran")
    started = c.events("perf_started")
    check(all(e["kind"] == "qemu" for e in started), "kind")
    exited = c.events("perf_task_exited")
    check(len(exited) == 2, "want 2 perf_task_exited, got %d" % len(exited))
    det = c.events("perf_detached")
    check(sorted(e["reason"] for e in det) == ["exited", "exited"],
          "detached: %s" % det)


@test
def rmmod_while_streaming():
    """rmmod with a blocked reader and attached threads: the reader gets
    the final records and EOF, every counter is released, the log is
    clean and the module can be loaded again."""
    mark = dmesg_mark()
    load()
    w = Workload("rmmod", "--threads", "2", "--hold-ms", "20000")
    c = Cat("rmmod", "--qemu", str(w.pid), "--events",
            "task-clock,page-faults,cycles", "--interval", "20ms")
    try:
        c.wait_started(2)
        time.sleep(1)
        sh("rmmod vcpuperf", timeout=60)
        rc = c.wait(timeout=30)
    finally:
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    det = c.events("perf_detached")
    check(len(det) == 2 and all(e["reason"] == "unload" for e in det),
          "detached: %s" % det)
    fin = [e for e in c.events("perf_finished") if e.get("scope") == "session"]
    check(len(fin) == 1, "no session perf_finished")
    check(not os.path.isdir("/sys/module/vcpuperf"), "module still loaded")
    dmesg_clean_since(mark)
    load()
    unload()


@test
def interval_grid_is_drift_free():
    """At 20 ms every sample sits on one 20 ms grid (a jiffies timer would
    drift: at HZ=250 a 20 ms delay is 20-24 ms and the phase walks), and
    with an unloaded VM the mean period is 20 ms within 1%."""
    load()
    w = Workload("grid", "--threads", "1", "--hold-ms", "5000")
    c = Cat("grid", "--tid", str(w.tids[0]), "--events", "task-clock",
            "--interval", "20ms", "--duration", "3s")
    try:
        rc = c.wait(timeout=30)
    finally:
        w.kill()
    check(rc == 0, "exit %d" % rc)
    ts = [r["t_mono_ns"] for r in c.rows()]
    period = 20 * MS
    check(len(ts) >= 75, "%d rows in 3 s at 20 ms" % len(ts))
    phase = sorted(((t - ts[0] + period // 2) % period) - period // 2
                   for t in ts)
    ref = phase[len(phase) // 2]
    dev = sorted(abs(p - ref) for p in phase)
    med = dev[len(dev) // 2]
    span = ts[-1] - ts[0]
    mean = span / (len(ts) - 1)
    skipped = round(span / period) - (len(ts) - 1)
    print("  %d rows, mean period %.4f ms, median phase error %.3f ms, "
          "%d grid points skipped (host load)" %
          (len(ts), mean / MS, med / MS, skipped))
    check(med < 2 * MS, "samples are off the grid: median %d ns" % med)
    if skipped <= 0:
        check(within(mean, period, 0.01), "mean period %.0f ns" % mean)
    check(all(r["interval_s"] == 0.02 for r in c.rows()), "interval_s")


@test
def insmod_parameters():
    """insmod qemu=PID events=... interval_ms=50 starts collecting at load;
    bad parameters make insmod fail and leave nothing loaded."""
    unload()
    w = Workload("params", "--threads", "2", "--hold-ms", "10000")
    try:
        for bad in ("qemu=1", "events=bogus qemu=%d" % w.pid,
                    "interval_ms=0", "ring_kb=1", "pid=1 qemu=%d" % w.pid):
            p = sh("insmod %s %s" % (MODULE, bad), check_rc=False)
            check(p.returncode != 0, "insmod %s succeeded" % bad)
            check(not os.path.isdir("/sys/module/vcpuperf"), "loaded")
        load("qemu=%d events=task-clock,page-faults interval_ms=50" % w.pid)
        c = Cat("params", "--no-attach")
        time.sleep(1.5)
        rc = c.stop()
    finally:
        w.kill()
    check(rc == 0, "exit %d" % rc)
    rows = c.rows()
    check({r["vcpu"] for r in rows} == {0, 1}, "vcpus")
    check(len(rows) >= 20, "%d rows" % len(rows))
    check(all(r["interval_s"] == 0.05 for r in rows), "interval")
    unload()


@test
def drops_are_explained_exactly():
    """A slow reader with a 64 KiB ring at 1 ms: every sequence gap is
    explained by a perf_dropped whose count matches, and the total equals
    the session's drop count."""
    load("ring_kb=64")
    w = Workload("drops", "--threads", "4", "--hold-ms", "20000")
    try:
        check(control("interval 1ms") == 0, "interval")
        check(control("attach qemu=%d events=task-clock,context-switches" %
                      w.pid) == 0, "attach")
        time.sleep(1.5)
        c = Cat("drops", "--no-attach")
        time.sleep(1.0)
        check(control("stop") == 0, "stop")
        rc = c.wait(timeout=30)
    finally:
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d (unexplained gap?): %s" %
          (rc, c.stderr))
    dropped = c.events("perf_dropped")
    check(dropped, "no drops provoked")
    gaps = c.events("perf_seq_gap")
    check(all(g["explained"] for g in gaps), "unexplained gaps: %s" % gaps)
    fin = [e for e in c.events("perf_finished") if e.get("scope") == "session"]
    print("  %d records dropped in %d perf_dropped events, %d gaps, session "
          "says %s" % (sum(d["count"] for d in dropped), len(dropped),
                       len(gaps), fin and fin[0]["drops"]))
    check(fin and fin[0]["drops"] == sum(d["count"] for d in dropped),
          "session drops %s vs dropped records %d" %
          (fin and fin[0]["drops"], sum(d["count"] for d in dropped)))


@test
def tracepoint_events():
    """sched:sched_switch counts like context-switches; a tracepoint that
    does not exist is refused (ENOENT) before anything is attached."""
    load()
    w = Workload("tp", "--threads", "1", "--wait-go", "--sleeps", "300",
                 "--hold-ms", "1000")
    c = Cat("tp", "--tid", str(w.tids[0]), "--events",
            "sched:sched_switch,context-switches", "--interval", "100ms")
    run_workload(c, w, 1, settle=0)
    rows = c.rows()
    tp = sum(r["sched_sched_switch"] for r in rows)
    cs = sum(r["context_switches"] for r in rows)
    # 300 sleeps switch out about 300 times: a sleep whose timer has
    # already fired by the time the thread would block does not switch.
    check(cs >= 285 and within(tp, cs, 0.02, 3), "tracepoint %d vs cs %d" %
          (tp, cs))
    p = sh("%s --pid 1 --events nosuch:tracepoint --duration 1s" % CAT,
           check_rc=False)
    check(p.returncode != 0 and "nosuch:tracepoint" in p.stderr,
          "missing tracepoint: %s" % p.stderr)
    check("attach" not in read_file("control"), "something attached")


# Permissions and special targets (kernel threads, PID 1, other PID
# namespaces, zombies, reused tids): tests/integration/perms.py.
import perms  # noqa: E402
TESTS.extend(perms.TESTS)

# Independent collections: tests/integration/independent_collections.py.
import independent_collections  # noqa: E402
TESTS.extend(independent_collections.TESTS)

# Running threads reading themselves: tests/integration/selfread.py.
import selfread  # noqa: E402
TESTS.extend(selfread.TESTS)
# Multiplexing, never-counted counters and modifier honesty with the test
# PMU (tests/pmu, $VP_TESTPMU): tests/integration/pmu.py.
import pmu  # noqa: E402
TESTS.extend(pmu.TESTS)
# VM identity and whole-VM totals: tests/integration/per_vm.py.
import per_vm  # noqa: E402
TESTS.extend(per_vm.TESTS)


def expect_oserror(fn, want, what):
    try:
        fn()
    except OSError as e:
        check(e.errno == want, "%s: %s, want %s" %
              (what, errno.errorcode.get(e.errno, e.errno),
               errno.errorcode[want]))
        return
    raise TestFailure("%s: succeeded, want %s" % (what, errno.errorcode[want]))


def read_to_eof(fd, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if os.read(fd, 65536) == b"":
                return
        except BlockingIOError:
            time.sleep(0.05)
    raise TestFailure("no EOF")


def dev_last_error(fd):
    """(errno, reason) of the last rejected command of the device fd's
    collection, from the VCPUPERF_IOC_LAST_ERROR ioctl."""
    buf = bytearray(VP_ERROR_SIZE)
    fcntl.ioctl(fd, VCPUPERF_IOC_LAST_ERROR, buf)
    err = -struct.unpack_from("<i", buf, 0)[0]
    return err, bytes(buf[8:]).split(b"\0")[0].decode()


def header_collection(fd):
    """The collection number in the header record read from fd."""
    hdr = os.read(fd, 4096)
    check(len(hdr) >= 64 and hdr[32:36] == b"VCPF", "no header record")
    return struct.unpack_from("<I", hdr, 52)[0]


@test
def device_node_and_own_collections():
    """/dev/vcpuperf is a root-only (0600) misc device; every open is a
    collection of its own (its own header and number, listed in status with
    its owner, beside a debugfs reader of the default collection); an
    O_WRONLY open has a collection nobody reads (poll says POLLOUT only,
    read EBADF); header, O_NONBLOCK EAGAIN, poll() and EOF after stop as on
    the debugfs stream; a closed collection leaves status."""
    load()
    st = os.stat(DEVICE)
    check(stat.S_ISCHR(st.st_mode), "%s is not a character device" % DEVICE)
    check(stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0 and
          st.st_gid == 0, "mode %o uid %d gid %d" %
          (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid))
    with open("/sys/class/misc/vcpuperf/dev") as f:
        check(f.read().strip() == "%d:%d" % (os.major(st.st_rdev),
                                             os.minor(st.st_rdev)),
              "device number differs from /sys/class/misc/vcpuperf")
    check(os.major(st.st_rdev) == 10, "not a misc device")
    stream = os.path.join(DEBUGFS, "stream")
    dbg = os.open(stream, os.O_RDONLY | os.O_NONBLOCK)
    fds = []
    try:
        check(open_errno(stream, os.O_RDONLY) == errno.EBUSY,
              "second debugfs stream reader")
        for flags in (os.O_RDONLY, os.O_RDWR, os.O_RDWR):
            fds.append(os.open(DEVICE, flags | os.O_NONBLOCK))
        ids = [header_collection(fd) for fd in fds]
        check(len(set(ids)) == 3 and 0 not in ids,
              "collection numbers %s" % ids)
        status = read_file("status")
        for cid in ids:
            check(re.search(r"^collection %d: /dev/vcpuperf, owner pid %d "
                            r'comm "python3"' % (cid, os.getpid()),
                            status, re.M), "collection %d not in status:\n%s"
                  % (cid, status))
        w = os.open(DEVICE, os.O_WRONLY)
        try:
            check(dev_control("interval 10ms", w) == 0, "command via O_WRONLY")
            p = select.poll()
            p.register(w, select.POLLOUT | select.POLLIN)
            ev = dict(p.poll(0)).get(w, 0)
            check(ev == select.POLLOUT, "poll on O_WRONLY: %#x" % ev)
            expect_oserror(lambda: os.read(w, 16), errno.EBADF,
                           "read on O_WRONLY")
        finally:
            os.close(w)
        check("interval 10ms" not in read_file("control"),
              "a device command changed the default collection")
        fd = fds[2]
        expect_oserror(lambda: os.read(fd, 4096), errno.EAGAIN,
                       "empty non-blocking read")
        work = Workload("devpoll", "--threads", "1", "--hold-ms", "3000")
        try:
            check(dev_control("attach tid=%d events=task-clock" %
                              work.tids[0], fd) == 0, "attach via the device")
            p = select.poll()
            p.register(fd, select.POLLIN)
            check(p.poll(5000), "poll did not wake")
            check(len(os.read(fd, 65536)) > 0, "no data after poll")
            for other in fds[:2]:
                expect_oserror(lambda: os.read(other, 4096), errno.EAGAIN,
                               "another collection got records")
            check(dev_control("stop", fd) == 0, "stop")
            read_to_eof(fd)
        finally:
            work.kill()
    finally:
        for fd in fds:
            os.close(fd)
        os.close(dbg)
    status = read_file("status")
    for cid in ids:
        check(not re.search(r"^collection %d:" % cid, status, re.M),
              "closed collection %d still in status" % cid)
    check("collections: 0 on /dev/vcpuperf" in status, "status: count")
    check(open_errno(stream, os.O_RDONLY) == 0, "stream not free after close")


@test
def device_commands_match_debugfs():
    """Every malformed command gets the same errno through /dev/vcpuperf as
    through debugfs control, changes nothing, and its reason reaches only
    the writer of that collection: VCPUPERF_IOC_LAST_ERROR on the same fd,
    nothing on another device fd, nothing in status (whose last_error is
    the default collection's, set by the debugfs writes only)."""
    load()
    config = read_file("control")
    other = os.open(DEVICE, os.O_RDWR | os.O_NONBLOCK)
    try:
        for cmd, want in BAD_COMMANDS:
            fd = os.open(DEVICE, os.O_RDWR | os.O_NONBLOCK)
            try:
                got_dev = dev_control(cmd, fd)
                err, why = dev_last_error(fd)
            finally:
                os.close(fd)
            check(got_dev == want and err == want and why,
                  "%r: device %s, ioctl %s %r, want %s" %
                  (cmd[:60], errno.errorcode.get(got_dev, got_dev),
                   errno.errorcode.get(err, err), why, errno.errorcode[want]))
            check("last_error: none" in read_file("status"),
                  "a device command's reason reached status: %r" % cmd[:40])
        check(dev_last_error(other) == (0, ""),
              "another collection's reason leaked: %r" %
              (dev_last_error(other),))
        for cmd, want in BAD_COMMANDS:
            got_dbg = control(cmd)
            check(got_dbg == want, "%r: debugfs %s, want %s" %
                  (cmd[:60], errno.errorcode.get(got_dbg, got_dbg),
                   errno.errorcode[want]))
            check("last_error: " + errno.errorcode[want] in read_file("status"),
                  "status lacks the reason for %r" % cmd[:40])
        check(dev_last_error(other) == (0, ""),
              "the default collection's reason reached a device fd")
    finally:
        os.close(other)
    check(read_file("control") == config, "configuration changed")
    print("  %d malformed commands: same errno via debugfs and the device, "
          "reason only on the writer's fd" % len(BAD_COMMANDS))


@test
def device_permissions():
    """Unprivileged open of /dev/vcpuperf: EACCES; root without CAP_PERFMON
    and CAP_SYS_ADMIN: EPERM (as for the debugfs files)."""
    load()
    probe = ("python3 -c 'import os,sys\ntry:\n os.open(\"%s\", os.%s)\n"
             "except OSError as e:\n sys.exit(e.errno)'")
    for flags in ("O_RDONLY", "O_WRONLY", "O_RDWR"):
        p = sh("setpriv --reuid=65534 --regid=65534 --clear-groups " +
               probe % (DEVICE, flags), check_rc=False)
        check(p.returncode == errno.EACCES, "nobody %s: exit %d %s" %
              (flags, p.returncode, p.stderr))
        p = sh("setpriv --bounding-set=-all --inh-caps=-all " +
               probe % (DEVICE, flags), check_rc=False)
        check(p.returncode == errno.EPERM, "capless root %s: exit %d %s" %
              (flags, p.returncode, p.stderr))


@test
def tool_uses_own_collection():
    """vcpuperf-cat --qemu opens its own collection on /dev/vcpuperf and
    says nothing about it, with debugfs unmounted too; without the device
    node it falls back to the default collection through debugfs and says
    so once on stderr.  Page faults agree with /proc either way."""
    pages = 2000
    for how in ("device", "no debugfs", "no device"):
        load()
        w = Workload("own-" + how.replace(" ", "-"), "--threads", "2",
                     "--wait-go", "--pages", str(pages), "--hold-ms", "500")
        if how == "no debugfs":
            sh("umount /sys/kernel/debug")
        if how == "no device":
            os.unlink(DEVICE)
        try:
            c = Cat("own", "--qemu", str(w.pid), "--interval", "50ms",
                    "--events", "page-faults,task-clock")
            rep = run_workload(c, w, 2, settle=0.2)
        finally:
            w.kill()
            if how == "no debugfs":
                sh("mount -t debugfs none /sys/kernel/debug")
            if how == "no device":
                # devtmpfs makes the node again at the next load (a node
                # made by hand would outlive the module)
                unload()
        if how == "no device":
            check(c.stderr.count("using the module's default collection")
                  == 1, "no fallback message: %r" % c.stderr)
        else:
            check(c.stderr == "", "%s: stderr %r" % (how, c.stderr))
        rows = by_tid(c.rows())
        for th in rep["threads"]:
            pf = sum(r["page_faults"] for r in rows.get(th["tid"], []))
            opf = delta(th, "minflt") + delta(th, "majflt")
            check(opf >= pages and opf <= pf <= opf + 100,
                  "%s: tid %d: page_faults %d, /proc says %d" %
                  (how, th["tid"], pf, opf))
            print("  %s: tid %d page_faults %d (/proc %d), %d rows" %
                  (how, th["tid"], pf, opf, len(rows[th["tid"]])))
        fin = [e for e in c.events("perf_finished")
               if e.get("scope") == "session"]
        check(len(fin) == 1, "%s: no session perf_finished" % how)


@test
def rmmod_with_device_open():
    """rmmod with a reader blocked on /dev/vcpuperf: it drains to EOF and
    the module unloads.  A vcpuperf file held open without reading (an
    O_WRONLY device fd, debugfs control or status) keeps unload waiting,
    with /dev/vcpuperf already gone, until it is closed; then unload
    completes with a clean log."""
    mark = dmesg_mark()
    load()
    w = Workload("devrmmod", "--threads", "2", "--hold-ms", "20000")
    c = Cat("devrmmod", "--qemu", str(w.pid), "--events",
            "task-clock,page-faults", "--interval", "20ms")
    try:
        c.wait_started(2)
        time.sleep(1)
        sh("rmmod vcpuperf", timeout=60)
        rc = c.wait(timeout=30)
    finally:
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    det = c.events("perf_detached")
    check(len(det) == 2 and all(e["reason"] == "unload" for e in det),
          "detached: %s" % det)
    check(not os.path.isdir("/sys/module/vcpuperf"), "module still loaded")

    for what, path, flags in (("device O_WRONLY", DEVICE, os.O_WRONLY),
                              ("debugfs control",
                               os.path.join(DEBUGFS, "control"), os.O_RDONLY),
                              ("debugfs status",
                               os.path.join(DEBUGFS, "status"), os.O_RDONLY)):
        load()
        fd = os.open(path, flags)
        rm = subprocess.Popen(["rmmod", "vcpuperf"], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        try:
            time.sleep(1.5)
            check(rm.poll() is None, "%s: rmmod did not wait (exit %s)" %
                  (what, rm.poll()))
            check(not os.path.exists(DEVICE), "%s: %s still there" %
                  (what, DEVICE))
            if path == DEVICE:
                check(dev_control("interval 10ms", fd) == errno.ENODEV,
                      "command during unload not refused with ENODEV")
        finally:
            os.close(fd)
        try:
            rm.wait(timeout=30)
        except subprocess.TimeoutExpired:
            rm.kill()
            raise TestFailure("%s: rmmod still waits after close" % what)
        check(rm.returncode == 0, "%s: rmmod: %s" % (what, rm.stdout.read()))
        check(not os.path.isdir("/sys/module/vcpuperf"), "still loaded")
    dmesg_clean_since(mark)


def main(argv):
    names = set(argv[1:])
    return run_tests([t for t in TESTS if not names or t.__name__ in names])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
