#!/usr/bin/python3
"""vcpuperf under kernel lockdown (lockdown=integrity): run as root inside
the test VM booted by tests/harness/signed-vm-test.sh lockdown, from the
repository root.

Environment: VP_MODULE (vcpuperf.ko signed with the kernel's build key),
VP_MODULE_UNSIGNED (the same module unsigned).

Under lockdown=integrity debugfs serves only read-only files, so the
control file is refused; vcpuperf-cat, given no special option, opens its
own collection on /dev/vcpuperf, which lockdown does not restrict, and
has nothing to complain about.  Counts are checked against the
workload's own /proc and schedstat readings, not against vcpuperf."""

import errno
import os
import re
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from vptest import (Cat, TestFailure, Workload, check,  # noqa: E402
                    dmesg_mark, finit_module, is_signed, load, read_file, sh,
                    main, rmmod_under_cat, run_workload, task_clock_agrees,
                    test, unload, DEBUGFS, DEVICE, MODULE)

MS = 1000000
UNSIGNED = os.environ.get("VP_MODULE_UNSIGNED", "")
SECURITYFS = "/sys/kernel/security"


@test
def lockdown_is_integrity():
    """/sys/kernel/security/lockdown shows [integrity]."""
    if not os.path.exists(os.path.join(SECURITYFS, "lockdown")):
        sh("mount -t securityfs securityfs %s" % SECURITYFS)
    with open(os.path.join(SECURITYFS, "lockdown")) as f:
        mode = f.read().strip()
    print("  lockdown: %s" % mode)
    check("[integrity]" in mode, "lockdown is %r" % mode)


@test
def unsigned_module_refused():
    """Lockdown alone (no module.sig_enforce) refuses the unsigned module
    with EPERM and says why in the kernel log; the signed one loads, untainted."""
    check(UNSIGNED and not is_signed(UNSIGNED), "no unsigned module given")
    check(is_signed(MODULE), "%s is not signed" % MODULE)
    unload()
    mark = dmesg_mark()
    err = finit_module(UNSIGNED)
    check(err == errno.EPERM, "unsigned module: %s, want EPERM" %
          errno.errorcode.get(err, err))
    log = "\n".join(sh("dmesg").stdout.splitlines()[mark:])
    check("unsigned module loading is restricted" in log,
          "no lockdown message in the log:\n" + log[-2000:])
    load()
    with open("/sys/module/vcpuperf/taint") as f:
        taint = f.read().strip()
    check("E" not in taint, "signed module tainted %r (unsigned?)" % taint)


@test
def debugfs_read_only():
    """Opening debugfs control fails with EPERM (for writing, and for
    reading since the file is writable); status and stream open and read."""
    path = os.path.join(DEBUGFS, "control")
    for flags, what in ((os.O_WRONLY, "O_WRONLY"), (os.O_RDONLY, "O_RDONLY")):
        try:
            os.close(os.open(path, flags))
            raise TestFailure("control opened %s under lockdown" % what)
        except OSError as e:
            check(e.errno == errno.EPERM, "control %s: %s" % (what, e))
    check(read_file("status").startswith("vcpuperf abi"), "status unreadable")
    fd = os.open(os.path.join(DEBUGFS, "stream"), os.O_RDONLY | os.O_NONBLOCK)
    try:
        hdr = os.read(fd, 4096)
        check(len(hdr) >= 64 and hdr[32:36] == b"VCPF", "no stream header")
    finally:
        os.close(fd)


@test
def device_is_root_only():
    """/dev/vcpuperf exists: a character device, mode 0600, owned by root."""
    st = os.stat(DEVICE)
    check(stat.S_ISCHR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600 and
          st.st_uid == 0 and st.st_gid == 0, "%s: mode %o uid %d" %
          (DEVICE, st.st_mode, st.st_uid))


@test
def tool_counts_through_the_device():
    """vcpuperf-cat with no special option counts through its own
    collection on /dev/vcpuperf (listed in the read-only status file under
    its pid) without a word on stderr, and its page faults, context
    switches and task-clock agree with the workload's /proc readings; stop
    drains to perf_finished."""
    pages, sleeps, burn = 2000, 100, 300
    w = Workload("lockdown", "--threads", "2", "--wait-go", "--pages",
                 str(pages), "--sleeps", str(sleeps), "--burn-ms", str(burn),
                 "--hold-ms", "800")
    c = Cat("lockdown", "--qemu", str(w.pid), "--interval", "100ms",
            "--events", "task-clock,page-faults,context-switches")
    c.wait_started(2, timeout=60)
    mine = re.search(r"^collection \d+: %s, owner pid %d " %
                     (re.escape(DEVICE), c.proc.pid), read_file("status"),
                     re.M)
    rep = run_workload(c, w, 2, timeout=60)
    check(mine, "vcpuperf-cat's collection is not on %s in status" % DEVICE)
    check(not c.stderr.strip(), "vcpuperf-cat said: %r" % c.stderr)
    print("  %s (stderr empty)" % mine.group(0))
    rows = {}
    for r in c.rows():
        rows.setdefault(r["tid"], []).append(r)
    for th in rep["threads"]:
        trows = rows.get(th["tid"], [])
        check(len(trows) >= 5, "tid %d: %d rows" % (th["tid"], len(trows)))
        d = {k: th["after"][k] - th["before"][k] for k in th["after"]}
        pf = sum(r["page_faults"] for r in trows)
        opf = d["minflt"] + d["majflt"]
        check(opf >= pages and opf <= pf <= opf + 100,
              "tid %d: page_faults %d, /proc %d" % (th["tid"], pf, opf))
        cs = sum(r["context_switches"] for r in trows)
        ocs = d["voluntary_ctxt_switches"] + d["nonvoluntary_ctxt_switches"]
        check(ocs >= sleeps and ocs <= cs <= ocs + 30,
              "tid %d: context_switches %d, /proc %d" % (th["tid"], cs, ocs))
        tc = sum(r["task_clock"] for r in trows)
        ort = d["sum_exec_runtime_ns"]
        check(ort >= burn * MS and task_clock_agrees(tc, ort, ocs),
              "tid %d: task_clock %d, schedstat %d" % (th["tid"], tc, ort))
        print("  tid %d: page_faults %d (/proc %d), context_switches %d "
              "(/proc %d), task_clock %.1f ms (schedstat %.1f ms), %d rows" %
              (th["tid"], pf, opf, cs, ocs, tc / MS, ort / MS, len(trows)))
    fin = c.events("perf_finished")
    check(any(e.get("scope") == "session" for e in fin),
          "no session perf_finished")
    check(len([e for e in fin if e.get("tid") in rows]) == 2,
          "no per-thread perf_finished")


@test
def rmmod_with_device_reader():
    """rmmod while vcpuperf-cat reads through /dev/vcpuperf: refused at
    once, the recording counts on; once it has stopped the module is
    gone."""
    rmmod_under_cat("lockdown-rmmod", 1, "task-clock,page-faults",
                    settle=0.5, timeout=60)
    check(not os.path.isdir("/sys/module/vcpuperf"), "module still loaded")
    check(not os.path.exists(DEVICE), "%s still there" % DEVICE)


if __name__ == "__main__":
    sys.exit(main())
