"""The control grammar's refusals: every malformed command is rejected
with its documented errno and its reason in status, and changes neither
the configuration nor the running collection.  BAD_COMMANDS is also what
device.py sends through /dev/vcpuperf."""

import errno
import time

from vptest import Cat, Workload, check, control, load, read_file, test


BAD_COMMANDS = [
    ("", errno.EINVAL), ("\n", errno.EINVAL), ("attach", errno.EINVAL),
    ("attach tid=", errno.EINVAL), ("attach tid=abc", errno.EINVAL),
    ("attach tid=0", errno.EINVAL), ("attach tid=-5", errno.EINVAL),
    ("attach tid=1,1", errno.EINVAL), ("attach tid=99999999999", errno.EINVAL),
    ("attach pid=1,2", errno.EINVAL), ("attach qemu=", errno.EINVAL),
    ("attach tid=1 pid=1", errno.EINVAL), ("attach tid=1 events=", errno.EINVAL),
    ("attach tid=1 events=cycles,,instructions", errno.EINVAL),
    ("attach tid=1 events=bogus-event", errno.ENOENT),
    ("attach tid=1 events=nosuchsys:nosuchtp", errno.ENOENT),
    ("attach tid=1 events=cycles:x", errno.EINVAL),
    ("attach tid=1 events=cycles:uk", errno.EINVAL),
    ("attach tid=1 guest_only host_only", errno.EINVAL),
    ("attach tid=1 frobnicate", errno.EINVAL),
    ("attach tid=1 events=cycles,instructions,cache-references,cache-misses,"
     "branches,branch-misses,page-faults,context-switches,task-clock,"
     "cpu-clock,cpu-migrations,minor-faults,major-faults,alignment-faults,"
     "emulation-faults,bus-cycles,ref-cycles", errno.E2BIG),
    ("attach tid=2000000000", errno.ESRCH),
    ("detach tid=2000000000", errno.ESRCH), ("detach", errno.EINVAL),
    ("detach all extra", errno.EINVAL), ("interval", errno.EINVAL),
    ("interval 0", errno.EINVAL), ("interval 61s", errno.EINVAL),
    ("interval 500us", errno.EINVAL), ("interval 10xs", errno.EINVAL),
    ("stop now", errno.EINVAL), ("frobnicate", errno.EINVAL),
    ("attach tid=1\nstop", errno.EINVAL), (b"attach tid=1\x00", errno.EINVAL),
    (b"attach tid=1 events=cycles\xff", errno.EINVAL),
    ("attach qemu=1", errno.ESRCH), ("x" * 17000, errno.E2BIG),
    ("attach tid=1 process_totals", errno.EINVAL),
    ("attach pid=1 all_threads", errno.EINVAL),
    ("attach qemu=1 process_totals process_totals", errno.EINVAL),
    ("attach qemu=1 no_sched no_sched", errno.EINVAL),
]


@test
def malformed_commands_change_nothing():
    """Every malformed command is rejected with its documented errno, its
    reason shows in status, and the running collection is untouched (the
    default collection, through debugfs; the device's own collections are
    device_commands_match_debugfs)."""
    load()
    w = Workload("bad", "--threads", "2", "--hold-ms", "20000")
    check(control("interval 50ms") == 0, "interval refused")
    check(control("attach qemu=%d events=task-clock,context-switches "
                  "no_sched" % w.pid) == 0, "attach refused")
    c = Cat("bad", "--no-attach")
    try:
        c.wait_started(2)
        time.sleep(0.5)
        config = read_file("control")
        check("events=task-clock,context-switches no_sched" in config,
              "the attach word is not in control: %r" % config)
        rows_before = len(c.rows())
        bad = BAD_COMMANDS + [("attach qemu=%d" % w.pid, errno.EEXIST),
                              ("attach tid=%d" % w.tids[0], errno.EEXIST)]
        check(len(bad) >= 20, "too few bad commands")
        for cmd, want in bad:
            got = control(cmd)
            check(got == want, "%r: errno %s, want %s" %
                  (cmd[:60], errno.errorcode.get(got, got),
                   errno.errorcode[want]))
            status = read_file("status")
            check("last_error: " + errno.errorcode[want] in status,
                  "status lacks the reason for %r" % cmd[:40])
            check(read_file("control") == config,
                  "%r changed the configuration" % cmd[:40])
        time.sleep(0.5)
        check(len(c.rows()) > rows_before + 10, "rows stopped flowing")
        check(c.proc.poll() is None, "vcpuperf-cat died")
    finally:
        rc = c.stop()
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d" % rc)
    check(not c.events("perf_seq_gap"), "sequence gaps")
