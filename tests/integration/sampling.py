"""The sampling grid and the ring: samples on one drift-free grid, and a
slow reader's drops each explained exactly by the records that say
so."""

import time

from vptest import Cat, Workload, check, control, load, test, within

MS = 1000000


@test
def interval_grid_is_drift_free():
    """At 20 ms every sample sits on one 20 ms grid (a jiffies timer would
    drift: at HZ=250 a 20 ms delay is 20-24 ms and the phase walks), and
    with an unloaded VM the mean period is 20 ms within 1%."""
    load()
    w = Workload("grid", "--threads", "1", "--hold-ms", "5000")
    c = Cat("grid", "--tid", str(w.tids[0]), "--events", "task-clock",
            "--interval", "20ms", "--duration", "3s")
    try:
        rc = c.wait(timeout=30)
    finally:
        w.kill()
    check(rc == 0, "exit %d" % rc)
    ts = [r["t_mono_ns"] for r in c.rows()]
    period = 20 * MS
    check(len(ts) >= 75, "%d rows in 3 s at 20 ms" % len(ts))
    phase = sorted(((t - ts[0] + period // 2) % period) - period // 2
                   for t in ts)
    ref = phase[len(phase) // 2]
    dev = sorted(abs(p - ref) for p in phase)
    med = dev[len(dev) // 2]
    span = ts[-1] - ts[0]
    mean = span / (len(ts) - 1)
    skipped = round(span / period) - (len(ts) - 1)
    print("  %d rows, mean period %.4f ms, median phase error %.3f ms, "
          "%d grid points skipped (host load)" %
          (len(ts), mean / MS, med / MS, skipped))
    check(med < 2 * MS, "samples are off the grid: median %d ns" % med)
    if skipped <= 0:
        check(within(mean, period, 0.01), "mean period %.0f ns" % mean)
    check(all(r["interval_s"] == 0.02 for r in c.rows()), "interval_s")


@test
def drops_are_explained_exactly():
    """A slow reader with a 64 KiB ring at 1 ms: every sequence gap is
    explained by a perf_dropped whose count matches, and the total equals
    the session's drop count."""
    load("ring_kb=64")
    w = Workload("drops", "--threads", "4", "--hold-ms", "20000")
    try:
        check(control("interval 1ms") == 0, "interval")
        check(control("attach qemu=%d events=task-clock,context-switches" %
                      w.pid) == 0, "attach")
        time.sleep(1.5)
        c = Cat("drops", "--no-attach")
        time.sleep(1.0)
        check(control("stop") == 0, "stop")
        rc = c.wait(timeout=30)
    finally:
        w.kill()
    check(rc == 0, "vcpuperf-cat exit %d (unexplained gap?): %s" %
          (rc, c.stderr))
    dropped = c.events("perf_dropped")
    check(dropped, "no drops provoked")
    gaps = c.events("perf_seq_gap")
    check(all(g["explained"] for g in gaps), "unexplained gaps: %s" % gaps)
    fin = [e for e in c.events("perf_finished") if e.get("scope") == "session"]
    print("  %d records dropped in %d perf_dropped events, %d gaps, session "
          "says %s" % (sum(d["count"] for d in dropped), len(dropped),
                       len(gaps), fin and fin[0]["drops"]))
    check(fin and fin[0]["drops"] == sum(d["count"] for d in dropped),
          "session drops %s vs dropped records %d" %
          (fin and fin[0]["drops"], sum(d["count"] for d in dropped)))
