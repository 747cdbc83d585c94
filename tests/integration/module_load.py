"""Loading and unloading the module: rmmod while a recording runs (refused
at once, the recording untouched; through once it has stopped, with a
clean log, loadable again); insmod parameters that start a collection at
load, and bad ones that leave nothing loaded."""

import os
import time

from vptest import (Cat, Workload, check, dmesg_clean_since,
                    dmesg_mark, load, rmmod_under_cat, sh, test, unload,
                    MODULE)


@test
def rmmod_while_streaming():
    """rmmod while vcpuperf-cat reads two attached threads: refused at once
    ("in use"), the recording counts on exactly; once it has stopped (its
    session's perf_finished read) rmmod goes through, every counter
    released, the log clean, and the module loads again."""
    mark = dmesg_mark()
    c = rmmod_under_cat("rmmod", 2, "task-clock,page-faults,cycles")
    fin = [e for e in c.events("perf_finished") if e.get("scope") == "session"]
    check(len(fin) == 1, "no session perf_finished")
    check(not os.path.isdir("/sys/module/vcpuperf"), "module still loaded")
    dmesg_clean_since(mark)
    load()
    unload()


@test
def insmod_parameters():
    """insmod qemu=PID events=... interval_ms=50 starts collecting at load;
    bad parameters make insmod fail and leave nothing loaded."""
    unload()
    w = Workload("params", "--threads", "2", "--hold-ms", "10000")
    try:
        for bad in ("qemu=1", "events=bogus qemu=%d" % w.pid,
                    "interval_ms=0", "ring_kb=1", "pid=1 qemu=%d" % w.pid):
            p = sh("insmod %s %s" % (MODULE, bad), check_rc=False)
            check(p.returncode != 0, "insmod %s succeeded" % bad)
            check(not os.path.isdir("/sys/module/vcpuperf"), "loaded")
        load("qemu=%d events=task-clock,page-faults interval_ms=50" % w.pid)
        c = Cat("params", "--no-attach")
        time.sleep(1.5)
        rc = c.stop()
    finally:
        w.kill()
    check(rc == 0, "exit %d" % rc)
    rows = c.rows()
    check({r["vcpu"] for r in rows} == {0, 1}, "vcpus")
    check(len(rows) >= 20, "%d rows" % len(rows))
    check(all(r["interval_s"] == 0.05 for r in rows), "interval")
    unload()
