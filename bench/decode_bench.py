#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""vcpuperf-cat decode throughput on the host (no VM, no module).

    decode_bench.py [--rows N] [--out FILE.json]

Synthesizes a record stream with struct from the layouts in
include/uapi/vcpuperf.h (header, one started record per thread, then
samples round-robin over the threads with 8 software events), times
`vcpuperf-cat --replay FILE -o /dev/null` (best of 3, wall and CPU), and
times a straightforward Python writer doing the same job: unpack each
sample with struct, compute the per-thread deltas, build the row dict and
json.dumps() it to /dev/null."""

import json
import os
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "tools", "vcpuperf-cat")
MAGIC = 0x46504356


def uapi_abi():
    """VCPUPERF_ABI_VERSION, read from the uapi header: its one home."""
    import re
    with open(os.path.join(ROOT, "include", "uapi", "vcpuperf.h")) as f:
        m = re.search(r"#define VCPUPERF_ABI_VERSION\s+(\d+)U?", f.read())
    return int(m.group(1))


ABI = uapi_abi()
HEADER, SAMPLE, STARTED = 1, 2, 3
EVENTS = [("task-clock", 1, 1), ("context-switches", 1, 3),
          ("page-faults", 1, 2), ("cpu-clock", 1, 0),
          ("cpu-migrations", 1, 4), ("minor-faults", 1, 5),
          ("major-faults", 1, 6), ("alignment-faults", 1, 7)]
IV = 10_000_000
NTIDS = 64


def rec(rtype, tid, seq, t, body):
    body += b"\0" * (-len(body) % 8)
    return struct.pack("=HHIQQQ", rtype, 32 + len(body), tid, seq, t,
                       t + 1_700_000_000_000_000_000) + body


def synth(path, nrows):
    seq, t = 1, 1_000_000_000
    with open(path, "wb") as f:
        f.write(rec(HEADER, 0, 0, t, struct.pack(
            "=IIIIIIQQ", MAGIC, ABI, 32, 16, 1 << 22, 0, 1, IV)))
        for i in range(NTIDS):
            body = struct.pack("=IiIIQ16s", 1000, i, 1, len(EVENTS), IV,
                               b"CPU %d/KVM" % i)
            for name, typ, cfg in EVENTS:
                body += struct.pack("=48sIIQ", name.encode(), typ, 0, cfg)
            f.write(rec(STARTED, 1001 + i, seq, t, body))
            seq += 1
        buf = bytearray()
        for r in range(nrows):
            i = r % NTIDS
            k = r // NTIDS
            if i == 0:
                t += IV
            en = (k + 1) * IV
            body = struct.pack("=IiIIIIQQQ", 1000, i, len(EVENTS),
                               (1 << len(EVENTS)) - 1, 0, 1 if k == 0 else 0,
                               IV, 4000, t)
            for e in range(len(EVENTS)):
                body += struct.pack("=QQQ", (k + 1) * (e * 1000 + 17 + i),
                                    en, en // 2)
            buf += rec(SAMPLE, 1001 + i, seq, t + i * 500, body)
            seq += 1
            if len(buf) > 1 << 22:
                f.write(buf)
                buf.clear()
        f.write(buf)


def time_tool(path):
    best = None
    for _ in range(3):
        t0 = time.monotonic()
        p = subprocess.Popen([TOOL, "--replay", path, "-o", "/dev/null"])
        _, st, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        if os.waitstatus_to_exitcode(st) != 0:
            raise SystemExit("vcpuperf-cat --replay failed: %d" % st)
        cpu = ru.ru_utime + ru.ru_stime
        if best is None or wall < best[0]:
            best = (wall, cpu)
    return best


def python_writer(path, limit):
    """Decode samples and write JSONL rows with json.dumps."""
    names = [e[0].replace("-", "_") for e in EVENTS]
    prev = {}
    n = 0
    t0 = time.process_time()
    w0 = time.monotonic()
    with open(path, "rb") as f, open(os.devnull, "w") as out:
        data = f.read()
        off = 0
        while off < len(data) and n < limit:
            rtype, size, tid, seq, tm, tw = struct.unpack_from("=HHIQQQ",
                                                               data, off)
            if rtype == SAMPLE:
                pid, vcpu, nr, mask, exm, flags, iv, win, grid = \
                    struct.unpack_from("=IiIIIIQQQ", data, off + 32)
                c = struct.unpack_from("=%dQ" % (3 * nr), data, off + 80)
                p = prev.get(tid)
                row = {"t_mono_ns": tm, "t_wall_ns": tw, "source": "vcpuperf",
                       "available_in_deployment": False,
                       "interval_s": iv / 1e9,
                       "dt_ns": tm - p[0] if p else None, "seq": seq,
                       "pid": pid, "tid": tid, "vcpu": vcpu, "ran": True}
                en_d = ru_d = 0
                for e in range(nr):
                    v, en, ru = c[3 * e:3 * e + 3]
                    if p:
                        pv, pe, pr = p[1][3 * e:3 * e + 3]
                        dv, en_d, ru_d = v - pv, en - pe, ru - pr
                        row[names[e]] = (round(dv * en_d / ru_d)
                                         if ru_d else None)
                    else:
                        row[names[e]] = v
                row.update(time_enabled_ns=en_d, time_running_ns=ru_d,
                           multiplexed=ru_d < en_d, read_window_ns=win,
                           late_ns=tm - grid if grid and tm >= grid
                           else None)
                out.write(json.dumps(row, separators=(",", ":")) + "\n")
                prev[tid] = (tm, c)
                n += 1
            off += size
    return n, time.monotonic() - w0, time.process_time() - t0


def main():
    nrows = 1_000_000
    out = None
    a = sys.argv[1:]
    if "--rows" in a:
        nrows = int(a[a.index("--rows") + 1])
    if "--out" in a:
        out = a[a.index("--out") + 1]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "stream.bin")
        synth(path, nrows)
        size = os.path.getsize(path)
        wall, cpu = time_tool(path)
        pyn, pywall, pycpu = python_writer(path, min(nrows, 100_000))
    res = dict(rows=nrows, bytes=size, events=len(EVENTS), tids=NTIDS,
               tool_wall_s=wall, tool_cpu_s=cpu,
               tool_rows_per_s=nrows / wall, tool_mb_per_s=size / wall / 1e6,
               python_rows=pyn, python_wall_s=pywall, python_cpu_s=pycpu,
               python_rows_per_s=pyn / pywall,
               python_mb_per_s=pyn * (size / nrows) / pywall / 1e6)
    res["speedup_vs_python"] = res["tool_rows_per_s"] / res["python_rows_per_s"]
    txt = json.dumps(res, indent=1)
    if out:
        with open(out, "w") as f:
            f.write(txt + "\n")
    print(txt)


if __name__ == "__main__":
    main()
