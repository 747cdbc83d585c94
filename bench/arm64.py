#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""vcpuperf benchmark on the arm64 bed, guest side: run as root in the bed
(scripts/bench-arm64.sh boots it, one emulated CPU, -icount shift=0) from
the repository root.

    arm64.py [--smoke] [--passes N] --out DIR

Under -icount shift=0 one instruction is one nanosecond of virtual time,
and the bed has one CPU: a task's CPU time (schedstat) is the number of
instructions it executed, so every cost below is an instruction count and
repeats from run to run.

For every configuration (vCPU threads x events x interval), pass and
collector, one run: the test VMM (tests/vmm/vpvmm) starts its vCPU threads
'CPU <n>/KVM', enters each once, and holds them before the guest; the
collector starts at the pass's phase of the scheduler tick (pass p of P
at p/P of it), attaches and produces; then the vCPUs run a fixed amount
of guest code (a loop of known length each, the same in every run) and
stop; the run's window is from "go" (at half a tick) to the last vCPU's
end.  The one CPU stands for as many as there are vCPUs: the VMM is in a
cgroup with cpu.idle (as a lab host's VMs are in one, libvirt's
machine.slice), so a collector gets the CPU when it wakes, as a lab
host's recorder would, instead of its fair share beside 256 busy threads;
and CFS's granularity is above any vCPU's work, so vCPU threads do not
preempt one another at the tick: every switch between them is a vCPU's
end or a collector's wake-up; a new task starts without CFS's debit (a
collector started behind the VM missed intervals in some passes and not
in others); and the kernel's periodic housekeeping is off (quiet_bed()),
whose wake-ups would add vCPU switches at a phase of their own.
Measured over the window:

  module  the sampler kthread (vcpuperf/N, vpfloor) and the self-reads
          in the target threads (vcpuperf's status file)
  target  the vCPU threads' CPU time above the same work's without any
          collector (perf's context switches, reads, exits), less the
          self-reads counted as module
  tool    the collector process's CPU time (vcpuperf-cat, perf stat,
          ureader; perf's and ureader's system calls are theirs)
  exits   KVM's exit counters of the VM (debugfs, every vCPU's sum) above
          the same guest work's without a collector, per vCPU per tick,
          with the reasons KVM counts (the rest is interrupts)
  irqs    the CPU's interrupts (/proc/interrupts) that are not a
          scheduler tick: all of them less the ticks' times (multiples of
          TICK_NS) the window holds; a guest is exited by an interrupt,
          and one that is not the tick is the collector's own (its
          timer, unless the tick's interrupt expired it); the run without
          a collector has none

Collectors: vcpuperf-cat --qemu in each read mode (direct, kick, lazy),
perf stat -I per thread, plain and grouped, bench/ureader (one read per
counter, one PERF_FORMAT_GROUP read per thread, the latter also writing
vcpuperf-cat's JSONL rows), and the in-kernel floor (bench/floor).
Writes DIR/arm64.json; exits 1 only on breakage, never on a figure."""

import json
import math
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench as xb  # noqa: E402  (status file parser, schedstat, kthreads)

CAT = os.environ["VP_CAT"]
VPKO = os.environ["VP_MODULE"]
VMM = os.environ["VP_VMM"]
UREADER = os.environ["VP_UREADER"]
FLOORKO = os.environ["VP_FLOOR"]
KVM_DEBUGFS = "/sys/kernel/debug/kvm"
TICK_NS = 4000000           # CONFIG_HZ=250 (Debian's arm64 kernel)
GO_PHASE_NS = TICK_NS // 2
# From a tick's time to its interrupt counted, at most (the bed's handler
# entry takes a few microseconds).
IRQ_LATENCY_NS = 50000
SCHED_KNOBS = {"latency_ns": 4000000000, "min_granularity_ns": 4000000000}
QUIET_KNOBS = {"/proc/sys/vm/stat_interval": 3600,
               "/proc/sys/vm/compaction_proactiveness": 0,
               "/proc/sys/kernel/watchdog": 0,
               "/sys/kernel/mm/transparent_hugepage/khugepaged/"
               "scan_sleep_millisecs": 3600000,
               "/proc/sys/net/ipv4/neigh/default/interval_probe_time_ms":
               3600000,
               "/proc/sys/net/ipv6/neigh/default/interval_probe_time_ms":
               3600000}
# Longer than the longest period above (the neighbour tables' 5 s).
QUIET_SETTLE_S = 6
# A vcpuperf-cat row's time and how late it was read after its grid point.
GRID_RE = re.compile(r'"t_mono_ns":(\d+).*"late_ns":(\d+)')
# perf stat -j's interval key ({"interval" : 1.001169437, ...}).
PERF_INTERVAL_RE = re.compile(rb'"interval"\s*:\s*([0-9.]+)')
# Before the window, at least (run()).
SETTLE_S = 0.3
# A collector that needs more CPU than the bed has (64 perf stat -I at
# 10 ms, about 1.3 G instructions a second on a CPU of 1 G) leaves the
# VMs in their idle cgroup next to nothing: their work would take hours.
# Their window is bounded at KEEP_UP_FACTOR times the guest work's own
# time and KEEP_UP_SLACK_S more; the slowest collector that kept up took
# 3.3 times it (perf stat at 256x8x10ms, 1.3 s for 0.4 s).
KEEP_UP_FACTOR = 4
KEEP_UP_SLACK_S = 10
# The harness is asleep this long before the VMM lets the vCPUs go (run()):
# it wakes a quarter tick after the grid point, when the samplers that
# wake at the point (the floor's, vcpuperf's) are done.
GO_LEAD_NS = TICK_NS // 4
# /proc/<pid>/stat fields after the command: minflt (10th) and majflt (12th).
STAT_MINFLT, STAT_MAJFLT = 7, 9
# /proc/sys/vm/drop_caches: reclaimable slab objects (every shrinker);
# and, written once, no more notices of it in the kernel log.
DROP_SLAB = 2
DROP_QUIET = 4
READ_CHUNK = 65536
CGROOT = "/sys/fs/cgroup"
VMCG = CGROOT + "/bench-vm"
UUID = "5a1e0000-0000-4000-8000-00000000be0c"

# (name, perf type, config, modifiers).  The PMU has 7 counters (6 + the
# cycle counter) and implements cycles and instructions: the 8-event set
# fills it with 7 distinct hardware events, the 4-event set has 3.
HW = [("instructions", 0, 1, ""), ("cycles", 0, 0, ""),
      ("instructions:G", 0, 1, "G"), ("cycles:G", 0, 0, "G"),
      ("instructions:u", 0, 1, "u"), ("instructions:k", 0, 1, "k"),
      ("cycles:H", 0, 0, "H")]
SW = [("context-switches", 1, 3, "")]
EVENTS = {4: HW[:3] + SW, 8: HW + SW}

# Guest instructions per run (millions), by vCPU threads and interval:
# 400 M at 10 ms and 1,500 M at 100 ms (40 and 15 intervals) at 256
# vCPUs, more where a pass holds fewer samples.  What moves a run's
# figures from pass to pass and boot to boot is a few tens of thousands
# of instructions, whatever the run's length (a vCPU switch more or
# fewer, about 10 k; perf stat's phase against the tick): at 8 vCPUs x
# 4 events x 100 ms with 1,500 M a pass held 480 samples and one switch
# moved the target share by 20 per sample (6%), and 10 of the 432 share
# figures of two boots disagreed by 2.0-6.1%; with five times the work
# at 8 vCPUs and twice at 64, 2 of 432 by 2.6-2.7% (ureader-group's
# target at 8x4x100ms, about 14 k instructions of 640 k in a pass).  So
# each pass's smallest target share (a grouped reader's) comes to a
# million instructions or more.
WORK_M = {(8, 10): 2000, (8, 100): 15000, (64, 10): 800, (64, 100): 6000,
          (256, 10): 400, (256, 100): 1500}
# (vCPU threads, events, interval ms, guest instructions per run)
FULL = [(n, e, ms, WORK_M[n, ms] * 1000000)
        for n in (8, 64, 256) for e in (4, 8) for ms in (10, 100)]
SMOKE = [(8, 4, 100, 400000000), (64, 8, 10, 200000000)]
VP_MODES = ["direct", "kick", "lazy"]
COLLECTORS = ["none"] + ["vcpuperf-" + m for m in VP_MODES] + [
    "perf", "perf-group", "ureader", "ureader-group", "ureader-group-jsonl",
    "floor"]

# Collectors whose tool share is its CPU time over the rows it wrote in
# the window (and vcpuperf-cat of one VM): a reader that writes several
# passes a wake (vcpuperf-cat: every 500 ms) has a few wakes in a short
# window (4 in 2 s at 10 ms), each up to a period after the passes it
# reads: its CPU time over the window's passes would be off by up to a
# wake's work (a quarter), over the rows that time wrote it is not.  The
# same for a reader that writes each interval's rows at once.
# vcpuperf-cat --all-qemu writes its episode files once a second, so its
# rows are the records it read from its collection instead (the status
# file's produced less queued: a row each, nothing else in a steady
# window), which it decodes into rows as it reads them.
ROWS_COUNTED = ("ureader-group-jsonl",)

# Collectors run only when VP_BENCH_COLLECTORS names them: vcpuperf-cat
# without the scheduler's figures (--no-sched), with KVM's exits
# (--kvm-exits) and with who took the CPU (--who), beside the default, for
# what each costs (issue 37).
NOSCHED = "-nosched"
KVM = "-kvm"
WHO = "-who"
OPT_IN = ["vcpuperf-%s%s" % (m, v) for v in (NOSCHED, KVM, WHO)
          for m in VP_MODES]

problems = []


def log(*a):
    print("bench-arm64:", *a, flush=True)


def key(name):
    """vcpuperf-cat's row key of an event name (instructions:G ->
    instructions_guest)."""
    base, _, mods = name.partition(":")
    k = base.replace("-", "_")
    plain = "".join(m for m in mods if m not in "GH")
    if plain:
        k += "_" + plain
    if "G" in mods:
        k += "_guest"
    if "H" in mods:
        k += "_host"
    return k


def vm_sched():
    """The VMs' cgroup, cpu.idle (as a lab host's VMs have one, libvirt's
    machine.slice): on the one CPU a collector gets the CPU when it
    wakes.  SCHED_IDLE threads alone do not give it: CFS picks by
    vruntime, and vCPU threads that have not run yet since go sit left of
    a collector woken a moment later, for as long as 300 ms at 256."""
    if not os.path.exists(CGROOT + "/cgroup.controllers"):
        xb.sh("mount -t cgroup2 none %s" % CGROOT)
    with open(CGROOT + "/cgroup.subtree_control", "w") as f:
        f.write("+cpu")
    os.makedirs(VMCG, exist_ok=True)
    with open(VMCG + "/cpu.idle", "w") as f:
        f.write("1")
    # The one CPU stands for one per vCPU: vCPU threads do not preempt
    # one another at the tick (CFS's granularity above any run's work),
    # so every switch between them is a vCPU's end or a wake-up.
    for knob, v in SCHED_KNOBS.items():
        with open("/sys/kernel/debug/sched/" + knob, "w") as f:
            f.write(str(v))
    # A collector is a new task (and vcpuperf's sampler a new kthread),
    # which CFS places a slice right of the queue (START_DEBIT): with the
    # granularity above, seconds of vruntime, which the VM's group (at
    # the idle weight, and never preempted at the tick) ran off only
    # after go, for up to a vCPU's run (56 ms at 8 vCPUs): in some passes
    # every collector missed those intervals (10% of them at 8 x 10 ms),
    # and perf stat's cost per sample moved by 13%.
    with open("/sys/kernel/debug/sched/features", "w") as f:
        f.write("NO_START_DEBIT")


def quiet_bed():
    """Stop the kernel's periodic housekeeping that is not the benchmark's.
    Each wakes a kworker or kthread at its own phase of the boot, which
    preempts the vCPU running then: one more vCPU switch (8-10 k
    instructions, 20 per sample in the target share at 8 vCPUs x 4 events
    x 100 ms) in some passes and not in others, and not at the same pass
    in two boots.  Off: vmstat's per-CPU update (every second), proactive
    compaction's check (every 500 ms), the soft lockup watchdog (every
    4 s), khugepaged's scan (every 10 s), the neighbour tables' probe of
    managed entries (every 5 s, IPv4's and IPv6's, the latter where IPv6
    is there); PSI's averaging (every 2 s) and the memory controller's
    statistics flush (every 2 s) are off on the kernel command line
    (psi=0 cgroup_disable=memory, scripts/bench-arm64.sh).  What the
    harness itself queues (RCU callbacks of the files it closes) is kept
    out of the window by run()."""
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write(str(DROP_QUIET))
    for path, v in QUIET_KNOBS.items():
        if path.startswith("/proc/sys/net/ipv6/") and \
                not os.path.exists(path):
            continue
        with open(path, "w") as f:
            f.write(str(v))
    # The works already queued run out on their old period.
    time.sleep(QUIET_SETTLE_S)


def at_phase(base_ns, period_ns, phase_ns, lead_ns=0):
    """Sleep until @lead_ns before @phase_ns past a point @base_ns + k *
    @period_ns (CLOCK_MONOTONIC), the first at least a quarter tick and
    @lead_ns from now; that time (the lead's end)."""
    first = time.monotonic_ns() + TICK_NS // 4 + lead_ns - base_ns - \
        phase_ns
    due = base_ns + phase_ns + -(-first // period_ns) * period_ns
    time.sleep((due - lead_ns - time.monotonic_ns()) / 1e9)
    return due


def at_tick_phase(phase_ns, lead_ns=0):
    """Sleep until CLOCK_MONOTONIC is @lead_ns before @phase_ns past a
    scheduler tick's time (they come at multiples of TICK_NS); that
    time."""
    return at_phase(0, TICK_NS, phase_ns, lead_ns)


def at_grid_phase(base_ns, ims, lead_ns=0):
    """Sleep until @lead_ns before GO_PHASE_NS past a point of the
    sampling grid based at
    @base_ns (on a tick) with @ims ms between points that is a tick too:
    the window then starts where the collector's grid is in every pass
    and boot.  (A grid starts on the first tick after the collector's
    start, which in two boots takes different time: the grid fell
    anywhere among the 25 ticks of a 100 ms interval against the work,
    and the vCPU switches its wake-ups cost moved the target share by up
    to 5% between boots.)"""
    return at_phase(base_ns, math.lcm(ims * 1000000, TICK_NS), GO_PHASE_NS,
                    lead_ns)


def kvm_stats(pid):
    """KVM's counters of the VM of process @pid, every vCPU's sum.  (Its
    debugfs files cannot be read again once open: simple_attr_open()
    makes them non-seekable.)"""
    out = {}
    for d in os.listdir(KVM_DEBUGFS):
        if d.split("-")[0] != str(pid):
            continue
        path = os.path.join(KVM_DEBUGFS, d)
        for f in os.listdir(path):
            p = os.path.join(path, f)
            if not os.path.isfile(p):
                continue
            try:
                with open(p) as fh:
                    out[f] = int(fh.read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
    return out


def per_cpu_counts(text):
    """{row: count on the one CPU} of /proc/interrupts or /proc/softirqs."""
    out = {}
    for line in text.splitlines()[1:]:
        parts = line.split()
        if len(parts) > 1 and parts[1].isdigit():
            out[parts[0].rstrip(":")] = int(parts[1])
    return out


def irq_total(f):
    """(every interrupt the CPU took, as /proc/interrupts (@f) counts
    them, CLOCK_MONOTONIC before and after reading it)."""
    t0 = time.monotonic_ns()
    n = sum(per_cpu_counts(f.read()).values())
    return n, t0, time.monotonic_ns()


def sched_ticks(a, b):
    """The scheduler ticks' times (multiples of TICK_NS) in (@a, @b]."""
    return b // TICK_NS - a // TICK_NS


def own_irqs(i1, i2):
    """[least, most] interrupts that were not a tick between two
    irq_total() readings: a tick whose time falls while a reading is
    taken (or less than IRQ_LATENCY_NS before) may be in it or not."""
    n = i2[0] - i1[0]
    return [n - sched_ticks(i1[1] - IRQ_LATENCY_NS, i2[2]),
            n - sched_ticks(i1[2], i2[1] - IRQ_LATENCY_NS)]


# Files kept open for the whole benchmark (pin_maps()).
PINNED = {}


def pin_maps(pid):
    """Keep every file process @pid maps open: a file in use keeps its
    inode, its pages and its path cached through the slab drain of each
    run (run()), so that the next start of the same program does not
    read the 9p root again, which takes the host's time, not a fixed
    number of instructions: perf stat's grid, which is its start's,
    would fall elsewhere against the tick in each boot."""
    try:
        with open("/proc/%d/maps" % pid) as f:
            fields = [ln.split(None, 5) for ln in f]
    except OSError:
        return
    paths = {x[5].strip() for x in fields if len(x) == 6}
    for path in paths:
        if path.startswith("/") and path not in PINNED and \
                not path.startswith("/dev/") and \
                not path.endswith(" (deleted)"):
            try:
                PINNED[path] = os.open(path, os.O_RDONLY)
            except OSError:
                pass


class RowCounter:
    """The rows a collector has written to its JSONL file so far: each
    count() reads only what came since the last (the file stays open)."""

    def __init__(self, path):
        self.path = path
        self.fd = None
        self.rows = 0

    def count(self):
        if self.fd is None:
            try:
                self.fd = os.open(self.path, os.O_RDONLY)
            except FileNotFoundError:
                return self.rows  # nothing written yet
        while True:
            b = os.read(self.fd, READ_CHUNK)
            if not b:
                return self.rows
            self.rows += b.count(b"\n")

    def close(self):
        if self.fd is not None:
            os.close(self.fd)


class Reread:
    """A file kept open and read again from its start.  Closing a file
    frees it after an RCU grace period (file_free_rcu): every file the
    harness opened and closed at the window's start (hundreds: a
    schedstat per vCPU thread, KVM's counters) had the RCU kthread woken
    inside the window, some ticks later, and each such wake-up preempted
    a vCPU (a switch, 8-10 k instructions) in some passes and not in
    others."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDONLY)

    def read(self):
        # seq_file and simple_attr files make their text anew at offset 0.
        parts, off = [], 0
        while True:
            b = os.pread(self.fd, READ_CHUNK, off)
            if not b:
                return b"".join(parts).decode()
            parts.append(b)
            off += len(b)

    def close(self):
        os.close(self.fd)


class Threads:
    """The schedstat of every thread of a process, its files kept open
    (Reread): cpu_ns() is their CPU time, None once the process is gone.
    A thread started since the last cpu_ns() is listed through the task
    directory's file, which stays open too."""

    def __init__(self, pid):
        self.pid = pid
        self.dirfd = os.open("/proc/%d/task" % pid, os.O_RDONLY)
        self.files = {}

    def cpu_ns(self):
        try:
            # A duplicate of dirfd is closed (not the last reference to
            # the file: nothing to free).
            tids = os.listdir(self.dirfd)
        except OSError:
            return None
        ns = 0
        for t in tids:
            try:
                if t not in self.files:
                    self.files[t] = Reread("/proc/%d/task/%s/schedstat" %
                                           (self.pid, t))
                ns += int(self.files[t].read().split()[0])
            except (OSError, ValueError, IndexError):
                pass
        return ns

    def close(self):
        for f in self.files.values():
            f.close()
        os.close(self.dirfd)


class Vmm:
    """vpvmm with @n vCPUs, each to run a loop of @iters (2N + 6 guest
    instructions), held until the time go() gives; run as @binary (a
    copy under a qemu* name, for vcpuperf-cat --all-qemu), its files in
    @workdir."""

    def __init__(self, n, iters, tag, binary=VMM, workdir="/tmp/bench-vmm"):
        self.tag = tag
        self.done = False
        self.dir = workdir
        os.makedirs(self.dir, exist_ok=True)
        self.ready = os.path.join(self.dir, "ready")
        self.report = os.path.join(self.dir, "report")
        for f in (self.ready, self.report):
            if os.path.exists(f):
                os.unlink(f)
        # The end comes down a pipe: the driver blocks on it, and wakes
        # nothing (no polling) while the window is measured.
        self.done_r, done_w = os.pipe()
        go_r, self.go_w = os.pipe()
        self.p = subprocess.Popen(
            [binary, "-name", "guest=%s,debug-threads=on" % tag,
             "-uuid", UUID,
             "--vcpus", str(n), "--phases", "loop:%d" % iters, "--wait-go",
             "--go-fd", str(go_r),
             "--hold", "--sched-idle", "--enter-early",
             "--ready", self.ready,
             "--done-fd", str(done_w),
             "--report", self.report], pass_fds=(done_w, go_r))
        os.close(done_w)
        os.close(go_r)
        deadline = time.time() + 120
        while not os.path.exists(self.ready):
            if self.p.poll() is not None or time.time() > deadline:
                raise RuntimeError("vpvmm did not start (rc %s)" %
                                   self.p.poll())
            time.sleep(0.05)
        with open(self.ready) as f:
            info = json.load(f)
        self.pid, self.tids = info["pid"], info["tids"]
        with open(VMCG + "/cgroup.procs", "w") as f:
            f.write(str(self.pid))

    def kvm(self):
        """KVM's counters of the VM (kvm_stats())."""
        return kvm_stats(self.pid)

    def sched(self):
        """(CPU ns, slices) of every thread of the VMM."""
        return xb.task_schedstat(self.pid)

    def pin(self):
        pin_maps(self.pid)

    def go(self, t_ns):
        """The vCPUs start at CLOCK_MONOTONIC @t_ns (the VMM's own timer);
        the time they did is the report's go_ns."""
        os.write(self.go_w, b"%d\n" % t_ns)

    def wait_done(self, timeout):
        """True once every vCPU has done its work, False if @timeout
        seconds passed first."""
        if self.done:
            return True
        ready, _, _ = select.select([self.done_r], [], [], timeout)
        if not ready:
            return False
        if os.read(self.done_r, 16) != b"done\n":
            raise RuntimeError("vpvmm did not finish (rc %s)" %
                               self.p.poll())
        self.done = True
        return True

    def stop(self):
        os.close(self.done_r)
        os.close(self.go_w)
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        if not os.path.exists(self.report):
            return None
        with open(self.report) as f:
            return json.load(f)


class Collector:
    """One collector on the VMM's vCPU threads: start(), ready(),
    snap() (CPU of the tool and of the module), stop()."""

    def __init__(self, kind, vmm, events, ims, tag, name=None):
        self.kind, self.vmm, self.events, self.ims = kind, vmm, events, ims
        self.tag = tag
        self.p = None
        self.stopping = False
        self.coll = None
        self.edge = {}
        self.out = "/tmp/bench-%s" % (name or kind)
        self.err = open(self.out + ".err", "w+")
        for suffix in ("", ".rows", ".events", ".ready", ".sum", ".win"):
            if os.path.exists(self.out + suffix):
                os.unlink(self.out + suffix)
        if os.path.isdir(self.out + ".d"):
            shutil.rmtree(self.out + ".d")

    def start(self):
        names = [e[0] for e in self.events]
        tids = ",".join(map(str, self.vmm.tids))
        spec = ",".join("%d:%d%s" % (t, c, ":" + m if m else "")
                        for _, t, c, m in self.events)
        k = self.kind
        if k == "none":
            return
        if k == "vcpuperf-all-qemu":
            os.makedirs(self.out + ".d")
            argv = [CAT, "--all-qemu", "--output-dir", self.out + ".d",
                    "--interval", "%dms" % self.ims, "--events",
                    ",".join(names), "-o", self.out + ".host", "-q"]
        elif k.startswith("vcpuperf-"):
            mode = k.split("-", 1)[1]
            argv = [CAT, "--qemu", str(self.vmm.pid), "--interval",
                    "%dms" % self.ims, "--events", ",".join(names), "--read",
                    mode.split("-")[0], "-o", self.out + ".rows",
                    "--events-out", self.out + ".events", "-q"]
            if mode.endswith(NOSCHED):
                argv.append("--no-sched")
            if mode.endswith(KVM):
                argv.append("--kvm-exits")
            if mode.endswith(WHO):
                argv.append("--who")
        elif k.startswith("perf"):
            ev = ",".join(names)
            if k == "perf-group":
                ev = "{%s}" % ev
            argv = ["perf", "stat", "--per-thread", "-t", tids, "-I",
                    str(self.ims), "-j", "-e", ev, "-o", self.out + ".rows"]
        elif k.startswith("ureader"):
            argv = [UREADER, "--tids", tids, "--events", spec,
                    "--interval-us", str(self.ims * 1000), "--duration-ms",
                    "3600000", "--ready", self.out + ".ready", "--out",
                    self.out + ".sum", "--window", self.out + ".win",
                    "--align-ns",
                    str(math.lcm(self.ims * 1000000, TICK_NS))]
            if k != "ureader":
                argv.append("--group")
            if k == "ureader-group-jsonl":
                argv += ["--jsonl", self.out + ".rows", "--pid",
                         str(self.vmm.pid), "--names",
                         ",".join(key(n) for n in names),
                         "--vm", self.vmm.tag, "--uuid", UUID]
        elif k == "floor":
            if os.path.isdir("/sys/module/vpfloor"):
                xb.sh("rmmod vpfloor")
            xb.sh("insmod %s tids=%s events=%s interval_us=%d" %
                  (FLOORKO, tids, spec, self.ims * 1000))
            self.kpid = int(self.par("kpid"))
            return
        self.p = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                  stderr=self.err)

    def par(self, n):
        with open("/sys/module/vpfloor/parameters/" + n) as f:
            return f.read().strip()

    def grid_base(self):
        """CLOCK_MONOTONIC ns of a point of the collector's sampling grid
        (vcpuperf's, the floor's and ureader's start on a scheduler
        tick), once it is ready(); None for perf stat (its grid is its
        own start's) and for none."""
        k = self.kind
        if k == "none" or k.startswith("perf"):
            return None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if k == "floor":
                    v = int(self.par("base_ns"))
                    if v:
                        return v
                elif k.startswith("ureader"):
                    with open(self.out + ".ready") as f:
                        return int(f.read())
                else:
                    for path in self.row_files():
                        with open(path) as f:
                            for line in f:
                                m = GRID_RE.search(line)
                                if m:
                                    return int(m.group(1)) - \
                                        int(m.group(2))
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise RuntimeError("%s: no grid point in its output" % self.tag)

    def open_edges(self):
        """Open what snap() and status() read (Reread), once it is
        ready()."""
        self.edge = {}
        try:
            if self.kind == "floor":
                self.edge["kthread"] = Reread("/proc/%d/schedstat" %
                                              self.kpid)
                self.edge["ticks"] = Reread(
                    "/sys/module/vpfloor/parameters/ticks")
            elif self.p is not None:
                self.edge["tool"] = Threads(self.p.pid)
                self.edge["stat"] = Reread("/proc/%d/stat" % self.p.pid)
                if self.coll and self.coll.get("kpid"):
                    self.edge["kthread"] = Reread(
                        "/proc/%d/schedstat" % self.coll["kpid"])
                if self.coll and self.coll.get("id") is not None:
                    self.edge["status"] = Reread(
                        os.path.join(xb.DEBUGFS, "status"))
                if self.kind in ROWS_COUNTED or \
                        self.kind.startswith("vcpuperf-") and \
                        self.kind != "vcpuperf-all-qemu":
                    self.edge["rows"] = RowCounter(self.out + ".rows")
        except OSError:
            self.close_edges()
            raise

    def close_edges(self):
        for f in self.edge.values():
            f.close()
        self.edge = {}

    def ready(self, lookup=True):
        """Has it started writing?  With @lookup its collection is looked
        up too (else the caller does: collections_of())."""
        k = self.kind
        if k == "none":
            return True
        if k == "floor":
            return int(self.par("ticks")) >= 2
        if self.p.poll() is not None:
            raise RuntimeError("%s exited %d: %s" % (
                k, self.p.returncode, self.stderr()))
        if k.startswith("ureader"):
            return os.path.exists(self.out + ".ready")
        if k.startswith("perf"):
            return xb.file_has(self.out + ".rows", b'"interval"')
        files = self.row_files()
        if k == "vcpuperf-all-qemu" and len(files) < len(self.vmm.vms):
            return False
        if not all(xb.file_has(p, b'"t_mono_ns"') for p in files):
            return False
        if self.coll is None and lookup:
            self.coll = collection_of(self.p.pid)
        return True

    def row_files(self):
        """The files its rows go to: one, or with --all-qemu one per VM
        (its episode)."""
        if self.kind != "vcpuperf-all-qemu":
            return [self.out + ".rows"]
        d = self.out + ".d"
        return [os.path.join(d, f) for f in sorted(os.listdir(d))] \
            if os.path.isdir(d) else []

    def pin(self):
        """pin_maps() of the collector's process."""
        if self.p is not None:
            pin_maps(self.p.pid)

    def write_window(self, t1, t2):
        """Tell ureader the window [@t1, @t2] (its intervals in it)."""
        if os.path.exists(self.out + ".ready"):
            with open(self.out + ".win", "w") as f:
                f.write("%d %d\n" % (t1, t2))

    def stderr(self):
        self.err.seek(0)
        return self.err.read()[-800:]

    def snap(self):
        """{tool, kthread, self} CPU ns so far."""
        s = {"tool": 0, "kthread": 0, "self": 0}
        e = self.edge
        if "kthread" in e:
            s["kthread"] = int(e["kthread"].read().split()[0])
        if "ticks" in e:
            s["ticks"] = int(e["ticks"].read())
        if "tool" in e:
            s["tool"] = e["tool"].cpu_ns() or 0
        if "rows" in e:
            s["rows"] = e["rows"].count()
        elif self.kind == "vcpuperf-all-qemu" and "status" in e:
            st = self.status()
            if "produced" in st and "queued" in st:
                s["rows"] = st["produced"] - st["queued"]
        if "stat" in e:
            # minflt and majflt (proc(5)), after the command's parentheses.
            f = e["stat"].read().rsplit(")", 1)[1].split()
            s["faults"] = (int(f[STAT_MINFLT]), int(f[STAT_MAJFLT]))
        return s

    def status(self):
        if "status" not in self.edge:
            return {}
        t0 = time.monotonic_ns()
        text = self.edge["status"].read()
        return xb.parse_status(text, t0, time.monotonic_ns(),
                               self.coll["id"]) or {}

    def ticks(self, t1, t2, s1, s2, st1, st2):
        """The intervals it read in the window [@t1, @t2] (CLOCK_MONOTONIC
        ns), after stop(): a collector that falls behind reads fewer than
        the window has, and its cost is per sample it took."""
        k = self.kind
        if k == "floor":
            return s2["ticks"] - s1["ticks"]
        if k.startswith("vcpuperf-"):
            return st2.get("passes", 0) - st1.get("passes", 0) \
                if st1 and st2 else None
        if k.startswith("ureader"):
            try:
                with open(self.out + ".sum") as f:
                    return json.load(f)["window"]["ticks"]
            except (OSError, ValueError, KeyError, TypeError):
                return None
        if k.startswith("perf"):
            # "interval" is seconds since perf stat's own start; its last
            # one is printed at the SIGINT that stopped it.  Found by a
            # pattern, not by parsing each line: 64 perf stat at 10 ms
            # write millions of lines, which json.loads() took the bed
            # minutes of CPU to read.
            try:
                with open(self.out + ".rows", "rb") as f:
                    ivs = {float(m) for m in PERF_INTERVAL_RE.findall(
                        f.read())}
            except (OSError, ValueError):
                return None
            # Its clock's offset is not known to within an interval; the
            # spacing of what it printed is: its median gap against the
            # interval gives the share of intervals it read.
            gaps = sorted(b - a for a, b in zip(sorted(ivs), sorted(ivs)[1:]))
            if not gaps:
                return 0
            gap = gaps[len(gaps) // 2]
            return (t2 - t1) / max(gap * 1e9, self.ims * 1e6)
        return None

    def signal_stop(self):
        """Ask its process to stop (once), without waiting: stop() waits.
        Many collectors (one per VM) that hold the CPU are all asked
        first, so that none waits for the others' CPU time to end."""
        if self.p is not None and not self.stopping and \
                self.p.poll() is None:
            self.p.send_signal(signal.SIGINT if self.kind.startswith("perf")
                               else signal.SIGTERM)
            self.stopping = True

    def stop(self):
        """Stop; the number of rows (vcpuperf, ureader JSONL) or
        intervals (perf) it wrote."""
        k = self.kind
        if k == "none":
            return None
        if k == "floor":
            n = int(self.par("ticks"))
            xb.sh("rmmod vpfloor")
            return n
        if self.p.poll() is None:
            self.signal_stop()
            try:
                self.p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        rc = self.p.returncode
        if rc not in (0, -signal.SIGINT, -signal.SIGTERM, 130, 143):
            problems.append("%s: rc %d: %s" % (self.tag, rc, self.stderr()))
        n = 0
        for path in self.row_files():
            if os.path.exists(path):
                with open(path, "rb") as f:
                    data = f.read()
                n += data.count(b"\n")
                # an episode holds its VM's lifecycle lines too
                if self.kind == "vcpuperf-all-qemu":
                    n -= sum(1 for ln in data.splitlines()
                             if b'"event"' in ln)
        return n


def collections_of(pids):
    """{pid: the collection process pid opened and its sampler kthread}
    for every pid of @pids, by the status file's owner (several
    collectors may start together): one walk of /proc and one read of
    the status file for all of them (64 recorders at once read it 4096
    times otherwise, each a listing of every collection)."""
    colls = xb.status()
    out = {}
    for comm, kp in xb.kthreads("vcpuperf/").items():
        n = comm.split("/")[1]
        if not n.isdigit() or n == "0":
            continue
        st = colls.get(int(n))
        if st and st.get("owner") in pids:
            out[st["owner"]] = {"id": int(n), "kpid": kp, "last_k": None}
    for pid in pids:
        if pid not in out:
            problems.append("no collection owned by %d" % pid)
            out[pid] = {"id": None, "kpid": None}
    return out


def collection_of(pid):
    """collections_of() of one process."""
    return collections_of([pid])[pid]


def run(cfg, kind, tag, phase_ns):
    n, ne, ims, work = cfg
    iters = (work // n - 6) // 2
    vmm = Vmm(n, iters, "bench")
    c = Collector(kind, vmm, EVENTS[ne], ims, tag)
    return measure(vmm, c, ims, kind, tag, phase_ns, work)


def keep_up_bound_s(work):
    """How long a window of @work guest instructions may take (one is a
    nanosecond) before its collector is one that cannot keep up."""
    return KEEP_UP_FACTOR * work / 1e9 + KEEP_UP_SLACK_S


def measure(vmm, c, ims, kind, tag, phase_ns, work):
    """One run of collector @c (its kind @kind) on the VM(s) @vmm (a Vmm,
    or anything with its methods) doing @work guest instructions, started
    at @phase_ns of the tick: the figures of its window.  A collector
    that cannot keep up (keep_up_bound_s()) ends the window at that
    bound; its figures are then those of the window so far, "saturated"
    says so, and the VMs finish their work after it has stopped."""
    files = {}
    saturated = False
    try:
        at_tick_phase(phase_ns)
        c.start()
        deadline = time.time() + 300
        while not c.ready():
            if time.time() > deadline:
                raise RuntimeError("%s: no output in 300 s" % kind)
            time.sleep(0.05)
        # The VMM's threads are blocked outside the window (each has made
        # its first entry to the guest): their figures are read away
        # from it, before the wait below; the collector's next to it,
        # from files kept open (Reread).
        k1, (v1, w1) = vmm.kvm(), vmm.sched()
        base = c.grid_base()
        vmm.pin()
        c.pin()
        c.open_edges()
        files = dict(irqs=Reread("/proc/interrupts"),
                     softirqs=Reread("/proc/softirqs"))
        # kfree_rcu() batches what it frees for KFREE_DRAIN_JIFFIES (5 s
        # on 6.1) before it asks for a grace period: what earlier runs
        # freed so came to its grace period inside a later window (3 RCU
        # softirqs in the runs without a collector of some passes, one
        # boot's vmm time 15 k instructions above the other's).  Its
        # shrinker drains the batches now.
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write(str(DROP_SLAB))
        # Steady collection before the window: two intervals, and as long
        # as the grace periods of RCU and SRCU (KVM's) that the VM's
        # creation, the collector's start, the reads above and the drain
        # began take to end on the idle CPU (70 ms in a trace): their
        # kthreads' wake-ups are not the collector's cost, and in the
        # window each preempted a vCPU.
        time.sleep(max(2 * ims / 1000.0, SETTLE_S))
        st1 = c.status()
        # The window starts at t1 by the VMM's own timer, GO_LEAD_NS after
        # the harness has read what it reads and gone to sleep: nothing
        # of its own is next to the vCPUs' start.  (When it sent go
        # itself, a collector woken while it ran did not preempt it, and
        # once it slept CFS picked the VM's group, which sleeper credit
        # had placed up to 2 s left of every other task at its wake-up:
        # that collector waited for a whole vCPU run, 50 ms at 8 vCPUs.
        # perf stat missed 5 intervals so, in 1 to 3 passes of 6 and not
        # the same in two boots, its cost per sample 13% lower.)
        if base is None:
            t1 = at_tick_phase(GO_PHASE_NS, GO_LEAD_NS)
        else:
            t1 = at_grid_phase(base, ims, GO_LEAD_NS)
        q1 = per_cpu_counts(files["softirqs"].read())
        i1 = irq_total(files["irqs"])
        s1 = c.snap()
        vmm.go(t1)
        # Late (the reads above took longer than the lead), the VMM went
        # at once: the window starts now, as it did when the harness sent
        # go itself.
        sent = time.monotonic_ns()
        harness_late_ns = max(0, sent - t1)
        t1 = max(t1, sent)
        saturated = not vmm.wait_done(keep_up_bound_s(work))
        t2 = time.monotonic_ns()
        i2 = irq_total(files["irqs"])
        q2 = per_cpu_counts(files["softirqs"].read())
        s2 = c.snap()
        st2 = c.status()
        (v2, w2), k2 = vmm.sched(), vmm.kvm()
        c.write_window(t1, t2)
    finally:
        c.close_edges()
        for f in files.values():
            f.close()
        rows = c.stop()
        if saturated and not vmm.wait_done(keep_up_bound_s(work)):
            raise RuntimeError("%s: the VMs did not finish their work "
                               "after the collector stopped" % tag)
        rep = vmm.stop()
    if not rep or not all(v["finished"] for v in rep["vcpus"]):
        raise RuntimeError("the VM did not run its work")
    guest = sum(v["guest_instructions"] for v in rep["vcpus"])
    # How late after t1 the VMM's main thread let the vCPUs go (a
    # collector on the CPU then runs first: the VM's group is idle).
    go_late_ns = rep["go_ns"] - t1
    if harness_late_ns:
        log("%s: the harness was %d ns late for the window's start" %
            (tag, harness_late_ns))
    res = dict(kind=kind, window_ns=t2 - t1, guest_instructions=guest,
               vmm_ns=v2 - v1, vmm_slices=w2 - w1, go_late_ns=go_late_ns,
               harness_late_ns=harness_late_ns,
               tool_ns=s2["tool"] - s1["tool"],
               rows_written=s2["rows"] - s1["rows"]
               if "rows" in s1 and "rows" in s2 else None,
               kthread_ns=s2["kthread"] - s1["kthread"],
               kvm={k: k2[k] - k1.get(k, 0) for k in k2}, rows=rows,
               own_irqs=own_irqs(i1, i2),
               softirqs={k: q2[k] - q1.get(k, 0) for k in q2},
               faults=[b - a for a, b in zip(s1["faults"], s2["faults"])]
               if "faults" in s1 and "faults" in s2 else None,
               sched_ticks=sched_ticks(i1[2], i2[1]),
               ticks=c.ticks(t1, t2, s1, s2, st1, st2),
               saturated=saturated)
    if saturated:
        log("%s: cannot keep up: the window ended after %.1f s, the "
            "collector used %.0f%% of the CPU, the VMs %.1f%%" %
            (tag, (t2 - t1) / 1e9,
             100.0 * (res["tool_ns"] + res["kthread_ns"]) / (t2 - t1),
             100.0 * res["vmm_ns"] / (t2 - t1)))
    # The counts around the window (status, snapshots) can take in a
    # pass or two beside it: at most the window's own.
    if res["ticks"] is not None:
        res["ticks"] = min(res["ticks"], (t2 - t1) / (ims * 1e6))
    if st1 and st2:
        res["self_ns"] = (st2.get("self_us", 0) - st1.get("self_us", 0)) \
            * 1000
        res["status"] = {k: st2.get(k, 0) - st1.get(k, 0) for k in (
            "passes", "missed", "produced", "dropped", "direct", "self",
            "kicks")}
        res["status"]["mode_now"] = st2.get("mode_now")
        if res["status"]["dropped"]:
            problems.append("%s: %d records dropped" %
                            (tag, res["status"]["dropped"]))
    # ureader without JSONL writes nothing while it runs: its CPU time
    # in the window says that it read.
    if kind in ("ureader", "ureader-group") and not res["tool_ns"] or \
            kind not in ("none", "ureader", "ureader-group") and not rows:
        problems.append("%s: no output" % tag)
    return res


def options(full, smoke_configs, collectors, name):
    """The command line and the VP_BENCH_* variables: (smoke, out
    directory, passes, configurations, collectors); @name(cfg) is a
    configuration's name as VP_BENCH_ONLY gives it."""
    smoke = "--smoke" in sys.argv
    out = sys.argv[sys.argv.index("--out") + 1]
    passes = int(sys.argv[sys.argv.index("--passes") + 1]) \
        if "--passes" in sys.argv else (1 if smoke else 2)
    configs = smoke_configs if smoke else full
    only = os.environ.get("VP_BENCH_ONLY")
    if only:
        configs = [c for c in configs if name(c) in only.split(",")]
    kinds = collectors
    if os.environ.get("VP_BENCH_COLLECTORS"):
        kinds = [k for k in collectors + OPT_IN
                 if k in os.environ["VP_BENCH_COLLECTORS"].split(",")]
    return smoke, out, passes, configs, kinds


def begin(smoke, passes, collectors):
    """Load the module and quiet the bed: (the result to fill in, the
    kernel log's length, the start time)."""
    xb.raise_nofile()
    mark = len(xb.sh("dmesg").splitlines())
    t_start = time.monotonic()
    result = dict(mode="smoke" if smoke else "full", passes=passes,
                  kernel=os.uname().release, nproc=os.cpu_count(),
                  perf=xb.sh("perf --version").strip(),
                  events={str(k): [e[0] for e in v]
                          for k, v in EVENTS.items()},
                  collectors=collectors, configs=[])
    if os.path.isdir("/sys/module/vcpuperf"):
        xb.sh("rmmod vcpuperf")
    xb.sh("insmod %s" % VPKO)
    vm_sched()
    quiet_bed()
    return result, mark, t_start


def end(result, path, mark, t_start):
    """Unload the module, check the kernel log since @mark, write
    @result to @path: the exit status (1 on any problem)."""
    try:
        xb.sh("rmmod vcpuperf")
    except Exception as e:  # noqa: BLE001
        problems.append("rmmod vcpuperf: %r" % e)
    lines = xb.sh("dmesg").splitlines()[mark:]
    bad = [ln for ln in lines if any(b in ln for b in (
        "WARNING:", "BUG:", "Oops", "Call trace", "Call Trace"))]
    if bad:
        problems.append("kernel log: " + "\n".join(bad[:20]))
    result["bench_seconds"] = time.monotonic() - t_start
    result["problems"] = problems + xb.problems
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    log("done in %.1f s, %d problem(s)" % (result["bench_seconds"],
                                           len(result["problems"])))
    for p in result["problems"]:
        log("PROBLEM:", p)
    return 1 if result["problems"] else 0


def passes_of(c, cfg, kinds, passes, run_fn, result, path):
    """The @passes passes of configuration @cfg (its entry @c in @result,
    which is written to @path after each): every collector of @kinds by
    @run_fn(cfg, kind, tag, phase), pass p at p/@passes of the tick."""
    for p in range(passes):
        runs = {}
        for kind in kinds:
            tag = "%s.%s.%d" % (c["name"], kind, p)
            t0 = time.monotonic()
            try:
                runs[kind] = run_fn(cfg, kind, tag, p * TICK_NS // passes)
            except Exception as e:  # noqa: BLE001
                problems.append("%s: %r" % (tag, e))
                continue
            r = runs[kind]
            log("%-14s %-27s pass %d: %.1f s wall, window %.3f s, "
                "vmm %.1f M, tool %.2f M, kthread %.2f M, exits %d, "
                "own irqs %d-%d in %d ticks" %
                (c["name"], kind, p, time.monotonic() - t0,
                 r["window_ns"] / 1e9, r["vmm_ns"] / 1e6,
                 r["tool_ns"] / 1e6, r["kthread_ns"] / 1e6,
                 r["kvm"].get("exits", -1), r["own_irqs"][0],
                 r["own_irqs"][1], r["sched_ticks"]))
        c["passes"].append(runs)
        with open(path, "w") as f:
            json.dump(result, f, indent=1)


def main():
    smoke, out, passes, configs, kinds = options(
        FULL, SMOKE, COLLECTORS, lambda c: "%dx%dx%dms" % c[:3])
    result, mark, t_start = begin(smoke, passes, COLLECTORS)
    for cfg in configs:
        n, ne, ims, work = cfg
        name = "%dx%dx%dms" % (n, ne, ims)
        c = dict(name=name, vcpus=n, events=ne, interval_ms=ims,
                 guest_instructions=work, passes=[])
        result["configs"].append(c)
        passes_of(c, cfg, kinds, passes, run, result,
                  os.path.join(out, "arm64.json"))
    return end(result, os.path.join(out, "arm64.json"), mark, t_start)


if __name__ == "__main__":
    sys.exit(main())
