#!/usr/bin/python3
"""Run every operation of the permission table with the credentials this
process has (tests/integration/perms.py starts it under setpriv) and print
the outcomes as one JSON object.

Usage: perm_probe.py VICTIM_TID

Each outcome is "ok", an errno name, or "-" when the file could not be
opened, so that the operation could not be tried.  "perf" is what
perf_event_open(2) gives the same credentials for a software counter
(task-clock) on VICTIM_TID, a thread of another user (root), as
`perf stat -t VICTIM_TID` would open it."""

import ctypes
import errno
import json
import os
import select
import struct
import sys

DIR = "/sys/kernel/debug/vcpuperf"
FILES = ("control", "stream", "status")
CMD = b"interval 100ms"          # the default: changes nothing
NR_PERF_EVENT_OPEN = 298         # x86_64


def err(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def with_fd(path, flags, fn):
    try:
        fd = os.open(path, flags)
    except OSError:
        return "-"
    try:
        fn(fd)
        return "ok"
    except OSError as e:
        return err(e)
    finally:
        os.close(fd)


def open_error(path, flags):
    try:
        os.close(os.open(path, flags))
        return "ok"
    except OSError as e:
        return err(e)


def poll_in(fd):
    p = select.poll()
    p.register(fd, select.POLLIN)
    if not p.poll(0):
        raise OSError(errno.EAGAIN, "not readable")


def file_ops(path):
    return {
        "open-r": open_error(path, os.O_RDONLY | os.O_NONBLOCK),
        "open-w": open_error(path, os.O_WRONLY | os.O_NONBLOCK),
        "write": with_fd(path, os.O_WRONLY | os.O_NONBLOCK,
                         lambda fd: os.write(fd, CMD)),
        "read": with_fd(path, os.O_RDONLY | os.O_NONBLOCK,
                        lambda fd: os.read(fd, 4096)),
        "poll": with_fd(path, os.O_RDONLY | os.O_NONBLOCK, poll_in),
    }


def dir_ops():
    out = {"list": "ok"}
    try:
        os.listdir(DIR)
    except OSError as e:
        out["list"] = err(e)
    try:
        os.close(os.open(os.path.join(DIR, "new"), os.O_CREAT | os.O_WRONLY,
                         0o600))
        out["create"] = "ok"
    except OSError as e:
        out["create"] = err(e)
    return out


def perf_open(tid):
    """perf_event_open(task-clock, pid=tid, cpu=-1): "ok" or the errno."""
    # struct perf_event_attr, PERF_ATTR_SIZE_VER0 (64 bytes) is enough:
    # type, size, config, then zeros (counting, enabled, no exclusions).
    attr = struct.pack("=IIQ", 1, 64, 1) + bytes(48)   # SOFTWARE, TASK_CLOCK
    buf = ctypes.create_string_buffer(attr, len(attr))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(ctypes.c_long(NR_PERF_EVENT_OPEN), buf,
                      ctypes.c_long(tid), ctypes.c_long(-1),
                      ctypes.c_long(-1), ctypes.c_ulong(0))
    if fd < 0:
        return errno.errorcode.get(ctypes.get_errno(), "?")
    os.close(fd)
    return "ok"


def main():
    victim = int(sys.argv[1])
    out = {f: file_ops(os.path.join(DIR, f)) for f in FILES}
    out["dir"] = dir_ops()
    out["perf"] = perf_open(victim)
    out["uid"] = os.getuid()
    with open("/proc/self/status") as f:
        out["CapEff"] = [ln.split()[1] for ln in f
                         if ln.startswith("CapEff:")][0]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
