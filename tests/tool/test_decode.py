#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of vcpuperf-cat's stream decoding (no VM, no module).

Streams are built here with struct from the layouts documented in
include/uapi/vcpuperf.h, independently of the tool's C code, then decoded
with ``vcpuperf-cat --replay FILE`` (or a fake debugfs directory) and the
JSONL checked with json.loads.

Run from the repository root:  python3 tests/tool/test_decode.py
"""

import json
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import run_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "vcpuperf-cat")

# ---- uapi constants (include/uapi/vcpuperf.h) ------------------------------
MAGIC = 0x46504356


def uapi_abi():
    """VCPUPERF_ABI_VERSION, read from the uapi header: its one home (the
    layouts below are written out independently, to check the code)."""
    with open(os.path.join(ROOT, "include", "uapi", "vcpuperf.h")) as f:
        m = re.search(r"#define VCPUPERF_ABI_VERSION\s+(\d+)U?", f.read())
    return int(m.group(1))


ABI = uapi_abi()
MAX_EVENTS = 16
NAME_LEN = 48
COMM_LEN = 16
NO_VCPU = -1
(HEADER, SAMPLE, STARTED, UNAVAILABLE, FIRST_ROW, MULTIPLEXED, NO_COUNTERS,
 VCPU_ADDED, TASK_EXITED, DROPPED, FINISHED, DETACHED, PROCESS,
 PROCESS_SAMPLE, MUX_EXPECTED) = range(1, 16)
ATTACH_PROCESS_TOTALS, ATTACH_ALL_THREADS = 1, 2
VM_NAME_LEN, UUID_LEN = 128, 40
KIND_TID, KIND_PID, KIND_QEMU = 1, 2, 3
MOD_U, MOD_K, MOD_G, MOD_H, MOD_D = 1, 2, 4, 8, 16
CAUSE_NO_PMU, CAUSE_NEVER_COUNTED, CAUSE_STARVED = 1, 9, 12
CAUSE_NO_TRACEPOINT = 13
TRACEPOINT, CONFIG_ABSENT = 2, (1 << 64) - 1
MUX_MORE_EVENTS, MUX_PMU_SHARED, MUX_PROCESS_TOTALS = 1, 2, 3
UNAVAILABLE_PROCESS = 1
DETACH_EXITED, DETACH_STOP, DETACH_EXEC = 2, 3, 6
SAMPLE_FIRST, SAMPLE_FINAL, SAMPLE_SCHED, SAMPLE_SCHED_STALE = 1, 2, 4, 8
SAMPLE_WHO = 16
WHO_FMT = "=" + "Q" * 10 + "IIQ" * 4 + "II"   # struct vcpuperf_who
WHO_KINDS = ["same_vm", "other_vm", "kernel", "host", "idle"]
WHO_KEYS = (["sched_wait_%s_ns" % k for k in WHO_KINDS] +
            ["sched_preempted_%s" % k for k in WHO_KINDS if k != "idle"])
CAUSE_NO_TRACEPOINT = 13
SCHED_RUN, SCHED_INFO = 1, 2
SCHED_FMT = "=QQQQQQII"     # struct vcpuperf_sched
ATTACH_NO_SCHED = 4

# perf_event.h
HW, SW = 0, 1
HW_CYCLES, HW_INSTRUCTIONS, HW_CACHE_REFS, HW_CACHE_MISSES = 0, 1, 2, 3
HW_BRANCHES, HW_BRANCH_MISSES = 4, 5
SW_PAGE_FAULTS, SW_CONTEXT_SWITCHES, SW_TASK_CLOCK = 2, 3, 1

DEFAULT_EVENTS = [
    ("cycles", HW, 0, HW_CYCLES),
    ("instructions", HW, 0, HW_INSTRUCTIONS),
    ("cache-references", HW, 0, HW_CACHE_REFS),
    ("cache-misses", HW, 0, HW_CACHE_MISSES),
    ("branches", HW, 0, HW_BRANCHES),
    ("branch-misses", HW, 0, HW_BRANCH_MISSES),
    ("page-faults", SW, 0, SW_PAGE_FAULTS),
    ("context-switches", SW, 0, SW_CONTEXT_SWITCHES),
]
DEFAULT_KEYS = ["cycles", "instructions", "cache_references", "cache_misses",
                "branches", "branch_misses", "page_faults",
                "context_switches"]

REC_FMT = "=HHIQQQ"         # struct vcpuperf_rec, 32 bytes
ID_FMT = "Ii"               # struct vcpuperf_target_id
COUNT_FMT = "QQQ"           # struct vcpuperf_count
LOAD_FMT = "IIIIII"         # struct vcpuperf_pmu_load


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


class Stream:
    """Builds a record stream; seq numbers and clocks advance by themselves."""

    def __init__(self, next_seq=1, interval_ns=100_000_000, magic=MAGIC,
                 abi=ABI, rec_size=32):
        self.data = bytearray()
        self.seq = next_seq
        self.t = 1_000_000_000
        body = struct.pack("=IIIIIIQQ", magic, abi, rec_size, MAX_EVENTS,
                           1 << 20, 0, next_seq, interval_ns)
        self._put(HEADER, 0, body, seq=0)

    def _put(self, rtype, tid, body, seq=None, size=None):
        if seq is None:
            seq = self.seq
            self.seq += 1
        t = self.t
        self.t += 1000
        raw = pad8(body)
        total = 32 + len(raw) if size is None else size
        self.data += struct.pack(REC_FMT, rtype, total, tid, seq, t,
                                 t + 1_700_000_000_000_000_000) + raw
        return seq

    def skip(self, n):
        """Lose n sequence numbers (as the ring does when full)."""
        first = self.seq
        self.seq += n
        return first

    def started(self, tid, events=DEFAULT_EVENTS, pid=100, vcpu=0,
                kind=KIND_QEMU, comm=b"CPU 0/KVM", interval_ns=100_000_000):
        body = struct.pack("=" + ID_FMT + "IIQ16s", pid, vcpu, kind,
                           len(events), interval_ns, comm)
        for name, etype, mods, config in events:
            body += struct.pack("=48sIIQ", name.encode(), etype, mods,
                                config)
        return self._put(STARTED, tid, body)

    def sample(self, tid, counts, mask=None, pid=100, vcpu=0, flags=0,
               interval_ns=100_000_000, window=1234, exited=0, t=None,
               nr=None, grid=None, sched=None, who=None):
        """sched: (run, wait, slices, vol, invol, migr, cpu, valid) since
        the attach, after the counts (flag SAMPLE_SCHED); who: (wait by
        kind x5, preempted by kind x5, [(pid, wait_ns)] up to 4, valid,
        cause) after them (flag SAMPLE_WHO)."""
        if mask is None:
            mask = (1 << len(counts)) - 1
        if t is not None:
            self.t = t
        # grid point: 5 us before the read unless given (0: off the grid)
        if grid is None:
            grid = self.t - 5000
        if sched is not None:
            flags |= SAMPLE_SCHED
        if who is not None:
            flags |= SAMPLE_WHO
        body = struct.pack("=" + ID_FMT + "IIIIQQQ", pid, vcpu,
                           len(counts) if nr is None else nr, mask, exited,
                           flags, interval_ns, window, grid)
        for c in counts:
            body += struct.pack("=" + COUNT_FMT, *c)
        if sched is not None:
            body += struct.pack(SCHED_FMT, *sched)
        if who is not None:
            wait, pre, vms, valid, cause = who
            vms = list(vms) + [(0, 0)] * (4 - len(vms))
            body += struct.pack(WHO_FMT, *wait, *pre,
                                *[x for pid_, ns in vms for x in
                                  (pid_, 0, ns)], valid, cause)
        return self._put(SAMPLE, tid, body)

    def unavailable(self, tid, index, name, error, cause, pid=100, vcpu=0,
                    flags=0):
        body = struct.pack("=" + ID_FMT + "IiII48s", pid, vcpu, index, error,
                           cause, flags, name.encode())
        return self._put(UNAVAILABLE, tid, body)

    def first_row(self, tid, populated, pmask, cmask, nr, pid=100, vcpu=0):
        body = struct.pack("=" + ID_FMT + "IIII", pid, vcpu, populated,
                           pmask, cmask, nr)
        return self._put(FIRST_ROW, tid, body)

    def multiplexed(self, tid, mask, ppm, pid=100, vcpu=0, cause=0,
                    load=(0, 0, 0, 0, 0, 0)):
        body = struct.pack("=" + ID_FMT + "IIII" + LOAD_FMT, pid, vcpu, mask,
                           ppm, cause, 0, *load)
        return self._put(MULTIPLEXED, tid, body)

    def no_counters(self, tid, seen, ran, cmask, pid=100, vcpu=0,
                    cause=None, ran_ns=0, load=(0, 0, 0, 0, 0, 0)):
        body = struct.pack("=" + ID_FMT + "QQIIQ" + LOAD_FMT, pid, vcpu, seen,
                           ran, CAUSE_NEVER_COUNTED if cause is None
                           else cause, cmask, ran_ns, *load)
        return self._put(NO_COUNTERS, tid, body)

    def mux_expected(self, tid, load, pid=100, vcpu=0):
        body = struct.pack("=" + ID_FMT + LOAD_FMT, pid, vcpu, *load)
        return self._put(MUX_EXPECTED, tid, body)

    def vcpu_added(self, tid, comm, pid=100, vcpu=1):
        body = struct.pack("=" + ID_FMT + "16s", pid, vcpu, comm)
        return self._put(VCPU_ADDED, tid, body)

    def task_exited(self, tid, counts, exited, pid=100, vcpu=0):
        body = struct.pack("=" + ID_FMT + "II", pid, vcpu, len(counts),
                           exited)
        for c in counts:
            body += struct.pack("=" + COUNT_FMT, *c)
        return self._put(TASK_EXITED, tid, body)

    def dropped(self, count, first_seq, total):
        body = struct.pack("=QQQ", count, first_seq, total)
        return self._put(DROPPED, 0, body)

    def finished(self, tid, seen, with_values, targets=1, drops=0, pid=100,
                 vcpu=0):
        if tid == 0:
            pid, vcpu = 0, 0
        body = struct.pack("=" + ID_FMT + "QQQQ", pid, vcpu, seen,
                           with_values, targets, drops)
        return self._put(FINISHED, tid, body)

    def detached(self, tid, reason, pid=100, vcpu=0):
        body = struct.pack("=" + ID_FMT + "II", pid, vcpu, reason, 0)
        return self._put(DETACHED, tid, body)

    def process(self, pid=100, kind=KIND_QEMU, flags=ATTACH_PROCESS_TOTALS,
                events=DEFAULT_EVENTS, threads=3, comm=b"qemu-system-x86",
                vm=b"", uuid=b"", interval_ns=100_000_000):
        body = struct.pack("=IIIIIIQ16s128s40s", pid, kind, flags,
                           len(events), threads, 0, interval_ns, comm, vm,
                           uuid)
        for name, etype, mods, config in events:
            body += struct.pack("=48sIIQ", name.encode(), etype, mods,
                                config)
        return self._put(PROCESS, 0, body)

    def process_sample(self, counts, pid=100, mask=None, flags=0, threads=3,
                       exited=0, interval_ns=100_000_000, window=777,
                       t=None, sched=None):
        if mask is None:
            mask = (1 << len(counts)) - 1
        if t is not None:
            self.t = t
        if sched is not None:
            flags |= SAMPLE_SCHED
        body = struct.pack("=IIIIIIQQ", pid, len(counts), mask, flags,
                           threads, exited, interval_ns, window)
        for c in counts:
            body += struct.pack("=" + COUNT_FMT, *c)
        if sched is not None:
            body += struct.pack(SCHED_FMT, *sched)
        return self._put(PROCESS_SAMPLE, 0, body)

    def unknown(self, rtype=99, nbytes=24):
        return self._put(rtype, 0, b"\xab" * nbytes)

    def raw(self, rtype, tid, body, size=None):
        return self._put(rtype, tid, body, size=size)

    def bytes(self):
        return bytes(self.data)


def ensure_built():
    if not os.access(TOOL, os.X_OK):
        subprocess.run(["make", "-C", os.path.join(ROOT, "tools")],
                       check=True, stdout=subprocess.DEVNULL)


def load(path):
    with open(path, "rb") as f:
        text = f.read().decode("utf-8")      # must be valid UTF-8
    return [json.loads(line) for line in text.splitlines()]


class ToolCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def replay(self, stream, *extra, stdin=None):
        src = self.path("stream.bin")
        if stdin is None:
            with open(src, "wb") as f:
                f.write(stream if isinstance(stream, bytes)
                        else stream.bytes())
        out, ev = self.path("out.jsonl"), self.path("ev.jsonl")
        args = [TOOL, "--replay", "-" if stdin is not None else src,
                "-o", out, "--events-out", ev] + list(extra)
        p = subprocess.run(args, input=stdin, capture_output=True,
                           timeout=60)
        self.rc, self.err = p.returncode, p.stderr.decode(errors="replace")
        self.rows = load(out) if os.path.exists(out) else []
        self.events = load(ev) if os.path.exists(ev) else []
        return self.rc

    def ev(self, name):
        return [e for e in self.events if e["event"] == name]


SW_EVENTS = [("page-faults", SW, 0, SW_PAGE_FAULTS),
             ("task-clock", SW, 0, SW_TASK_CLOCK)]


class TestProcess(ToolCase):
    """Process records (VM identity) and process samples (per-VM rows)."""

    def stream(self):
        s = Stream()
        s.process(vm=b"vm1", uuid=b"c7a5fdbd-edaf-9455-926a-d65c16db1809",
                  events=SW_EVENTS)
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.started(8, events=SW_EVENTS, vcpu=NO_VCPU, comm=b"worker")
        s.sample(7, [(10, 50, 50), (1000, 50, 50)], t=2_000_000_000)
        s.sample(8, [(3, 40, 40), (500, 40, 40)], vcpu=NO_VCPU)
        s.process_sample([(100, 300, 300), (9000, 300, 300)],
                         t=2_000_010_000)
        s.sample(7, [(25, 150, 150), (3000, 150, 150)], t=2_100_000_000)
        s.process_sample([(400, 900, 450), (20000, 900, 900)], exited=1,
                         t=2_100_010_000, flags=SAMPLE_FINAL)
        return s

    def test_vm_row_schema(self):
        self.assertEqual(self.replay(self.stream()), 0, self.err)
        vm = [r for r in self.rows if r["tid"] is None]
        self.assertEqual(len(vm), 2)
        r = vm[1]
        self.assertEqual(list(r)[:19], [
            "t_mono_ns", "t_wall_ns", "source", "available_in_deployment",
            "interval_s", "dt_ns", "seq", "pid", "tid", "vcpu", "role", "vm",
            "uuid", "threads", "threads_exited"] + DEFAULT_KEYS[:4])
        for k in DEFAULT_KEYS + ["ipc", "cache_miss_rate"]:
            self.assertIn(k, r)
        self.assertEqual((r["role"], r["vm"], r["pid"], r["vcpu"]),
                         ("vm", "vm1", 100, None))
        self.assertEqual(r["uuid"], "c7a5fdbd-edaf-9455-926a-d65c16db1809")
        self.assertIsNone(r["cycles"])
        self.assertIsNone(r["ipc"])
        # 300 more faults, 600 ns enabled, 150 running: scaled to 1200
        self.assertEqual(r["page_faults"], 1200)
        self.assertIs(r["multiplexed"], True)
        self.assertEqual(r["task_clock"], 11000)
        self.assertEqual(r["threads_exited"], 1)
        self.assertEqual(r["dt_ns"], 100_000_000)
        self.assertEqual(vm[0]["page_faults"], 100)

    def test_vm_finished_totals(self):
        """The final process sample gives a perf_finished of scope vm with
        the whole collection's counts and the estimate value x enabled /
        running from them."""
        self.assertEqual(self.replay(self.stream()), 0, self.err)
        fin = [e for e in self.ev("perf_finished") if e["scope"] == "vm"]
        self.assertEqual(len(fin), 1)
        f = fin[0]
        self.assertEqual((f["pid"], f["vm"], f["rows"], f["threads_exited"]),
                         (100, "vm1", 2, 1))
        self.assertEqual(f["totals"]["page-faults"],
                         {"value": 400, "enabled": 900, "running": 450,
                          "scaled": 800})
        self.assertEqual(f["totals"]["task-clock"],
                         {"value": 20000, "enabled": 900, "running": 900,
                          "scaled": 20000})

    def test_end_of_a_process_without_totals(self):
        """A process attached without process totals has one process
        sample, its final one, counting nothing: it gives the process's
        perf_finished (scope vm: rows and threads 0, totals null) and no
        per-VM row."""
        s = Stream()
        s.process(vm=b"vm1", flags=0, events=SW_EVENTS, threads=1)
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.sample(7, [(10, 50, 50), (1000, 50, 50)], t=2_000_000_000)
        s.process_sample([(0, 0, 0), (0, 0, 0)], mask=0, threads=0,
                         flags=SAMPLE_FINAL, t=2_000_010_000)
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual([r["tid"] for r in self.rows], [7])
        fin = [e for e in self.ev("perf_finished") if e["scope"] == "vm"]
        self.assertEqual(len(fin), 1)
        f = fin[0]
        self.assertEqual((f["pid"], f["vm"], f["rows"], f["threads"]),
                         (100, "vm1", 0, 0))
        self.assertEqual(f["totals"]["page-faults"],
                         {"value": None, "enabled": None, "running": None,
                          "scaled": None})

    def test_thread_finished_totals(self):
        """A thread's perf_finished carries its last cumulative counts and
        their estimate; a counter that does not exist is null there, one
        that never ran has no estimate."""
        s = Stream()
        s.started(7, events=SW_EVENTS + [("cycles", HW, 0, HW_CYCLES)],
                  vcpu=0)
        s.unavailable(7, 2, "cycles", 2, CAUSE_NO_PMU)
        s.sample(7, [(10, 50, 0), (1000, 50, 50), (0, 0, 0)], mask=0b011)
        s.sample(7, [(30, 150, 50), (3000, 150, 150), (0, 0, 0)],
                 mask=0b011)
        s.finished(7, 2, 2)
        self.assertEqual(self.replay(s), 0, self.err)
        f = [e for e in self.ev("perf_finished") if e["scope"] == "thread"]
        t = f[0]["totals"]
        self.assertEqual(t["page-faults"], {"value": 30, "enabled": 150,
                                            "running": 50, "scaled": 90})
        self.assertEqual(t["task-clock"]["scaled"], 3000)
        self.assertEqual(t["cycles"], {"value": None, "enabled": None,
                                       "running": None, "scaled": None})

    def test_pmu_load_and_causes(self):
        """perf_multiplexed names its cause and the thread's demand on the
        PMU; perf_multiplexed_expected says so at attach; a starved
        thread's perf_no_counters says starved."""
        s = Stream()
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.mux_expected(7, (9, 7, 2, 4, 0, 0))
        s.multiplexed(7, 0b01, 500000, cause=MUX_MORE_EVENTS,
                      load=(9, 7, 2, 4, 0, 0))
        s.started(8, events=SW_EVENTS, vcpu=1)
        s.multiplexed(8, 0b10, 250000, vcpu=1, cause=MUX_PMU_SHARED,
                      load=(3, 0, 1, 0, 0, 0))
        s.no_counters(8, 10, 10, 0b11, vcpu=1, cause=CAUSE_STARVED,
                      ran_ns=90000, load=(9, 7, 2, 4, 0, 0))
        s.started(9, events=SW_EVENTS, vcpu=2)
        s.multiplexed(9, 0b11, 400000, vcpu=2, cause=MUX_PROCESS_TOTALS,
                      load=(8, 7, 1, 4, 4, 0))
        self.assertEqual(self.replay(s), 0, self.err)
        exp = self.ev("perf_multiplexed_expected")
        self.assertEqual([(e["tid"], e["pmu_events"], e["pmu_counters"],
                           e["collections"], e["rotate_ms"],
                           e["pmu_events_inherited"]) for e in exp],
                         [(7, 9, 7, 2, 4, 0)])
        mux = {e["tid"]: e for e in self.ev("perf_multiplexed")}
        self.assertEqual(mux[7]["cause"], "more_events_than_counters")
        self.assertEqual((mux[8]["cause"], mux[8]["pmu_counters"],
                          mux[8]["rotate_ms"]), ("pmu_shared", None, None))
        self.assertEqual((mux[9]["cause"], mux[9]["pmu_events"],
                          mux[9]["pmu_events_inherited"]),
                         ("process_totals", 8, 4))
        nc = self.ev("perf_no_counters")[0]
        self.assertEqual((nc["reason"], nc["ran_ns_per_interval"],
                          nc["pmu_events"], nc["pmu_counters"]),
                         ("starved", 90000, 9, 7))

    def test_identity_and_role_in_thread_rows(self):
        self.assertEqual(self.replay(self.stream()), 0, self.err)
        th = {r["tid"]: r for r in self.rows if r["tid"] is not None}
        self.assertEqual((th[7]["role"], th[7]["vm"]), ("vcpu", "vm1"))
        self.assertEqual((th[8]["role"], th[8]["vcpu"]), ("emulator", None))
        st = self.ev("perf_started")
        self.assertTrue(all(e["vm"] == "vm1" for e in st))
        pr = self.ev("perf_process_started")
        self.assertEqual(len(pr), 1)
        self.assertEqual((pr[0]["vm"], pr[0]["process_totals"],
                          pr[0]["events"]), ("vm1", True,
                                             ["page-faults", "task-clock"]))

    def test_row_parts_follow_their_source(self):
        """A thread's rows repeat its identity and interval (written once
        and reused): each row must still show what its own records say
        when the interval, the vCPU index or the VM behind the pid
        changes, and a thread attached by tid has no VM."""
        s = Stream()
        s.process(vm=b"vm1", uuid=b"u1", events=SW_EVENTS)
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.sample(7, [(10, 50, 50), (1000, 50, 50)])
        s.sample(7, [(20, 90, 90), (2000, 90, 90)],
                 interval_ns=250_000_000)
        s.sample(7, [(30, 99, 99), (3000, 99, 99)],
                 interval_ns=250_000_000, vcpu=3)
        # the process record again: the same pid, another VM (QEMU
        # restarted with the pid reused)
        s.process(vm=b"vm\"2", uuid=b"", events=SW_EVENTS)
        s.sample(7, [(40, 120, 120), (4000, 120, 120)], vcpu=3)
        s.started(9, events=SW_EVENTS, vcpu=NO_VCPU, pid=555,
                  kind=KIND_PID)
        s.sample(9, [(5, 10, 10), (50, 10, 10)], vcpu=NO_VCPU, pid=555)
        self.assertEqual(self.replay(s), 0, self.err)
        got = [(r["tid"], r["pid"], r["vcpu"], r["role"], r["vm"], r["uuid"],
                r["interval_s"]) for r in self.rows]
        self.assertEqual(got, [
            (7, 100, 0, "vcpu", "vm1", "u1", 0.1),
            (7, 100, 0, "vcpu", "vm1", "u1", 0.25),
            (7, 100, 3, "vcpu", "vm1", "u1", 0.25),
            (7, 100, 3, "vcpu", 'vm"2', None, 0.1),
            (9, 555, None, None, None, None, 0.1)])
        self.assertEqual([r["ran"] for r in self.rows], [True] * 5)

    def test_no_identity_is_null(self):
        s = Stream()
        s.process(kind=KIND_PID, flags=0, events=SW_EVENTS)
        s.started(7, events=SW_EVENTS, kind=KIND_PID, vcpu=NO_VCPU)
        s.sample(7, [(10, 50, 50), (1000, 50, 50)])
        self.assertEqual(self.replay(s), 0, self.err)
        r = self.rows[0]
        self.assertEqual((r["vm"], r["uuid"], r["role"]), (None, None, None))

    def test_textfile(self):
        path = self.path("vcpuperf.prom")
        self.assertEqual(self.replay(self.stream(), "--textfile", path), 0,
                         self.err)
        with open(path) as f:
            text = f.read()
        lab = 'vm="vm1",uuid="c7a5fdbd-edaf-9455-926a-d65c16db1809"'
        self.assertIn("vcpuperf_up 0\n", text)
        self.assertIn('vcpuperf_page_faults_total{%s,vcpu="0",mode="all"} '
                      '25\n' % lab, text)
        self.assertIn('vcpuperf_page_faults_total{%s,vcpu="none",mode="all"}'
                      ' 3\n' % lab, text)
        self.assertIn('vcpuperf_task_clock_seconds_total{%s,vcpu="0",'
                      'mode="all"} 0.000003000\n' % lab, text)
        self.assertIn('vcpuperf_process_page_faults_total{%s,mode="all"} '
                      '400\n' % lab, text)
        self.assertIn('vcpuperf_process_scaling_ratio{%s,mode="all",'
                      'event="page_faults"} 0.500000\n' % lab, text)
        self.assertEqual(text.count("# TYPE vcpuperf_page_faults_total "
                                    "counter"), 1)
        self.assertFalse(os.path.exists(path + ".tmp"))


SCHED_KEYS = ["sched_run_ns", "sched_wait_ns", "sched_timeslices",
              "sched_voluntary_switches", "sched_involuntary_switches",
              "sched_migrations"]


class TestSched(ToolCase):
    """The scheduler figures: per-interval deltas of the cumulative ones
    the samples carry, their totals in perf_finished, null where the
    kernel keeps none."""

    def stream(self, valid=SCHED_RUN | SCHED_INFO):
        s = Stream()
        s.process(events=SW_EVENTS)
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.sample(7, [(1, 5, 5), (10, 5, 5)],
                 sched=(4_000, 9_000, 3, 2, 1, 0, 1, valid))
        s.process_sample([(1, 5, 5), (10, 5, 5)],
                         sched=(5_000, 9_500, 4, 3, 1, 0, 0, valid))
        s.sample(7, [(2, 9, 9), (30, 9, 9)],
                 sched=(54_000, 10_000, 8, 6, 2, 1, 0, valid))
        s.process_sample([(2, 9, 9), (30, 9, 9)], flags=SAMPLE_FINAL,
                         sched=(75_000, 12_500, 12, 9, 3, 2, 0, valid))
        s.finished(7, 2, 2)
        return s

    def test_rows_are_interval_deltas(self):
        self.assertEqual(self.replay(self.stream()), 0, self.err)
        rows = [r for r in self.rows if r["tid"] == 7]
        self.assertEqual([[r[k] for k in SCHED_KEYS] for r in rows],
                         [[4_000, 9_000, 3, 2, 1, 0],
                          [50_000, 1_000, 5, 4, 1, 1]])
        self.assertEqual([r["cpu"] for r in rows], [1, 0])
        vm = [r for r in self.rows if r["tid"] is None]
        self.assertEqual([[r[k] for k in SCHED_KEYS] for r in vm],
                         [[5_000, 9_500, 4, 3, 1, 0],
                          [70_000, 3_000, 8, 6, 2, 2]])
        self.assertNotIn("cpu", vm[0])
        self.assertEqual(self.ev("perf_sched_partial"), [])

    def test_finished_has_totals(self):
        self.assertEqual(self.replay(self.stream()), 0, self.err)
        fin = {e["scope"]: e for e in self.ev("perf_finished")}
        self.assertEqual([fin["thread"][k] for k in SCHED_KEYS],
                         [54_000, 10_000, 8, 6, 2, 1])
        self.assertEqual([fin["vm"][k] for k in SCHED_KEYS],
                         [75_000, 12_500, 12, 9, 3, 2])

    def test_no_sched_info(self):
        """A kernel without CONFIG_SCHED_INFO: wait and timeslices null in
        rows and totals, one perf_sched_partial per thread."""
        self.assertEqual(self.replay(self.stream(valid=SCHED_RUN)), 0,
                         self.err)
        rows = [r for r in self.rows if r["tid"] == 7]
        for r in rows:
            self.assertIsNone(r["sched_wait_ns"])
            self.assertIsNone(r["sched_timeslices"])
        self.assertEqual(rows[1]["sched_run_ns"], 50_000)
        part = self.ev("perf_sched_partial")
        self.assertEqual(len(part), 1)
        self.assertEqual((part[0]["tid"], part[0]["cause"], part[0]["missing"]),
                         (7, "no_sched_info",
                          ["sched_wait_ns", "sched_timeslices"]))
        fin = [e for e in self.ev("perf_finished") if e["scope"] == "thread"]
        self.assertIsNone(fin[0]["sched_wait_ns"])
        self.assertEqual(fin[0]["sched_run_ns"], 54_000)

    def test_vm_sum_out_of_memory(self):
        """A process sample whose figures the module could not sum (out of
        memory: the last ones again, flagged): that per-VM row has every
        figure null and a perf_sched_partial (no_memory) says why; the
        next row's figures cover both intervals."""
        valid = SCHED_RUN | SCHED_INFO
        s = Stream()
        s.process(events=SW_EVENTS)
        s.process_sample([(1, 5, 5), (10, 5, 5)],
                         sched=(5_000, 9_500, 4, 3, 1, 0, 0, valid))
        s.process_sample([(1, 9, 9), (10, 9, 9)], flags=SAMPLE_SCHED_STALE,
                         sched=(5_000, 9_500, 4, 3, 1, 0, 0, valid))
        s.process_sample([(2, 12, 12), (30, 12, 12)], flags=SAMPLE_FINAL,
                         sched=(75_000, 12_500, 12, 9, 3, 2, 0, valid))
        self.assertEqual(self.replay(s), 0, self.err)
        vm = [r for r in self.rows if r["tid"] is None]
        self.assertEqual([[r[k] for k in SCHED_KEYS] for r in vm],
                         [[5_000, 9_500, 4, 3, 1, 0], [None] * 6,
                          [70_000, 3_000, 8, 6, 2, 2]])
        part = self.ev("perf_sched_partial")
        self.assertEqual([(e["scope"], e["pid"], e["cause"], e["missing"])
                          for e in part],
                         [("vm", 100, "no_memory", SCHED_KEYS)])
        fin = [e for e in self.ev("perf_finished") if e["scope"] == "vm"]
        self.assertEqual([fin[0][k] for k in SCHED_KEYS],
                         [75_000, 12_500, 12, 9, 3, 2])

    def test_who_took_the_cpu(self):
        """Samples with who took the CPU (attached who): per row the
        deltas by kind, the other VMs by slot (one that takes a free slot
        later counts from 0), named qemu-PID in a replay (no /proc of
        theirs); their totals in perf_finished; behind the scheduler's
        figures or without them."""
        valid = SCHED_RUN | SCHED_INFO
        sched = (5_000, 9_500, 4, 3, 1, 0, 0, valid)
        s = Stream()
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.started(8, events=SW_EVENTS, vcpu=1)
        s.sample(7, [(1, 5, 5), (10, 5, 5)], sched=sched,
                 who=([10, 200, 30, 40, 5], [1, 2, 0, 3, 0],
                      [(4242, 200)], 1, 0))
        s.sample(7, [(2, 9, 9), (20, 9, 9)], sched=sched,
                 who=([15, 700, 30, 90, 6], [1, 5, 0, 4, 0],
                      [(4242, 450), (5151, 50)], 1, 0))
        s.sample(8, [(1, 5, 5), (10, 5, 5)],
                 who=([0, 0, 7, 0, 1], [0, 0, 1, 0, 0], [], 1, 0))
        s.finished(7, 3, 3)
        s.finished(8, 3, 3)
        self.assertEqual(self.replay(s), 0, self.err)
        r7 = [r for r in self.rows if r["tid"] == 7]
        self.assertEqual([[r[k] for k in WHO_KEYS] for r in r7],
                         [[10, 200, 30, 40, 5, 1, 2, 0, 3],
                          [5, 500, 0, 50, 1, 0, 3, 0, 1]])
        self.assertEqual([r["sched_wait_vms"] for r in r7],
                         [{"qemu-4242": 200},
                          {"qemu-4242": 250, "qemu-5151": 50}])
        self.assertEqual(r7[0]["sched_wait_ns"], 9_500)
        r8 = [r for r in self.rows if r["tid"] == 8]
        self.assertNotIn("sched_wait_ns", r8[0])
        self.assertEqual([r8[0][k] for k in WHO_KEYS],
                         [0, 0, 7, 0, 1, 0, 0, 1, 0])
        self.assertEqual(r8[0]["sched_wait_vms"], {})
        fin = {e["tid"]: e for e in self.ev("perf_finished")}
        self.assertEqual([fin[7][k] for k in WHO_KEYS],
                         [15, 700, 30, 90, 6, 1, 5, 0, 4])
        self.assertFalse(self.ev("perf_sched_partial"))

    def test_who_not_kept(self):
        """Who took the CPU that the module could not keep (valid 0, a
        cause): every key null in each row, one perf_sched_partial naming
        them and the cause, no totals."""
        s = Stream()
        s.started(7, events=SW_EVENTS, vcpu=0)
        for _ in range(2):
            s.sample(7, [(1, 5, 5), (10, 5, 5)],
                     who=([0] * 5, [0] * 5, [], 0, CAUSE_NO_TRACEPOINT))
        s.finished(7, 1, 1)
        self.assertEqual(self.replay(s), 0, self.err)
        for r in self.rows:
            self.assertEqual([r[k] for k in WHO_KEYS + ["sched_wait_vms"]],
                             [None] * (len(WHO_KEYS) + 1))
        part = self.ev("perf_sched_partial")
        self.assertEqual([(e["tid"], e["cause"], e["missing"])
                          for e in part],
                         [(7, "no_tracepoint",
                           WHO_KEYS + ["sched_wait_vms"])])
        fin = self.ev("perf_finished")[0]
        self.assertNotIn("sched_wait_host_ns", fin)

    def test_without_figures_no_keys(self):
        """Samples without them (attached no_sched): no sched key, null
        totals."""
        s = Stream()
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.sample(7, [(1, 5, 5), (10, 5, 5)])
        s.finished(7, 1, 1)
        self.assertEqual(self.replay(s), 0, self.err)
        for k in SCHED_KEYS + ["cpu"]:
            self.assertNotIn(k, self.rows[0])
        fin = self.ev("perf_finished")[0]
        self.assertIsNone(fin["sched_run_ns"])

    def test_flag_without_figures_is_a_layout_error(self):
        """A sample flagged SAMPLE_SCHED too short to hold them is refused
        as a record, not read past its end."""
        s = Stream()
        s.started(7, events=SW_EVENTS, vcpu=0)
        s.sample(7, [(1, 5, 5), (10, 5, 5)], flags=SAMPLE_SCHED)
        s.sample(7, [(2, 9, 9), (30, 9, 9)],
                 sched=(1, 1, 1, 1, 1, 1, 0, SCHED_RUN | SCHED_INFO))
        self.replay(s)
        self.assertIn("shorter than its nr_events", self.err)
        self.assertEqual(len([r for r in self.rows if r["tid"] == 7]), 1)


class TestStatusLine(ToolCase):
    """The live status line: on standard error when it is a terminal (a
    pty here), never with -q, never when it is a pipe."""

    def stream(self):
        s = Stream()
        s.started(7)
        for i in range(3):
            s.sample(7, [(i, i, i)] * 8)
        first = s.skip(2)
        s.dropped(2, first, 2)
        s.sample(7, [(9, 9, 9)] * 8)
        return s

    def run_pty(self, *extra):
        import pty
        src = self.path("s.bin")
        with open(src, "wb") as f:
            f.write(self.stream().bytes())
        master, slave = pty.openpty()
        p = subprocess.Popen([TOOL, "--replay", src, "-o",
                              self.path("o.jsonl")] + list(extra),
                             stderr=slave, stdout=subprocess.DEVNULL)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:         # EIO: the tool closed its side
                break
            if not chunk:
                break
            out += chunk
        os.close(master)
        self.assertEqual(p.wait(timeout=30), 0)
        return out.decode(errors="replace")

    def test_terminal_shows_status(self):
        out = self.run_pty()
        self.assertIn("vcpuperf-cat: 4 rows, 0 per-VM rows, 2 dropped", out)
        self.assertIn("\r", out)

    def test_quiet(self):
        self.assertEqual(self.run_pty("-q"), "")

    def test_pipe_never(self):
        self.assertEqual(self.replay(self.stream()), 0, self.err)
        self.assertNotIn("rows,", self.err)
        self.assertNotIn("\r", self.err)


class TestHeader(ToolCase):
    def test_bad_magic(self):
        s = Stream(magic=0x12345678)
        self.assertEqual(self.replay(s), 1)
        self.assertIn("not a vcpuperf stream", self.err)

    def test_bad_abi(self):
        s = Stream(abi=1)
        self.assertEqual(self.replay(s), 1)
        self.assertIn("ABI version 1", self.err)
        self.assertIn("expects %d" % ABI, self.err)

    def test_first_record_not_header(self):
        s = Stream()
        data = s.bytes()
        s2 = Stream()
        s2.data = bytearray()
        s2.started(7)
        self.assertEqual(self.replay(s2.bytes() + data), 1)
        self.assertIn("not a vcpuperf stream", self.err)

    def test_empty_stream(self):
        self.assertEqual(self.replay(b""), 1)

    def test_truncated_stream(self):
        s = Stream()
        s.started(7)
        self.assertEqual(self.replay(s.bytes()[:-8]), 1)
        self.assertIn("inside a record", self.err)


class TestRows(ToolCase):
    def test_ratios_are_printfs(self):
        """Counts of 1 to 14 digits come out as the deltas they are; ipc
        and cache_miss_rate as the bytes of C's %.6g of the ratio
        (Python's % is the same correctly rounded formatting), over ratios
        from 1e-6 to 1e7 and values near a rounding tie of the 6th digit."""
        rng = random.Random(36)
        s = Stream()
        s.started(7)
        prev = [0] * len(DEFAULT_EVENTS)
        want, deltas = [], []
        for i in range(3000):
            if i % 3 == 0:
                # 7 digits ending in 5 over a power of ten: a tie of the
                # 6th digit but for the double's rounding
                ins = rng.randint(100000, 999999) * 10 + 5
                cyc = 10 ** rng.randint(0, 10)
            else:
                cyc = rng.randint(1, 10 ** rng.randint(1, 12))
                ins = rng.randint(0, 10 ** rng.randint(0, 13))
            refs = rng.randint(1, 10 ** 9)
            miss = rng.randint(0, refs * 3)
            delta = [cyc, ins, refs, miss, 1, 1, 1, 1]
            prev = [p + d for p, d in zip(prev, delta)]
            s.sample(7, [(v, 100 * (i + 1), 100 * (i + 1)) for v in prev],
                     flags=SAMPLE_FIRST if i == 0 else 0)
            want.append(("%.6g" % (ins / cyc), "%.6g" % (miss / refs)))
            deltas.append(delta[:4])
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual([[r[k] for k in DEFAULT_KEYS[:4]] for r in self.rows],
                         deltas)
        with open(self.path("out.jsonl")) as f:
            got = [(re.search(r'"ipc":([^,]*)', line).group(1),
                    re.search(r'"cache_miss_rate":([^,]*)', line).group(1))
                   for line in f]
        self.assertEqual(len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            self.assertEqual(g, w, "row %d" % i)

    def test_basic_row(self):
        s = Stream()
        s.started(7)
        c = [(1000, 100, 100), (2500, 100, 100), (40, 100, 100),
             (10, 100, 100), (300, 100, 100), (3, 100, 100), (5, 100, 100),
             (2, 100, 100)]
        s.sample(7, c, flags=SAMPLE_FIRST, t=5_000_000_000)
        c2 = [(v * 3, e * 2, r * 2) for v, e, r in c]
        s.sample(7, c2, t=5_100_000_000)
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual(len(self.rows), 2)
        r = self.rows[0]
        self.assertEqual(list(r), [
            "t_mono_ns", "t_wall_ns", "source", "available_in_deployment",
            "interval_s", "dt_ns", "seq", "pid", "tid", "vcpu", "role", "vm",
            "uuid", "ran"] +
            DEFAULT_KEYS + ["ipc", "cache_miss_rate", "time_enabled_ns",
                            "time_running_ns", "multiplexed",
                            "read_window_ns", "late_ns"])
        self.assertEqual(r["t_mono_ns"], 5_000_000_000)
        self.assertEqual(r["t_wall_ns"],
                         5_000_000_000 + 1_700_000_000_000_000_000)
        self.assertEqual(r["source"], "vcpuperf")
        self.assertIs(r["available_in_deployment"], False)
        self.assertEqual(r["interval_s"], 0.1)
        self.assertIsNone(r["dt_ns"])
        self.assertEqual((r["seq"], r["pid"], r["tid"], r["vcpu"]),
                         (2, 100, 7, 0))
        self.assertIs(r["ran"], True)
        self.assertEqual(r["cycles"], 1000)
        self.assertEqual(r["instructions"], 2500)
        self.assertAlmostEqual(r["ipc"], 2.5)
        self.assertAlmostEqual(r["cache_miss_rate"], 0.25)
        self.assertEqual(r["time_enabled_ns"], 100)
        self.assertEqual(r["time_running_ns"], 100)
        self.assertIs(r["multiplexed"], False)
        self.assertEqual(r["read_window_ns"], 1234)
        self.assertEqual(r["late_ns"], 5000)
        r2 = self.rows[1]
        self.assertEqual(r2["dt_ns"], 100_000_000)
        self.assertEqual(r2["cycles"], 2000)
        self.assertEqual(r2["context_switches"], 4)
        self.assertEqual(r2["time_enabled_ns"], 100)

    def test_null_zero_and_ran(self):
        ev = DEFAULT_EVENTS[:3]
        s = Stream()
        s.started(7, events=ev)
        # counter 2 does not exist
        s.sample(7, [(10, 50, 50), (20, 50, 50), (0, 0, 0)], mask=0b011)
        # thread did not run: enabled unchanged -> 0, ran false
        s.sample(7, [(10, 50, 50), (20, 50, 50), (0, 0, 0)], mask=0b011)
        # ran but counter 0 never got on the PMU: null, not 0
        s.sample(7, [(10, 80, 50), (30, 80, 80), (0, 0, 0)], mask=0b011)
        # no counter exists at all
        s.sample(7, [(0, 0, 0)] * 3, mask=0)
        self.assertEqual(self.replay(s), 0, self.err)
        r = self.rows
        self.assertIsNone(r[0]["cache_references"])
        self.assertEqual(r[0]["cycles"], 10)
        self.assertIs(r[0]["ran"], True)
        self.assertEqual(r[1]["cycles"], 0)
        self.assertEqual(r[1]["instructions"], 0)
        self.assertIs(r[1]["ran"], False)
        self.assertIsNone(r[1]["cache_references"])
        self.assertEqual(r[1]["time_enabled_ns"], 0)
        self.assertIsNone(r[2]["cycles"])
        self.assertEqual(r[2]["instructions"], 10)
        self.assertIs(r[2]["ran"], True)
        self.assertIsNone(r[2]["ipc"])
        self.assertEqual(r[2]["time_running_ns"], 0)
        self.assertIsNone(r[3]["ran"])
        self.assertIsNone(r[3]["cycles"])
        self.assertIsNone(r[3]["time_enabled_ns"])
        self.assertIsNone(r[3]["time_running_ns"])
        self.assertIs(r[3]["multiplexed"], False)

    def test_numbers_of_every_length(self):
        """Every number is written exactly, whatever its length: values
        at each power of ten and around it, around 2^32 and up to
        2^64 - 1 (as the row's first value: the cumulative count), read
        back by Python's own JSON parser."""
        edges = {0, 1, 2**32 - 1, 2**32, 2**32 + 1, 2**64 - 1, 2**64 - 2,
                 123456789012345678, 10**19 + 12345}
        for k in range(1, 20):
            edges |= {10**k - 1, 10**k, 10**k + 1}
        values = sorted(v for v in edges if v < 2**64)
        s = Stream()
        for i, v in enumerate(values):
            s.started(1000 + i, events=DEFAULT_EVENTS[:1])
            s.sample(1000 + i, [(v, 2**63 + i, 2**63 + i)])
        self.assertEqual(self.replay(s, "--raw"), 0, self.err)
        rows = {r["tid"]: r for r in self.rows}
        for i, v in enumerate(values):
            r = rows[1000 + i]
            self.assertEqual(r["cycles"], v)
            self.assertEqual(r["time_enabled_ns"], 2**63 + i)
            self.assertEqual(r["raw"]["cycles"]["value"], v)

    def test_scaling(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:2])
        s.sample(7, [(1000, 200, 100), (500, 200, 200)])
        self.assertEqual(self.replay(s), 0, self.err)
        r = self.rows[0]
        self.assertEqual(r["cycles"], 2000)
        self.assertEqual(r["instructions"], 500)
        self.assertIs(r["multiplexed"], True)
        self.assertEqual(r["time_enabled_ns"], 200)
        self.assertEqual(r["time_running_ns"], 100)
        self.assertAlmostEqual(r["ipc"], 0.25)

    def test_scaling_rounds_down(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.sample(7, [(10, 3, 2)])
        self.replay(s)
        self.assertEqual(self.rows[0]["cycles"], 15)

    def test_counter_restart(self):
        s = Stream()
        s.started(7)
        s.sample(7, [(1000, 100, 100)] * 8)
        s.started(7, events=DEFAULT_EVENTS[:2], comm=b"reused")
        s.sample(7, [(300, 40, 40), (600, 40, 40)])
        self.assertEqual(self.replay(s), 0, self.err)
        r = self.rows[1]
        self.assertEqual(r["cycles"], 300)
        self.assertEqual(r["instructions"], 600)
        self.assertIsNone(r["dt_ns"])
        self.assertNotIn("branches", r)
        self.assertEqual(len(self.ev("perf_started")), 2)

    def test_ratio_nulls(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:4])
        s.sample(7, [(0, 10, 10), (5, 10, 10), (0, 10, 10), (3, 10, 10)])
        s.sample(7, [(0, 20, 20), (5, 20, 20), (0, 20, 20), (3, 20, 20)],
                 mask=0b1010)
        self.replay(s)
        for r in self.rows:
            self.assertIsNone(r["ipc"])
            self.assertIsNone(r["cache_miss_rate"])

    def test_ratio_by_config_not_name(self):
        ev = [("cpu-cycles", HW, 0, HW_CYCLES),
              ("instructions", HW, 0, HW_INSTRUCTIONS),
              ("r00c0", 4, 0, 0xc0)]
        s = Stream()
        s.started(7, events=ev)
        s.sample(7, [(400, 10, 10), (100, 10, 10), (7, 10, 10)])
        self.replay(s)
        r = self.rows[0]
        self.assertEqual(r["cpu_cycles"], 400)
        self.assertEqual(r["r00c0"], 7)
        self.assertAlmostEqual(r["ipc"], 0.25)
        self.assertIsNone(r["cache_miss_rate"])

    def test_ratio_needs_same_modifiers(self):
        s = Stream()
        s.started(7, events=[("cycles:u", HW, MOD_U, HW_CYCLES),
                             ("instructions", HW, 0, HW_INSTRUCTIONS)])
        s.sample(7, [(400, 10, 10), (100, 10, 10)])
        s.started(8, events=[("cycles:G", HW, MOD_G, HW_CYCLES),
                             ("instructions:G", HW, MOD_G,
                              HW_INSTRUCTIONS)])
        s.sample(8, [(400, 10, 10), (100, 10, 10)])
        self.replay(s)
        self.assertEqual(self.rows[0]["cycles_u"], 400)
        self.assertIsNone(self.rows[0]["ipc"])
        self.assertEqual(self.rows[1]["instructions_guest"], 100)
        self.assertAlmostEqual(self.rows[1]["ipc"], 0.25)

    def test_guest_host_keys_in_words(self):
        """G and H are spelled out in keys; other modifier letters stay."""
        s = Stream()
        s.started(7, events=[("cycles:G", HW, MOD_G, HW_CYCLES),
                             ("cycles:H", HW, MOD_H, HW_CYCLES),
                             ("cycles:uG", HW, MOD_U | MOD_G, HW_CYCLES),
                             ("cycles:D", HW, MOD_D, HW_CYCLES),
                             ("sched:G", 2, 0, 5)])
        s.sample(7, [(1, 10, 10)] * 5)
        self.replay(s)
        r = self.rows[0]
        for k in ("cycles_guest", "cycles_host", "cycles_u_guest",
                  "cycles_D", "sched_G"):
            self.assertIn(k, r)

    def test_keywords_not_applied_flagged(self):
        """Keyword modifiers the kernel would ignore for an event are in
        perf_started and in every row, under modifiers_not_applied."""
        s = Stream()
        s.started(7, events=[("cycles", HW, MOD_G, HW_CYCLES),
                             ("page-faults", SW, MOD_G << 8,
                              SW_PAGE_FAULTS)])
        s.sample(7, [(1, 10, 10), (2, 10, 10)])
        s.sample(7, [(3, 20, 20), (4, 20, 20)])
        self.replay(s)
        st = [e for e in self.events if e["event"] == "perf_started"][0]
        self.assertEqual(st["modifiers_not_applied"], {"page-faults": "G"})
        for r in self.rows:
            self.assertEqual(r["modifiers_not_applied"], {"page_faults": "G"})

    def test_unavailable_error_state_errno_null(self):
        s = Stream()
        s.started(7, events=[("cycles:D", HW, MOD_D, HW_CYCLES)])
        s.unavailable(7, 0, "cycles:D", 0, 10)
        self.replay(s)
        u = [e for e in self.events if e["event"] == "perf_unavailable"][0]
        self.assertIsNone(u["errno"])
        self.assertEqual(u["reason"], "pinned_no_slot")

    def test_unavailable_scope(self):
        """A process counter of a thread that could not be made (scope
        vm) leaves the thread's own counter, and its rows, alone; a
        thread's own says scope thread.  An exec's detach says exec."""
        s = Stream()
        s.started(7, events=SW_EVENTS)
        s.unavailable(7, 0, "page-faults", 13, 4, flags=UNAVAILABLE_PROCESS)
        s.started(8, events=SW_EVENTS, vcpu=1)
        s.unavailable(8, 0, "page-faults", 13, 4, vcpu=1)
        for t, mask in ((7, 0b11), (8, 0b10)):
            s.sample(t, [(5, 10, 10), (10, 10, 10)], mask=mask)
            s.sample(t, [(9, 20, 20), (20, 20, 20)], mask=mask)
        s.detached(7, DETACH_EXEC)
        self.assertEqual(self.replay(s), 0, self.err)
        un = {e["tid"]: e for e in self.ev("perf_unavailable")}
        self.assertEqual((un[7]["scope"], un[7]["reason"], un[7]["errno"]),
                         ("vm", "access_denied", "EACCES"))
        self.assertEqual(un[8]["scope"], "thread")
        rows = {}
        for r in self.rows:
            rows.setdefault(r["tid"], []).append(r["page_faults"])
        self.assertEqual(rows[7][-1], 4)
        self.assertIsNone(rows[8][-1])
        self.assertEqual(self.ev("perf_detached")[0]["reason"], "exec")

    def test_tracepoint_key_and_novcpu(self):
        s = Stream()
        s.started(9, events=[("kvm:kvm_exit", 2, 0, 1234),
                             ("task-clock", SW, 0, SW_TASK_CLOCK)],
                  vcpu=NO_VCPU, kind=KIND_PID)
        s.sample(9, [(17, 10, 10), (9000, 10, 10)], vcpu=NO_VCPU)
        self.assertEqual(self.replay(s), 0, self.err)
        r = self.rows[0]
        self.assertIsNone(r["vcpu"])
        self.assertEqual(r["kvm_kvm_exit"], 17)
        self.assertEqual(r["task_clock"], 9000)
        self.assertIsNone(self.ev("perf_started")[0]["vcpu"])

    def test_raw_and_mono_origin(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:2])
        s.sample(7, [(1000, 200, 100), (0, 0, 0)], mask=1,
                 t=2_000_000_000)
        self.replay(s, "--raw", "--mono-origin", "500000000")
        r = self.rows[0]
        self.assertEqual(r["t_mono_ns"], 1_500_000_000)
        self.assertEqual(list(r)[-1], "raw")
        self.assertEqual(r["raw"]["cycles"],
                         {"value": 1000, "enabled": 200, "running": 100})
        self.assertIsNone(r["raw"]["instructions"])
        self.assertEqual(self.events[0]["t_mono_ns"],
                         1_000_001_000 - 500_000_000)

    def test_sample_without_started(self):
        s = Stream()
        s.sample(7, [(1, 1, 1)])
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual(self.rows, [])
        self.assertIn("without a started record", self.err)

    def test_many_rows_interleaved(self):
        s = Stream()
        tids = list(range(1000, 1040))
        for t in tids:
            s.started(t, vcpu=t - 1000)
        for i in range(1, 51):
            for t in tids:
                s.sample(t, [(i * 10, i * 100, i * 100)] * 8, vcpu=t - 1000)
        s.finished(0, 2000, 2000, targets=40)
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual(len(self.rows), 2000)
        self.assertTrue(all(r["cycles"] == 10 for r in self.rows))
        self.assertEqual(self.ev("perf_finished")[0]["rows"], 2000)


class TestSequence(ToolCase):
    def test_gap_explained_by_dropped(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.sample(7, [(1, 1, 1)])
        first = s.skip(3)
        s.dropped(3, first, 3)
        s.sample(7, [(2, 2, 2)])
        self.assertEqual(self.replay(s), 0, self.err)
        gaps = self.ev("perf_seq_gap")
        self.assertEqual(len(gaps), 1)
        self.assertEqual(gaps[0]["expected"], first)
        self.assertEqual(gaps[0]["got"], first + 3)
        self.assertIs(gaps[0]["explained"], True)
        d = self.ev("perf_dropped")[0]
        self.assertEqual((d["count"], d["first_seq"], d["total"]),
                         (3, first, 3))
        self.assertEqual(len(self.rows), 2)

    def test_gap_unexplained(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        first = s.skip(2)
        s.sample(7, [(1, 1, 1)])
        s.sample(7, [(2, 2, 2)])
        self.assertEqual(self.replay(s), 1)
        gaps = self.ev("perf_seq_gap")
        self.assertEqual(len(gaps), 1)
        self.assertEqual((gaps[0]["expected"], gaps[0]["got"]),
                         (first, first + 2))
        self.assertIs(gaps[0]["explained"], False)
        self.assertEqual(len(self.rows), 2)    # everything still written

    def test_dropped_with_wrong_count(self):
        s = Stream()
        first = s.skip(3)
        s.dropped(2, first, 2)
        self.assertEqual(self.replay(s), 1)
        self.assertIs(self.ev("perf_seq_gap")[0]["explained"], False)

    def test_header_next_seq(self):
        s = Stream(next_seq=500)
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.sample(7, [(1, 1, 1)])
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual(self.ev("perf_seq_gap"), [])
        self.assertEqual(self.rows[0]["seq"], 501)

    def test_unknown_type_skipped(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.unknown(99, 40)
        s.sample(7, [(5, 5, 5)])
        self.assertEqual(self.replay(s), 0, self.err)
        self.assertEqual(len(self.rows), 1)
        self.assertEqual(self.rows[0]["cycles"], 5)
        self.assertEqual(self.ev("perf_seq_gap"), [])

    def test_too_many_events_rejected(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.sample(7, [(1, 1, 1)] * 17)
        s.sample(7, [(5, 5, 5)])
        self.assertEqual(self.replay(s), 1)
        self.assertEqual(len(self.rows), 1)
        self.assertIn("MAX_EVENTS", self.err)

    def test_bad_size_is_fatal(self):
        s = Stream()
        s.raw(SAMPLE, 7, b"\0" * 8, size=36)
        self.assertEqual(self.replay(s), 1)
        self.assertIn("corrupt", self.err)


class TestReassembly(ToolCase):
    def build(self):
        s = Stream()
        s.started(7, comm=b"CPU 0/KVM")
        for i in range(1, 30):
            s.sample(7, [(i * 1000, i * 100, i * 50)] * 8)
        s.detached(7, DETACH_STOP)
        s.finished(7, 29, 29)
        s.finished(0, 29, 29)
        return s.bytes()

    def test_file_vs_small_chunks(self):
        data = self.build()
        self.assertEqual(self.replay(data), 0, self.err)
        want_rows, want_ev = self.rows, self.events
        out, ev = self.path("o2.jsonl"), self.path("e2.jsonl")
        p = subprocess.Popen([TOOL, "--replay", "-", "-o", out,
                              "--events-out", ev], stdin=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        for i in range(0, len(data), 7):
            p.stdin.write(data[i:i + 7])
            p.stdin.flush()
            if i % 140 == 0:
                time.sleep(0.001)
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0, p.stderr.read())
        p.stderr.close()
        self.assertEqual(load(out), want_rows)
        self.assertEqual(load(ev), want_ev)
        self.assertEqual(len(want_rows), 29)


class TestFlush(ToolCase):
    def test_rows_land_while_the_stream_never_runs_dry(self):
        """A reader that never sees an empty stream (here: a pipe, read
        blocking) still writes its rows out within about a second."""
        s = Stream()
        s.started(7, comm=b"CPU 0/KVM")
        for i in range(1, 400):
            s.sample(7, [(i * 1000, i * 100, i * 50)] * 8)
        data = s.bytes()
        out, ev = self.path("o.jsonl"), self.path("e.jsonl")
        p = subprocess.Popen([TOOL, "--replay", "-", "-o", out,
                              "--events-out", ev], stdin=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        chunk = len(data) // 300 + 1
        seen = None
        t0 = time.monotonic()
        for i in range(0, len(data), chunk):
            p.stdin.write(data[i:i + chunk])
            p.stdin.flush()
            time.sleep(0.01)
            if seen is None and os.path.getsize(out) > 0:
                seen = time.monotonic() - t0
        fed = time.monotonic() - t0
        p.stdin.close()
        self.assertEqual(p.wait(timeout=60), 0, p.stderr.read())
        p.stderr.close()
        self.assertGreater(fed, 2.5)
        self.assertIsNotNone(seen, "no row written during %.1f s of a "
                             "stream that never ran dry" % fed)
        self.assertLess(seen, 2.0)
        self.assertEqual(len(load(out)), 399)
        self.assertTrue(load(ev))


class TestLifecycle(ToolCase):
    def test_all_events(self):
        ev = DEFAULT_EVENTS[:3]
        s = Stream()
        s.started(7, events=ev, comm=b"CPU 0/KVM")
        s.unavailable(7, 2, "cache-references", 2, CAUSE_NO_PMU)
        s.vcpu_added(8, b"CPU 1/KVM")
        s.sample(7, [(10, 10, 10), (20, 10, 5), (0, 0, 0)], mask=0b011,
                 flags=SAMPLE_FIRST)
        s.first_row(7, 1, 0b011, 0b011, 3)
        s.multiplexed(7, 0b010, 500000)
        s.no_counters(7, 10, 9, 0b011)
        s.task_exited(7, [(11, 12, 12), (22, 12, 6), (0, 0, 0)], 0b011)
        s.detached(7, DETACH_EXITED)
        s.finished(7, 1, 1)
        s.finished(0, 5, 4, targets=2, drops=0)
        self.assertEqual(self.replay(s), 0, self.err)
        names = [e["event"] for e in self.events]
        self.assertEqual(names, [
            "perf_started", "perf_unavailable", "perf_vcpu_added",
            "perf_first_row", "perf_multiplexed", "perf_no_counters",
            "perf_task_exited", "perf_detached", "perf_finished",
            "perf_finished"])
        for e in self.events:
            self.assertEqual(list(e)[:5], ["event", "t_mono_ns", "t_wall_ns",
                                           "source", "seq"])
            self.assertEqual(e["source"], "vcpuperf")
        st = self.ev("perf_started")[0]
        self.assertEqual((st["pid"], st["tid"], st["vcpu"], st["kind"],
                          st["comm"]), (100, 7, 0, "qemu", "CPU 0/KVM"))
        self.assertEqual(st["events"], ["cycles", "instructions",
                                        "cache-references"])
        self.assertEqual(st["interval_ms"], 100)
        un = self.ev("perf_unavailable")[0]
        self.assertEqual((un["counter"], un["index"], un["errno"],
                          un["error"], un["reason"]),
                         ("cache-references", 2, "ENOENT", 2, "no_pmu_event"))
        self.assertIn("PMU", un["detail"])
        va = self.ev("perf_vcpu_added")[0]
        self.assertEqual((va["tid"], va["vcpu"], va["comm"]),
                         (8, 1, "CPU 1/KVM"))
        fr = self.ev("perf_first_row")[0]
        self.assertIs(fr["counters_populated"], True)
        self.assertEqual(fr["counters"], ["cycles", "instructions"])
        mx = self.ev("perf_multiplexed")[0]
        self.assertEqual(mx["events"], ["instructions"])
        self.assertEqual(mx["min_running_ratio"], 0.5)
        nc = self.ev("perf_no_counters")[0]
        self.assertEqual((nc["intervals_seen"], nc["intervals_ran"]),
                         (10, 9))
        self.assertIn("PMU", nc["likely_cause"])
        self.assertEqual(nc["events"], ["cycles", "instructions"])
        tx = self.ev("perf_task_exited")[0]
        self.assertEqual(tx["final"], {"cycles": 11, "instructions": 22,
                                       "cache-references": None})
        self.assertEqual(tx["exited"], ["cycles", "instructions"])
        self.assertEqual(self.ev("perf_detached")[0]["reason"], "exited")
        th, se = self.ev("perf_finished")
        self.assertEqual((th["tid"], th["intervals_seen"],
                          th["intervals_with_values"], th["rows"]),
                         (7, 1, 1, 1))
        self.assertEqual(se["scope"], "session")
        self.assertEqual(se["tid"] if "tid" in se else 0, 0)
        self.assertEqual((se["targets"], se["drops"], se["intervals_seen"],
                          se["intervals_with_values"], se["rows"]),
                         (2, 0, 5, 4, 1))

    def test_weird_comm_escaped(self):
        comm = b'a"b\\c\n\x01\x7f\xff\xe9/{}'
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1], comm=comm)
        s.vcpu_added(8, comm)
        self.assertEqual(self.replay(s), 0, self.err)
        want = comm.decode("latin-1")
        self.assertEqual(self.ev("perf_started")[0]["comm"], want)
        self.assertEqual(self.ev("perf_vcpu_added")[0]["comm"], want)

    def test_events_inline(self):
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.sample(7, [(1, 1, 1)])
        src = self.path("s.bin")
        with open(src, "wb") as f:
            f.write(s.bytes())
        out = self.path("all.jsonl")
        p = subprocess.run([TOOL, "--replay", src, "-o", out],
                           capture_output=True)
        self.assertEqual(p.returncode, 0)
        lines = load(out)
        self.assertEqual(lines[0]["event"], "perf_started")
        self.assertEqual(lines[1]["cycles"], 1)


class TestCli(ToolCase):
    OPTIONS = ["--qemu", "--pid", "--tid", "--no-attach", "--events",
               "--interval", "--ring", "--read", "--guest-only",
               "--host-only",
               "--user-only",
               "--kernel-only", "--pinned", "--duration", "-o",
               "--events-out", "--raw", "--mono-origin", "--debugfs",
               "--device", "--replay", "--record", "--help"]

    def run_tool(self, *args):
        p = subprocess.run([TOOL] + list(args), capture_output=True,
                           timeout=60)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def test_help(self):
        rc, out, _ = self.run_tool("--help")
        self.assertEqual(rc, 0)
        for opt in self.OPTIONS:
            self.assertIn(opt, out)

    def test_bad_events(self):
        out = self.path("o.jsonl")
        rc, _, err = self.run_tool("--tid", "1", "--events",
                                   "cycles,bogus", "-o", out,
                                   "--debugfs", self.path("nodir"))
        self.assertEqual(rc, 2)
        self.assertIn("bogus", err)
        self.assertFalse(os.path.exists(out))

    def test_usage_errors(self):
        cases = [
            [],
            ["--tid", "1", "--pid", "2"],
            ["--tid", "1", "--interval", "0ms"],
            ["--tid", "1", "--interval", "2min"],
            ["--tid", "1", "--duration", "abc"],
            ["--tid", "1", "--guest-only", "--host-only"],
            ["--tid", "1", "--user-only", "--kernel-only"],
            ["--tid", "0"],
            ["--no-attach", "--events", "cycles"],
            ["--tid", "1", "--ring", "32K"],
            ["--tid", "1", "--ring", "2G"],
            ["--tid", "1", "--ring", "1X"],
            ["--no-attach", "--ring", "1M"],
            ["--tid", "1", "--read", "sometimes"],
            ["--no-attach", "--read", "kick"],
            ["--tid", "1", "--events", "cycles:u", "--kernel-only"],
            ["--tid", "1", "--bogus-option"],
        ]
        for args in cases:
            rc, _, err = self.run_tool(*args)
            self.assertEqual(rc, 2, (args, err))
            self.assertTrue(err, args)

    def test_all_qemu_usage_errors(self):
        """--all-qemu's own options, misused: exit 2, a message naming
        what is wrong, and the output directory not made."""
        d = self.path("episodes")
        cases = [
            (["--all-qemu"], "--output-dir"),
            (["--output-dir", d, "--qemu", "1"], "need --all-qemu"),
            (["--match", "vm*", "--pid", "1"], "need --all-qemu"),
            (["--scan-interval", "1s", "--no-attach"], "need --all-qemu"),
            (["--all-qemu", "--output-dir", d, "--scan-interval", "0ms"],
             "--scan-interval"),
            (["--all-qemu", "--output-dir", d, "--scan-interval", "x"],
             "--scan-interval"),
            (["--all-qemu", "--output-dir", d, "--qemu", "1"], "give one of"),
            (["--all-qemu", "--output-dir", d, "--events-out",
              self.path("e.jsonl")], "--events-out"),
            (["--all-qemu", "--output-dir", d, "--events", "bogus"],
             "bogus"),
            (["--all-qemu", "--output-dir", d, "--emulator-threads",
              "--interval", "0ms"], "--interval"),
        ]
        for args, said in cases:
            rc, _, err = self.run_tool(*args)
            self.assertEqual(rc, 2, (args, err))
            self.assertIn(said, err, args)
            self.assertFalse(os.path.exists(d), args)
        # a file where the directory should be: a clear error, not a
        # recording
        open(d, "w").close()
        rc, _, err = self.run_tool("--all-qemu", "--output-dir", d,
                                   "--debugfs", self.path("nodir"),
                                   "--device", self.path("nodev"))
        self.assertNotEqual(rc, 0)
        self.assertIn(d, err)
        self.assertEqual(os.path.getsize(d), 0)

    def test_missing_debugfs_dir(self):
        rc, _, err = self.run_tool("--tid", "1", "--debugfs",
                                   self.path("nodir"))
        self.assertEqual(rc, 1)
        self.assertTrue("module not loaded" in err or
                        "no such directory" in err, err)

    def test_device_fallback(self):
        """The device opens: it is the tool's collection (here /dev/null:
        no header).  Device missing: the default collection through
        debugfs, said once.  Neither usable: both reasons."""
        d = self.path("vp")
        os.mkdir(d)
        rc, _, err = self.run_tool("--tid", "1", "--debugfs", d,
                                   "--device", "/dev/null", "-o",
                                   self.path("o.jsonl"))
        self.assertIn("empty stream", err)     # /dev/null has no header
        self.assertNotIn("using", err)
        self.assertEqual(rc, 1)
        rc, _, err = self.run_tool("--tid", "1", "--debugfs", d,
                                   "--device", self.path("nodev"))
        self.assertEqual(rc, 1)
        self.assertIn(os.path.join(d, "control"), err)
        self.assertIn(self.path("nodev") + ": No such file or directory",
                      err)
        self.assertNotIn("using", err)
        rc, _, err = self.run_tool("--no-attach", "--debugfs", d,
                                   "--device", "/dev/null")
        self.assertEqual(rc, 1)
        self.assertIn(os.path.join(d, "stream"), err)
        self.assertNotIn("/dev/null", err)

    def test_missing_device_falls_back_to_debugfs(self):
        d = self.fake_debugfs(Stream().bytes())
        rc, _, err = self.run_tool("--tid", "4242", "--debugfs", d,
                                   "--device", self.path("nodev"), "-o",
                                   self.path("o.jsonl"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(err.count("using the module's default "
                                   "collection in " + d), 1, err)
        self.assertEqual(len(err.splitlines()), 1, err)

    def fake_debugfs(self, stream_bytes=None):
        d = self.path("vcpuperf")
        os.mkdir(d)
        if stream_bytes is not None:
            with open(os.path.join(d, "stream"), "wb") as f:
                f.write(stream_bytes)
        with open(os.path.join(d, "control"), "wb"):
            pass
        with open(os.path.join(d, "status"), "w") as f:
            f.write("targets: 0\nlast_error: no such thread 4242\n")
        return d

    def test_live_flow_fake_debugfs(self):
        s = Stream()
        s.started(4242, events=DEFAULT_EVENTS[:2])
        s.sample(4242, [(5, 5, 5), (6, 5, 5)])
        s.finished(0, 1, 1)
        d = self.fake_debugfs(s.bytes())
        out, rec = self.path("o.jsonl"), self.path("rec.bin")
        rc, _, err = self.run_tool("--tid", "4242", "--events",
                                   "cycles,instructions", "--interval",
                                   "50", "--ring", "8M", "--guest-only",
                                   "--debugfs", d, "--device",
                                   self.path("nodev"), "-o", out,
                                   "--record", rec)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(d, "control")) as f:
            self.assertEqual(f.read(), "ring 8M" "interval 50ms"
                             "attach tid=4242 events=cycles,instructions "
                             "guest_only")
        lines = load(out)
        self.assertEqual([l.get("event") for l in lines],
                         ["perf_started", None, "perf_finished"])
        with open(rec, "rb") as f:
            self.assertEqual(f.read(), s.bytes())

    def test_kvm_exits(self):
        """--kvm-exits adds the named KVM events after --events (one it
        names already is not added twice); their rows carry them under
        kvm_* keys, null with perf_unavailable no_tracepoint for one
        whose tracepoint the kernel lacks."""
        kvm = ["kvm-exits", "kvm-userspace-exits", "KVM-mmio", "kvm-halts",
               "kvm-hypercalls"]
        events = [("cycles", HW, 0, HW_CYCLES)] + \
            [(n, TRACEPOINT, 0, 40 + i) for i, n in enumerate(kvm[:4])] + \
            [(kvm[4], TRACEPOINT, 0, CONFIG_ABSENT)]
        s = Stream()
        s.started(4242, events=events)
        s.unavailable(4242, 5, kvm[4], 2, CAUSE_NO_TRACEPOINT)
        s.sample(4242, [(5, 5, 5), (70, 5, 5), (3, 5, 5), (2, 5, 5),
                        (1, 5, 5), (0, 0, 0)], mask=0b011111)
        s.finished(4242, 1, 1)
        d = self.fake_debugfs(s.bytes())
        out = self.path("o.jsonl")
        rc, _, err = self.run_tool("--tid", "4242", "--events",
                                   "cycles,KVM-mmio", "--kvm-exits",
                                   "--debugfs", d, "--device",
                                   self.path("nodev"), "-o", out)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(d, "control")) as f:
            self.assertEqual(f.read(), "attach tid=4242 events=cycles,"
                             "KVM-mmio,kvm-exits,kvm-userspace-exits,"
                             "kvm-halts,kvm-hypercalls")
        lines = load(out)
        row = [l for l in lines if "event" not in l][0]
        self.assertEqual([row[k] for k in ("kvm_exits", "kvm_userspace_exits",
                                           "KVM_mmio", "kvm_halts",
                                           "kvm_hypercalls")],
                         [70, 3, 2, 1, None])
        un = [l for l in lines if l.get("event") == "perf_unavailable"]
        self.assertEqual([(u["counter"], u["reason"]) for u in un],
                         [("kvm-hypercalls", "no_tracepoint")])
        self.assertIn("kvm", un[0]["detail"])
        for args, said in (
                (["--no-attach", "--kvm-exits"], "--kvm-exits"),
                (["--tid", "1", "--kvm-exits", "--events",
                  "cycles,instructions,branches,task-clock,cs,faults,"
                  "migrations,cpu-clock,minor-faults,major-faults,"
                  "alignment-faults,emulation-faults"], "--kvm-exits")):
            rc, _, err = self.run_tool(*args)
            self.assertEqual(rc, 2, (args, err))
            self.assertIn(said, err, args)

    def test_control_failure_reports_last_error(self):
        d = self.fake_debugfs(Stream().bytes())
        os.unlink(os.path.join(d, "control"))
        os.symlink("/dev/full", os.path.join(d, "control"))
        out = self.path("o.jsonl")
        rc, _, err = self.run_tool("--tid", "4242", "--debugfs", d,
                                   "--device", self.path("nodev"), "-o", out)
        self.assertEqual(rc, 1)
        self.assertIn("ENOSPC", err)
        self.assertIn("no such thread 4242", err)

    def test_signal_sends_stop_and_drains(self):
        d = self.fake_debugfs()
        fifo = os.path.join(d, "stream")
        os.mkfifo(fifo)
        wfd = os.open(fifo, os.O_RDWR)
        s = Stream()
        s.started(4242, events=DEFAULT_EVENTS[:1])
        s.sample(4242, [(5, 5, 5)])
        os.write(wfd, s.bytes())
        s.data = bytearray()
        out = self.path("o.jsonl")
        p = subprocess.Popen([TOOL, "--tid", "4242", "--debugfs", d,
                              "--device", self.path("nodev"),
                              "-o", out, "--events", "cycles"],
                             stderr=subprocess.PIPE)
        ctl = os.path.join(d, "control")
        deadline = time.time() + 10
        while time.time() < deadline:
            with open(ctl) as f:
                if f.read().startswith("attach"):
                    break
            time.sleep(0.02)
        time.sleep(0.2)
        p.send_signal(signal.SIGINT)
        while time.time() < deadline:
            with open(ctl) as f:
                if f.read().endswith("stop"):
                    break
            time.sleep(0.02)
        s.sample(4242, [(9, 9, 9)], flags=SAMPLE_FINAL)
        s.detached(4242, DETACH_STOP)
        s.finished(4242, 2, 2)
        s.finished(0, 2, 2)
        os.write(wfd, s.bytes())
        os.close(wfd)
        rc = p.wait(timeout=20)
        err = p.stderr.read().decode()
        p.stderr.close()
        self.assertEqual(rc, 0, err)
        lines = load(out)
        rows = [l for l in lines if "event" not in l]
        self.assertEqual([r["cycles"] for r in rows], [5, 4])
        fin = [l for l in lines if l.get("event") == "perf_finished"]
        self.assertEqual(fin[-1]["rows"], 2)

    def test_no_attach_signal_exits_without_stop(self):
        d = self.fake_debugfs()
        fifo = os.path.join(d, "stream")
        os.mkfifo(fifo)
        wfd = os.open(fifo, os.O_RDWR)
        s = Stream()
        s.started(7, events=DEFAULT_EVENTS[:1])
        s.sample(7, [(5, 5, 5)])
        os.write(wfd, s.bytes())
        out = self.path("o.jsonl")
        p = subprocess.Popen([TOOL, "--no-attach", "--debugfs", d,
                              "-o", out], stderr=subprocess.PIPE)
        time.sleep(0.3)
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=20)
        p.stderr.close()
        os.close(wfd)
        self.assertEqual(rc, 0)
        with open(os.path.join(d, "control")) as f:
            self.assertEqual(f.read(), "")
        self.assertEqual(len(load(out)), 2)

    def test_duration_no_attach(self):
        d = self.fake_debugfs()
        fifo = os.path.join(d, "stream")
        os.mkfifo(fifo)
        wfd = os.open(fifo, os.O_RDWR)
        os.write(wfd, Stream().bytes())
        t0 = time.time()
        rc, _, err = self.run_tool("--no-attach", "--duration", "300ms",
                                   "--debugfs", d, "-o",
                                   self.path("o.jsonl"))
        os.close(wfd)
        self.assertEqual(rc, 0, err)
        self.assertLess(time.time() - t0, 5)


def main():
    ensure_built()
    return run_module(__name__)


if __name__ == "__main__":
    sys.exit(main())
