"""The host-wide recorder: vcpuperf-cat --all-qemu --output-dir DIR records
every QEMU of the host in one collection, each VM run to a file of its
own: the VMs running at its start and those started later, a real QEMU
among them, one killed mid-episode, one the module cannot take (its
limits), one its name leaves out (--match), one whose command line
cannot be read at once (tests/workload/argvstall), and the --textfile of
them all.

The oracles: each fake VM's threads read their own page faults from /proc
around their work (tests/workload, copied under a qemu* name so that the
recorder takes it for a QEMU); the real QEMU's vCPU thread names."""

import errno
import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import time

from overlap import ARGVSTALL, argvstall
from vptest import (CAT, TestFailure, Workload, by_tid, check, delta, load,
                    sh, test, OUT, WORKLOAD)

QEMUS_DIR = "/run/vp-qemus"
NETLINK_CONNECTOR = 11      # linux/netlink.h
SCAN_S = 0.2
INTERVAL_S = 0.1
# An episode with a row out is written once a second (vcpuperf-cat(1)).
EPISODE_WRITE_S = 1.0
PAGES = 1500


class FakeQemu(Workload):
    """tests/workload/workload under a qemu* name, named NAME on its
    command line: 2 vCPU threads that touch PAGES pages on SIGUSR1."""

    def __init__(self, binary, name, threads=2):
        self.name = name
        super().__init__(name + ".hw", "--threads", str(threads),
                         "--wait-go", "--pages", str(PAGES), "--hold-ms",
                         "60000", "--", "-name",
                         "guest=%s,debug-threads=on" % name, binary=binary)
        self.ready_at = time.time()

    def wait_work(self, timeout=60):
        """Until every thread has touched its pages (its /proc says so)."""
        deadline = time.time() + timeout
        for tid in self.tids:
            path = "/proc/%d/task/%d/stat" % (self.pid, tid)
            while True:
                with open(path) as f:
                    minflt = int(f.read().rsplit(")", 1)[1].split()[7])
                if minflt >= PAGES:
                    break
                check(time.time() < deadline, "%s: work not done" %
                      self.name)
                time.sleep(0.05)


def connector_in_kernel():
    """Whether the kernel has the netlink connector (CONFIG_CONNECTOR),
    asked with a socket of our own."""
    try:
        socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM,
                      NETLINK_CONNECTOR).close()
        return True
    except OSError as e:
        if e.errno == errno.EPROTONOSUPPORT:
            return False
        raise


def episodes(d, name):
    return sorted(glob.glob(os.path.join(d, "%s-*.jsonl" % name)))


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.endswith("\n")]


def wait_rows(d, name, timeout=30):
    """Until VM @name's episode has a row: the time it came."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for p in episodes(d, name):
            if any("event" not in x for x in read_jsonl(p)):
                return time.time()
        time.sleep(0.02)
    raise TestFailure("no row of %s in %d s" % (name, timeout))


def prom_series(text, family):
    """{(vm, vcpu): value} of @family's mode="all" series in @text."""
    out = {}
    for line in text.splitlines():
        if not line.startswith(family + "{"):
            continue
        labels, value = line[len(family) + 1:].rsplit("} ", 1)
        kv = dict(x.split("=", 1) for x in labels.split(","))
        kv = {k: v.strip('"') for k, v in kv.items()}
        if kv.get("mode") == "all":
            out[(kv["vm"], kv["vcpu"])] = int(float(value))
    return out


@test
def all_qemu_records_every_vm():
    """--all-qemu --per-vm --match 'vm*' with the module's max_targets 6
    (5 without vm-stall):
    fake VMs vm1 (2 vCPUs) and a real QEMU vm-rq (1 vCPU) run before it
    starts; vm-stall (1 vCPU; its command line past the first page behind
    a FUSE file, or a userfaultfd, nobody serves; left out on a kernel
    with neither), vm2 (2 vCPUs), vm3 (2:
    over the limit) and 'other' after.  vm-stall holds up nothing: it is
    recorded under its name, and vm2's first row comes as soon as ever.
    vm1, vm-rq and vm2 each get an episode of their own rows only, vm1's
    ended by its perf_finished as soon as it ends (SIGTERM), vm-rq's as
    soon as it is killed (SIGKILL), vm2's at the stop, which vm2 reaches
    recording; each fake vCPU's page faults equal what it read from /proc;
    vm3's episode says perf_attach_failed (ENOSPC), and 'other' gets none.
    The textfile holds the VMs running: vm1's and vm-rq's series are gone
    once they ended; at the recorder's end vm2's and vm-stall's stay, and
    vm2's page faults per vCPU are its rows'.
    How soon vm2's first row came is printed."""
    os.makedirs(QEMUS_DIR, exist_ok=True)
    binary = os.path.join(QEMUS_DIR, "qemu-fake")
    shutil.copy(WORKLOAD, binary)
    stall_bin = os.path.join(QEMUS_DIR, "qemu-stall")
    shutil.copy(ARGVSTALL, stall_bin)
    if not os.path.exists("/dev/fuse"):
        sh("modprobe fuse", check_rc=False)
    # A kernel with neither (the debug kernel): no vm-stall, said.
    if os.path.exists("/dev/fuse"):
        stall_mode = "fuse"
    elif os.path.exists("/proc/sys/vm/unprivileged_userfaultfd"):
        stall_mode = "uffd"
    else:
        stall_mode = None
        print("  neither FUSE nor userfaultfd in this kernel: no vm-stall",
              flush=True)
    running = {"vm2", "vm-stall"} if stall_mode else {"vm2"}
    # room for vm1, vm-rq, vm-stall and vm2 (2 + 1 + 1 + 2 threads), not vm3
    load("max_targets=%d" % (6 if stall_mode else 5))
    d = os.path.join(OUT, "hostwide")
    shutil.rmtree(d, ignore_errors=True)
    prom = os.path.join(OUT, "hostwide.prom")
    if os.path.exists(prom):
        os.unlink(prom)
    vms, rec = [], None
    try:
        vm1 = FakeQemu(binary, "vm1")
        vms.append(vm1)
        rq = subprocess.Popen(
            ["qemu-system-x86_64", "-name", "vm-rq,debug-threads=on",
             "-accel", "tcg", "-smp", "1", "-m", "32", "-display", "none",
             "-nodefaults", "-no-user-config"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        vms.append(rq)
        rec = subprocess.Popen(
            [CAT, "--all-qemu", "--output-dir", d, "--match", "vm*",
             "--per-vm", "--events", "page-faults,task-clock",
             "--interval", "%dms" % (INTERVAL_S * 1000), "--scan-interval",
             "%dms" % (SCAN_S * 1000), "--textfile", prom, "-o",
             os.path.join(OUT, "hostwide.jsonl")],
            stderr=subprocess.PIPE, text=True)
        wait_rows(d, "vm1")
        wait_rows(d, "vm-rq", timeout=60)
        if stall_mode:
            stall, _ = argvstall(stall_mode, "vm-stall", binary=stall_bin)
            vms.append(stall)
        vm2 = FakeQemu(binary, "vm2")
        vms.append(vm2)
        first = wait_rows(d, "vm2") - vm2.ready_at
        vm3 = FakeQemu(binary, "vm3")
        other = FakeQemu(binary, "other")
        vms += [vm3, other]
        deadline = time.time() + 30
        while not episodes(d, "vm3"):
            check(time.time() < deadline, "no episode of vm3")
            time.sleep(0.05)
        for vm in (vm1, vm2):
            vm.go()
        for vm in (vm1, vm2):
            vm.wait_work()
        time.sleep(3 * INTERVAL_S)
        rep1 = vm1.end()
        rq.kill()
        rq.wait()
        # each episode ends with its VM's perf_finished, the recorder runs on
        for name in ("vm1", "vm-rq"):
            deadline = time.time() + 30
            while True:
                lines = read_jsonl(episodes(d, name)[0])
                if lines and lines[-1].get("event") == "perf_finished":
                    break
                check(time.time() < deadline, "%s's episode never ended: "
                      "%s" % (name, lines[-3:]))
                time.sleep(0.05)
        check(rec.poll() is None, "the recorder stopped with vm1")
        rows_before = len(read_jsonl(episodes(d, "vm2")[0]))
        time.sleep(2 * EPISODE_WRITE_S + 5 * INTERVAL_S)
        check(len(read_jsonl(episodes(d, "vm2")[0])) > rows_before,
              "vm2's episode stalled after vm1 ended")
        with open(prom) as f:
            live = prom_series(f.read(), "vcpuperf_page_faults_total")
        check({k[0] for k in live} == running,
              "textfile while %s run: %s" % (sorted(running), sorted(live)))
        rec.send_signal(signal.SIGINT)
        rc = rec.wait(timeout=60)
        rep2 = vm2.end()
    finally:
        if rec and rec.poll() is None:
            rec.kill()
            rec.wait()
        for vm in vms:
            if isinstance(vm, FakeQemu):
                vm.kill()
            elif vm.poll() is None:
                vm.terminate()      # argvstall unmounts its FUSE
                vm.wait()
    err = rec.stderr.read()
    check(rc == 0, "recorder exit %d: %s" % (rc, err))
    # root in the initial namespaces: the kernel's process events, no
    # scan, wherever the kernel has the connector (the debug kernel has
    # not: CONFIG_CONNECTOR is off there)
    if connector_in_kernel():
        check("process events connector" not in err,
              "the recorder scanned /proc: %s" % err)
    else:
        print("  no process events connector in this kernel: %s" %
              err.strip(), flush=True)
    print("  vm2's first row %.2f s after it was ready (process events "
          "read every %g s, interval %g s)" % (first, SCAN_S, INTERVAL_S),
          flush=True)
    for vm, rep in ((vm1, rep1), (vm2, rep2)):
        eps = episodes(d, vm.name)
        check(len(eps) == 1, "%s: episodes %s" % (vm.name, eps))
        lines = read_jsonl(eps[0])
        rows = [x for x in lines if "event" not in x]
        evs = [x for x in lines if "event" in x]
        check({r["pid"] for r in rows} == {vm.pid}, "%s: rows of %s" %
              (vm.name, {r["pid"] for r in rows}))
        check({e["pid"] for e in evs if "pid" in e} <= {vm.pid},
              "%s: events of another process" % vm.name)
        check(evs[-1]["event"] == "perf_finished" and
              evs[-1]["scope"] == "vm", "%s: ends with %s" %
              (vm.name, evs[-1]))
        check(any(r["tid"] is None for r in rows), "%s: no per-VM row" %
              vm.name)
        th = by_tid([r for r in rows if r["tid"] is not None])
        for t in rep["threads"]:
            pf = sum(r["page_faults"] for r in th.get(t["tid"], []))
            opf = delta(t, "minflt") + delta(t, "majflt")
            check(opf >= PAGES and opf <= pf <= opf + 100,
                  "%s tid %d: page_faults %d, /proc %d" %
                  (vm.name, t["tid"], pf, opf))
        print("  %s: %d rows, %d events, page faults per vCPU = /proc" %
              (vm.name, len(rows), len(evs)), flush=True)
    rql = read_jsonl(episodes(d, "vm-rq")[0])
    check({r["vcpu"] for r in rql if "event" not in r and
           r["tid"] is not None} == {0}, "vm-rq: vCPUs")
    check(rql[-1].get("event") == "perf_finished", "vm-rq not ended")
    stl = [read_jsonl(p) for p in episodes(d, "vm-stall")]
    if stall_mode:
        check(len(stl) == 1 and
              any(e.get("event") == "perf_process_started" and
                  e.get("vm") == "vm-stall" for e in stl[0]),
              "vm-stall (argv behind %s): %s" % (stall_mode, stl))
        print("  vm-stall (argv behind %s): recorded, %d rows" %
              (stall_mode, sum("event" not in x for x in stl[0])),
              flush=True)
    with open(prom) as f:
        text = f.read()
    check("vcpuperf_up 0" in text, "textfile: not ended")
    final = prom_series(text, "vcpuperf_page_faults_total")
    rows2 = [x for x in read_jsonl(episodes(d, "vm2")[0])
             if "event" not in x and x["tid"] is not None]
    want = {}
    for r in rows2:
        want[("vm2", str(r["vcpu"]))] = (want.get(("vm2", str(r["vcpu"])),
                                                   0) + r["page_faults"])
    final2 = {k: v for k, v in final.items() if k[0] == "vm2"}
    check(final2 == want and {k[0] for k in final} == running,
          "textfile at the end %s, vm2's rows %s" % (final, want))
    print("  textfile: %s once vm1 and vm-rq ended, kept at the end; "
          "vm2's page faults per vCPU = its rows' %s" %
          (" and ".join(sorted(running)), sorted(want.values())),
          flush=True)
    v3 = [read_jsonl(p) for p in episodes(d, "vm3")]
    check(len(v3) == 1 and len(v3[0]) == 1 and
          v3[0][0]["event"] == "perf_attach_failed" and
          v3[0][0]["errno"] == "ENOSPC" and v3[0][0]["vm"] == "vm3",
          "vm3: %s" % v3)
    check(not episodes(d, "other"), "'other' recorded despite --match")
    print("  vm3: %s (%s); 'other': no episode" %
          (v3[0][0]["errno"], v3[0][0]["reason"]), flush=True)


@test
def all_qemu_scans_without_process_events():
    """In a network namespace of its own (unshare --net) the process
    events connector cannot be reached on any kernel (its kernel socket
    is in the initial namespace only; a missing CAP_NET_ADMIN is refused
    by 6.1 but not by 6.12 or 7.2): --all-qemu says so in one line and
    scans /proc instead, and a fake VM started after it is recorded all
    the same, its page faults per vCPU equal to /proc's.  How soon its
    first row came is printed."""
    load()
    os.makedirs(QEMUS_DIR, exist_ok=True)
    binary = os.path.join(QEMUS_DIR, "qemu-fake")
    shutil.copy(WORKLOAD, binary)
    d = os.path.join(OUT, "hostwide-scan")
    shutil.rmtree(d, ignore_errors=True)
    vm, rec = None, None
    try:
        rec = subprocess.Popen(
            ["unshare", "--net", "--", CAT,
             "--all-qemu", "--output-dir", d, "--match", "scan*",
             "--events", "page-faults", "--interval",
             "%dms" % (INTERVAL_S * 1000), "--scan-interval",
             "%dms" % (SCAN_S * 1000), "-o", os.path.join(OUT, "hw-scan")],
            stderr=subprocess.PIPE, text=True)
        time.sleep(1)       # started before the VM: found by a later scan
        vm = FakeQemu(binary, "scan1")
        first = wait_rows(d, "scan1") - vm.ready_at
        vm.go()
        vm.wait_work()
        time.sleep(3 * INTERVAL_S)
        rep = vm.end()
        rec.send_signal(signal.SIGINT)
        rc = rec.wait(timeout=60)
    finally:
        if rec and rec.poll() is None:
            rec.kill()
            rec.wait()
        if vm:
            vm.kill()
    err = rec.stderr.read()
    check(rc == 0, "recorder exit %d: %s" % (rc, err))
    said = [ln for ln in err.splitlines()
            if "process events connector" in ln]
    check(len(said) == 1 and "scanning /proc" in said[0],
          "one line about the scan: %r" % err)
    eps = episodes(d, "scan1")
    check(len(eps) == 1, "scan1: episodes %s" % eps)
    th = by_tid([r for r in read_jsonl(eps[0])
                 if "event" not in r and r["tid"] is not None])
    for t in rep["threads"]:
        pf = sum(r["page_faults"] for r in th.get(t["tid"], []))
        opf = delta(t, "minflt") + delta(t, "majflt")
        check(opf >= PAGES and opf <= pf <= opf + 100,
              "scan1 tid %d: page_faults %d, /proc %d" % (t["tid"], pf, opf))
    print("  %s\n  scan1's first row %.2f s after it was ready (scan every "
          "%g s, interval %g s); page faults per vCPU = /proc" %
          (said[0], first, SCAN_S, INTERVAL_S), flush=True)
