#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of vcpuperf-plot (no VM, no module): an episode recorded as
vcpuperf-cat writes it (a stream built with struct as in test_decode.py,
decoded by vcpuperf-cat --replay) renders to PNG and SVG; the SVG's text
names every vCPU and every lifecycle event kind present; a null value is
a gap (NaN), never a zero; --summary's totals are the rows' sums.

Run from the repository root:  python3 tests/tool/test_plot.py
"""

import importlib.machinery
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import run_module  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode import (Stream, TOOL, ROOT, ensure_built, load,  # noqa
                         SW, HW, SW_PAGE_FAULTS, SW_TASK_CLOCK,
                         SW_CONTEXT_SWITCHES, HW_CYCLES, CAUSE_NO_PMU,
                         SCHED_RUN, SCHED_INFO)

PLOT = os.path.join(ROOT, "tools", "vcpuperf-plot")
EVENTS = [("task-clock", SW, 0, SW_TASK_CLOCK),
          ("page-faults", SW, 0, SW_PAGE_FAULTS),
          ("context-switches", SW, 0, SW_CONTEXT_SWITCHES),
          ("cycles", HW, 0, HW_CYCLES)]
KINDS = ["unavailable", "multiplexed", "vcpu_added", "task_exited",
         "dropped"]


def plot_module():
    loader = importlib.machinery.SourceFileLoader("vcpuperf_plot", PLOT)
    spec = importlib.util.spec_from_loader("vcpuperf_plot", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def episode():
    """Two vCPUs from the start, a third added later, vCPU 0 exiting; an
    unavailable cycles counter, a multiplexed interval (page faults of
    vCPU 1 null once: enabled, never running), a drop; scheduler figures
    with run-queue wait for vCPUs 0 and 1, without (no SCHED_INFO: null)
    for vCPU 2."""
    s = Stream()
    t = 1_000_000_000
    cum = {}
    for tid, vcpu in ((10, 0), (11, 1)):
        s.started(tid, events=EVENTS, vcpu=vcpu)
        s.unavailable(tid, 3, "cycles", 2, CAUSE_NO_PMU, vcpu=vcpu)
        cum[tid] = [[0, 0, 0] for _ in EVENTS]
    live = {10: 0, 11: 1}
    sched = {}
    for i in range(12):
        t += 100_000_000
        if i == 4:
            s.vcpu_added(12, b"CPU 2/KVM", vcpu=2)
            s.started(12, events=EVENTS, vcpu=2)
            cum[12] = [[0, 0, 0] for _ in EVENTS]
            live[12] = 2
        if i == 6:
            first = s.skip(3)
            s.dropped(3, first, 3)
        for tid, vcpu in sorted(live.items()):
            c = cum[tid]
            c[0][0] += 40_000_000 + 10_000_000 * vcpu
            c[1][0] += 100 + i
            c[2][0] += 5
            for e in range(3):
                c[e][1] += 100_000_000
                c[e][2] += 100_000_000
            if tid == 11 and i == 8:
                c[1][2] -= 100_000_000      # page-faults never ran
                s.multiplexed(11, 0b010, 0, vcpu=1)
            sch = sched.setdefault(tid, [0] * 6)
            sch[0] += c[0][0] - sch[0]
            sch[1] += 2_000_000 * (vcpu + 1) + 1000 * i
            sch[4] += vcpu
            s.sample(tid, [tuple(x) for x in c], mask=0b0111, vcpu=vcpu,
                     t=t, sched=tuple(sch) + (
                         0, SCHED_RUN | (SCHED_INFO if vcpu < 2 else 0)))
        if i == 9:
            s.task_exited(10, [tuple(x) for x in cum[10]], 0b0111, vcpu=0)
            del live[10]
    return s


class PlotCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        ensure_built()
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        src = os.path.join(d, "s.bin")
        with open(src, "wb") as f:
            f.write(episode().bytes())
        cls.jsonl = os.path.join(d, "episode.jsonl")
        p = subprocess.run([TOOL, "--replay", src, "-o", cls.jsonl],
                           capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        cls.lines = load(cls.jsonl)
        cls.rows = [x for x in cls.lines if "event" not in x]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def render(self, ext):
        out = os.path.join(self.tmp.name, "episode." + ext)
        p = subprocess.run([PLOT, self.jsonl, "-o", out],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return out

    def test_png(self):
        out = self.render("png")
        with open(out, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(data), 10000)

    def test_svg_names_vcpus_and_events(self):
        with open(self.render("svg")) as f:
            svg = f.read()
        present = {e["event"][len("perf_"):] for e in self.lines
                   if "event" in e}
        for k in KINDS:
            self.assertIn(k, present)
            self.assertIn(">%s<" % k, svg, k)
        for v in (0, 1, 2):
            self.assertIn(">vCPU %d<" % v, svg)
        for label in ("utilisation", "page faults", "context switches",
                      "run-queue wait", "involuntary switches"):
            self.assertIn(label, svg)
        self.assertNotIn(">IPC<", svg)      # no row has an ipc

    def test_null_is_a_gap(self):
        nulls = [r for r in self.rows if r["page_faults"] is None]
        self.assertEqual(len(nulls), 1)
        s = plot_module().series(self.rows)[1]
        i = [k for k, v in enumerate(s["page_faults"]) if math.isnan(v)]
        self.assertEqual(len(i), 1)
        self.assertFalse(any(v == 0 for v in s["page_faults"]))
        self.assertAlmostEqual(s["utilisation"][0], 0.5)

    def test_summary(self):
        p = subprocess.run([PLOT, self.jsonl, "--summary"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        for v in (0, 1, 2):
            rows = [r for r in self.rows if r["vcpu"] == v]
            want = "vCPU %d" % v
            line = [x for x in lines if x.startswith(want)]
            self.assertEqual(len(line), 1, p.stdout)
            f = line[0].split()
            self.assertEqual(int(f[2]), len(rows))
            self.assertAlmostEqual(float(f[3]), sum(
                r["task_clock"] for r in rows) / 1e6, places=1)
            self.assertEqual(int(f[4]), sum(r["page_faults"] or 0
                                            for r in rows))
            self.assertAlmostEqual(float(f[6]), sum(
                r["sched_wait_ns"] or 0 for r in rows) / 1e6, places=1)

    def test_wait_panel_null_is_a_gap(self):
        """vCPU 2's kernel kept no wait: a gap, never a zero; vCPU 1's
        wait is its rows' in ms."""
        data = plot_module().series(self.rows)
        self.assertTrue(all(math.isnan(v) for v in data[2]["sched_wait"]))
        rows = [r for r in self.rows if r["vcpu"] == 1]
        self.assertEqual(data[1]["sched_wait"],
                         [r["sched_wait_ns"] / 1e6 for r in rows])


class WhoCase(unittest.TestCase):
    """Rows with who took the CPU (--who, written here by hand): the wait
    behind other VMs, behind the host (processes and kernel threads
    together) and behind the VM's own threads, in ms; a row whose split
    was not kept (null) is a gap."""

    def test_who_panels(self):
        rows = []
        for i in range(4):
            keep = i != 2
            rows.append({
                "t_mono_ns": 1_000_000_000 + i * 100_000_000,
                "dt_ns": 100_000_000, "tid": 30, "vcpu": 0,
                "task_clock": 50_000_000,
                "sched_wait_other_vm_ns": 3_000_000 * i if keep else None,
                "sched_wait_host_ns": 1_000_000 if keep else None,
                "sched_wait_kernel_ns": 500_000 if keep else None,
                "sched_wait_same_vm_ns": 250_000 if keep else None})
        data = plot_module().series(rows)[0]
        self.assertEqual(data["sched_wait_other_vm"][:2], [0.0, 3.0])
        self.assertEqual(data["sched_wait_host"][3], 1.5)
        self.assertEqual(data["sched_wait_same_vm"][0], 0.25)
        for k in ("sched_wait_other_vm", "sched_wait_host",
                  "sched_wait_same_vm"):
            self.assertTrue(math.isnan(data[k][2]), k)

    def test_kvm_exits_panel(self):
        """--kvm-exits rows: KVM's exits per interval, null a gap."""
        rows = [{"t_mono_ns": 1_000_000_000 + i * 100_000_000,
                 "dt_ns": 100_000_000, "tid": 30, "vcpu": 0,
                 "task_clock": 50_000_000,
                 "kvm_exits": None if i == 1 else 40 + i}
                for i in range(3)]
        data = plot_module().series(rows)[0]["kvm_exits"]
        self.assertEqual([data[0], data[2]], [40.0, 42.0])
        self.assertTrue(math.isnan(data[1]))


class GuestInstructionsCase(unittest.TestCase):
    """Rows with instructions:G and instructions:H (an arm64 lab host's
    episode, written here by hand): their panels and the summary's guest
    instructions column."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.jsonl = os.path.join(self.tmp.name, "guest.jsonl")
        self.rows = []
        for i in range(6):
            for vcpu in (0, 1):
                self.rows.append({
                    "t_mono_ns": 1_000_000_000 + i * 100_000_000,
                    "dt_ns": 100_000_000 if i else None, "tid": 20 + vcpu,
                    "vcpu": vcpu, "role": "vcpu", "task_clock": 50_000_000,
                    "instructions_guest": 0 if vcpu else 99_000_000 + i,
                    "instructions_host": 1000 * (vcpu + 1) + i})
        with open(self.jsonl, "w") as f:
            for r in self.rows:
                f.write(json.dumps(r) + "\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_panels(self):
        out = os.path.join(self.tmp.name, "guest.svg")
        p = subprocess.run([PLOT, self.jsonl, "-o", out],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as f:
            svg = f.read()
        for label in ("guest instructions", "host instructions",
                      "utilisation"):
            self.assertIn(label, svg)
        self.assertNotIn("page faults", svg)

    def test_summary_totals(self):
        """--summary adds the whole-episode estimates of the perf_finished
        events (vCPUs, then the VM)."""
        with open(self.jsonl, "a") as f:
            for vcpu, est in ((0, 1234), (1, None)):
                f.write(json.dumps({
                    "event": "perf_finished", "scope": "thread",
                    "tid": 20 + vcpu, "vcpu": vcpu, "totals": {
                        "instructions:G": {"value": 1, "enabled": 2,
                                           "running": 1, "scaled": est}}})
                        + "\n")
            f.write(json.dumps({"event": "perf_finished", "scope": "vm",
                                "totals": {"instructions:G": {
                                    "scaled": 1234}}}) + "\n")
        p = subprocess.run([PLOT, self.jsonl, "--summary"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        i = lines.index("whole-episode estimates (perf_finished totals):")
        self.assertIn("instructions:G", lines[i + 1])
        self.assertEqual(lines[i + 2].split(), ["vCPU", "0", "1234"])
        self.assertEqual(lines[i + 3].split(), ["vCPU", "1", "null"])
        self.assertEqual(lines[i + 4].split(), ["VM", "1234"])

    def test_summary_column(self):
        p = subprocess.run([PLOT, self.jsonl, "--summary"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        self.assertIn("guest instructions", lines[0])
        for v in (0, 1):
            line = [x for x in lines if x.startswith("vCPU %d" % v)][0]
            self.assertEqual(int(line.split()[-1]), sum(
                r["instructions_guest"] for r in self.rows
                if r["vcpu"] == v))


def main():
    return run_module(__name__)


if __name__ == "__main__":
    sys.exit(main())
