"""Recordings of one process that overlap, started at different times, and
threads that appear between them: each recording counts each thread once
(per-VM totals against /proc/PID/stat), whatever the other recordings
hold; a thread detached from an attached process stays detached; a
process that makes reading its command line wait holds up nothing.

The process is tests/integration/helpers/threadctl.py, which makes
threads and touches pages only when told: between two commands all of it
is blocked, so /proc read then and the counters see the same work."""

import json
import os
import subprocess
import sys
import time

from vptest import (Cat, TestFailure, Workload, check, control, load,
                    read_file, sh, test, DEBUGFS, DEVICE, OUT, REPO)

CTL = os.path.join(REPO, "tests", "integration", "helpers",
                   "threadctl.py")
INTERVAL_S = 0.05


class Ctl:
    """tests/integration/helpers/threadctl.py, driven line by line."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, CTL],
                                     stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True,
                                     bufsize=1)
        self.pid = self.expect("ready")

    def expect(self, word, timeout=60):
        """The next reply line, which must begin with @word; its number."""
        import select
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        check(r, "threadctl: no %r in %d s" % (word, timeout))
        line = self.proc.stdout.readline().split()
        check(line[:1] == [word], "threadctl said %s, not %s" % (line, word))
        return int(line[1]) if len(line) > 1 else None

    def send(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def spawn(self):
        self.send("spawn")
        return self.expect("tid")

    def touch(self, tid, pages):
        self.send("touch %d %d" % (tid, pages))
        self.expect("done")

    def execv(self, tid, *argv):
        self.send("exec %d %s" % (tid, " ".join(argv)))

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def faults(pid, tid=None):
    """minflt + majflt of a process (exited threads included) or of one of
    its threads, from /proc."""
    path = "/proc/%d/stat" % pid if tid is None else \
        "/proc/%d/task/%d/stat" % (pid, tid)
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[7]) + int(fields[9])


def wait_event(c, name, pred, timeout=30):
    """Wait for a lifecycle line @name of vcpuperf-cat @c that @pred
    accepts; return it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = [e for e in c.events(name) if pred(e)]
        if got:
            return got[0]
        if c.proc.poll() is not None:
            raise TestFailure("vcpuperf-cat exited: %s" %
                              c.proc.stderr.read())
        time.sleep(0.05)
    raise TestFailure("no %s in %d s" % (name, timeout))


def stop_cats(cats, ended=()):
    """Stop each vcpuperf-cat of @cats (SIGINT), or wait for those in
    @ended (their collection was stopped by a command); each must exit
    0."""
    for c in cats:
        rc = c.wait(timeout=30) if c in ended else c.stop()
        check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))


def kill_all(ctl, cats):
    """After a test, whatever happened: no process of it is left."""
    ctl.kill()
    for c in cats:
        if c.proc.poll() is None:
            c.proc.kill()
            c.wait()


def vm_faults_since(c, t_wall_ns):
    """page_faults of @c's per-VM rows read after @t_wall_ns (those cover
    only what happened after it, when the process was quiescent before)."""
    rows = [r for r in c.rows() if r["tid"] is None and
            r["t_wall_ns"] > t_wall_ns]
    check(rows, "no per-VM rows after the work began")
    check(all(r["page_faults"] is not None for r in rows),
          "a per-VM row without page_faults")
    return sum(r["page_faults"] for r in rows)


@test
def second_recording_counts_each_thread_once():
    """Recording A attaches --pid P --per-vm while P has one thread; P
    then makes thread T1 (which inherits A's process counters); recording
    B attaches the same way, then T1 touches 10,000 pages.  Both
    recordings' per-VM page faults over the work equal the process's
    minflt + majflt delta in /proc, and B's perf_finished totals are its
    rows' sum: B takes over A's counters (T1 counted through its
    creator's) and makes none of its own for T1."""
    load()
    pages = 10000
    ctl = Ctl()
    cats = []
    try:
        a = Cat("overlap-a", "--pid", str(ctl.pid), "--per-vm", "--events",
                "page-faults,task-clock", "--interval", "50ms")
        cats.append(a)
        a.wait_started(1)
        t1 = ctl.spawn()
        wait_event(a, "perf_started", lambda e: e["tid"] == t1)
        b = Cat("overlap-b", "--pid", str(ctl.pid), "--per-vm", "--events",
                "page-faults,task-clock", "--interval", "50ms")
        cats.append(b)
        b.wait_started(2)
        time.sleep(3 * INTERVAL_S)
        t0 = time.time_ns()
        f0 = faults(ctl.pid)
        ctl.touch(t1, pages)
        f1 = faults(ctl.pid)
        time.sleep(4 * INTERVAL_S)
        stop_cats(cats)
    finally:
        kill_all(ctl, cats)
    want = f1 - f0
    got = {c.rows_path: vm_faults_since(c, t0) for c in (a, b)}
    print("  %d pages touched by a thread made between the attaches: "
          "/proc %d faults; per-VM rows: first recording %d, second %d" %
          (pages, want, got[a.rows_path], got[b.rows_path]), flush=True)
    check(want >= pages, "/proc saw %d faults for %d pages" % (want, pages))
    for c in (a, b):
        check(got[c.rows_path] == want, "%s: per-VM page_faults %d, /proc "
              "%d" % (c.rows_path, got[c.rows_path], want))
        fin = [e for e in c.events("perf_finished") if e.get("scope") == "vm"]
        check(len(fin) == 1, "%s: perf_finished (vm): %s" %
              (c.rows_path, fin))
        rows = [r for r in c.rows() if r["tid"] is None]
        check(fin[0]["totals"]["page-faults"]["value"] ==
              sum(r["page_faults"] for r in rows),
              "%s: perf_finished %s, rows %d" %
              (c.rows_path, fin[0]["totals"],
               sum(r["page_faults"] for r in rows)))


@test
def detached_thread_stays_detached():
    """attach pid=P, then detach tid=T of one of its threads: the scans
    that pick up P's new threads leave T out (no second perf_started for
    it over a second of passes), while a thread P makes afterwards is
    picked up."""
    load()
    ctl = Ctl()
    c = Cat("detach-stays", "--no-attach")
    try:
        check(control("interval 50ms") == 0, "interval")
        t1 = ctl.spawn()
        check(control("attach pid=%d events=page-faults" % ctl.pid) == 0,
              "attach: %s" % read_file("status"))
        wait_event(c, "perf_started", lambda e: e["tid"] == t1)
        check(control("detach tid=%d" % t1) == 0, "detach")
        wait_event(c, "perf_detached", lambda e: e["tid"] == t1)
        time.sleep(20 * INTERVAL_S)
        t2 = ctl.spawn()
        wait_event(c, "perf_started", lambda e: e["tid"] == t2)
        ctl.touch(t1, 100)
        time.sleep(4 * INTERVAL_S)
        check(control("stop") == 0, "stop")
        rc = c.wait(timeout=30)
    finally:
        ctl.kill()
        if c.proc.poll() is None:
            c.proc.kill()
            c.wait()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    started = [e for e in c.events("perf_started") if e["tid"] == t1]
    print("  thread %d: perf_started %d time(s) over 20 passes after its "
          "detach" % (t1, len(started)), flush=True)
    check(len(started) == 1, "detached thread attached again: %s" % started)
    late = [r for r in c.rows() if r["tid"] == t1 and
            r["t_mono_ns"] > [e for e in c.events("perf_detached")
                              if e["tid"] == t1][0]["t_mono_ns"]]
    check(not late, "rows for the detached thread after its detach: %s" %
          late[:2])


ARGVSTALL = os.path.join(REPO, "tests", "workload", "argvstall")
FUSE_DIR = "/run/vp-argv-fuse"
# Longer than any read of a small file or an attach under TCG; shorter
# than a test that would wait for the held page forever.
PROMPT_S = 5.0


def argvstall(mode, name, binary=ARGVSTALL):
    """tests/workload/argvstall (--uffd or --fuse): a QEMU-named process
    whose command line, past its first page, is behind something only it
    serves (SIGUSR1).  Returns (Popen, pid)."""
    ready = os.path.join(OUT, name + ".ready.json")
    if os.path.exists(ready):
        os.unlink(ready)
    args = [binary, "--ready", ready, "--hold-ms", "120000"]
    if mode == "fuse":
        os.makedirs(FUSE_DIR, exist_ok=True)
        args += ["--fuse", FUSE_DIR]
    else:
        args.append("--uffd")
    # the VM name in the first page, then a page and more of filler
    args += ["--", "-name", "guest=%s,debug-threads=on" % name,
             "-filler", "x" * 9000]
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not os.path.exists(ready):
        if p.poll() is not None:
            raise TestFailure("argvstall: %s" % p.stderr.read())
        check(time.time() < deadline, "argvstall never got ready")
        time.sleep(0.05)
    with open(ready) as f:
        return p, json.load(f)["pid"]


def prompt(cmd):
    """Run @cmd; the seconds it took, or None when it had not returned
    after PROMPT_S (it is left running: a task waiting for a mutex cannot
    be killed; the caller reaps it once what it waits for is released)."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    while p.poll() is None and time.time() - t0 < PROMPT_S:
        time.sleep(0.02)
    return (time.time() - t0 if p.poll() is not None else None), p


@test
def argv_behind_fuse_or_uffd_stalls_nothing():
    """Attaching qemu= to a process whose command line lies past its
    first page behind a FUSE file its own server never answers, or behind
    a userfaultfd nobody serves, takes no time: the VM identity is read as
    /proc/PID/cmdline reads it (anonymous memory only, no wait), the VM
    name from what comes before.  Meanwhile the status file, an open and
    close of /dev/vcpuperf and another recording go on as usual."""
    load()
    if not os.path.exists("/dev/fuse"):
        sh("modprobe fuse", check_rc=False)
    other = Workload("stall-other", "--threads", "1", "--hold-ms", "60000")
    b = Cat("stall-other", "--qemu", str(other.pid), "--events",
            "task-clock", "--interval", "50ms")
    procs, waiting, results = [], [], {}
    try:
        b.wait_started(1)
        for mode in ("fuse", "uffd"):
            if mode == "fuse" and not os.path.exists("/dev/fuse"):
                print("  no /dev/fuse on this kernel: FUSE left out")
                continue
            # the sysctl exists with CONFIG_USERFAULTFD only
            if mode == "uffd" and not os.path.exists(
                    "/proc/sys/vm/unprivileged_userfaultfd"):
                print("  no userfaultfd in this kernel: left out")
                continue
            stall, pid = argvstall(mode, "stall-" + mode)
            procs.append(stall)
            rows0 = len(b.rows())
            a = Cat("stall-" + mode, "--qemu", str(pid), "--events",
                    "task-clock", "--interval", "50ms")
            procs.append(a.proc)
            t0 = time.time()
            status_s, p1 = prompt(["cat", os.path.join(DEBUGFS, "status")])
            open_s, p2 = prompt([sys.executable, "-c",
                                 "import os; os.close(os.open('%s', "
                                 "os.O_RDWR))" % DEVICE])
            waiting += [p1, p2]
            try:
                a.wait_started(1, timeout=PROMPT_S)
                attach_s = time.time() - t0
            except TestFailure:
                attach_s = None
            time.sleep(0.3)
            grew = len(b.rows()) - rows0
            started = a.events("perf_process_started")
            results[mode] = (attach_s, status_s, open_s, grew, started)
            os.kill(pid, 10)    # SIGUSR1: serve the pages
            a.stop()
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs + waiting:
            p.wait()
        other.kill()
        b.stop()
    for mode, (attach_s, status_s, open_s, grew, started) in results.items():
        print("  argv behind %s: attach %s s, status %s s, open %s s; the "
              "other recording: %d rows meanwhile" %
              (mode, "%.2f" % attach_s if attach_s else "> %g" % PROMPT_S,
               "%.2f" % status_s if status_s else "> %g" % PROMPT_S,
               "%.2f" % open_s if open_s else "> %g" % PROMPT_S, grew),
              flush=True)
        check(attach_s is not None, "%s: the attach waited" % mode)
        check(status_s is not None, "%s: the status file waited" % mode)
        check(open_s is not None, "%s: an open of %s waited" %
              (mode, DEVICE))
        check(grew > 0, "%s: the other recording stalled" % mode)
        check(started and started[0]["vm"] == "stall-" + mode,
              "%s: VM identity %s" % (mode, started))
