#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The lab's shape on the arm64 bed, guest side: many small VMs at once,
each its own VMM process, recorded per VM or host-wide.  Run as root in
the bed (scripts/bench-arm64.sh --lab) from the repository root.

    arm64_lab.py [--smoke] [--passes N] --out DIR

Each configuration is N VMs x k vCPU threads x events x interval: N test
VMMs (tests/vmm/vpvmm, copied as qemu-vpvmm so that vcpuperf-cat
--all-qemu takes them for QEMUs), named vm00, vm01, ..., each held before
its guest until one common "go"; then every vCPU runs the same loop and
the window ends with the last.  Everything else (the tick's phase of each
pass, the quiet bed, the VMs' idle cgroup, the shares) is bench/arm64.py's
run, with sums over the VMs and over the collectors:

  vcpuperf-per-vm     vcpuperf-cat --qemu PID per VM (one collection and
                      one sampler each), default read mode: the README's
                      per-VM way (contrib/vcpuperf@.service)
  vcpuperf-all-qemu   one vcpuperf-cat --all-qemu --output-dir: one
                      collection for every VM, an episode file per VM
  perf-per-vm         perf stat --per-thread -t TIDS -I per VM (the way
                      labs recorded before)
  ureader-group-jsonl-per-vm  bench/ureader --group --jsonl per VM
  ureader-group-jsonl-host    one bench/ureader --group --jsonl on every
                      VM's threads (its rows all carry the first VM's
                      pid and name: the cost is the same)

A sample is one event of one vCPU thread in one interval, over all VMs;
a collector per VM is read as the sum of its processes (tool), samplers
(module) and the intervals they read (their mean).
Writes DIR/arm64-lab.json; exits 1 only on breakage, never on a figure."""

import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import arm64 as a  # noqa: E402

QEMU_BIN = "/run/bench-qemus/qemu-vpvmm"
VCPUS = 4
# Guest instructions per run, by vCPU threads in all and interval: ten
# seconds' work (one instruction is a nanosecond), twenty wakes of a
# vcpuperf-cat that wakes every 500 ms (bench/arm64.py ROWS_COUNTED); a
# run's start, 16 or 64 VMMs, takes longer anyway.
LAB_WORK_M = {(64, 10): 10000, (64, 100): 10000, (256, 10): 10000,
              (256, 100): 10000}
# (VMs, vCPUs each, events, interval ms, guest instructions per run)
FULL = [(n, VCPUS, e, ms, LAB_WORK_M[n * VCPUS, ms] * 1000000)
        for n in (16, 64) for e in (4, 8) for ms in (10, 100)]
SMOKE = [(16, VCPUS, 4, 100, 400000000)]
COLLECTORS = ["none", "vcpuperf-per-vm", "vcpuperf-all-qemu",
              "perf-per-vm", "ureader-group-jsonl-per-vm",
              "ureader-group-jsonl-host"]
# What each per-VM collector runs for one VM (Collector kinds).
PER_VM = {"vcpuperf-per-vm": "vcpuperf-auto", "perf-per-vm": "perf",
          "ureader-group-jsonl-per-vm": "ureader-group-jsonl"}


class VmGroup:
    """@n Vmm of @k vCPUs each, with the Vmm methods measure() uses over
    all of them: go at one time, CPU and KVM counters summed, one report
    of every vCPU."""

    def __init__(self, n, k, iters):
        self.vms = []
        self.tag = "host"
        try:
            for i in range(n):
                self.vms.append(a.Vmm(k, iters, "vm%02d" % i, binary=QEMU_BIN,
                                      workdir="/tmp/bench-vmm-%02d" % i))
        except Exception:
            self.stop()
            raise
        self.pid = self.vms[0].pid
        self.tids = [t for v in self.vms for t in v.tids]

    def kvm(self):
        out = {}
        for v in self.vms:
            for k, n in v.kvm().items():
                out[k] = out.get(k, 0) + n
        return out

    def sched(self):
        ns = slices = 0
        for v in self.vms:
            a_ns, a_sl = v.sched()
            ns += a_ns
            slices += a_sl
        return ns, slices

    def pin(self):
        self.vms[0].pin()   # the same program and libraries for all

    def go(self, t_ns):
        for v in self.vms:
            v.go(t_ns)

    def wait_done(self, timeout):
        deadline = time.monotonic() + timeout
        return all(v.wait_done(max(0, deadline - time.monotonic()))
                   for v in self.vms)

    def stop(self):
        reps = [v.stop() for v in self.vms]
        if not self.vms or not all(reps):
            return None
        return {"vcpus": [c for r in reps for c in r["vcpus"]],
                "go_ns": max(r["go_ns"] for r in reps)}


class PerVm:
    """One Collector per VM, with the Collector methods measure() uses
    over all of them."""

    def __init__(self, kind, group, events, ims, tag):
        self.kind = kind
        self.members = [a.Collector(PER_VM[kind], v, events, ims,
                                    "%s.%s" % (tag, v.tag),
                                    name="%s-%s" % (kind, v.tag))
                        for v in group.vms]
        self.p = None

    def start(self):
        for m in self.members:
            m.start()

    def ready(self):
        if not all(m.ready(lookup=False) for m in self.members):
            return False
        need = [m for m in self.members if m.coll is None and m.p]
        if need and PER_VM[self.kind].startswith("vcpuperf"):
            found = a.collections_of([m.p.pid for m in need])
            for m in need:
                m.coll = found[m.p.pid]
        return True

    def grid_base(self):
        return self.members[0].grid_base()

    def pin(self):
        self.members[0].pin()

    def open_edges(self):
        for m in self.members:
            m.open_edges()

    def close_edges(self):
        for m in self.members:
            m.close_edges()

    def snap(self):
        out = {"tool": 0, "kthread": 0, "self": 0}
        faults = None
        rows = 0
        for m in self.members:
            s = m.snap()
            for k in out:
                out[k] += s.get(k, 0)
            rows = rows + s["rows"] if rows is not None and "rows" in s \
                else None
            if "faults" in s:
                f = s["faults"]
                faults = f if faults is None else \
                    (faults[0] + f[0], faults[1] + f[1])
        if faults is not None:
            out["faults"] = faults
        if rows is not None:
            out["rows"] = rows
        return out

    def status(self):
        # One read of the status file for all (it lists every collection).
        first = self.members[0]
        if "status" not in first.edge or \
                any(not m.coll or m.coll.get("id") is None
                    for m in self.members):
            return {}
        t0 = time.monotonic_ns()
        text = first.edge["status"].read()
        colls = a.xb.parse_status(text, t0, time.monotonic_ns())
        sts = [colls.get(m.coll["id"]) or {} for m in self.members]
        if not all(sts):
            return {}
        out = {k: sum(st.get(k, 0) for st in sts) for k in (
            "passes", "missed", "produced", "dropped", "direct", "self",
            "kicks", "self_us")}
        # passes: a collection's, the mean (as ticks below)
        out["passes"] /= len(sts)
        out["mode_now"] = sts[0].get("mode_now")
        return out

    def write_window(self, t1, t2):
        for m in self.members:
            m.write_window(t1, t2)

    def ticks(self, t1, t2, s1, s2, st1, st2):
        # The members' own status snapshots are not kept: vcpuperf's
        # intervals are the collections' mean passes (status()).
        if PER_VM[self.kind].startswith("vcpuperf"):
            return st2.get("passes", 0) - st1.get("passes", 0) \
                if st1 and st2 else None
        t = [m.ticks(t1, t2, None, None, None, None) for m in self.members]
        return None if any(x is None for x in t) else sum(t) / len(t)

    def stop(self):
        for m in self.members:
            m.signal_stop()
        return sum(m.stop() or 0 for m in self.members)


def collector(kind, group, events, ims, tag):
    if kind in PER_VM:
        return PerVm(kind, group, events, ims, tag)
    if kind == "ureader-group-jsonl-host":
        return a.Collector("ureader-group-jsonl", group, events, ims, tag,
                           name=kind)
    return a.Collector(kind, group, events, ims, tag)


def run(cfg, kind, tag, phase_ns):
    n, k, ne, ims, work = cfg
    iters = (work // (n * k) - 6) // 2
    group = VmGroup(n, k, iters)
    c = collector(kind, group, a.EVENTS[ne], ims, tag)
    return a.measure(group, c, ims, kind, tag, phase_ns, work)


def main():
    smoke, out, passes, configs, kinds = a.options(
        FULL, SMOKE, COLLECTORS, lambda c: "%dx%dx%dx%dms" % c[:4])
    os.makedirs(os.path.dirname(QEMU_BIN), exist_ok=True)
    shutil.copy(a.VMM, QEMU_BIN)
    result, mark, t_start = a.begin(smoke, passes, COLLECTORS)
    for cfg in configs:
        n, k, ne, ims, work = cfg
        name = "%dx%dx%dx%dms" % (n, k, ne, ims)
        c = dict(name=name, vms=n, vcpus=n * k, events=ne, interval_ms=ims,
                 guest_instructions=work, passes=[])
        result["configs"].append(c)
        a.passes_of(c, cfg, kinds, passes, run, result,
                    os.path.join(out, "arm64-lab.json"))
    return a.end(result, os.path.join(out, "arm64-lab.json"), mark,
                 t_start)


if __name__ == "__main__":
    sys.exit(main())
