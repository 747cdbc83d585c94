"""Threads that exec while they are recorded: from a worker thread (which
takes the leader's tid) and into a setuid program (which makes perf end
the thread's counters), each recorded by collections with and without the
authority to count what the exec makes.

The oracles: /proc/PID/task/TID/stat of the thread around work it does
when told (tests/integration/helpers/threadctl.py), and the workload's own
report of its thread's faults after the setuid exec."""

import json
import os
import shutil
import sys
import time

from overlap import CTL, Ctl, faults, kill_all, stop_cats, wait_event
from vptest import (Cat, check, control, delta, load, read_file, sh, test,
                    WORKLOAD)

INTERVAL_S = 0.05
# The opener of the reduced collection: root's uid, CAP_SYS_ADMIN only (no
# CAP_SYS_PTRACE): it may count root's threads, not another user's.
ADMIN_ONLY = ("setpriv", "--bounding-set=-all,+sys_admin", "--inh-caps=-all")
SUID_DIR = "/run/vp-suid"
SUID_UID = 1000


def rows_after(c, tid, t_wall_ns):
    return [r for r in c.rows() if r["tid"] == tid and
            r["t_wall_ns"] > t_wall_ns]


@test
def exec_from_a_worker_thread():
    """A worker thread T of process P execs (P's program again): it takes
    P's tid.  A --pid P recording and a tid=T one each end T's target
    with reason exec and attach the thread again as P: no row under T
    after that, one target under P (its page faults over work done after
    the exec equal /proc's), and detach tid=P is the thread's detach."""
    load()
    ctl = Ctl()
    cats = []
    try:
        t1 = ctl.spawn()
        by_pid = Cat("exec-pid", "--pid", str(ctl.pid), "--events",
                     "page-faults", "--interval", "50ms")
        cats.append(by_pid)
        by_pid.wait_started(2)
        by_tid = Cat("exec-tid", "--no-attach")
        cats.append(by_tid)
        check(control("interval 50ms") == 0, "interval")
        check(control("attach tid=%d events=page-faults" % t1) == 0,
              "attach tid: %s" % read_file("status"))
        wait_event(by_tid, "perf_started", lambda e: e["tid"] == t1)
        ctl.execv(t1, sys.executable, CTL)
        check(ctl.expect("ready") == ctl.pid, "the exec'd program's pid")
        for c in cats:
            gone = wait_event(c, "perf_detached",
                              lambda e: e["tid"] == t1)
            check(gone["reason"] == "exec", "%s: T detached: %s" %
                  (c.rows_path, gone))
            wait_event(c, "perf_started", lambda e: e["tid"] == ctl.pid and
                       e["t_mono_ns"] >= gone["t_mono_ns"])
        time.sleep(3 * INTERVAL_S)
        t0 = time.time_ns()
        f0 = faults(ctl.pid, ctl.pid)
        ctl.touch(ctl.pid, 3000)
        f1 = faults(ctl.pid, ctl.pid)
        time.sleep(4 * INTERVAL_S)
        detach = control("detach tid=%d" % ctl.pid)
        check(control("stop") == 0, "stop")
        stop_cats(cats, ended=(by_tid,))
    finally:
        kill_all(ctl, cats)
    check(detach == 0, "detach tid=%d (the exec'd thread) failed: errno %d"
          % (ctl.pid, detach))
    for c in cats:
        gone = [e for e in c.events("perf_detached") if e["tid"] == t1][0]
        late = [r for r in c.rows() if r["tid"] == t1 and
                r["t_mono_ns"] > gone["t_mono_ns"]]
        check(not late, "%s: rows under the old tid after the exec: %s" %
              (c.rows_path, late[:2]))
        got = sum(r["page_faults"] for r in rows_after(c, ctl.pid, t0))
        print("  %s: thread %d exec'd as %d: %d page faults after, /proc "
              "%d" % (os.path.basename(c.rows_path), t1, ctl.pid, got,
                      f1 - f0), flush=True)
        check(got == f1 - f0, "%s: %d page faults under tid %d, /proc %d" %
              (c.rows_path, got, ctl.pid, f1 - f0))


def suid_copy():
    """The workload, setuid to uid SUID_UID, on a tmpfs of its own (the
    test VM's root is 9p, where setuid bits are not honoured)."""
    os.makedirs(SUID_DIR, exist_ok=True)
    sh("mountpoint -q %s || mount -t tmpfs -o mode=1777 vp-suid %s" %
       (SUID_DIR, SUID_DIR))
    path = os.path.join(SUID_DIR, "workload")
    shutil.copy(WORKLOAD, path)
    os.chown(path, SUID_UID, SUID_UID)
    os.chmod(path, 0o4755)
    return path


@test
def setuid_exec_needs_the_openers_authority():
    """A root process recorded (--pid, --per-vm) by two collections execs
    a program setuid to uid 1000: perf ends its counters at the exec.  A
    collection opened by root with CAP_SYS_ADMIN but not CAP_SYS_PTRACE
    may no longer count it: the thread's target ends (reason exec) and its
    new targets, the exec'd thread and the thread the program makes,
    start with every counter unavailable (access_denied, EACCES), as do
    their process counters (scope vm): not one count of the new program.
    A collection opened by root counts the new program on: its thread's
    page faults equal the program's own /proc reading."""
    load()
    binary = suid_copy()
    ready = os.path.join(SUID_DIR, "ready.json")
    report = os.path.join(SUID_DIR, "report.json")
    for p in (ready, report):
        if os.path.exists(p):
            os.unlink(p)
    ctl = Ctl()
    args = ("--pid", str(ctl.pid), "--per-vm", "--events",
            "page-faults,task-clock", "--interval", "50ms")
    reduced = Cat("suid-reduced", *args, prefix=ADMIN_ONLY)
    full = Cat("suid-root", *args)
    cats = (reduced, full)
    try:
        for c in cats:
            c.wait_started(1)
        ctl.execv(ctl.pid, binary, "--threads", "1", "--wait-go", "--pages",
                  "2000", "--hold-ms", "60000", "--ready", ready,
                  "--report", report)
        deadline = time.time() + 30
        while not os.path.exists(ready):
            check(time.time() < deadline and ctl.proc.poll() is None,
                  "the setuid program never got ready")
            time.sleep(0.05)
        with open(ready) as f:
            info = json.load(f)
        worker = info["tids"][0]
        for c in cats:
            wait_event(c, "perf_started", lambda e: e["tid"] == worker)
        os.kill(ctl.pid, 10)    # SIGUSR1: go
        deadline = time.time() + 60
        while True:
            st = open("/proc/%d/task/%d/stat" % (ctl.pid, worker)).read()
            if int(st.rsplit(")", 1)[1].split()[7]) >= 2000:
                break
            check(time.time() < deadline, "the program never did its work")
            time.sleep(0.05)
        time.sleep(0.5)
        ctl.proc.terminate()
        ctl.proc.wait(timeout=30)
        with open(report) as f:
            rep = json.load(f)
        time.sleep(4 * INTERVAL_S)
        stop_cats(cats)
    finally:
        kill_all(ctl, cats)
        sh("umount %s" % SUID_DIR, check_rc=False)
    th = rep["threads"][0]
    opf = delta(th, "minflt") + delta(th, "majflt")

    # The collection that may not count the new credentials.
    gone = [e for e in reduced.events("perf_detached")
            if e["tid"] == ctl.pid]
    check(gone and gone[0]["reason"] == "exec",
          "reduced: the exec'ing thread's end: %s" % gone)
    denied = [e for e in reduced.events("perf_unavailable")
              if e["reason"] == "access_denied" and e["errno"] == "EACCES"]
    own = {(e["tid"], e["counter"]) for e in denied if e["scope"] == "thread"}
    vm = {(e["tid"], e["counter"]) for e in denied if e["scope"] == "vm"}
    for tid in (ctl.pid, worker):
        for ev in ("page-faults", "task-clock"):
            check((tid, ev) in own, "reduced: no access_denied for %s of "
                  "%d: %s" % (ev, tid, denied))
    check(vm, "reduced: no access_denied for the process counters: %s" %
          denied)
    counted = [r for r in reduced.rows() if r["tid"] == worker and
               (r["page_faults"] or r["task_clock"])]
    check(not counted, "reduced: counted the setuid program's thread: %s" %
          counted[:2])
    after = [r for r in reduced.rows() if r["tid"] is None and
             r["t_mono_ns"] > gone[0]["t_mono_ns"] + 2 * INTERVAL_S * 1e9]
    check(after and all((r["page_faults"] or 0) == 0 for r in after),
          "reduced: per-VM rows counted the setuid program: %s" %
          [r["page_faults"] for r in after][:10])

    # The collection that may.
    fgone = [e for e in full.events("perf_detached") if e["tid"] == ctl.pid]
    check(fgone and fgone[0]["reason"] == "exec",
          "root: the exec'ing thread's end: %s" % fgone)
    check(not [e for e in full.events("perf_unavailable")
               if e["reason"] == "access_denied"],
          "root: access_denied: %s" % full.events("perf_unavailable"))
    pf = sum(r["page_faults"] or 0 for r in full.rows()
             if r["tid"] == worker)
    print("  setuid exec: the CAP_SYS_ADMIN-only collection: %d counters "
          "access_denied (%d of the process), 0 counts; root's: %d page "
          "faults of the program's thread, /proc %d" %
          (len(denied), len(vm), pf, opf), flush=True)
    check(opf >= 2000 and opf <= pf <= opf + 100,
          "root: %d page faults for the program's thread, /proc %d" %
          (pf, opf))
