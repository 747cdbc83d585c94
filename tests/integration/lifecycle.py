"""Targets that come and go: a vCPU thread started after the attach
(perf_vcpu_added), a thread that exits mid-run (perf_task_exited with its
final counts), a real QEMU whose 'CPU n/TCG' threads become vCPUs and
which is killed while attached."""

import os
import signal
import subprocess
import time

from vptest import (Cat, TestFailure, Workload, by_tid, check,
                    load, test)


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
