#!/usr/bin/python3
"""vcpuperf on a real PMU and a real KVM host: the arm64 bed
(scripts/arm64-check.sh boots Debian's arm64 kernel at EL2 under
qemu-system-aarch64 -icount shift=0, with the armv8_pmuv3 driver and KVM in
VHE mode).  Run as root inside that VM from the repository root, with
VP_MODULE, VP_CAT and VP_VMM naming the arm64 builds.
Usage: kvm.py [TEST_NAME...] | kvm.py --all-but TEST_NAME... | kvm.py --list

The truth is the guest's: tests/vmm/vpvmm runs vCPU threads ('CPU <n>/KVM')
whose guest code retires a number of instructions known exactly, in guest
kernel mode (EL1) and guest user mode (EL0) apart, with halted phases (WFI:
the thread blocks in KVM) and host-side pauses.  With one emulated CPU,
QEMU's instruction counter is exact per thread (the boot runs -smp 1; the
self-read test, which needs a second CPU, says what changes there)."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from vptest import (CAT, Cat, TestFailure, Workload, check,  # noqa: E402
                    load, unload, sh,
                    dmesg_mark, dmesg_clean_since, perf_stat_enabled,
                    read_file, test, main,
                    REPO, OUT)

VMM = os.environ.get("VP_VMM", os.path.join(REPO, "tests", "vmm", "vpvmm"))
GUEST_DIR = os.environ.get("VP_GUEST_DIR", "")
MS = 1000000
UUID = "5e3c2a4f-8a7b-4c1d-9e0f-112233445566"




class Vmm:
    """tests/vmm/vpvmm: a KVM VM whose vCPUs retire known instructions."""

    def __init__(self, name, phases, vcpus=2, io_ms=0, hold=False,
                 outdir=OUT, done_pipe=False, binary=VMM):
        """@outdir holds its files (by default the 9p share); with
        @done_pipe the end comes down a pipe that wait_done() blocks on
        (no polling: nothing of the test wakes meanwhile)."""
        self.name = name
        self.ready = os.path.join(outdir, name + ".vmm-ready.json")
        self.report_path = os.path.join(outdir, name + ".vmm-report.json")
        self.done = os.path.join(outdir, name + ".vmm-done")
        for p in (self.ready, self.report_path, self.done):
            if os.path.exists(p):
                os.unlink(p)
        args = [binary, "-name", "guest=%s,debug-threads=on" % name,
                "-uuid", UUID, "--vcpus", str(vcpus), "--wait-go",
                "--ready", self.ready, "--report", self.report_path]
        self.done_r, done_w = os.pipe() if done_pipe else (None, None)
        args += ["--done-fd", str(done_w)] if done_pipe else \
            ["--done", self.done]
        for ph in phases:
            args += ["--phases", ph]
        if io_ms:
            args += ["--io-ms", str(io_ms)]
        if hold:
            args.append("--hold")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     pass_fds=(done_w,) if done_pipe else ())
        if done_pipe:
            os.close(done_w)
        deadline = time.time() + 60
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None:
                raise TestFailure("vpvmm died: %s" % self.proc.stdout.read())
            check(time.time() < deadline, "vpvmm never got ready")
            time.sleep(0.02)
        with open(self.ready) as f:
            info = json.load(f)
        self.pid = info["pid"]
        self.tids = info["tids"]
        self.emulator_tids = info["emulator_tids"]

    def go(self):
        os.kill(self.pid, signal.SIGUSR1)

    def wait_done(self, timeout=300):
        if self.done_r is not None:
            got = os.read(self.done_r, 16)
            check(got == b"done\n", "vpvmm did not finish: %r" % got)
            return
        deadline = time.time() + timeout
        while not os.path.exists(self.done):
            check(self.proc.poll() is None,
                  "vpvmm died: %s" % self.proc.stdout.read())
            check(time.time() < deadline, "vpvmm not done in %d s" % timeout)
            time.sleep(0.05)

    def wait(self, timeout=300):
        """Wait for the end (without --hold); returns the report."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise TestFailure("vpvmm did not end in %d s" % timeout)
        check(rc == 0, "vpvmm exited %d: %s" % (rc, self.proc.stdout.read()))
        return self.report()

    def end(self, timeout=60):
        """SIGTERM a --hold VMM; returns the report."""
        self.proc.send_signal(signal.SIGTERM)
        return self.wait(timeout)

    def report(self):
        with open(self.report_path) as f:
            return json.load(f)

    def kill(self):
        if self.done_r is not None:
            os.close(self.done_r)
            self.done_r = None
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def vcpu_rows(rows, tid):
    return [r for r in rows if r.get("tid") == tid]


def total(rows, key):
    """Sum of @key over @rows, failing on a null (a counter that did not
    count where the test needs every interval)."""
    vals = [r[key] for r in rows]
    check(None not in vals, "%s is null in %d of %d rows" %
          (key, vals.count(None), len(vals)))
    return sum(vals)


def finals(cat):
    """{tid: perf_task_exited final counts} of a collection."""
    return {e["tid"]: e["final"] for e in cat.events("perf_task_exited")}


def record(name, vmm, events, *args, interval="50ms"):
    """vcpuperf-cat --qemu on @vmm, started and waited for."""
    c = Cat(name, "--qemu", str(vmm.pid), "--events", events,
            "--interval", interval, "-q", *args)
    c.wait_started(len(vmm.tids))
    return c


def finish(vmm, cats, settle=0.3):
    """Let @vmm run its phases to the end, then stop every collection."""
    try:
        vmm.go()
        rep = vmm.wait()
        time.sleep(settle)
    finally:
        vmm.kill()
        for c in cats:
            rc = c.stop()
            check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    return rep


def rows_within(rows, start_ns, end_ns, margin_ns):
    """Rows whose whole interval lies in [start + margin, end - margin]."""
    return [r for r in rows if r["dt_ns"] is not None and
            r["t_mono_ns"] - r["dt_ns"] >= start_ns + margin_ns and
            r["t_mono_ns"] <= end_ns - margin_ns]


@test
def dkms_module_loads():
    """The module DKMS built for this kernel (arm64-check.sh: dkms build
    -k <the bed's kernel>) has its vermagic, loads and counts a vCPU's
    guest instructions exactly."""
    path = os.environ.get("VP_DKMS_MODULE")
    check(path and os.path.exists(path), "no DKMS-built module (%s)" % path)
    vermagic = sh("modinfo -F vermagic %s" % path).stdout.split()
    check(vermagic[:1] == [os.uname().release] and "aarch64" in vermagic,
          "vermagic %s, kernel %s" % (vermagic, os.uname().release))
    unload()
    sh("insmod %s" % path)
    try:
        vmm = Vmm("dkms", ["loop:5000000,user:1000000"], vcpus=1)
        c = record("dkms", vmm, "instructions:G,instructions:Gu")
        rep = finish(vmm, [c])
        v = rep["vcpus"][0]
        f = finals(c)[v["tid"]]
        check(f["instructions:G"] == v["guest_instructions"] and
              f["instructions:Gu"] == v["guest_el0"],
              "DKMS module: %s, guest %d (EL0 %d)" %
              (f, v["guest_instructions"], v["guest_el0"]))
    finally:
        unload()


# Two vCPUs with every kind of phase, and an emulator thread.
PHASES = ["loop:40000000,halt:400,user:15000000,pause:250,loop:5000000",
          "user:10000000,loop:25000000,halt:300,loop:1"]


def check_halts(rep, rows, key):
    """Rows inside a halt or pause of a vCPU: the thread is blocked (in
    KVM, or asleep in user space): nothing counted, ran false."""
    seen = 0
    for v in rep["vcpus"]:
        trows = vcpu_rows(rows, v["tid"])
        for ph in v["phases"]:
            if ph["kind"] not in ("halt", "pause"):
                continue
            inside = rows_within(trows, ph["start_ns"], ph["end_ns"],
                                 10 * MS)
            for r in inside:
                check(r[key] == 0 and r["ran"] is False,
                      "vCPU %d %s %d ms: a row inside has %s %s, ran %s" %
                      (v["vcpu"], ph["kind"], ph["arg"], key, r[key],
                       r["ran"]))
            seen += len(inside)
    check(seen >= 4, "only %d rows fell inside halts and pauses" % seen)
    return seen


@test
def guest_instructions_exact():
    """instructions:G per vCPU thread and per VM equal the guest's own
    count exactly (rows summed and the exit totals), in every read mode;
    instructions:G + instructions:H == instructions; halted and paused
    vCPUs count nothing; emulator threads count no guest instruction."""
    load()
    for mode in ("direct", "kick", "lazy"):
        vmm = Vmm("exact-" + mode, PHASES, io_ms=4)
        c = record("exact-" + mode, vmm,
                   "instructions:G,instructions:H,instructions",
                   "--per-vm", "--emulator-threads", "--read", mode)
        # Threads off every CPU since their last read (halted and paused
        # vCPUs, the sleeping emulator threads) keep their values: the
        # rows below must still be exact.
        seen = [0]
        done = threading.Event()

        def watch():
            while not done.wait(0.05):
                seen.append(unchanged_reads())
        th = threading.Thread(target=watch)
        th.start()
        try:
            rep = finish(vmm, [c])
        finally:
            done.set()
            th.join()
        check(max(seen) > 0, "%s: no read kept a thread's values" % mode)
        rows = c.rows()
        fin = finals(c)
        check(not any(r["multiplexed"] for r in rows),
              "multiplexed rows: 6 counters per thread fit 7")
        truth_vm = 0
        for v in rep["vcpus"]:
            trows = vcpu_rows(rows, v["tid"])
            got = total(trows, "instructions_guest")
            check(got == v["guest_instructions"],
                  "%s vCPU %d: instructions:G rows sum to %d, the guest "
                  "retired %d" % (mode, v["vcpu"], got,
                                  v["guest_instructions"]))
            f = fin.get(v["tid"])
            check(f and f["instructions:G"] == v["guest_instructions"],
                  "%s vCPU %d: exit total %s, the guest retired %d" %
                  (mode, v["vcpu"], f, v["guest_instructions"]))
            check(f["instructions:G"] + f["instructions:H"] ==
                  f["instructions"], "%s vCPU %d: G %d + H %d != %d" %
                  (mode, v["vcpu"], f["instructions:G"],
                   f["instructions:H"], f["instructions"]))
            check(all(r["vm"] == "exact-" + mode and r["uuid"] == UUID and
                      r["role"] == "vcpu" for r in trows),
                  "vCPU rows without the VM identity")
            truth_vm += v["guest_instructions"]
        vm_rows = [r for r in rows if r["role"] == "vm"]
        got_vm = total(vm_rows, "instructions_guest")
        check(got_vm == truth_vm, "%s: per-VM instructions:G %d, the "
              "guest retired %d" % (mode, got_vm, truth_vm))
        halted = check_halts(rep, rows, "instructions_guest")
        emu = [r for r in rows if r["role"] == "emulator"]
        check({r["tid"] for r in emu} == set(vmm.emulator_tids),
              "emulator rows for %s, threads %s" %
              (sorted({r["tid"] for r in emu}), vmm.emulator_tids))
        check(all(r["instructions_guest"] == 0 for r in emu),
              "an emulator thread counted guest instructions")
        io = rep["io_tid"]
        check(total(vcpu_rows(emu, io), "instructions_host") > 0,
              "the I/O thread counted no host instructions")
        print("  %s: vCPU %s, VM %d = guest truth; %d rows in halts and "
              "pauses all 0; %d reads kept values (thread not run since)" %
              (mode, ", ".join("%d %d" % (v["vcpu"], v["guest_instructions"])
                               for v in rep["vcpus"]), truth_vm, halted,
               max(seen)), flush=True)
    unload()


# Each modifier on a VHE host: which exception levels, guest and host,
# each one counts (measured: vcpuperf(4) carries the table).  Host EL0 is
# the VMM's user space, host EL2 the host kernel (KVM included), guest
# EL1 and EL0 the vpvmm guest's kernel and user mode.
@test
def modifiers_on_vhe_host():
    """u, k, G, H and their combinations on a vCPU thread against the
    guest's EL1/EL0 truth and against each other (two runs of at most 7
    counters: no multiplexing)."""
    load()
    phases = ["user:7000000,loop:13000000,halt:200,user:3,loop:1"]
    runs = {}
    for name, events in (
            ("a", "instructions:G,instructions:Gu,instructions:Gk,"
                  "instructions:H,instructions:Hu,instructions:Hk"),
            ("b", "instructions,instructions:u,instructions:k,"
                  "instructions:G,instructions:H,cycles,cycles:G")):
        vmm = Vmm("mods-" + name, phases, vcpus=1)
        c = record("mods-" + name, vmm, events)
        rep = finish(vmm, [c])
        v = rep["vcpus"][0]
        f = finals(c)[v["tid"]]
        check(not any(r["multiplexed"] for r in c.rows()), "multiplexed")
        runs[name] = (v, f)
    v, a = runs["a"]
    el1, el0 = v["guest_el1"], v["guest_el0"]
    check(el0 > 0 and el1 > 0, "the guest ran at EL1 and EL0")
    check(a["instructions:G"] == el1 + el0, "G %d, guest %d" %
          (a["instructions:G"], el1 + el0))
    check(a["instructions:Gu"] == el0, "Gu %d, guest EL0 %d" %
          (a["instructions:Gu"], el0))
    check(a["instructions:Gk"] == el1, "Gk %d, guest EL1 %d" %
          (a["instructions:Gk"], el1))
    check(a["instructions:Hu"] + a["instructions:Hk"] == a["instructions:H"],
          "Hu %d + Hk %d != H %d" % (a["instructions:Hu"],
                                     a["instructions:Hk"],
                                     a["instructions:H"]))
    check(a["instructions:Hu"] > 0 and a["instructions:Hk"] > 0,
          "the host ran in user and kernel mode")
    v, b = runs["b"]
    el1, el0 = v["guest_el1"], v["guest_el0"]
    check(b["instructions:G"] == el1 + el0, "run b: G %d, guest %d" %
          (b["instructions:G"], el1 + el0))
    check(b["instructions"] == b["instructions:G"] + b["instructions:H"],
          "plain %d != G %d + H %d" % (b["instructions"],
                                       b["instructions:G"],
                                       b["instructions:H"]))
    check(b["instructions"] == b["instructions:u"] + b["instructions:k"],
          "plain %d != u %d + k %d" % (b["instructions"],
                                       b["instructions:u"],
                                       b["instructions:k"]))
    # u counts guest EL0 and host EL0; k guest EL1 and the host kernel.
    host_u = b["instructions:u"] - el0
    host_k = b["instructions:k"] - el1
    check(0 < host_u < b["instructions:H"] and
          0 < host_k < b["instructions:H"] and
          host_u + host_k == b["instructions:H"],
          "u - guest EL0 = %d and k - guest EL1 = %d do not split H %d" %
          (host_u, host_k, b["instructions:H"]))
    # -icount shift=0: one instruction per cycle of the 1 GHz clock.
    check(b["cycles"] == b["instructions"] and
          b["cycles:G"] == b["instructions:G"],
          "cycles %d/%d vs instructions %d/%d" %
          (b["cycles"], b["cycles:G"], b["instructions"],
           b["instructions:G"]))
    print("  guest EL1 %d, EL0 %d: G %d, Gu %d, Gk %d exact; u = guest "
          "EL0 + host EL0 %d, k = guest EL1 + host EL2 %d, H = host %d "
          "(Hu %d, Hk %d in run a)" %
          (el1, el0, b["instructions:G"], a["instructions:Gu"],
           a["instructions:Gk"], host_u, host_k, b["instructions:H"],
           a["instructions:Hu"], a["instructions:Hk"]), flush=True)
    unload()


@test
def unimplemented_events_say_so():
    """Events QEMU's PMU does not implement (branches, cache misses, a
    cache event) are perf_unavailable, ENOENT, cause pmu_lacks_event (not
    'no PMU'), null in every row, while cycles, instructions:G and a
    software event count."""
    load()
    vmm = Vmm("unimpl", ["loop:1000000"], vcpus=1)
    c = record("unimpl", vmm, "cycles,instructions:G,branches,cache-misses,"
               "L1-dcache-load-misses,page-faults")
    rep = finish(vmm, [c])
    v = rep["vcpus"][0]
    un = {e["counter"]: e for e in c.events("perf_unavailable")}
    check(set(un) == {"branches", "cache-misses", "L1-dcache-load-misses"},
          "unavailable: %s" % sorted(un))
    for name, e in un.items():
        check(e["errno"] == "ENOENT" and e["reason"] == "pmu_lacks_event",
              "%s: %s %s" % (name, e["errno"], e["reason"]))
    rows = vcpu_rows(c.rows(), v["tid"])
    for key in ("branches", "cache_misses", "L1_dcache_load_misses"):
        check(all(r[key] is None for r in rows), "%s not null" % key)
    got = total(rows, "instructions_guest")
    check(got == v["guest_instructions"], "instructions:G %d, guest %d" %
          (got, v["guest_instructions"]))
    check(total(rows, "cycles") > got, "cycles did not count")
    unload()


@test
def several_collections_one_killed():
    """Three collections on the same VM (one SIGKILLed mid-run): the
    survivors' instructions:G per vCPU and per VM stay exact; the killed
    one leaves status and nothing samples for it."""
    load()
    vmm = Vmm("three", ["loop:30000000,pause:600,loop:30000000"])
    # At most 7 counters per vCPU thread: 2 + 2 process counters, 1, 1.
    cats = [record("three-%d" % i, vmm,
                   "instructions:G,cycles:G" if i == 0 else "instructions:G",
                   *(["--per-vm"] if i == 0 else []),
                   interval=("30ms", "50ms", "70ms")[i]) for i in range(3)]
    vmm.go()
    time.sleep(0.3)
    cats[2].proc.kill()
    cats[2].wait()
    st = read_file("status")
    check(st.count("\ncollection ") == 3,
          "status after the kill:\n" + st[:2000])
    rep = vmm.wait()
    time.sleep(0.3)
    for c in cats[:2]:
        rc = c.stop()
        check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    truth = 0
    for v in rep["vcpus"]:
        truth += v["guest_instructions"]
        for c in cats[:2]:
            got = total(vcpu_rows(c.rows(), v["tid"]), "instructions_guest")
            check(got == v["guest_instructions"],
                  "%s vCPU %d: %d, guest %d" % (c.rows_path, v["vcpu"], got,
                                                v["guest_instructions"]))
    vm_rows = [r for r in cats[0].rows() if r["role"] == "vm"]
    got = total(vm_rows, "instructions_guest")
    check(got == truth, "per-VM %d, guest %d" % (got, truth))
    unload()


@test
def two_collections_share_the_pmu():
    """Two collections of the same 4 hardware events, both with --per-vm,
    on a 2-vCPU VM: one kernel counter per (thread, event), shared (status
    says 2 users), so a vCPU thread asks the PMU for 4 counters, not 16:
    no row multiplexed, and instructions:G exact per vCPU and per VM in
    both collections."""
    load()
    vmm = Vmm("share", ["loop:150000000,pause:100,loop:50000000",
                        "loop:120000000"], io_ms=3)
    events = "instructions:G,cycles:G,instructions:H,cycles:H"
    cats = [record("share-%d" % i, vmm, events, "--per-vm",
                   interval=("50ms", "70ms")[i]) for i in range(2)]
    vmm.go()
    time.sleep(0.2)
    st = read_file("status")
    rep = vmm.wait()
    time.sleep(0.3)
    for c in cats:
        rc = c.stop()
        check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    users = re.findall(r"^  (\S+)\s+\w+ value .* users (\d+)$", st, re.M)
    check(users and all(u == "2" for _, u in users),
          "counters not shared by the two collections: %s" % users)
    truth = sum(v["guest_instructions"] for v in rep["vcpus"])
    for c in cats:
        rows = c.rows()
        mux = [r for r in rows if r.get("multiplexed")]
        check(not mux, "%s: %d rows multiplexed" % (c.rows_path, len(mux)))
        for v in rep["vcpus"]:
            got = total(vcpu_rows(rows, v["tid"]), "instructions_guest")
            check(got == v["guest_instructions"],
                  "%s vCPU %d: %d, guest %d" % (c.rows_path, v["vcpu"], got,
                                                v["guest_instructions"]))
        vm = total([r for r in rows if r["role"] == "vm"],
                   "instructions_guest")
        check(vm == truth, "%s: per-VM %d, guest %d" % (c.rows_path, vm,
                                                        truth))
    print("  2 collections x 4 hardware events + --per-vm: %d counters, "
          "each with 2 users; no row multiplexed; vCPUs %s and VM %d exact "
          "in both" % (len(users), [v["guest_instructions"]
                                    for v in rep["vcpus"]], truth),
          flush=True)
    unload()


def episode_estimate(cat, tid, event):
    """The whole episode's estimate of @event on thread @tid: its
    perf_finished totals (value x enabled / running over the
    collection)."""
    fin = [e for e in cat.events("perf_finished")
           if e.get("scope") == "thread" and e["tid"] == tid]
    check(len(fin) == 1, "perf_finished of %d: %s" % (tid, fin))
    return fin[0]["totals"][event]["scaled"]


@test
def multiplexing_against_truth():
    """Ten hardware events on seven counters: perf_multiplexed_expected at
    attach and perf_multiplexed with its running ratio and its cause (more
    events than counters, 10 > 7); each interval's scaled instructions:G
    against a pinned instructions:G (itself exact over the run); the whole
    episode's estimate (perf_finished totals) within 2% of the guest's
    count.  A pinned instructions:H shows how far the host-mode estimate
    is off (printed, not enforced)."""
    load()
    vmm = Vmm("mux", ["loop:400000000", "loop:300000000"])
    flex = ["instructions:G", "instructions", "instructions:H",
            "instructions:u", "instructions:k", "cycles", "cycles:G",
            "cycles:H"]
    c = record("mux", vmm, ",".join(["instructions:GD", "instructions:HD"] +
                                    flex), interval="100ms")
    rep = finish(vmm, [c])
    rows = c.rows()
    mux = c.events("perf_multiplexed")
    check(mux, "no perf_multiplexed")
    exp = {e["tid"]: e for e in c.events("perf_multiplexed_expected")}
    for v in rep["vcpus"]:
        e = exp.get(v["tid"])
        check(e and (e["pmu_events"], e["pmu_counters"]) == (10, 7),
              "perf_multiplexed_expected of vCPU %d: %s" % (v["vcpu"], e))
    check(all(m["cause"] == "more_events_than_counters" and
              m["pmu_events"] == 10 and m["pmu_counters"] == 7
              for m in mux), "perf_multiplexed causes: %s" % mux)
    errs = []
    for v in rep["vcpus"]:
        trows = vcpu_rows(rows, v["tid"])
        ref = total(trows, "instructions_D_guest")
        check(ref == v["guest_instructions"],
              "pinned instructions:G %d, guest %d" %
              (ref, v["guest_instructions"]))
        ran = [r for r in trows if r["ran"]]
        check(any(r["multiplexed"] for r in ran), "no multiplexed row")
        m = [e for e in mux if e["tid"] == v["tid"]]
        check(len(m) == 1 and 0 < m[0]["min_running_ratio"] < 1,
              "perf_multiplexed of vCPU %d: %s" % (v["vcpu"], m))
        for r in ran:
            if r["instructions_guest"] is None or \
                    r["instructions_D_guest"] < 10 * MS:
                continue
            errs.append(r["instructions_guest"] /
                        r["instructions_D_guest"] - 1)
        est = episode_estimate(c, v["tid"], "instructions:G")
        err = est / v["guest_instructions"] - 1
        # Host mode only: a rate that is 0 in the guest and high in the
        # host, while perf rotates the counters at the host's timer tick,
        # a VM exit: the scaled value is biased (printed, Known problems).
        host = total(trows, "instructions_D_host")
        host_est = episode_estimate(c, v["tid"], "instructions:H")
        check(abs(err) <= 0.02, "vCPU %d: whole-run estimate %.0f, guest "
              "%d (%+.2f%%)" % (v["vcpu"], est, v["guest_instructions"],
                                100 * err))
        print("  vCPU %d: guest %d, pinned %d, estimate %+.3f%%, rows sum "
              "%+.2f%%; host mode: pinned %d, multiplexed estimate %.0f "
              "(%+.0f%%)" % (v["vcpu"], v["guest_instructions"], ref,
                             100 * err,
                             100 * (sum(r["instructions_guest"] or 0
                                        for r in trows) /
                                    v["guest_instructions"] - 1),
                             host, host_est, 100 * (host_est / host - 1)),
              flush=True)
    check(len(errs) >= 5, "only %d intervals to compare" % len(errs))
    errs.sort(key=abs)
    print("  per interval (%d): scaled instructions:G vs pinned, median "
          "|error| %.2f%%, max %.2f%%" %
          (len(errs), 100 * abs(errs[len(errs) // 2]), 100 * abs(errs[-1])),
          flush=True)
    check(abs(errs[len(errs) // 2]) <= 0.05,
          "median per-interval error %.2f%%" % (100 * errs[len(errs) // 2]))
    unload()


@test
def starved_counters_say_why():
    """A vCPU thread that runs in bursts of 20 us every 45 ms, counted by
    one collection with 7 hardware events (all its PMU's counters) and by
    another with 2 others: perf rotates multiplexed counters only at its
    timer tick while the thread runs, so the second collection's never
    get on; its perf_no_counters says starved, with 9 hardware events on
    the thread for 7 counters (or, if a tick ever met a burst, its
    perf_multiplexed says more events than counters).  The first
    collection's count exactly."""
    load()
    vmm = Vmm("starve", [",".join(["loop:10000,pause:45"] * 30)], vcpus=1)
    a = record("starve-a", vmm, "cycles,instructions,instructions:G,"
               "instructions:H,instructions:u,instructions:k,"
               "instructions:Gu", interval="50ms")
    b = record("starve-b", vmm, "instructions:Gk,instructions:Hu",
               interval="50ms")
    rep = finish(vmm, [a, b])
    v = rep["vcpus"][0]
    nc = b.events("perf_no_counters")
    mux = b.events("perf_multiplexed")
    exp = b.events("perf_multiplexed_expected")
    check(exp and (exp[0]["pmu_events"], exp[0]["pmu_counters"],
                   exp[0]["collections"]) == (9, 7, 1),
          "perf_multiplexed_expected: %s" % exp)
    if nc:
        n = nc[0]
        check(n["reason"] == "starved" and n["pmu_events"] == 9 and
              n["pmu_counters"] == 7 and n["rotate_ms"],
              "perf_no_counters: %s" % n)
        said = "perf_no_counters: starved, %d us per interval, rotation " \
            "every %d ms" % (n["ran_ns_per_interval"] // 1000,
                             n["rotate_ms"])
    else:
        check(mux and mux[0]["cause"] == "more_events_than_counters" and
              mux[0]["min_running_ratio"] < 0.05, "the second collection's "
              "counters: no perf_no_counters, perf_multiplexed %s" % mux)
        said = "perf_multiplexed (a tick met a burst): %s" % mux[0]["cause"]
    got = total(vcpu_rows(a.rows(), v["tid"]), "instructions_guest")
    check(got == v["guest_instructions"],
          "first collection: instructions:G %d, guest %d" %
          (got, v["guest_instructions"]))
    print("  30 bursts of 20 us: the 2 later events %s; the first 7 count "
          "(instructions:G %d exact)" % (said, got), flush=True)
    unload()


@test
def pinned_beyond_counters():
    """Eight pinned events where six general counters and the cycle
    counter exist: the first six (instructions) count unmultiplexed and
    exactly; the seventh finds no counter, and perf then schedules no
    pinned event after it either: both are perf_unavailable
    pinned_no_slot and null, even though the thread exited before a pass
    saw their error state."""
    load()
    vmm = Vmm("pinned", ["user:3000000,loop:2000000"], vcpus=1)
    events = ["instructions:GD", "instructions:GuD", "instructions:GkD",
              "instructions:D", "instructions:HD", "instructions:uD",
              "instructions:kD", "cycles:GD"]
    c = record("pinned", vmm, ",".join(events))
    rep = finish(vmm, [c])
    v = rep["vcpus"][0]
    un = {e["counter"]: e["reason"] for e in c.events("perf_unavailable")}
    check(un == {e: "pinned_no_slot" for e in events[6:]},
          "unavailable: %s" % un)
    rows = vcpu_rows(c.rows(), v["tid"])
    check(not any(r["multiplexed"] for r in rows), "multiplexed")
    # A pass may come before go (the first grid point is half an interval
    # away or more): the thread has not run then, its row true zeros.
    ran = [r for r in rows if r["ran"]]
    check(ran and all(r["instructions_kD"] is None and
                      r["cycles_D_guest"] is None for r in ran),
          "a counter in error state is not null in the %d rows that ran" %
          len(ran))
    f = finals(c)[v["tid"]]
    check(f["instructions:kD"] is None and f["cycles:GD"] is None,
          "counters in error state have final counts: %s" % f)
    for name, want in (("instructions:GD", v["guest_instructions"]),
                       ("instructions:GuD", v["guest_el0"]),
                       ("instructions:GkD", v["guest_el1"])):
        check(f[name] == want, "%s %d, guest %d" % (name, f[name], want))
    check(f["instructions:D"] == f["instructions:GD"] + f["instructions:HD"],
          "pinned plain != G + H")
    unload()


@test
def rmmod_with_collections_on_running_vcpus():
    """rmmod while two collections sample running vCPUs: refused at once
    ("in use"), both recordings go on, each vCPU's guest instructions
    exact in both to the end; once both have stopped rmmod goes through
    and the kernel log stays clean."""
    mark = dmesg_mark()
    load()
    vmm = Vmm("rmmod", ["loop:30000000"])
    cats = [record("rmmod-%d" % i, vmm, "instructions:G,cycles",
                   interval="20ms") for i in range(2)]
    try:
        vmm.go()
        time.sleep(0.3)
        t0 = time.time()
        p = sh("rmmod vcpuperf", check_rc=False, timeout=60)
        took = time.time() - t0
        check(p.returncode != 0 and "in use" in p.stderr,
              "rmmod under two recordings not refused: %d %r" %
              (p.returncode, p.stderr))
        check(os.path.isdir("/sys/module/vcpuperf"), "unloaded")
        rep = finish(vmm, cats)
    finally:
        vmm.kill()
    for c in cats:
        f = finals(c)
        for v in rep["vcpus"]:
            check(f[v["tid"]]["instructions:G"] == v["guest_instructions"],
                  "%s: vCPU %s: %s, guest %d" %
                  (c.rows_path, v["tid"], f[v["tid"]],
                   v["guest_instructions"]))
    unload()
    dmesg_clean_since(mark)
    print("  rmmod refused in %.2f s with 2 collections on 2 running vCPUs; "
          "both exact to the end, then unloaded" % took, flush=True)


@test
def late_vcpu_under_per_vm_says_why():
    """A vCPU thread made after a --per-vm attach (a hot-plugged vCPU)
    inherits the process counters of the thread that made it besides its
    own: 4 host events ask 8 of the PMU's 7 counters.  Its records say so
    (multiplexed_expected and multiplexed with 4 of 8 events inherited,
    cause process_totals); the vCPU present at attach holds only its own 4
    and is never multiplexed."""
    load()
    w = Workload("latevcpu", "--threads", "1", "--wait-go", "--burn-ms",
                 "400", "--late-thread-ms", "200", "--hold-ms", "1500")
    c = Cat("latevcpu", "--qemu", str(w.pid), "--per-vm", "--events",
            "instructions:H,cycles:H,instructions:Hk,cycles:Hk",
            "--interval", "50ms")
    try:
        c.wait_started(1)
        w.go()
        rep = w.wait()
        time.sleep(0.3)
    finally:
        w.kill()
        rc = c.stop()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    early = [t["tid"] for t in rep["threads"] if t["vcpu"] == 0][0]
    late = [t["tid"] for t in rep["threads"] if t["vcpu"] == 1][0]
    exp = c.events("perf_multiplexed_expected")
    mux = c.events("perf_multiplexed")
    print("  multiplexed_expected: %s; multiplexed: %s" %
          ([(e["tid"], e["pmu_events"], e["pmu_events_inherited"],
             e["pmu_counters"]) for e in exp],
           [(e["tid"], e["cause"], e["pmu_events"],
             e["pmu_events_inherited"]) for e in mux]), flush=True)
    check(not [e for e in exp + mux if e["tid"] == early],
          "the vCPU present at attach multiplexed: %s" % (exp + mux))
    le = [e for e in exp if e["tid"] == late]
    check(le and le[0]["pmu_events"] == 8 and
          le[0]["pmu_events_inherited"] == 4 and le[0]["pmu_counters"] == 7,
          "late vCPU: multiplexed_expected %s" % le)
    lm = [e for e in mux if e["tid"] == late]
    check(lm and lm[0]["cause"] == "process_totals" and
          lm[0]["pmu_events_inherited"] == 4,
          "late vCPU: multiplexed %s" % lm)


@test
def all_qemu_guest_instructions_exact():
    """vcpuperf-cat --all-qemu records a VM started before it and one
    started after it (vpvmm copied under a qemu* name), each in an episode
    of its own: every vCPU's instructions:G, in its perf_task_exited, is
    the guest's exact count; each episode ends with the VM's
    perf_finished."""
    load()
    os.makedirs("/run/vp-qemus", exist_ok=True)
    binary = "/run/vp-qemus/qemu-vpvmm"
    subprocess.run(["cp", VMM, binary], check=True)
    d = os.path.join(OUT, "hostwide-kvm")
    subprocess.run(["rm", "-rf", d], check=True)
    vmms, rec = [], None
    try:
        vmms.append(Vmm("hw1", ["loop:3000000,user:1000000"],
                        binary=binary))
        rec = subprocess.Popen(
            [CAT, "--all-qemu", "--output-dir", d, "--events",
             "instructions:G", "--interval", "50ms", "--scan-interval",
             "100ms", "-q", "-o", os.path.join(OUT, "hostwide-kvm.jsonl")],
            stderr=subprocess.PIPE, text=True)
        vmms.append(Vmm("hw2", ["user:2000000,loop:1000000"],
                        binary=binary))
        for v in vmms:
            wait_episode_started(d, v)
        for v in vmms:
            v.go()
        reps = [v.wait() for v in vmms]
        time.sleep(0.3)
        rec.send_signal(signal.SIGINT)
        rc = rec.wait(timeout=60)
    finally:
        for v in vmms:
            v.kill()
        if rec and rec.poll() is None:
            rec.kill()
            rec.wait()
    check(rc == 0, "recorder exit %d: %s" % (rc, rec.stderr.read()))
    for v, rep in zip(vmms, reps):
        lines = episode_lines(d, v)
        fin = {e["tid"]: e["final"] for e in lines
               if e.get("event") == "perf_task_exited"}
        for vc in rep["vcpus"]:
            check(fin.get(vc["tid"], {}).get("instructions:G") ==
                  vc["guest_instructions"], "%s vCPU %d: %s, guest %d" %
                  (v.name, vc["vcpu"], fin.get(vc["tid"]),
                   vc["guest_instructions"]))
        check(lines[-1].get("event") == "perf_finished" and
              lines[-1].get("scope") == "vm", "%s ends with %s" %
              (v.name, lines[-1]))
        print("  %s: %s guest instructions per vCPU exact" %
              (v.name, [vc["guest_instructions"] for vc in rep["vcpus"]]),
              flush=True)


def episode_lines(d, vmm):
    """The lines of VMM @vmm's one episode in directory @d."""
    import glob
    paths = glob.glob(os.path.join(d, "%s-*.jsonl" % vmm.name))
    check(len(paths) == 1, "%s: episodes %s" % (vmm.name, paths))
    with open(paths[0]) as f:
        return [json.loads(x) for x in f if x.endswith("\n")]


def wait_episode_started(d, vmm, timeout=60):
    """Until VMM @vmm's episode has a perf_started for each vCPU."""
    import glob
    deadline = time.time() + timeout
    while time.time() < deadline:
        for p in glob.glob(os.path.join(d, "%s-*.jsonl" % vmm.name)):
            with open(p) as f:
                n = sum('"perf_started"' in x for x in f)
            if n >= len(vmm.tids):
                return
        time.sleep(0.05)
    raise TestFailure("%s: not recorded in %d s" % (vmm.name, timeout))


def wait_vcpu_threads(pid, n, timeout=120):
    """Wait until process @pid has @n threads named 'CPU <i>/KVM'."""
    deadline = time.time() + timeout
    while True:
        names = []
        try:
            for t in os.listdir("/proc/%d/task" % pid):
                with open("/proc/%d/task/%s/comm" % (pid, t)) as f:
                    names.append(f.read().strip())
        except OSError:
            pass
        if sum(re.fullmatch(r"CPU \d+/KVM", n) is not None
               for n in names) >= n:
            return
        check(time.time() < deadline, "no %d vCPU threads in %d" % (n, pid))
        time.sleep(0.05)


def stopped_kvm_stats(pid, hold_s):
    """Stop process @pid (SIGSTOP) until every thread of it is stopped,
    read KVM's counters of its VM, hold it stopped @hold_s more seconds
    and let it go on.  Returns (the counters, CLOCK_MONOTONIC ns when all
    were stopped, ns when it went on)."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.time() + 30
    while True:
        states = []
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass
        if states and all(st in "tT" for st in states):
            break
        check(time.time() < deadline, "pid %d not stopped: %s" %
              (pid, states))
        time.sleep(0.01)
    t_stop = time.monotonic_ns()
    got = kvm_stats(pid)
    time.sleep(hold_s)
    t_go = time.monotonic_ns()
    os.kill(pid, signal.SIGCONT)
    return got, t_stop, t_go


@test
def real_qemu_guest():
    """Debian's qemu-system-aarch64 -enable-kvm boots a Linux guest on the
    bed's KVM (2 vCPUs) whose init runs a user-mode workload of known
    length on vCPU 0; recorded by vcpuperf-cat --qemu --per-vm
    --emulator-threads and by the systemd unit's vcpuperf-record at once:
    vCPU rows with real instructions_guest and cycles_guest, the guest's
    user-mode instructions within 2% above the workload's, vCPU 1 without
    user code while vCPU 0 works and, in those rows, under 10% of vCPU 0's
    guest instructions, emulator threads apart, the per-VM total equal to
    the vCPUs' sum; between two stops of the VM, --kvm-exits' exits,
    hypercalls and halts equal KVM's own debugfs counters exactly, its
    MMIO between one and two per MMIO exit (a read is traced twice)."""
    check(GUEST_DIR, "VP_GUEST_DIR not set (arm64-check.sh builds the guest)")
    with open(os.path.join(GUEST_DIR, "guest.json")) as f:
        work = json.load(f)["user_instructions"]
    load()
    pidfile = os.path.join(OUT, "lab1.pid")
    console = os.path.join(OUT, "lab1-console.log")
    episodes = os.path.join(OUT, "episodes")
    for p in (pidfile, console):
        if os.path.exists(p):
            os.unlink(p)
    os.makedirs(episodes, exist_ok=True)
    for f in os.listdir(episodes):
        os.unlink(os.path.join(episodes, f))
    qemu = subprocess.Popen(
        ["qemu-system-aarch64", "-enable-kvm", "-M", "virt", "-cpu", "host",
         "-smp", "2", "-m", "256", "-nodefaults", "-display", "none",
         "-no-reboot", "-serial", "file:" + console,
         "-kernel", os.path.join(GUEST_DIR, "vmlinuz"),
         "-initrd", os.path.join(GUEST_DIR, "guest.cpio"),
         "-append", "console=ttyAMA0 panic=-1 rdinit=/init loglevel=4",
         "-name", "guest=lab1,debug-threads=on", "-uuid", UUID,
         "-pidfile", pidfile],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    rec = None
    try:
        wait_vcpu_threads(qemu.pid, 2)
        c = Cat("lab1", "--qemu", str(qemu.pid), "--per-vm",
                "--emulator-threads", "--interval", "100ms", "-q",
                "--events", "instructions:G,instructions:Gu,cycles:G",
                "--kvm-exits")
        rec = subprocess.Popen(
            ["bash", os.path.join(REPO, "contrib", "vcpuperf-record"),
             "lab1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, env=dict(os.environ, VCPUPERF_PIDFILE=pidfile,
                                VCPUPERF_OUTDIR=episodes,
                                VCPUPERF_CAT=os.environ.get("VP_CAT", ""),
                                VCPUPERF_ARGS="--interval 100ms --events "
                                              "instructions:G -q"))
        c.wait_started(2)
        # KVM's own counters while the VM is stopped, twice: the exits
        # of the rows between the two stops are theirs exactly.
        stops = [stopped_kvm_stats(qemu.pid, 0.35)]
        time.sleep(0.3)
        stops.append(stopped_kvm_stats(qemu.pid, 0.35))
        rc = qemu.wait(timeout=600)
        check(rc == 0, "QEMU exited %d: %s" % (rc, qemu.stdout.read()))
        rrc = rec.wait(timeout=60)
        check(rrc == 0, "vcpuperf-record exited %d: %s" %
              (rrc, rec.stdout.read()))
        rc = c.stop()
        check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    finally:
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()
        if rec and rec.poll() is None:
            rec.kill()
    with open(console) as f:
        log = f.read()
    check("guest: work done (0)" in log, "guest console:\n" + log[-2000:])
    rows = c.rows()
    vcpu = {}
    for r in rows:
        if r["role"] == "vcpu":
            vcpu.setdefault(r["vcpu"], []).append(r)
    check(sorted(vcpu) == [0, 1], "vCPU rows: %s" % sorted(vcpu))
    g = {i: total(vcpu[i], "instructions_guest") for i in vcpu}
    gu = {i: total(vcpu[i], "instructions_u_guest") for i in vcpu}
    cyc = {i: total(vcpu[i], "cycles_guest") for i in vcpu}
    check(all(r["vm"] == "lab1" and r["uuid"] == UUID for r in rows),
          "rows without the VM identity")
    # -icount shift=0: a guest cycle per guest instruction.
    check(cyc == g, "cycles:G %s, instructions:G %s" % (cyc, g))
    check(work <= gu[0] <= 1.02 * work,
          "vCPU 0 instructions:Gu %d, the workload %d user instructions" %
          (gu[0], work))
    check(sum(gu.values()) <= 1.02 * work,
          "guest user mode %d, the workload %d" % (sum(gu.values()), work))
    # While vCPU 0 works (rows where its user mode ran over half of the
    # interval), vCPU 1 runs no user code, and its guest kernel (an idle
    # Linux CPU: timers, RCU, the odd kworker) a small part of what vCPU 0
    # runs in those rows.  Per row it varies: 8,889 instructions in a quiet
    # row of its idle loop, 3.3-4.0 M in most busy rows of 3 runs, 11.8 M
    # once (a row as the workload started); vCPU 0 runs about 100 M per
    # row.  A halted vCPU of the test VMM counts 0 exactly.
    busy = {r["t_mono_ns"] // 100000000 for r in vcpu[0]
            if r["dt_ns"] and
            (r["instructions_u_guest"] or 0) > 0.5 * r["dt_ns"]}
    other = [r for r in vcpu[1] if r["t_mono_ns"] // 100000000 in busy]
    idle = [r["instructions_guest"] or 0 for r in other]
    mine = sum(r["instructions_guest"] or 0 for r in vcpu[0]
               if r["t_mono_ns"] // 100000000 in busy)
    check(len(busy) >= 2 and idle and sum(idle) < 0.1 * mine and
          all(r["instructions_u_guest"] == 0 for r in other),
          "vCPU 1 while vCPU 0 works (%d rows, vCPU 0 %d): %s, user mode %s"
          % (len(busy), mine, idle,
             [r["instructions_u_guest"] for r in other]))
    emu = [r for r in rows if r["role"] == "emulator"]
    check(emu and all(r["instructions_guest"] == 0 for r in emu),
          "emulator rows: %d, guest instructions %s" %
          (len(emu), sorted({r["instructions_guest"] for r in emu})))
    vm = total([r for r in rows if r["role"] == "vm"], "instructions_guest")
    check(vm == sum(g.values()), "per-VM instructions:G %d, vCPUs %d" %
          (vm, sum(g.values())))
    (d1, _, b1), (d2, a2, _) = stops
    win = [r for r in rows if r["role"] == "vcpu" and r["dt_ns"] and
           r["t_mono_ns"] > b1 and r["t_mono_ns"] - r["dt_ns"] < a2]
    kvm = {k: d2[k] - d1[k] for k in KVM_STATS}
    got = {k: sum(r[k] for r in win) for k in
           ("kvm_exits", "kvm_hypercalls", "kvm_halts", "kvm_mmio")}
    mmio = kvm["mmio_exit_user"] + kvm["mmio_exit_kernel"]
    check(got["kvm_exits"] == kvm["exits"] and
          got["kvm_hypercalls"] == kvm["hvc_exit_stat"] and
          got["kvm_halts"] == kvm["wfi_exit_stat"] and
          mmio <= got["kvm_mmio"] <= 2 * mmio and kvm["exits"] > 0,
          "between two stops of the VM: rows %s, KVM's debugfs %s" %
          (got, kvm))
    eps = os.listdir(episodes)
    check(len(eps) == 1, "episodes: %s" % eps)
    erows = [json.loads(x) for x in open(os.path.join(episodes, eps[0]))]
    e0 = sum(r["instructions_guest"] for r in erows
             if r.get("role") == "vcpu" and r.get("vcpu") == 0)
    check(work <= e0 <= g[0], "vcpuperf-record: vCPU 0 instructions:G %d "
          "(the workload %d, vcpuperf-cat %d)" % (e0, work, g[0]))
    print("  guest: vCPU 0 instructions:G %d (user %d, the workload %d, "
          "+%.3f%%), vCPU 1 %d (user %d), %d while vCPU 0 ran %d "
          "(%.2f%%, max %d per row); cycles:G = instructions:G; VM %d; "
          "%d emulator rows at 0; vcpuperf-record's episode vCPU 0 %d" %
          (g[0], gu[0], work, 100.0 * (gu[0] - work) / work, g[1], gu[1],
           sum(idle), mine, 100.0 * sum(idle) / mine, max(idle), vm,
           len(emu), e0), flush=True)
    print("  between two stops: rows %s; KVM's debugfs %s" % (got, kvm),
          flush=True)
    unload()


def unchanged_reads():
    """Reads that kept a thread's values (it had not run since), every
    collection together, from the status file."""
    return sum(int(m.group(1)) for m in re.finditer(
        r"^read unchanged: (\d+) ", read_file("status"), re.M))


def status_reads():
    """{'self': N, 'kicks': N, 'direct': N} of every collection together,
    from the status file."""
    out = {"self": 0, "kicks": 0, "direct": 0}
    for m in re.finditer(r"read: \S+(?: \([^)]*\))?; (\d+) direct \(not on "
                         r"a CPU\), (\d+) by the thread itself \((\d+) "
                         r"kicks", read_file("status")):
        out["direct"] += int(m.group(1))
        out["self"] += int(m.group(2))
        out["kicks"] += int(m.group(3))
    return out


def perf_stat_start(tid, events, path):
    """perf stat (Debian's, from the bed's root) counting @events on
    thread @tid until SIGINT, its counters enabled when this returns: an
    oracle that shares nothing with vcpuperf but the kernel's perf core."""
    return perf_stat_enabled(["perf", "stat", "-x", ",", "-e", events,
                              "-t", str(tid), "-o", path])


def perf_stat_read(proc, path):
    """Stop perf stat; {event: count} from its CSV output."""
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.strip().split(",")
            if len(fields) > 2 and fields[0].isdigit():
                out[fields[2]] = int(fields[0])
    return out


def pin_sampler(cat_pid, cpus):
    """Pin the sampling kthread ('vcpuperf/N') of the collection owned by
    @cat_pid to @cpus; returns its pid."""
    m = re.search(r"collection (\d+): /dev/vcpuperf, owner pid %d " % cat_pid,
                  read_file("status"))
    check(m, "no collection of pid %d in status" % cat_pid)
    want = "vcpuperf/%s" % m.group(1)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm == want:
            os.sched_setaffinity(int(pid), cpus)
            return int(pid)
    raise TestFailure("no kernel thread %s" % want)


@test
def vcpus_read_themselves():
    """On two CPUs (the vCPU on the other one than the sampler), in kick
    and lazy modes the vCPU thread reads its own counters in KVM's run
    loop between two guest entries (the VMM saw no exit during the phase,
    status counts the self-reads), and its rows add up exactly to the
    final count at its exit and to perf stat's count of the same
    thread."""
    if (os.cpu_count() or 1) < 2:
        raise TestFailure("needs the two-CPU boot of arm64-check.sh")
    load()
    os.sched_setaffinity(0, {0})
    for mode in ("kick", "lazy"):
        vmm = Vmm("self-" + mode, ["loop:500000000"], vcpus=1)
        tid = vmm.tids[0]
        os.sched_setaffinity(tid, {1})
        stat_path = os.path.join(OUT, "self-%s.perf-stat.csv" % mode)
        ps = perf_stat_start(tid, "instructions:G", stat_path)
        c = Cat("self-" + mode, "--qemu", str(vmm.pid), "--events",
                "instructions:G,instructions,cycles:G", "--interval",
                "20ms", "--read", mode, "-q")
        c.wait_started(1)
        # The vCPU on CPU 1, the sampler elsewhere: a pass finds it on a
        # CPU (on the same CPU it would only find it preempted).
        pin_sampler(c.proc.pid, {0})
        before = status_reads()
        vmm.go()
        vmm.wait_done()
        during = status_reads()
        rep = vmm.wait()
        time.sleep(0.2)
        rc = c.stop()
        check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
        perf = perf_stat_read(ps, stat_path)
        v = rep["vcpus"][0]
        ph = v["phases"][0]
        secs = (ph["end_ns"] - ph["start_ns"]) / 1e9
        check(ph["intr_exits"] == 0 and v["mmio_exits"] == 2,
              "the vCPU left KVM_RUN during its loop: %s" % v)
        selfreads = during["self"] - before["self"]
        check(selfreads >= 0.25 * secs / 0.02,
              "%s: %d self-reads in %.2f s of guest execution at 20 ms" %
              (mode, selfreads, secs))
        check((during["kicks"] > before["kicks"]) == (mode == "kick"),
              "%s: kicks %d -> %d" % (mode, before["kicks"],
                                      during["kicks"]))
        rows = vcpu_rows(c.rows(), tid)
        got = total(rows, "instructions_guest")
        fin = finals(c)[tid]["instructions:G"]
        check(got == fin, "%s: rows sum to %d, the final count is %d" %
              (mode, got, fin))
        check(perf.get("instructions:G") == fin,
              "%s: perf stat counted %s, vcpuperf %d" %
              (mode, perf.get("instructions:G"), fin))
        # QEMU's -icount counter is one instruction stream for both
        # emulated CPUs: the other CPU's instructions while this one's
        # counter runs are counted too (vcpuperf and perf stat alike).
        check(got >= v["guest_instructions"],
              "%s: instructions:G %d below the guest's %d" %
              (mode, got, v["guest_instructions"]))
        print("  %s: %d self-reads (%d kicks) in %.2f s of guest execution; "
              "rows %d = final %d = perf stat %d; guest %d (+%d: QEMU's "
              "shared instruction counter)" %
              (mode, selfreads, during["kicks"] - before["kicks"], secs, got,
               fin, perf["instructions:G"], v["guest_instructions"],
               got - v["guest_instructions"]), flush=True)
    unload()


# The kernel's ticks come at multiples of TICK_NSEC of CLOCK_MONOTONIC
# (CONFIG_HZ=250 on Debian's arm64 kernel).
TICK_MS = 4
KVM_DEBUGFS = "/sys/kernel/debug/kvm"


# KVM's per-VM statistics in debugfs that --kvm-exits has a figure for.
KVM_STATS = ("exits", "hvc_exit_stat", "wfi_exit_stat", "mmio_exit_user",
             "mmio_exit_kernel")


def kvm_stats(pid):
    """KVM's own counters of the VM of process @pid (debugfs, summed over
    its vCPUs), by the names of KVM_STATS."""
    got = {}
    for d in os.listdir(KVM_DEBUGFS):
        if d.split("-")[0] != str(pid):
            continue
        for k in KVM_STATS:
            with open(os.path.join(KVM_DEBUGFS, d, k)) as f:
                got[k] = got.get(k, 0) + int(f.read().split()[0])
    check(got, "no KVM debugfs directory for pid %d" % pid)
    return got


def held_vmm_run(name, phases, cat_args):
    """One vCPU runs @phases and is held at their end, recorded by
    vcpuperf-cat @cat_args (none: no collection) from two of its
    intervals before the vCPU's first entry to after its last.  Nothing of
    the test wakes while the vCPU runs: the end comes down a pipe, the
    VMM's and the tool's files are on tmpfs (a write to the 9p share would
    be a virtio interrupt).  Returns (KVM's counters of the VM over the
    run, the collection or None, the VMM's report); the collection's
    .unchanged is its reads over the run that kept a thread's values
    (unchanged_reads())."""
    tmp = os.path.join("/tmp", name)
    os.makedirs(tmp, exist_ok=True)
    vmm = Vmm(name, phases, vcpus=1, hold=True, outdir=tmp, done_pipe=True)
    c = None
    try:
        if cat_args:
            c = Cat(name, "--qemu", str(vmm.pid), "-q", *cat_args,
                    outdir=tmp)
            c.wait_started(1)
            # Two intervals of the collection's own pace before the run.
            time.sleep(0.25)
        before = kvm_stats(vmm.pid)
        kept = unchanged_reads() if c else 0
        vmm.go()
        vmm.wait_done()
        after = kvm_stats(vmm.pid)
        if c:
            c.unchanged = unchanged_reads() - kept
            rc = c.stop()
            check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
        rep = vmm.end()
    finally:
        if c and c.proc.poll() is None:
            c.stop()
        vmm.kill()
    return {k: after[k] - before[k] for k in KVM_STATS}, c, rep


def loop_exits(name, iters, cat_args):
    """One vCPU runs a guest loop of @iters (2N + 6 instructions) on this
    one CPU (held_vmm_run()).  Returns (KVM's exits of the VM during the
    loop, the vCPU's rows, the loop's guest nanoseconds)."""
    kvm, c, rep = held_vmm_run(name, ["loop:%d" % iters], cat_args)
    v = rep["vcpus"][0]
    ph = v["phases"][0]
    rows = vcpu_rows(c.rows(), v["tid"]) if c else []
    return kvm["exits"], rows, ph["end_ns"] - ph["start_ns"]


@test
def kvm_exits_exact():
    """--kvm-exits on a vCPU whose guest makes known numbers of
    hypercalls, WFIs and MMIO stores, recorded from before its first
    entry to after its last: per interval, the rows' kvm_hypercalls,
    kvm_halts and kvm_mmio sum to the guest program's numbers and to
    KVM's own debugfs counters (hvc_exit_stat, wfi_exit_stat,
    mmio_exit_user), kvm_exits to KVM's exits, kvm_userspace_exits to the
    VMM's returns from KVM_RUN; instructions:G beside them is the guest's
    count; halted and looping rows have no hypercall.  KVM's tracepoints
    count only in the vCPU's own thread, so the halted vCPU is not read
    (its values kept) and the rows are exact all the same."""
    load()
    hvcs = (3000, 1000)
    phases = "hvc:%d,halt:60,loop:2000000,halt:60,hvc:%d,halt:60" % hvcs
    kvm, c, rep = held_vmm_run("kvmexits", [phases],
                               ["--events", "instructions:G", "--kvm-exits",
                                "--interval", "20ms"])
    v = rep["vcpus"][0]
    rows = vcpu_rows(c.rows(), v["tid"])
    got = {k: total(rows, k) for k in
           ("kvm_exits", "kvm_userspace_exits", "kvm_mmio", "kvm_halts",
            "kvm_hypercalls", "instructions_guest")}
    nphases = len(v["phases"])
    truth = {"kvm_hypercalls": sum(hvcs), "kvm_halts": 3,
             "kvm_mmio": nphases + 1,
             "kvm_userspace_exits": v["run_returns"],
             "kvm_exits": kvm["exits"],
             "instructions_guest": v["guest_instructions"]}
    check(got == truth, "rows %s, truth %s (KVM's debugfs: %s)" %
          (got, truth, kvm))
    check(kvm["hvc_exit_stat"] == sum(hvcs) and kvm["wfi_exit_stat"] == 3
          and kvm["mmio_exit_user"] == nphases + 1 and
          v["mmio_exits"] == nphases + 1 and kvm["mmio_exit_kernel"] == 0,
          "KVM's debugfs %s, the VMM's MMIO exits %d, %d phases" %
          (kvm, v["mmio_exits"], nphases))
    # No hypercall in a row wholly inside a halt or the loop.
    for ph in v["phases"]:
        if ph["kind"] in ("halt", "loop"):
            inside = rows_within(rows, ph["start_ns"], ph["end_ns"], 5 * MS)
            check(all(r["kvm_hypercalls"] == 0 for r in inside),
                  "hypercalls in a %s phase: %s" %
                  (ph["kind"], [r["kvm_hypercalls"] for r in inside]))
    check(not c.events("perf_unavailable"), "unavailable: %s" %
          c.events("perf_unavailable"))
    # Three halts of 60 ms at 20 ms: two or three grid points in each,
    # the first read direct, the next ones kept.
    check(c.unchanged >= 3, "%d reads kept the halted vCPU's values" %
          c.unchanged)
    print("  rows: %s; KVM's debugfs: %s; the VMM: %d MMIO exits, %d "
          "returns from KVM_RUN; %d reads kept the halted vCPU's values" %
          (got, kvm, v["mmio_exits"], v["run_returns"], c.unchanged),
          flush=True)
    unload()


@test
def sampler_wakes_on_the_tick():
    """On one CPU, a collection in kick or direct mode whose interval is
    a whole number of scheduler ticks adds no VM exit to a vCPU running
    guest code: its grid starts on a tick, so its sampler's timer expires
    in the tick's own interrupt, which exits the guest anyway (a grid off
    the ticks costs one exit per grid point); nor does one in lazy mode
    at any interval.  The truth is KVM's exit counter, against the same
    loop without a collection; the collection must have read the vCPU on
    its grid meanwhile."""
    load()
    iters = 250000000           # 500 ms of guest code
    base, _, loop_ns = loop_exits("tick-none", iters, [])
    # Lazy mode at 10 ms: every other grid point lies between two ticks,
    # and its sampler waits for the next tick there (timer slack).
    for mode, ms in (("kick", 5 * TICK_MS), ("direct", 25 * TICK_MS),
                     ("lazy", 10)):
        exits, rows, ns = loop_exits(
            "tick-" + mode, iters,
            ["--events", "instructions:G,cycles", "--interval",
             "%dms" % ms, "--read", mode])
        points = ns / (ms * MS)
        # The loop's rows: on the grid, the guest's instructions counted.
        inside = [r for r in rows if r["instructions_guest"]]
        check(len(inside) >= points - 1,
              "%s: %d rows with guest instructions in %.1f grid points" %
              (mode, len(inside), points))
        extra = exits - base
        check(extra <= max(2, points / 10),
              "%s at %d ms: %d VM exits in the loop, %d without a "
              "collection: %+d in %.1f grid points" %
              (mode, ms, exits, base, extra, points))
        print("  %s at %d ms: %d VM exits in %.0f ms of guest code, %d "
              "without a collection (%+d in %.1f grid points); %d rows" %
              (mode, ms, exits, ns / MS, base, extra, points, len(inside)),
              flush=True)
    unload()


def status_passes():
    """(passes, missed grid points) of every collection together, from
    the status file."""
    txt = read_file("status")
    got = re.findall(r"^passes: (\d+), missed grid points: (\d+)$", txt,
                     re.M)
    return (sum(int(p) for p, _ in got), sum(int(m) for _, m in got))


@test
def status_reads_keep_the_grid():
    """A reader of the status file does not hold up the sampler: with a
    collection of 256 threads x 8 events (over 2,300 lines of status) at
    5 ms, reading the status back to back for a second, on this one CPU, leaves
    the sampler on its grid (the threads are copied under the
    collection's lock and formatted after it, a thread at a time).  The
    truth is the clock: the passes made against the grid points the
    second held; and the status's own count of grid points skipped."""
    load()
    n, ms = 256, 5
    tmp = "/tmp/status-grid"
    os.makedirs(tmp, exist_ok=True)
    vmm = Vmm("status-grid", ["loop:1000"], vcpus=n, hold=True, outdir=tmp)
    c = None
    try:
        c = Cat("status-grid", "--qemu", str(vmm.pid), "-q", "--events",
                "instructions,cycles,instructions:G,cycles:G,"
                "instructions:u,instructions:k,cycles:H,context-switches",
                "--interval", "%dms" % ms, "--read", "kick", outdir=tmp)
        c.wait_started(n)
        time.sleep(0.1)
        # Each count is taken somewhere inside its read: the passes
        # between them cover at least from the end of the first read to
        # the start of the last.
        p0, m0 = status_passes()
        t0 = time.monotonic_ns()
        reads, lines = 0, 0
        while time.monotonic_ns() - t0 < 1000 * MS:
            lines = len(read_file("status").splitlines())
            reads += 1
        t1 = time.monotonic_ns()
        p1, m1 = status_passes()
    finally:
        if c and c.proc.poll() is None:
            rc = c.stop()
            check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
        vmm.kill()
    points = (t1 - t0) / (ms * MS)
    passes, missed = p1 - p0, m1 - m0
    print("  %d status reads of %d lines in %.0f ms: %d passes, %d grid "
          "points skipped, %.1f grid points" %
          (reads, lines, (t1 - t0) / MS, passes, missed, points),
          flush=True)
    check(lines > n * 9, "status has %d lines, want more than %d" %
          (lines, n * 9))
    check(reads >= 5, "only %d status reads in a second" % reads)
    check(missed == 0 and passes >= points - 2,
          "%d passes and %d grid points skipped in %.1f grid points" %
          (passes, missed, points))
    unload()


if __name__ == "__main__":
    sys.exit(main())
