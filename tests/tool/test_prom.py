#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of vcpuperf-cat --textfile with the real components (no VM,
no module): Debian's prometheus-node-exporter reads the file through its
textfile collector and Debian's prometheus scrapes it, both started here
on loopback and stopped at the end.

A recorded episode (a stream built with struct from the uapi layouts, as
tests/tool/test_decode.py builds them: a QEMU process with its VM
identity, two vCPU threads, an emulator thread and whole-process totals)
is fed to ``vcpuperf-cat --replay -`` one interval at a time, slower than
Prometheus scrapes.  The oracle for each counter is what the JSONL rows
of the same run say (the sum of a series' rows over the episode), the
query result is Prometheus' own (its HTTP API): the increase of the
counter over the episode, max_over_time - min_over_time over the range,
which Prometheus computes from the samples it scraped.  ``promtool check
metrics`` must be clean on every file the tool wrote.

Run from the repository root:  python3 tests/tool/test_prom.py
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import run_module  # noqa: E402
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_decode import (Stream, TOOL, ensure_built, load, NO_VCPU,  # noqa
                         SW, SW_PAGE_FAULTS, SW_TASK_CLOCK,
                         SW_CONTEXT_SWITCHES, HW, HW_CYCLES, MOD_G)

UUID = "0e1f6c3c-6b8a-4c38-9a27-1d2c3b4a5f60"
EVENTS = [("page-faults", SW, 0, SW_PAGE_FAULTS),
          ("task-clock", SW, 0, SW_TASK_CLOCK),
          ("context-switches", SW, 0, SW_CONTEXT_SWITCHES),
          ("cycles:G", HW, MOD_G, HW_CYCLES)]
INTERVALS = 8
SCRAPE_S = 1
PAUSE_S = 1.5               # between two intervals: > a scrape interval


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.read().decode()


def wait_http(url, proc, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("%s exited %d" % (what, proc.returncode))
        try:
            http_get(url)
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError("%s never answered at %s" % (what, url))


def episode():
    """The stream in chunks: the attach, then one chunk per interval.
    Thread t counts (per interval i, cumulative) what counts() says; the
    first sample of every thread is zero, as right after an attach."""
    s = Stream()
    s.process(pid=4242, vm=b"lab-vm1", uuid=UUID.encode(), events=EVENTS,
              threads=3)
    threads = [(4243, 0, b"CPU 0/KVM"), (4244, 1, b"CPU 1/KVM"),
               (4245, NO_VCPU, b"worker")]
    for tid, vcpu, comm in threads:
        s.started(tid, events=EVENTS, pid=4242, vcpu=vcpu, comm=comm)
    chunks = [s.bytes()]
    cum = {tid: [[0, 0, 0] for _ in EVENTS] for tid, _, _ in threads}
    proc = [[0, 0, 0] for _ in EVENTS]
    # scheduler figures: run, wait, slices, vol, invol, migr (cumulative)
    sched = {tid: [0] * 6 for tid, _, _ in threads}
    psched = [0] * 6
    # who took the CPU: wait by kind x5, preempted by kind x5, one other VM
    who = {tid: [0] * 11 for tid, _, _ in threads}
    for i in range(INTERVALS):
        mark = len(s.data)
        for k, (tid, vcpu, _) in enumerate(threads):
            if i:
                inc = [100 * (k + 1) + i, 20_000_000 + k * 1000 + i,
                       7 + k, 0]
                for e, v in enumerate(inc):
                    cum[tid][e][0] += v
                    cum[tid][e][1] += 100_000_000
                    cum[tid][e][2] += 100_000_000 if e < 3 else 0
                    proc[e][0] += v + (50 if e == 0 else 0)
                    proc[e][1] += 100_000_000
                    proc[e][2] += 100_000_000 if e < 3 else 0
                for f, v in enumerate([30_000_000 + i, 1_000_000 * (k + i),
                                       5 + k, 3, 2 + i, k]):
                    sched[tid][f] += v
                    psched[f] += v + 7
                for f in range(11):
                    who[tid][f] += 1000 * (f + 1) + i * 100_000 + k
            w = who[tid]
            s.sample(tid, [tuple(c) for c in cum[tid]], pid=4242,
                     vcpu=vcpu, mask=0b1111,
                     sched=tuple(sched[tid]) + (vcpu % 2, 3),
                     who=(w[0:5], w[5:10], [(7777, w[1])], 1, 0))
        s.process_sample([tuple(c) for c in proc], pid=4242, mask=0b1111,
                         exited=0, sched=tuple(psched) + (0, 3))
        chunks.append(bytes(s.data[mark:]))
    return chunks


class PromCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for b in ("prometheus", "prometheus-node-exporter", "promtool"):
            if not shutil.which(b):
                raise AssertionError("%s not installed: scripts/setup.sh "
                                     "check installs it" % b)
        ensure_built()
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.textdir = os.path.join(d, "textfile")
        os.mkdir(cls.textdir)
        cls.prom_path = os.path.join(cls.textdir, "vcpuperf.prom")
        cls.procs = []
        ne_port, prom_port = free_port(), free_port()
        cls.api = "http://127.0.0.1:%d/api/v1/" % prom_port
        ne = subprocess.Popen(
            ["prometheus-node-exporter", "--collector.disable-defaults",
             "--collector.textfile",
             "--collector.textfile.directory=" + cls.textdir,
             "--web.listen-address=127.0.0.1:%d" % ne_port],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(
                d, "node-exporter.log"), "w"))
        cls.procs.append(ne)
        cfg = os.path.join(d, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: %ds\n"
                    "  evaluation_interval: %ds\n"
                    "scrape_configs:\n  - job_name: node\n"
                    "    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" %
                    (SCRAPE_S, SCRAPE_S, ne_port))
        pr = subprocess.Popen(
            ["prometheus", "--config.file=" + cfg,
             "--storage.tsdb.path=" + os.path.join(d, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % prom_port],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(
                d, "prometheus.log"), "w"))
        cls.procs.append(pr)
        wait_http("http://127.0.0.1:%d/metrics" % ne_port, ne,
                  "node_exporter")
        wait_http(cls.api + "query?query=up", pr, "prometheus")
        deadline = time.time() + 60
        while not json.loads(http_get(cls.api + "query?query=up"))[
                "data"]["result"]:
            if time.time() > deadline:
                raise AssertionError("prometheus never scraped")
            time.sleep(0.2)
        cls.run_episode()

    @classmethod
    def run_episode(cls):
        d = cls.tmp.name
        cls.rows_path = os.path.join(d, "rows.jsonl")
        tool = subprocess.Popen(
            [TOOL, "--replay", "-", "-o", cls.rows_path, "--events-out",
             os.path.join(d, "events.jsonl"), "--textfile", cls.prom_path],
            stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        cls.textfiles = []
        cls.start = time.time()
        for i, chunk in enumerate(episode()):
            tool.stdin.write(chunk)
            tool.stdin.flush()
            # the zero counts of the first samples are scraped for sure
            time.sleep(PAUSE_S if i > 1 else 3 * SCRAPE_S)
            if os.path.exists(cls.prom_path):
                with open(cls.prom_path) as f:
                    cls.textfiles.append(f.read())
        tool.stdin.close()
        cls.tool_rc = tool.wait(timeout=30)
        cls.tool_err = tool.stderr.read().decode()
        time.sleep(3 * SCRAPE_S)        # the last file is scraped
        with open(cls.prom_path) as f:
            cls.textfiles.append(f.read())
        cls.rows = load(cls.rows_path)

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs:
            p.terminate()
        for p in cls.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        cls.tmp.cleanup()

    def query(self, q):
        url = self.api + "query?" + urllib.parse.urlencode(
            {"query": q, "time": "%.3f" % time.time()})
        res = json.loads(http_get(url))
        self.assertEqual(res["status"], "success", res)
        return res["data"]["result"]

    def increase(self, metric, labels):
        span = int(time.time() - self.start) + 30
        sel = "%s{%s}" % (metric, labels)
        q = "max_over_time(%s[%ds]) - min_over_time(%s[%ds])" % (
            sel, span, sel, span)
        res = self.query(q)
        self.assertEqual(len(res), 1, "%s: %s" % (q, res))
        return float(res[0]["value"][1])

    def test_tool_ran(self):
        self.assertEqual(self.tool_rc, 0, self.tool_err)
        self.assertGreaterEqual(len(self.textfiles), INTERVALS)

    def test_promtool_clean(self):
        for text in (self.textfiles[1], self.textfiles[-1]):
            p = subprocess.run(["promtool", "check", "metrics"], input=text,
                               capture_output=True, text=True)
            self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ""),
                             text)

    def test_counter_increase_equals_jsonl(self):
        lab = 'vm="lab-vm1",uuid="%s"' % UUID
        for vcpu, key in (("0", 0), ("1", 1), ("none", None)):
            rows = [r for r in self.rows
                    if r["tid"] is not None and r["vcpu"] == key]
            for metric, col, scale in (
                    ("vcpuperf_page_faults_total", "page_faults", 1),
                    ("vcpuperf_context_switches_total", "context_switches",
                     1),
                    ("vcpuperf_task_clock_seconds_total", "task_clock",
                     1e-9)):
                want = sum(r[col] for r in rows) * scale
                got = self.increase(metric, '%s,vcpu="%s",mode="all"' %
                                    (lab, vcpu))
                print("  %s{vcpu=%s}: Prometheus increase %s, JSONL total "
                      "%s" % (metric, vcpu, got, want))
                self.assertAlmostEqual(got, want, places=6)
        vm = [r for r in self.rows if r["tid"] is None]
        want = sum(r["page_faults"] for r in vm)
        got = self.increase("vcpuperf_process_page_faults_total",
                            lab + ',mode="all"')
        print("  vcpuperf_process_page_faults_total: Prometheus increase "
              "%s, JSONL per-VM total %s" % (got, want))
        self.assertEqual(got, want)

    def test_sched_increase_equals_jsonl(self):
        """The scheduler's figures: a series per vCPU and per process,
        without mode label, whose increase is the rows' sum."""
        lab = 'vm="lab-vm1",uuid="%s"' % UUID
        for vcpu, key in (("0", 0), ("none", None)):
            rows = [r for r in self.rows
                    if r["tid"] is not None and r["vcpu"] == key]
            for metric, col, scale in (
                    ("vcpuperf_sched_wait_seconds_total", "sched_wait_ns",
                     1e-9),
                    ("vcpuperf_sched_involuntary_switches_total",
                     "sched_involuntary_switches", 1)):
                want = sum(r[col] for r in rows) * scale
                got = self.increase(metric, '%s,vcpu="%s"' % (lab, vcpu))
                print("  %s{vcpu=%s}: Prometheus increase %s, JSONL total "
                      "%s" % (metric, vcpu, got, want))
                self.assertAlmostEqual(got, want, places=6)
        # Who took the CPU (--who): a series per kind and vCPU, the same.
        rows = [r for r in self.rows
                if r["tid"] is not None and r["vcpu"] == 0]
        for metric, col, scale in (
                ("vcpuperf_sched_wait_other_vm_seconds_total",
                 "sched_wait_other_vm_ns", 1e-9),
                ("vcpuperf_sched_preempted_host_total",
                 "sched_preempted_host", 1)):
            want = sum(r[col] for r in rows) * scale
            got = self.increase(metric, '%s,vcpu="0"' % lab)
            print("  %s{vcpu=0}: Prometheus increase %s, JSONL total %s" %
                  (metric, got, want))
            self.assertAlmostEqual(got, want, places=6)
        vm = [r for r in self.rows if r["tid"] is None]
        want = sum(r["sched_run_ns"] for r in vm) * 1e-9
        got = self.increase("vcpuperf_process_sched_run_seconds_total", lab)
        self.assertAlmostEqual(got, want, places=6)
        self.assertEqual(self.query('vcpuperf_time_enabled_seconds_total'
                                    '{event=~"sched_.*"}'), [])

    def test_uncounted_and_labels(self):
        # cycles:G (key cycles_guest) was enabled but never on the PMU:
        # the JSONL says null, the textfile a raw 0 with a scaling ratio
        # of 0.
        res = self.query('vcpuperf_scaling_ratio{event="cycles",'
                         'mode="guest",vcpu="0"}')
        self.assertEqual(len(res), 1, res)
        self.assertEqual(float(res[0]["value"][1]), 0.0)
        self.assertTrue(all(r["cycles_guest"] is None for r in self.rows
                            if r["tid"] is not None and r["ran"]))
        names = {r["metric"]["__name__"] for r in self.query(
            '{__name__=~"vcpuperf_.*"}')}
        self.assertIn("vcpuperf_up", names)
        self.assertIn("vcpuperf_time_enabled_seconds_total", names)
        self.assertIn("vcpuperf_time_running_seconds_total", names)
        for r in self.query('{__name__=~"vcpuperf_.*"}'):
            self.assertNotIn("tid", r["metric"])
            self.assertNotIn("pid", r["metric"])
        up = self.query("vcpuperf_up")
        self.assertEqual(up[0]["value"][1], "0")   # the episode ended


def main():
    return run_module(__name__)


if __name__ == "__main__":
    sys.exit(main())
