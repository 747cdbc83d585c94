"""Helpers for the vcpuperf integration tests, which run as root inside the
test VM (scripts/vm-run.sh) with the repository as the working directory,
and their one runner: the test files register their tests with @test, a
driver (run.py; tests/arm64/kvm.py on the arm64 bed; tests/signed/
lockdown.py and secureboot.py) imports them and calls main(), which prints TAP (see run() below).

Every assertion compares the module's numbers with an independent oracle:
the workload's own /proc readings, /proc/<tid>/status and schedstat, or
perf stat run side by side.  Nothing here decodes the binary stream:
vcpuperf-cat does that, and the tests read its JSONL."""

import errno
import functools
import json
import os
import select as selectmod  # select() below picks tests
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             ".."))
import tap  # noqa: E402  (tests/tap.py)

REPO = os.getcwd()
MODULE = os.environ.get("VP_MODULE", os.path.join(REPO, "vcpuperf.ko"))
CAT = os.environ.get("VP_CAT", os.path.join(REPO, "tools", "vcpuperf-cat"))
WORKLOAD = os.environ.get("VP_WORKLOAD",
                          os.path.join(REPO, "tests", "workload", "workload"))
DEBUGFS = "/sys/kernel/debug/vcpuperf"
DEVICE = "/dev/vcpuperf"
OUT = os.environ.get("VP_OUT", "/tmp/out")


class TestFailure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise TestFailure(msg)


# The debug kernel (KASAN, lockdep, kmemleak) under TCG runs several times
# slower than Debian's, and the matrix kernels that boot with one vCPU share
# it between the sampler and the workloads: there (VP_SLOW_KERNEL set),
# timing figures (grid points missed, jitter ratios, rows per second) are
# printed but not enforced; every oracle and every kernel-log check still
# is.
SLOW_KERNEL = bool(os.environ.get("VP_SLOW_KERNEL"))

# perf's task clock stops when the thread is switched out (in
# prepare_task_switch()) and starts again when it is switched back in
# (finish_task_switch()); schedstat's runtime also counts the switch
# itself.  Under TCG that window is long: 6.12 and 7.2 on one vCPU came out
# up to 20 us per context switch below schedstat (10.6 ms of 341 ms over
# 526 switches), 53 us with two vCPUs in one QEMU thread; 6.1 alone stays
# within 3% without it, but with two vCPUs while the other collections start
# and three workloads fault their pages in (switches between processes: an
# address-space switch each), 114 and 140 us per switch (32 and 44 ms of
# 324 and 286 ms over 283 and 316 switches), and once 61 ms of 344 ms
# over 288 (212 us a switch; four_cats_three_workloads, whose sibling
# thread came out 48 ms above schedstat in that run: not explained);
# 7.2 on one vCPU in the matrix, with 6.12's suite beside it on the host,
# 16 ms of 475 ms (3.4%) over at least 200 switches
# (counts_match_proc_oracles).
TC_SWITCH_NS = 250000
NS_PER_MS = 1000000


def task_clock_agrees(tc, ort, switches, above=100 * NS_PER_MS):
    """Whether @tc, task-clock summed over a thread's rows, agrees with
    @ort, the runtime schedstat counted around the thread's work, over
    which it was switched @switches times: at most 3% and TC_SWITCH_NS per
    switch below, @above ns above (default 100 ms: the counter counts from
    the collection's start, before the work)."""
    return ort * 0.97 - switches * TC_SWITCH_NS <= tc <= ort + above


class TestSkip(Exception):
    """A test that cannot run on this boot (e.g. it needs two CPUs):
    reported as skipped, counted neither passed nor failed."""


def check_timing(cond, msg):
    """check() for a timing figure; with VP_SLOW_KERNEL only said."""
    if cond:
        return
    if SLOW_KERNEL:
        print("  timing, not enforced on this kernel (VP_SLOW_KERNEL): " +
              msg, flush=True)
        return
    raise TestFailure(msg)


def needs_cpus(n):
    """Declare that a test means something only on a boot with @n CPUs or
    more (a thread running on another CPU than the sampler's): put it
    under @test.  The runner skips it on a boot with fewer, and `--list
    --cpus N` names the tests that need N (scripts/matrix.sh boots those
    once more on two CPUs)."""
    def tag(fn):
        fn.vp_cpus = n
        return fn
    return tag


def _have_vhost_vsock():
    return sh("modprobe vhost_vsock", check_rc=False).returncode == 0 and \
        os.path.exists("/dev/vhost-vsock")


# The kernel features a test may need (needs_feature()): name -> (what a
# skip says, the check; a check may load a module).
FEATURES = {
    "vhost_vsock": ("no vhost_vsock in this kernel", _have_vhost_vsock),
    "ksm": ("no KSM in this kernel",
            lambda: os.path.isdir("/sys/kernel/mm/ksm")),
}


def needs_feature(name):
    """Declare that a test needs a kernel feature of FEATURES: put it
    under @test.  The runner skips it, saying so, on a kernel without
    it."""
    if name not in FEATURES:
        raise ValueError("no feature %r (FEATURES: %s)" %
                         (name, ", ".join(sorted(FEATURES))))

    def tag(fn):
        fn.vp_features = getattr(fn, "vp_features", ()) + (name,)
        return fn
    return tag


def not_on_debug(why):
    """Declare that a test's point is a figure against its oracle, whose
    code paths other tests run too: put it under @test.  The runner skips
    it, saying @why, on a kernel with KASAN or kmemleak (make check's
    second run of the suite), where every allocation and lock is slower
    and it would repeat what the first run proves."""
    def tag(fn):
        fn.vp_not_on_debug = why
        return fn
    return tag


def _check_needs(fn):
    """Skip @fn (TestSkip) when this boot has fewer CPUs than it needs,
    lacks a kernel feature it needs, or is the debug kernel a figure test
    is not run on."""
    want = getattr(fn, "vp_cpus", 1)
    have = os.cpu_count() or 1
    if have < want:
        raise TestSkip("needs %d CPUs, this boot has %d" % (want, have))
    for name in getattr(fn, "vp_features", ()):
        why, present = FEATURES[name]
        if not present():
            raise TestSkip(why)
    why = getattr(fn, "vp_not_on_debug", None)
    if why and debug_allocator():
        raise TestSkip("a figure, not on the debug kernel: " + why)


def meminfo():
    """/proc/meminfo as {field: KiB}."""
    out = {}
    with open("/proc/meminfo") as f:
        for line in f:
            k, v = line.split(":")
            out[k] = int(v.split()[0])
    return out


@functools.lru_cache(maxsize=None)
def debug_allocator():
    """What of KASAN and kmemleak this kernel runs ("KASAN, kmemleak"),
    each of which makes every slab allocation larger; "" for neither.
    Read from the kernel: KASAN's report function among its symbols,
    kmemleak's debugfs file."""
    found = []
    with open("/proc/kallsyms") as f:
        if any(line.rstrip().endswith(" kasan_report") for line in f):
            found.append("KASAN")
    if os.path.exists("/sys/kernel/debug/kmemleak"):
        found.append("kmemleak")
    return ", ".join(found)


def sh(cmd, check_rc=True, timeout=120):
    p = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       timeout=timeout)
    if check_rc and p.returncode != 0:
        raise TestFailure("command failed (%d): %s\n%s%s" %
                          (p.returncode, cmd, p.stdout, p.stderr))
    return p


def module_loaded():
    return os.path.isdir("/sys/module/vcpuperf")


def load(params=""):
    if module_loaded():
        unload()
    sh("insmod %s %s" % (MODULE, params))


def unload(tries=50):
    """rmmod vcpuperf.  A counter read queued on a thread that stays in the
    kernel for more than 100 ms holds the module until the thread comes
    back ("in use"): tried again every 0.2 s, @tries times."""
    while module_loaded():
        p = sh("rmmod vcpuperf", check_rc=False, timeout=60)
        if p.returncode == 0:
            return
        tries -= 1
        if tries <= 0 or "in use" not in p.stderr:
            raise TestFailure("rmmod vcpuperf: %s%s" % (p.stderr, read_status()))
        time.sleep(0.2)


def read_status():
    try:
        with open(os.path.join(DEBUGFS, "status")) as f:
            return f.read()
    except OSError:
        return ""


def control(cmd):
    """Write one command; return 0 or the errno of the failed write."""
    fd = os.open(os.path.join(DEBUGFS, "control"), os.O_WRONLY)
    try:
        os.write(fd, cmd.encode() if isinstance(cmd, str) else cmd)
        return 0
    except OSError as e:
        return e.errno
    finally:
        os.close(fd)


def dev_control(cmd, fd=None):
    """Write one command to /dev/vcpuperf (opened O_WRONLY unless fd is
    given); return 0 or the errno of the failed write."""
    own = fd is None
    if own:
        fd = os.open(DEVICE, os.O_WRONLY)
    try:
        os.write(fd, cmd.encode() if isinstance(cmd, str) else cmd)
        return 0
    except OSError as e:
        return e.errno
    finally:
        if own:
            os.close(fd)


def open_errno(path, flags):
    """0 if path opens with flags (closed again at once), else the errno."""
    try:
        os.close(os.open(path, flags))
        return 0
    except OSError as e:
        return e.errno


def read_file(name):
    with open(os.path.join(DEBUGFS, name)) as f:
        return f.read()


def dmesg_mark():
    """Number of kernel log lines so far, to look only at what follows."""
    return len(sh("dmesg").stdout.splitlines())


BAD_LOG = ("WARNING:", "BUG:", "Oops", "general protection",
           "KASAN", "UBSAN", "sleeping function called from invalid context",
           "possible circular locking", "INFO: task", "Call Trace",
           "kmemleak")


def dmesg_clean_since(mark):
    lines = sh("dmesg").stdout.splitlines()[mark:]
    bad = [ln for ln in lines if any(b in ln for b in BAD_LOG)]
    check(not bad, "kernel log has problems:\n" + "\n".join(lines[-60:]))


class Workload:
    """tests/workload/workload: threads named 'CPU <n>/KVM' doing known work."""

    def __init__(self, name, *args, binary=WORKLOAD):
        self.ready = os.path.join(OUT, name + ".ready.json")
        self.report = os.path.join(OUT, name + ".report.json")
        for p in (self.ready, self.report):
            if os.path.exists(p):
                os.unlink(p)
        self.proc = subprocess.Popen(
            [binary, "--ready", self.ready, "--report", self.report] +
            list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True)
        deadline = time.time() + 30
        while not os.path.exists(self.ready):
            if self.proc.poll() is not None:
                raise TestFailure("workload died: %s" %
                                  self.proc.stdout.read())
            check(time.time() < deadline, "workload never got ready")
            time.sleep(0.02)
        with open(self.ready) as f:
            info = json.load(f)
        self.pid = info["pid"]
        self.tids = info["tids"]
        self.vcpus = info["vcpus"]

    def go(self):
        os.kill(self.pid, signal.SIGUSR1)

    def wait(self, timeout=120):
        rc = self.proc.wait(timeout=timeout)
        if rc != 0:
            raise TestFailure("workload exited %d: %s" %
                              (rc, self.proc.stdout.read()))
        with open(self.report) as f:
            return json.load(f)

    def wait_done(self, path, timeout=120):
        """Wait for the file of --done @path: every worker has done its
        work (and taken its "after" sample) and is blocked."""
        deadline = time.time() + timeout
        while not os.path.exists(path):
            check(self.proc.poll() is None, "workload died")
            check(time.time() < deadline, "%s never written" % path)
            time.sleep(0.05)

    def end(self, timeout=60):
        """SIGTERM a workload that holds after its work: its report (with
        "complete": false; the work itself is done when --done said so)."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=timeout)
        if rc != 128 + signal.SIGTERM:
            raise TestFailure("workload exited %d on SIGTERM: %s" %
                              (rc, self.proc.stdout.read()))
        with open(self.report) as f:
            return json.load(f)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Cat:
    """vcpuperf-cat in the background, writing rows and events to files."""

    def __init__(self, name, *args, outdir=OUT, prefix=()):
        """Start vcpuperf-cat @args, its rows and events in @outdir (by
        default the host's shared directory, 9p: a write there is a round
        trip to the host, which a timing test may not want to measure),
        under the command @prefix if any (setpriv ..., to open the device
        with fewer privileges)."""
        self.rows_path = os.path.join(outdir, name + ".rows.jsonl")
        self.events_path = os.path.join(outdir, name + ".events.jsonl")
        for p in (self.rows_path, self.events_path):
            if os.path.exists(p):
                os.unlink(p)
        self.proc = subprocess.Popen(
            list(prefix) + [CAT, "-o", self.rows_path, "--events-out",
                            self.events_path] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def wait_started(self, n=1, timeout=30):
        """Wait for n perf_started events."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure("vcpuperf-cat exited early: %s" %
                                  self.proc.stderr.read())
            if len(self.events("perf_started")) >= n:
                return
            time.sleep(0.05)
        raise TestFailure("no perf_started from vcpuperf-cat")

    def stop(self, sig=signal.SIGINT, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def wait(self, timeout=60):
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise TestFailure("vcpuperf-cat did not exit: " + err)
        self.stderr = err
        return self.proc.returncode

    def rows(self):
        return load_jsonl(self.rows_path)

    def row_count(self):
        """How many rows were written, without parsing them (a tmpfs file
        of 100,000 rows takes 10 s or more to parse under TCG)."""
        try:
            with open(self.rows_path, "rb") as f:
                return sum(chunk.count(b"\n")
                           for chunk in iter(lambda: f.read(1 << 20), b""))
        except FileNotFoundError:
            return 0

    def events(self, name=None):
        ev = load_jsonl(self.events_path)
        return [e for e in ev if name is None or e.get("event") == name]


# A read of a file vcpuperf-cat is writing on the VM's 9p share (/tmp/out)
# failed once with ENODATA on Linux 7.2's 9p client (make check, in
# pmu_pinned_conflict's wait for perf_started): read it again.
READ_RETRIES = 5


def load_jsonl(path):
    """The complete lines of the JSONL file @path (none if it is not
    there yet), each parsed."""
    for attempt in range(READ_RETRIES):
        out = []
        if not os.path.exists(path):
            return out
        try:
            with open(path) as f:
                for line in f:
                    # A line still being written ends the read: the file
                    # iterator would go on past end of file with the
                    # rest of that line as a line of its own.
                    if not line.endswith("\n"):
                        break
                    out.append(json.loads(line))
            return out
        except OSError as e:
            if e.errno != errno.ENODATA or attempt == READ_RETRIES - 1:
                raise
            time.sleep(0.1)


def by_tid(rows):
    """Rows grouped by thread: {tid: [row, ...]}."""
    out = {}
    for r in rows:
        out.setdefault(r["tid"], []).append(r)
    return out


def delta(th, key):
    """What a workload thread's /proc reading @key grew by over its work."""
    return th["after"][key] - th["before"][key]


def proc_status(tid, key):
    with open("/proc/%d/status" % tid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise TestFailure("no %s in /proc/%d/status" % (key, tid))


def kmemleak_clean():
    """On a kernel with kmemleak: scan and fail on any unreferenced object."""
    path = "/sys/kernel/debug/kmemleak"
    if not os.path.exists(path):
        return None
    with open(path, "w") as f:
        f.write("scan")
    time.sleep(6)  # kmemleak only reports objects older than 5 s
    with open(path, "w") as f:
        f.write("scan")
    with open(path) as f:
        report = f.read()
    check(not report.strip(), "kmemleak:\n" + report[:4000])
    return True


def pct(values, p):
    """The @p quantile of @values (nearest rank, 0 < @p < 1); None for
    none."""
    v = sorted(values)
    return v[min(len(v) - 1, int(p * len(v)))] if v else None


def within(value, expect, rel, absolute=0):
    return abs(value - expect) <= max(rel * abs(expect), absolute)


# ------------------------------------------------------------------ runner
#
# Every test file registers its tests with @test; a driver (run.py for the
# x86 VM, tests/arm64/kvm.py on the arm64 bed, tests/signed/lockdown.py and
# secureboot.py in their signed-kernel boots) imports them and calls main(), which runs the ones
# named on its command line and prints TAP (tests/tap.py).

TESTS = []


def test(fn):
    """Register @fn as a test.  Tests run in the order they are
    registered: the order the driver imports the test files, then the
    order of the functions in each.  The function's name is the test's
    name, the one `make check-vm T=...` and the drivers select by."""
    if any(t.__name__ == fn.__name__ for t in TESTS):
        raise ValueError("two tests named %s" % fn.__name__)
    TESTS.append(fn)
    return fn


def kernel_log_check():
    """The last check of a run (mark taken now): unloading leaves a clean
    kernel log since the mark and, with VP_KMEMLEAK, no kmemleak report."""
    mark = dmesg_mark()

    def kernel_log_clean():
        unload()
        dmesg_clean_since(mark)
        if os.environ.get("VP_KMEMLEAK") and kmemleak_clean():
            print("  kmemleak found nothing", flush=True)
    return kernel_log_clean


# A test still running after this long is hung: the longest take about
# two minutes in the x86 bed and four on the debug kernel.  The VM's own
# timeout (scripts/vm-run.sh) would kill the whole run without a word on
# where it stopped; the watchdog below says, and lets the run go on.
HANG_S = float(os.environ.get("VP_HANG_S", "600"))
# After the hung test's processes are killed, how long its thread has to
# come back before the run ends without it.
HANG_GRACE_S = 60


def _descendants(pid):
    """The pids of every process below @pid."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def dump_tasks(pids):
    """Print every thread of @pids and every thread in uninterruptible
    sleep anywhere, each with its state, wait channel and kernel stack."""
    pids = set(pids)
    for d in sorted(os.listdir("/proc"), key=lambda x: (len(x), x)):
        if not d.isdigit():
            continue
        try:
            tids = os.listdir("/proc/%s/task" % d)
        except OSError:
            continue
        for tid in tids:
            base = "/proc/%s/task/%s/" % (d, tid)
            try:
                with open(base + "stat") as f:
                    head, rest = f.read().rsplit(")", 1)
                state = rest.split()[0]
                if int(d) not in pids and state != "D":
                    continue
                with open(base + "wchan") as f:
                    wchan = f.read().strip()
                with open(base + "stack") as f:
                    stack = f.read().strip()
            except (OSError, ValueError):
                continue
            print("  pid %s tid %s (%s) state %s wchan %s" %
                  (d, tid, head.split("(", 1)[1], state, wchan or "-"))
            for ln in stack.splitlines():
                print("      " + ln)


class _Watchdog:
    """Fires when one test runs longer than HANG_S: prints where every
    Python thread is, the kernel stacks of the test's processes and of
    every blocked thread, the module's status and the kernel log's tail,
    then kills the test's processes so that its thread comes back.  If it
    does not within HANG_GRACE_S, the run is closed and the process ends:
    the test is named as hung either way."""

    def __init__(self, out, name):
        import threading
        self.fired = False
        self._out = out
        self._name = name
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True,
                                        name="hang-watchdog")
        self._thread.start()

    def _watch(self):
        import faulthandler
        if self._done.wait(HANG_S):
            return
        self.fired = True
        print("%s: still running after %.0f s; where it is:" %
              (self._name, HANG_S), flush=True)
        try:
            faulthandler.dump_traceback(file=sys.stdout, all_threads=True)
        except (AttributeError, ValueError, OSError) as e:
            print("  no Python traceback: %s" % e)
        sys.stdout.flush()
        pids = _descendants(os.getpid())
        dump_tasks(pids + [os.getpid()])
        if os.path.isdir(DEBUGFS):
            try:
                print(read_file("status"))
            except OSError:
                pass
        p = subprocess.run(["dmesg"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        print("\n".join(p.stdout.splitlines()[-40:]), flush=True)
        print("killing its processes: %s" %
              (" ".join(map(str, pids)) or "none"), flush=True)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if self._done.wait(HANG_GRACE_S):
            return
        self._out.not_ok(self._name, "hung: still running %.0f s after "
                         "its processes were killed; the run ends here" %
                         HANG_GRACE_S)
        self._out.close()
        os._exit(1)

    def stop(self):
        self._done.set()


# perf_event_open(2): syscall numbers and the first, 64-byte version of
# struct perf_event_attr.
PERF_EVENT_OPEN_NR = {"x86_64": 298, "aarch64": 241}
PERF_ATTR_SIZE_VER0 = 64
PERF_TYPE_SOFTWARE = 1
PERF_TYPE_TRACEPOINT = 2
PERF_FLAG_FD_CLOEXEC = 8
# The software events with a static key of their own (perf_swevent_enabled
# in kernel/events/core.c): page faults (all, minor, major), context
# switches, CPU migrations, alignment and emulation faults, dummy.
PERF_SW_KEYED = range(2, 10)
# Tracepoints the tests count whose call sites are in __schedule().
HELD_TRACEPOINTS = ("sched/sched_switch",)
TRACEFS = ("/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events")


def tracepoint_id(name):
    """The perf config of tracepoint @name ("sched/sched_switch")."""
    for d in TRACEFS:
        try:
            with open(os.path.join(d, name, "id")) as f:
                return int(f.read())
        except OSError:
            continue
    raise OSError(errno.ENOENT, "no tracepoint %s in tracefs" % name)


def hold_perf_static_keys():
    """Open, on this thread and for the whole run, one perf event of each
    kind whose static key has call sites the tests' workloads run all the
    time: any task event (the perf_sched_events key, its sites in
    __schedule()), each keyed software event (context switches in
    __schedule(), migrations in set_task_cpu(), page faults in the fault
    path) and sched:sched_switch.  The tests' collections coming and going
    then no longer rewrite those sites each time (text_poke_bp).  On
    6.1's two multi-threaded TCG vCPUs that rewrite has livelocked the
    guest (one vCPU executing the int3 of a site already restored, the
    other waiting for it in text_poke_bp; docs/testing.md): in
    running_threads_read_themselves, right after a mode's collection of
    context switches and migrations ended, in 2 of 2 boots of one CI run.
    Returns the fds ([] on another architecture) and what could not be
    opened."""
    import ctypes
    import struct
    nr = PERF_EVENT_OPEN_NR.get(os.uname().machine)
    if nr is None:
        return [], []
    libc = ctypes.CDLL(None, use_errno=True)
    events = [(PERF_TYPE_SOFTWARE, c, "software %d" % c)
              for c in PERF_SW_KEYED]
    missing = []
    for tp in HELD_TRACEPOINTS:
        try:
            events.append((PERF_TYPE_TRACEPOINT, tracepoint_id(tp), tp))
        except OSError as e:
            missing.append("%s: %s" % (tp, e.strerror))
    fds = []
    for etype, config, name in events:
        attr = ctypes.create_string_buffer(
            struct.pack("<IIQ", etype, PERF_ATTR_SIZE_VER0, config),
            PERF_ATTR_SIZE_VER0)
        fd = libc.syscall(nr, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC)
        if fd < 0:
            missing.append("%s: %s" % (name,
                                       os.strerror(ctypes.get_errno())))
        else:
            fds.append(fd)
    return fds, missing


def run(tests, final=None, before_each=None, on_failure=None):
    """Run @tests (functions) in order, then the @final checks (default:
    kernel_log_check()), as TAP: a plan, 'ok N - NAME', 'ok N - NAME #
    SKIP why' (TestSkip) or 'not ok N - NAME' and its reason (with the
    traceback of an unexpected exception and the status file), every
    print of a test as a comment, and the closing comment
    'N passed, N failed' (tests/tap.py).  @before_each(test) runs before
    each test, @on_failure(test, exception) after each failed one.
    Returns the exit status."""
    import traceback
    out = tap.Tap()
    held, missing = hold_perf_static_keys()
    try:
        if final is None:
            final = [kernel_log_check()]
        out.plan(len(tests) + len(final))
        if missing:
            out.comment("perf events not held for the run: %s" %
                        ", ".join(missing))
        for t in list(tests) + list(final):
            is_test = not any(t is f for f in final)
            start = time.time()
            dog = _Watchdog(out, t.__name__)
            try:
                try:
                    _check_needs(t)
                    if is_test and before_each:
                        before_each(t)
                    t()
                finally:
                    dog.stop()
                if dog.fired:
                    raise TestFailure("hung: still running after %.0f s "
                                      "(its state above)" % HANG_S)
            except TestSkip as e:
                out.skip(t.__name__, e)
                continue
            except Exception as e:
                why = str(e)
                if not isinstance(e, TestFailure):
                    why = "%s\n%s" % (why, traceback.format_exc())
                out.comment("took %.1f s" % (time.time() - start))
                out.not_ok(t.__name__, why)
                if os.path.isdir(DEBUGFS):
                    try:
                        out.comment(read_file("status"))
                    except OSError:
                        pass
                if is_test and on_failure:
                    try:
                        on_failure(t, e)
                    except Exception as e2:
                        out.comment("cleanup after %s: %s" % (t.__name__, e2))
                continue
            out.comment("took %.1f s" % (time.time() - start))
            out.ok(t.__name__)
    finally:
        for fd in held:
            os.close(fd)
        out.close()
    return 1 if out.failed else 0


def select(names, tests=None):
    """The registered tests named in @names, in their order (all of them
    for none); with '--all-but' first, all but the named ones.  An unknown
    name is a ValueError."""
    tests = TESTS if tests is None else tests
    names = list(names)
    but = names[:1] == ["--all-but"]
    if but:
        names = names[1:]
    unknown = sorted(set(names) - {t.__name__ for t in tests})
    if unknown:
        raise ValueError("no test named %s" % ", ".join(unknown))
    if but:
        return [t for t in tests if t.__name__ not in names]
    return [t for t in tests if not names or t.__name__ in names]


def main(argv=None):
    """A driver's command line: [NAME...] runs those tests (all for none),
    --all-but NAME... all others, --list prints every name in order,
    --list --cpus N those that need N CPUs or more (needs_cpus())."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["--list"]:
        cpus = int(args[2]) if args[1:2] == ["--cpus"] else 1
        for t in TESTS:
            if getattr(t, "vp_cpus", 1) >= cpus:
                print(t.__name__)
        return 0
    try:
        tests = select(args)
    except ValueError as e:
        print("%s: %s (--list names them)" %
              (os.path.basename(sys.argv[0]), e), file=sys.stderr)
        return 2
    return run(tests)


def perf_stat_enabled(cmd, timeout=60):
    """Start perf stat @cmd (a list) with its counters disabled (-D -1) and
    enable them through its control FIFO: returns the Popen once perf has
    acknowledged the enable, so that its counts start before the work
    does (counters that are open are not yet enabled)."""
    d = tempfile.mkdtemp(prefix="perfctl.")
    ctl, ack = os.path.join(d, "ctl"), os.path.join(d, "ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    perf = subprocess.Popen(cmd + ["-D", "-1", "--control",
                                   "fifo:%s,%s" % (ctl, ack)],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    # O_RDWR: neither open waits for perf to open its end
    cfd = os.open(ctl, os.O_RDWR)
    afd = os.open(ack, os.O_RDWR)
    try:
        os.write(cfd, b"enable\n")
        deadline = time.time() + timeout
        got = b""
        while b"ack" not in got:
            check(perf.poll() is None, "perf stat died: %s" %
                  (perf.poll() is not None and perf.stderr.read()))
            left = deadline - time.time()
            check(left > 0, "perf stat never enabled its counters")
            if selectmod.select([afd], [], [], min(left, 0.5))[0]:
                got += os.read(afd, 64)
    except BaseException:
        perf.kill()
        perf.wait()
        raise
    finally:
        os.close(cfd)
        os.close(afd)
        shutil.rmtree(d, ignore_errors=True)
    return perf


def finit_module(path, params=""):
    """Load a module with finit_module(2) (no insmod in between): 0 or the
    errno."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    SYS_finit_module = 313      # x86_64
    fd = os.open(path, os.O_RDONLY)
    try:
        if libc.syscall(SYS_finit_module, fd, params.encode(), 0) == 0:
            return 0
        return ctypes.get_errno()
    finally:
        os.close(fd)


def is_signed(path):
    with open(path, "rb") as f:
        f.seek(-28, os.SEEK_END)
        return f.read() == b"~Module signature appended~\n"


# rmmod refused because a vcpuperf file is open returns at once: the
# kernel does not wait for the module's users (delete_module() fails with
# EWOULDBLOCK, "in use").  Seconds allowed under TCG.
RMMOD_REFUSED_S = 5.0


def rmmod_refused(what):
    """rmmod vcpuperf while something holds a vcpuperf file: it must fail
    at once with "in use" and leave the module loaded.  Returns the
    seconds it took."""
    t0 = time.time()
    p = sh("rmmod vcpuperf", check_rc=False, timeout=60)
    took = time.time() - t0
    check(p.returncode != 0 and "in use" in p.stderr,
          "%s: rmmod not refused as in use: exit %d, %r" %
          (what, p.returncode, p.stderr))
    check(module_loaded(), "%s: module gone after a refused rmmod" % what)
    check(took < RMMOD_REFUSED_S, "%s: refused rmmod took %.1f s" %
          (what, took))
    return took


def rmmod_under_cat(name, threads, events, settle=1.0, timeout=30):
    """Load the module, count a workload of @threads threads with @events
    every 20 ms through vcpuperf-cat, and after @settle seconds rmmod the
    module under it: refused at once ("in use"), the recording goes on
    untouched (its threads' page faults over their work, done after the
    refused rmmod, equal what each thread read from /proc; no record
    lost), and once vcpuperf-cat has stopped (SIGINT: final rows,
    perf_finished, detached with reason 'stop') rmmod goes through.
    Returns the Cat."""
    load()
    pages = 2000
    w = Workload(name, "--threads", str(threads), "--wait-go", "--pages",
                 str(pages), "--hold-ms", "500")
    c = Cat(name, "--qemu", str(w.pid), "--events", events,
            "--interval", "20ms")
    try:
        c.wait_started(threads, timeout=timeout)
        time.sleep(settle)
        took = rmmod_refused(name)
        w.go()
        rep = w.wait()
        time.sleep(0.2)
        rc = c.stop()
    finally:
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    det = c.events("perf_detached")
    check(len(det) == threads and all(e["reason"] in ("stop", "exited")
                                      for e in det), "detached: %s" % det)
    check(not c.events("perf_seq_gap"), "records lost: %s" %
          c.events("perf_seq_gap"))
    rows = by_tid(c.rows())
    for th in rep["threads"]:
        pf = sum(r["page_faults"] or 0 for r in rows.get(th["tid"], []))
        opf = delta(th, "minflt") + delta(th, "majflt")
        check(opf >= pages and opf <= pf <= opf + 100,
              "tid %d: page_faults %d after the refused rmmod, /proc says "
              "%d" % (th["tid"], pf, opf))
    unload()
    print("  rmmod refused in %.2f s while vcpuperf-cat recorded; the "
          "recording counted on; rmmod went through after its stop" % took,
          flush=True)
    return c


def run_workload(c, w, nstarted, settle=0.3, timeout=30):
    """Wait for @nstarted perf_started events of vcpuperf-cat @c, let the
    workload @w run to its report, give the sampler @settle seconds, then
    end both (checking that vcpuperf-cat exits 0).  Returns the report."""
    try:
        c.wait_started(nstarted, timeout=timeout)
        w.go()
        rep = w.wait()
        time.sleep(settle)
    finally:
        w.kill()
        rc = c.stop()
    check(rc == 0, "vcpuperf-cat exit %d: %s" % (rc, c.stderr))
    return rep
