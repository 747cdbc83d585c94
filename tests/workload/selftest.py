#!/usr/bin/env python3
"""Host-side self-check of tests/workload/workload (no VM needed).

Runs the workload in a few configurations and checks that the per-thread
before/after deltas match the requested work and that the threads carry
QEMU-style names while running.  Prints PASS/FAIL; exit status 0 on PASS.
Usage: tests/workload/selftest.py [path/to/workload]
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "workload")
failures = []


def check(cond, msg):
    print(("ok   " if cond else "FAIL ") + msg)
    if not cond:
        failures.append(msg)


def delta(t, key):
    return t["after"][key] - t["before"][key]


def check_threads(rep, n, pages, sleeps, burn_ms, tag):
    check(len(rep["threads"]) == n, f"{tag}: {n} threads in report")
    for t in rep["threads"]:
        name = f"{tag}: vcpu {t['vcpu']}"
        check(t["name"] == f"CPU {t['vcpu']}/KVM", f"{name}: name {t['name']!r}")
        check(t["before"] is not None and t["after"] is not None,
              f"{name}: sampled")
        mf = delta(t, "minflt")
        check(pages <= mf <= pages + 3, f"{name}: minflt delta {mf} ~ {pages}")
        check(delta(t, "majflt") == 0, f"{name}: no major faults")
        vcs = delta(t, "voluntary_ctxt_switches")
        check(sleeps <= vcs <= sleeps + 3,
              f"{name}: voluntary switches {vcs} ~ {sleeps}")
        rt = delta(t, "sum_exec_runtime_ns") / 1e6
        check(rt >= burn_ms, f"{name}: runtime {rt:.1f} ms >= {burn_ms}")


def run(args, timeout=60):
    return subprocess.run([WL] + args, capture_output=True, text=True,
                          timeout=timeout)


with tempfile.TemporaryDirectory() as d:
    rep_path = os.path.join(d, "r.json")
    ready_path = os.path.join(d, "ready.json")

    # 1. the basic case from the brief, checking names while it runs
    p = subprocess.Popen([WL, "--threads", "3", "--pages", "1000",
                          "--sleeps", "50", "--burn-ms", "200",
                          "--hold-ms", "800", "--report", rep_path,
                          "--ready", ready_path],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    check(line.startswith(f"READY pid={p.pid} tids="), f"READY line: {line}")
    ready = json.load(open(ready_path))
    names = {}
    for tid in ready["tids"]:
        with open(f"/proc/{p.pid}/task/{tid}/comm") as f:
            names[tid] = f.read().strip()
    check(sorted(names.values()) == ["CPU 0/KVM", "CPU 1/KVM", "CPU 2/KVM"],
          f"comm while running: {sorted(names.values())}")
    check(ready["vcpus"] == [0, 1, 2], "ready vcpus")
    check(p.wait(30) == 0, "basic: exit 0")
    rep = json.load(open(rep_path))
    check(rep["pid"] == p.pid and rep["complete"], "basic: complete report")
    check([t["tid"] for t in rep["threads"]] == ready["tids"], "tids match")
    check(rep["end_mono_ns"] - rep["go_mono_ns"] >= 800e6, "held >= 800 ms")
    check_threads(rep, 3, 1000, 50, 200, "basic")

    # 2. --wait-go, --late-thread-ms, --exit-thread
    p = subprocess.Popen([WL, "--threads", "2", "--pages", "300",
                          "--sleeps", "10", "--burn-ms", "50",
                          "--late-thread-ms", "300", "--exit-thread",
                          "--hold-ms", "700", "--wait-go",
                          "--report", rep_path],
                         stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    os.unlink(rep_path)
    time.sleep(0.3)
    check(not os.path.exists(rep_path), "waiting for go")
    tids0 = sorted(os.listdir(f"/proc/{p.pid}/task"))
    os.kill(p.pid, signal.SIGUSR1)
    time.sleep(0.55)
    tids1 = os.listdir(f"/proc/{p.pid}/task")
    comms = sorted(open(f"/proc/{p.pid}/task/{t}/comm").read().strip()
                   for t in tids1)
    check(comms == ["CPU 1/KVM", "CPU 2/KVM", "workload"],
          f"hot-plug + exit: comms {comms}")
    check(len(tids0) == 3, "3 tasks before go")
    check(p.wait(30) == 0, "hotplug: exit 0")
    rep = json.load(open(rep_path))
    check_threads(rep, 3, 300, 10, 50, "hotplug")
    ex = [t["exited"] for t in rep["threads"]]
    check(ex == [True, False, False], f"exited flags {ex}")
    late = rep["threads"][2]
    check(late["before"]["mono_ns"] - rep["go_mono_ns"] >= 300e6,
          "late thread started >= 300 ms after go")

    # 3. SIGTERM before go: incomplete report, exit 143
    p = subprocess.Popen([WL, "--wait-go", "--report", rep_path],
                         stdout=subprocess.PIPE, text=True)
    p.stdout.readline()
    p.terminate()
    rc = p.wait(10)
    rep = json.load(open(rep_path))
    check(rc == 143 and not rep["complete"] and rep["signal"] == 15 and
          all(t["before"] is None for t in rep["threads"]),
          f"SIGTERM before go: rc {rc}, complete={rep['complete']}")

print("PASS" if not failures else f"FAIL ({len(failures)} checks)")
sys.exit(1 if failures else 0)
