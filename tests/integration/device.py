"""/dev/vcpuperf: a root-only misc device where every open is a
collection of its own; the malformed commands of commands.py with the
same errno as through debugfs and the reason only on the writer's fd;
vcpuperf-cat on its own collection, with debugfs unmounted, and falling
back to debugfs without the device node; rmmod with the device or a
debugfs file held open."""

import errno
import fcntl
import os
import re
import select
import stat
import struct
import subprocess
import time

from vptest import (Cat, TestFailure, Workload, by_tid, check,
                    control, delta, dev_control, dmesg_clean_since,
                    dmesg_mark, load, open_errno, read_file, rmmod_refused,
                    rmmod_under_cat,
                    run_workload, sh, test, unload, DEBUGFS, DEVICE)
from commands import BAD_COMMANDS


# struct vcpuperf_error and _IOR(VCPUPERF_IOC_MAGIC, 1, it) of the uapi
# header, written out independently of the code under test.
VP_ERROR_SIZE = 4 + 4 + 160
VCPUPERF_IOC_LAST_ERROR = (2 << 30) | (VP_ERROR_SIZE << 16) | (0xB6 << 8) | 1


def expect_oserror(fn, want, what):
    try:
        fn()
    except OSError as e:
        check(e.errno == want, "%s: %s, want %s" %
              (what, errno.errorcode.get(e.errno, e.errno),
               errno.errorcode[want]))
        return
    raise TestFailure("%s: succeeded, want %s" % (what, errno.errorcode[want]))


def read_to_eof(fd, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if os.read(fd, 65536) == b"":
                return
        except BlockingIOError:
            time.sleep(0.05)
    raise TestFailure("no EOF")


def dev_last_error(fd):
    """(errno, reason) of the last rejected command of the device fd's
    collection, from the VCPUPERF_IOC_LAST_ERROR ioctl."""
    buf = bytearray(VP_ERROR_SIZE)
    fcntl.ioctl(fd, VCPUPERF_IOC_LAST_ERROR, buf)
    err = -struct.unpack_from("<i", buf, 0)[0]
    return err, bytes(buf[8:]).split(b"\0")[0].decode()


def header_collection(fd):
    """The collection number in the header record read from fd."""
    hdr = os.read(fd, 4096)
    check(len(hdr) >= 64 and hdr[32:36] == b"VCPF", "no header record")
    return struct.unpack_from("<I", hdr, 52)[0]


@test
def device_node_and_own_collections():
    """/dev/vcpuperf is a root-only (0600) misc device; every open is a
    collection of its own (its own header and number, listed in status with
    its owner, beside a debugfs reader of the default collection); an
    O_WRONLY open has a collection nobody reads (poll says POLLOUT only,
    read EBADF); header, O_NONBLOCK EAGAIN, poll() and EOF after stop as on
    the debugfs stream; a closed collection leaves status."""
    load()
    st = os.stat(DEVICE)
    check(stat.S_ISCHR(st.st_mode), "%s is not a character device" % DEVICE)
    check(stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == 0 and
          st.st_gid == 0, "mode %o uid %d gid %d" %
          (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid))
    with open("/sys/class/misc/vcpuperf/dev") as f:
        check(f.read().strip() == "%d:%d" % (os.major(st.st_rdev),
                                             os.minor(st.st_rdev)),
              "device number differs from /sys/class/misc/vcpuperf")
    check(os.major(st.st_rdev) == 10, "not a misc device")
    stream = os.path.join(DEBUGFS, "stream")
    dbg = os.open(stream, os.O_RDONLY | os.O_NONBLOCK)
    fds = []
    try:
        check(open_errno(stream, os.O_RDONLY) == errno.EBUSY,
              "second debugfs stream reader")
        for flags in (os.O_RDONLY, os.O_RDWR, os.O_RDWR):
            fds.append(os.open(DEVICE, flags | os.O_NONBLOCK))
        ids = [header_collection(fd) for fd in fds]
        check(len(set(ids)) == 3 and 0 not in ids,
              "collection numbers %s" % ids)
        status = read_file("status")
        for cid in ids:
            check(re.search(r"^collection %d: /dev/vcpuperf, owner pid %d "
                            r'comm "python3"' % (cid, os.getpid()),
                            status, re.M), "collection %d not in status:\n%s"
                  % (cid, status))
        w = os.open(DEVICE, os.O_WRONLY)
        try:
            check(dev_control("interval 10ms", w) == 0, "command via O_WRONLY")
            p = select.poll()
            p.register(w, select.POLLOUT | select.POLLIN)
            ev = dict(p.poll(0)).get(w, 0)
            check(ev == select.POLLOUT, "poll on O_WRONLY: %#x" % ev)
            expect_oserror(lambda: os.read(w, 16), errno.EBADF,
                           "read on O_WRONLY")
        finally:
            os.close(w)
        check("interval 10ms" not in read_file("control"),
              "a device command changed the default collection")
        fd = fds[2]
        expect_oserror(lambda: os.read(fd, 4096), errno.EAGAIN,
                       "empty non-blocking read")
        work = Workload("devpoll", "--threads", "1", "--hold-ms", "3000")
        try:
            check(dev_control("attach tid=%d events=task-clock" %
                              work.tids[0], fd) == 0, "attach via the device")
            p = select.poll()
            p.register(fd, select.POLLIN)
            check(p.poll(5000), "poll did not wake")
            check(len(os.read(fd, 65536)) > 0, "no data after poll")
            for other in fds[:2]:
                expect_oserror(lambda: os.read(other, 4096), errno.EAGAIN,
                               "another collection got records")
            check(dev_control("stop", fd) == 0, "stop")
            read_to_eof(fd)
        finally:
            work.kill()
    finally:
        for fd in fds:
            os.close(fd)
        os.close(dbg)
    status = read_file("status")
    for cid in ids:
        check(not re.search(r"^collection %d:" % cid, status, re.M),
              "closed collection %d still in status" % cid)
    check("collections: 0 on /dev/vcpuperf" in status, "status: count")
    check(open_errno(stream, os.O_RDONLY) == 0, "stream not free after close")


@test
def device_commands_match_debugfs():
    """Every malformed command gets the same errno through /dev/vcpuperf as
    through debugfs control, changes nothing, and its reason reaches only
    the writer of that collection: VCPUPERF_IOC_LAST_ERROR on the same fd,
    nothing on another device fd, nothing in status (whose last_error is
    the default collection's, set by the debugfs writes only)."""
    load()
    config = read_file("control")
    other = os.open(DEVICE, os.O_RDWR | os.O_NONBLOCK)
    try:
        for cmd, want in BAD_COMMANDS:
            fd = os.open(DEVICE, os.O_RDWR | os.O_NONBLOCK)
            try:
                got_dev = dev_control(cmd, fd)
                err, why = dev_last_error(fd)
            finally:
                os.close(fd)
            check(got_dev == want and err == want and why,
                  "%r: device %s, ioctl %s %r, want %s" %
                  (cmd[:60], errno.errorcode.get(got_dev, got_dev),
                   errno.errorcode.get(err, err), why, errno.errorcode[want]))
            check("last_error: none" in read_file("status"),
                  "a device command's reason reached status: %r" % cmd[:40])
        check(dev_last_error(other) == (0, ""),
              "another collection's reason leaked: %r" %
              (dev_last_error(other),))
        for cmd, want in BAD_COMMANDS:
            got_dbg = control(cmd)
            check(got_dbg == want, "%r: debugfs %s, want %s" %
                  (cmd[:60], errno.errorcode.get(got_dbg, got_dbg),
                   errno.errorcode[want]))
            check("last_error: " + errno.errorcode[want] in read_file("status"),
                  "status lacks the reason for %r" % cmd[:40])
        check(dev_last_error(other) == (0, ""),
              "the default collection's reason reached a device fd")
    finally:
        os.close(other)
    check(read_file("control") == config, "configuration changed")
    print("  %d malformed commands: same errno via debugfs and the device, "
          "reason only on the writer's fd" % len(BAD_COMMANDS))


@test
def device_permissions():
    """Unprivileged open of /dev/vcpuperf: EACCES; root without CAP_PERFMON
    and CAP_SYS_ADMIN: EPERM (as for the debugfs files)."""
    load()
    probe = ("python3 -c 'import os,sys\ntry:\n os.open(\"%s\", os.%s)\n"
             "except OSError as e:\n sys.exit(e.errno)'")
    for flags in ("O_RDONLY", "O_WRONLY", "O_RDWR"):
        p = sh("setpriv --reuid=65534 --regid=65534 --clear-groups " +
               probe % (DEVICE, flags), check_rc=False)
        check(p.returncode == errno.EACCES, "nobody %s: exit %d %s" %
              (flags, p.returncode, p.stderr))
        p = sh("setpriv --bounding-set=-all --inh-caps=-all " +
               probe % (DEVICE, flags), check_rc=False)
        check(p.returncode == errno.EPERM, "capless root %s: exit %d %s" %
              (flags, p.returncode, p.stderr))


@test
def tool_uses_own_collection():
    """vcpuperf-cat --qemu opens its own collection on /dev/vcpuperf and
    says nothing about it, with debugfs unmounted too; without the device
    node it falls back to the default collection through debugfs and says
    so once on stderr.  Page faults agree with /proc either way."""
    pages = 2000
    for how in ("device", "no debugfs", "no device"):
        load()
        w = Workload("own-" + how.replace(" ", "-"), "--threads", "2",
                     "--wait-go", "--pages", str(pages), "--hold-ms", "500")
        if how == "no debugfs":
            sh("umount /sys/kernel/debug")
        if how == "no device":
            os.unlink(DEVICE)
        try:
            c = Cat("own", "--qemu", str(w.pid), "--interval", "50ms",
                    "--events", "page-faults,task-clock")
            rep = run_workload(c, w, 2, settle=0.2)
        finally:
            w.kill()
            if how == "no debugfs":
                sh("mount -t debugfs none /sys/kernel/debug")
            if how == "no device":
                # devtmpfs makes the node again at the next load (a node
                # made by hand would outlive the module)
                unload()
        if how == "no device":
            check(c.stderr.count("using the module's default collection")
                  == 1, "no fallback message: %r" % c.stderr)
        else:
            check(c.stderr == "", "%s: stderr %r" % (how, c.stderr))
        rows = by_tid(c.rows())
        for th in rep["threads"]:
            pf = sum(r["page_faults"] for r in rows.get(th["tid"], []))
            opf = delta(th, "minflt") + delta(th, "majflt")
            check(opf >= pages and opf <= pf <= opf + 100,
                  "%s: tid %d: page_faults %d, /proc says %d" %
                  (how, th["tid"], pf, opf))
            print("  %s: tid %d page_faults %d (/proc %d), %d rows" %
                  (how, th["tid"], pf, opf, len(rows[th["tid"]])))
        fin = [e for e in c.events("perf_finished")
               if e.get("scope") == "session"]
        check(len(fin) == 1, "%s: no session perf_finished" % how)


@test
def rmmod_with_device_open():
    """rmmod while vcpuperf-cat records through /dev/vcpuperf: refused at
    once, the recording untouched (rmmod_under_cat()).  Any vcpuperf file
    held open, read or not (an O_WRONLY device fd, one handed to uid 65534,
    debugfs control or status), makes rmmod fail at once with "in use",
    never wait: the file still works, and once it is closed rmmod goes
    through with a clean log."""
    mark = dmesg_mark()
    rmmod_under_cat("devrmmod", 2, "task-clock,page-faults")
    check(not os.path.isdir("/sys/module/vcpuperf"), "module still loaded")

    for what, path, flags in (("device O_WRONLY", DEVICE, os.O_WRONLY),
                              ("device held by uid 65534", DEVICE,
                               os.O_RDWR),
                              ("debugfs control",
                               os.path.join(DEBUGFS, "control"), os.O_RDONLY),
                              ("debugfs status",
                               os.path.join(DEBUGFS, "status"), os.O_RDONLY)):
        load()
        fd = os.open(path, flags)
        holder = None
        try:
            if "65534" in what:
                # handed to an unprivileged process; ours is closed
                holder = subprocess.Popen(
                    ["setpriv", "--reuid=65534", "--regid=65534",
                     "--clear-groups", "--inh-caps=-all", "sleep", "600"],
                    pass_fds=(fd,))
                os.close(fd)
                fd = None
                time.sleep(0.3)
            rmmod_refused(what)
            check(os.path.exists(DEVICE), "%s: %s gone" % (what, DEVICE))
            if path == DEVICE and fd is not None:
                check(dev_control("interval 10ms", fd) == 0,
                      "%s: a command after the refused rmmod failed" % what)
        finally:
            if fd is not None:
                os.close(fd)
            if holder:
                holder.kill()
                holder.wait()
        unload()
        check(not os.path.isdir("/sys/module/vcpuperf"), "still loaded")
    dmesg_clean_since(mark)