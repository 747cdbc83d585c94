#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The platform's own timer lateness, the oracle vcpuperf's is read against.

    sleeper.py INTERVAL_MS OUT

Sleeps to the grid points of a drift-free CLOCK_MONOTONIC grid of
INTERVAL_MS until SIGTERM, then writes each point it woke for and how late
it woke after it (ns, "POINT LATE" one per line) to OUT.  The grid is the
multiples of INTERVAL_MS, the instants every vcpuperf collection of that
interval (and of its multiples) wakes at: the sleeper wakes with them, and
sees what the machine does to any task woken at those instants.  Nothing
of vcpuperf is involved: under TCG a guest's timers wake late when the
emulator's threads are busy, and a sampler can be no earlier than the
machine it runs on lets any task be.
"""
import signal
import sys
import time


def main(argv):
    interval = int(argv[1]) * 1000000
    late, stop = [], []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    k = time.monotonic_ns() // interval + 1
    while not stop:
        point = k * interval
        now = time.monotonic_ns()
        if point > now:
            time.sleep((point - now) / 1e9)
            now = time.monotonic_ns()
        late.append((point, now - point))
        k = now // interval + 1
    with open(argv[2], "w") as f:
        f.write("".join("%d %d\n" % v for v in late))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
