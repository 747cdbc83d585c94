"""The debugfs interface: one reader of the stream at a time, O_NONBLOCK,
poll() and EOF after stop; who may open the files (unprivileged users
EACCES, root without CAP_PERFMON EPERM); what vcpuperf-cat says when the
module is not loaded or debugfs is not mounted."""

import errno
import os
import select
import time

from vptest import (TestFailure, Workload, check, control, load,
                    sh, test, unload, DEBUGFS, CAT)


@test
def stream_single_reader_nonblock_poll():
    """A second open gets EBUSY; O_NONBLOCK gives EAGAIN; poll wakes."""
    load()
    path = os.path.join(DEBUGFS, "stream")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        hdr = os.read(fd, 4096)
        check(len(hdr) >= 64 and hdr[32:36] == b"VCPF", "no header record")
        try:
            os.read(fd, 4096)
            raise TestFailure("read on an empty stream did not fail")
        except BlockingIOError:
            pass
        try:
            os.close(os.open(path, os.O_RDONLY))
            raise TestFailure("second reader was allowed")
        except OSError as e:
            check(e.errno == errno.EBUSY, "second open: %s" % e)
        w = Workload("poll", "--threads", "1", "--hold-ms", "3000")
        try:
            check(control("interval 10ms") == 0, "interval")
            check(control("attach tid=%d events=task-clock" % w.tids[0]) == 0,
                  "attach")
            p = select.poll()
            p.register(fd, select.POLLIN)
            check(p.poll(5000), "poll did not wake")
            check(len(os.read(fd, 65536)) > 0, "no data after poll")
            check(control("stop") == 0, "stop")
            deadline = time.time() + 5
            while time.time() < deadline:
                try:
                    if os.read(fd, 65536) == b"":
                        break
                except BlockingIOError:
                    time.sleep(0.05)
            else:
                raise TestFailure("no EOF after stop")
        finally:
            w.kill()
    finally:
        os.close(fd)


@test
def permissions():
    """Unprivileged users get EACCES; root without CAP_PERFMON gets EPERM."""
    load()
    status = os.path.join(DEBUGFS, "status")
    p = sh("setpriv --reuid=65534 --regid=65534 --clear-groups cat %s" %
           status, check_rc=False)
    check(p.returncode != 0 and "Permission denied" in p.stderr,
          "nobody could read status: %s" % p.stderr)
    for f in ("status", "control", "stream"):
        p = sh("setpriv --bounding-set=-all --inh-caps=-all cat %s" %
               os.path.join(DEBUGFS, f), check_rc=False, timeout=10)
        check(p.returncode != 0 and "Operation not permitted" in p.stderr,
              "capless root could open %s: %s" % (f, p.stderr))
    p = sh("setpriv --reuid=65534 --regid=65534 --clear-groups %s --pid 1 "
           "--duration 1s" % CAT, check_rc=False)
    check(p.returncode == 1 and ("root" in p.stderr or "CAP_PERFMON" in
                                 p.stderr), "tool message: %s" % p.stderr)


@test
def tool_says_what_to_do():
    """vcpuperf-cat names the fix: module not loaded, debugfs not mounted."""
    unload()
    p = sh("%s --pid 1 --duration 1s" % CAT, check_rc=False)
    check(p.returncode == 1 and "modprobe vcpuperf" in p.stderr,
          "module not loaded: %s" % p.stderr)
    load()
    sh("umount /sys/kernel/debug")
    try:
        # without the device to fall back to (tool_falls_back_to_device)
        p = sh("%s --pid 1 --duration 1s --device /nonexistent" % CAT,
               check_rc=False)
    finally:
        sh("mount -t debugfs none /sys/kernel/debug")
    check(p.returncode == 1 and "mount -t debugfs" in p.stderr and
          "/nonexistent" in p.stderr, "debugfs not mounted: %s" % p.stderr)
