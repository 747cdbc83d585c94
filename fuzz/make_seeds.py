#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the checked-in seed corpora under fuzz/corpus/.

  fuzz_cmd/     control commands, valid and invalid (grammar in
                include/uapi/vcpuperf.h)
  fuzz_event/   event names of every kind and event lists, plus a few
                binary inputs with edge-case u64 words for the arithmetic
  fuzz_qemu/    QEMU command lines (NUL-separated, as /proc/PID/cmdline):
                -name in its spellings, -uuid, doubled commas, truncation
  fuzz_decode/  record streams built with struct from the uapi layouts,
                independently of the C code: well-formed sessions using
                every record type, and a few damaged ones

Run from anywhere:  python3 fuzz/make_seeds.py
The output is committed; the fuzz script never writes to it (it fuzzes a
scratch copy).  Re-running rewrites the same files: names are content
hashes, and stale generated files are removed.
"""

import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

# ---- include/uapi/vcpuperf.h ------------------------------------------------
MAGIC = 0x46504356
ABI = 3
MAX_EVENTS = 16
(HEADER, SAMPLE, STARTED, UNAVAILABLE, FIRST_ROW, MULTIPLEXED, NO_COUNTERS,
 VCPU_ADDED, TASK_EXITED, DROPPED, FINISHED, DETACHED, PROCESS,
 PROCESS_SAMPLE, MUX_EXPECTED) = range(1, 16)
KIND_TID, KIND_PID, KIND_QEMU = 1, 2, 3
MOD_U, MOD_K, MOD_G, MOD_H, MOD_D = 1, 2, 4, 8, 16
NO_VCPU = -1
ATTACH_PROCESS_TOTALS, ATTACH_ALL_THREADS = 1, 2
VM_NAME_LEN, UUID_LEN = 128, 40

# linux/perf_event.h
HW, SW, TRACEPOINT, HW_CACHE, RAW = 0, 1, 2, 3, 4

REC = "=HHIQQQ"                     # struct vcpuperf_rec (32 bytes)

# ---- text seeds -------------------------------------------------------------
EVENTS = [
    # generic hardware and software names and aliases
    "cycles", "cpu-cycles", "instructions", "cache-references",
    "cache-misses", "branch-instructions", "branches", "branch-misses",
    "bus-cycles", "stalled-cycles-frontend", "idle-cycles-backend",
    "ref-cycles", "cpu-clock", "task-clock", "page-faults", "faults",
    "context-switches", "cs", "cpu-migrations", "migrations",
    "minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy", "CYCLES", "Instructions",
    # hardware cache: cache-op[-result], aliases, case
    "L1-dcache-loads", "L1-dcache-load-misses", "L1-dcache-stores",
    "L1-icache-load-misses", "l1d-read-miss", "LLC-loads",
    "LLC-store-misses", "L2-prefetches", "dTLB-load-misses",
    "iTLB-loads", "Data-TLB-write-refs", "branch-loads",
    "branch-load-misses", "bpu-read-access", "node-loads",
    "node-prefetch-misses", "L1-data-speculative-read-Reference",
    "llc-speculative-load-ops",
    # raw and TYPE:CONFIG
    "r0", "r1c2", "rFFFFFFFFFFFFFFFF", "r10000000000000000", "4:0xc0",
    "0:0", "1:3", "3:0x10002", "4294967295:18446744073709551615",
    "4294967296:1", "8:0x1:u", "0x8:1",
    # tracepoints
    "sched:sched_switch", "kvm:kvm_exit", "kvm:kvm_entry:G",
    "irq:irq_handler_entry", "syscalls:sys_enter_read",
    "a.b-c:d_e.f-g",
    # modifiers
    "cycles:u", "cycles:k", "instructions:G", "instructions:H",
    "cycles:D", "cycles:uG", "cycles:kHD", "page-faults:uG",
    "L1-dcache-loads:uH", "r1c2:kD", "kvm:kvm_exit:uD",
    # invalid ones
    "", ":", "::", "cycles:", "cycles:x", "cycles:uk", "cycles:GH",
    "nosuchevent", "r", "rxyz", "1:", ":1", "1:2:3:4", "cycles:u:k",
    "L1-dcache", "L1-dcache-", "L1-dcache-loads-", "LLC-loads-hits",
    "sched:", ":sched_switch", "sched:sched switch", "a" * 47, "a" * 48,
    "sched:" + "x" * 41, "x" * 64 + ":y", "9p:9p_client_req",
]

LISTS = [
    "cycles,instructions", "cycles,cycles",
    ",".join("r%x" % i for i in range(16)),
    ",".join("r%x" % i for i in range(17)),
    "cycles,,instructions", "cycles,", ",cycles",
    "cycles:u,cycles:k,sched:sched_switch,4:0xc0:G,L1-dcache-load-misses",
]

COMMANDS = [
    "attach tid=1234", "attach tid=1234\n", "attach pid=42",
    "attach qemu=4242", "attach tid=1,2,3,4 events=cycles,instructions",
    "attach qemu=1 events=cycles:u,instructions:k guest_only",
    "attach pid=7 host_only pinned user_only",
    "attach qemu=9 kernel_only events=kvm:kvm_exit,sched:sched_switch",
    "attach\ttid=5\tevents=r1c2,4:0xc0:D",
    "attach tid=2147483647 events=L1-dcache-load-misses,LLC-loads",
    "attach qemu=1 events=" + ",".join("r%x" % i for i in range(16)),
    "detach tid=1234", "detach pid=42", "detach qemu=1", "detach all",
    "detach tid=1,2,3", "interval 100", "interval 100ms", "interval 1ms",
    "interval 60s", "interval 1000us", "interval 2500us", "stop",
    "stop\n", "  stop  ", "ring 64", "ring 256K", "ring 16M\n", "ring 1g",
    "read auto", "read direct", "read kick", "read lazy\n",
    "attach pid=42 process_totals", "attach qemu=1 all_threads process_totals",
    # invalid
    "", "\n", "attach", "attach tid=", "attach tid=0", "attach tid=-1",
    "attach tid=01", "attach tid=2147483648", "attach tid=99999999999",
    "attach tid=1,1", "attach tid=1,,2", "attach pid=1,2",
    "attach tid=1 pid=2", "attach tid=1 events=", "attach tid=1 events=x",
    "attach tid=1 events=cycles events=cycles",
    "attach qemu=1 events=" + ",".join("r%x" % i for i in range(17)),
    "attach tid=1 user_only kernel_only",
    "attach tid=1 guest_only host_only", "attach tid=1 pinned pinned",
    "attach tid=1 events=cycles:u kernel_only",
    "attach tid=1 events=cycles:G host_only", "attach tid=1 bogus",
    "detach", "detach all tid=1", "detach foo", "detach tid=1 tid=2",
    "interval", "interval 0", "interval 999us", "interval 61s",
    "interval 60001", "interval 1h", "interval 10 20",
    "interval 9999999999999", "stop now", "start", "attach tid=1\nstop",
    "ring", "ring 0", "ring 1", "ring 64X", "ring 4G", "ring 64 128",
    "read", "read fast", "read kick lazy", "attach tid=1 process_totals",
    "attach pid=1 all_threads",
    "attach tid=1\r", "attach tid=1\x7f", "attach tid=\xe9",
    "attach tid=1\x00",
    # the limits: VCPUPERF_MAX_TARGETS ids, one more, VCPUPERF_CMD_MAX bytes
    "attach tid=" + ",".join(str(1000 + i) for i in range(1024)),
    "detach tid=" + ",".join(str(1000 + i) for i in range(1025)),
    "stop" + " " * 16380, "stop" + " " * 16381,
]


def u64s(*words):
    return b"".join(struct.pack("<Q", w & (2**64 - 1)) for w in words)


ARITH = [
    u64s(0, 0, 0, 0, 0, 0),
    u64s(2**64 - 1, 2**64 - 1, 2**64 - 1, 2**64 - 1, 2**64 - 1, 1),
    u64s(2**64 - 1, 2, 1, 1000, 100, 99),
    u64s(10**12, 10**9, 5 * 10**8, 5, 10**9, 2**63),
    u64s(2**63, 2**63, 2**63 + 1, 2**32, 2**32, 2**32 - 1),
    u64s(12345, 200, 100, 12000, 150, 200),          # counter went back
    u64s(0x80000000, 0xffffffff, 7, 9, 0, 3),         # INT_MIN errno
]

# ---- binary stream seeds ----------------------------------------------------


class Stream:
    def __init__(self, next_seq=1, interval_ns=100_000_000):
        self.data = bytearray()
        self.seq = next_seq
        self.t = 5_000_000_000
        self.put(HEADER, 0, struct.pack("=IIIIIIQQ", MAGIC, ABI, 32,
                                        MAX_EVENTS, 1 << 20, 0, next_seq,
                                        interval_ns), seq=0)

    def put(self, rtype, tid, body, seq=None, size=None):
        if seq is None:
            seq = self.seq
            self.seq += 1
        body += b"\0" * (-len(body) % 8)
        self.t += 100_000_000
        self.data += struct.pack(REC, rtype,
                                 32 + len(body) if size is None else size,
                                 tid, seq, self.t,
                                 1_700_000_000_000_000_000 + self.t) + body

    def started(self, tid, events, pid=100, vcpu=0, kind=KIND_QEMU,
                comm=b"CPU 0/KVM"):
        body = struct.pack("=IiIIQ16s", pid, vcpu, kind, len(events),
                           100_000_000, comm)
        for name, etype, mods, config in events:
            body += struct.pack("=48sIIQ", name, etype, mods, config)
        self.put(STARTED, tid, body)

    def sample(self, tid, counts, mask=None, pid=100, vcpu=0, flags=0):
        if mask is None:
            mask = (1 << len(counts)) - 1
        grid = 0 if flags & 2 else self.t + 100_000_000 - 40_000
        body = struct.pack("=IiIIIIQQQ", pid, vcpu, len(counts), mask, 0,
                           flags, 100_000_000, 2500, grid)
        for c in counts:
            body += struct.pack("=QQQ", *c)
        self.put(SAMPLE, tid, body)

    def process(self, pid, events, kind=KIND_QEMU,
                flags=ATTACH_PROCESS_TOTALS, threads=3, comm=b"qemu-system-x86",
                vm=b"lab-vm1", uuid=b"6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"):
        body = struct.pack("=IIIIIIQ16s%ds%ds" % (VM_NAME_LEN, UUID_LEN),
                           pid, kind, flags, len(events), threads, 0,
                           100_000_000, comm, vm, uuid)
        for name, etype, mods, config in events:
            body += struct.pack("=48sIIQ", name, etype, mods, config)
        self.put(PROCESS, 0, body)

    def process_sample(self, pid, counts, mask=None, threads=3, exited=0,
                       flags=0):
        if mask is None:
            mask = (1 << len(counts)) - 1
        body = struct.pack("=IIIIIIQQ", pid, len(counts), mask, flags,
                           threads, exited, 100_000_000, 4000)
        for c in counts:
            body += struct.pack("=QQQ", *c)
        self.put(PROCESS_SAMPLE, 0, body)

    def bytes(self):
        return bytes(self.data)


DEFAULT = [
    (b"cycles", HW, 0, 0), (b"instructions", HW, 0, 1),
    (b"cache-references", HW, 0, 2), (b"cache-misses", HW, 0, 3),
    (b"branches", HW, 0, 4), (b"branch-misses", HW, 0, 5),
    (b"page-faults", SW, 0, 2), (b"context-switches", SW, 0, 3),
]


def session(nr_samples=3, events=DEFAULT, tid=1001, vcpu=0, mux=False):
    s = Stream()
    s.started(tid, events, vcpu=vcpu)
    n = len(events)
    for i in range(1, nr_samples + 1):
        run = 50_000_000 * i if mux else 100_000_000 * i
        counts = [(1000 * i * (k + 1), 100_000_000 * i, run)
                  for k in range(n)]
        s.sample(tid, counts, flags=1 if i == 1 else 0)
    return s


def streams():
    out = []
    # header only
    out.append(Stream().bytes())

    # a whole session with every record type
    s = Stream()
    s.started(1001, DEFAULT)
    s.put(UNAVAILABLE, 1001, struct.pack("=IiIiII48s", 100, 0, 5, 2, 1, 0,
                                         b"branch-misses"))
    s.sample(1001, [(0, 0, 0)] * 8, mask=0xdf, flags=1)
    s.put(FIRST_ROW, 1001, struct.pack("=IiIIII", 100, 0, 1, 0x0f, 0xdf, 8))
    s.sample(1001, [(1000 * (k + 1), 10**8, 5 * 10**7) for k in range(8)],
             mask=0xdf)
    s.put(MULTIPLEXED, 1001, struct.pack("=IiIIIIIIII", 100, 0, 0x0f,
                                         500000, 1, 0, 9, 7, 2, 4))
    s.started(1002, DEFAULT[:2], vcpu=1, comm=b"CPU 1/KVM")
    s.put(VCPU_ADDED, 1002, struct.pack("=Ii16s", 100, 1, b"CPU 1/KVM"))
    s.put(NO_COUNTERS, 1002, struct.pack("=IiQQIIQIIII", 100, 1, 10, 10, 12,
                                         3, 90000, 9, 7, 1, 4))
    s.put(MUX_EXPECTED, 1002, struct.pack("=IiIIII", 100, 1, 9, 7, 1, 4))
    first_lost = s.seq                                # ring overflowed:
    s.seq += 3                                        # 3 records lost
    s.put(DROPPED, 0, struct.pack("=QQQ", 3, first_lost, 3))
    s.sample(1002, [(5, 10**8, 10**8), (7, 10**8, 10**8)])
    s.put(TASK_EXITED, 1002, struct.pack("=IiII", 100, 1, 2, 3) +
          struct.pack("=QQQQQQ", 9, 2 * 10**8, 2 * 10**8,
                      11, 2 * 10**8, 2 * 10**8))
    s.put(DETACHED, 1002, struct.pack("=IiII", 100, 1, 2, 0))
    s.put(FINISHED, 1002, struct.pack("=IiQQQQ", 100, 1, 2, 1, 1, 0))
    s.put(DETACHED, 1001, struct.pack("=IiII", 100, 0, 3, 0))
    s.put(FINISHED, 1001, struct.pack("=IiQQQQ", 100, 0, 2, 1, 1, 0))
    s.put(FINISHED, 0, struct.pack("=IiQQQQ", 0, 0, 4, 2, 2, 3))
    out.append(s.bytes())

    # a QEMU attached with process totals: process record, per-thread
    # samples, then the process samples of each pass (one thread exits)
    sw = [(b"task-clock", SW, 0, 1), (b"page-faults", SW, 0, 2)]
    s = Stream()
    s.process(100, sw)
    s.started(1001, sw)
    s.started(1002, sw, vcpu=1, comm=b"CPU 1/KVM")
    for i in range(1, 4):
        c = [(10**7 * i, 10**8 * i, 10**8 * i), (50 * i, 10**8 * i,
                                                  10**8 * i)]
        s.sample(1001, c, flags=1 if i == 1 else 0)
        s.sample(1002, c, vcpu=1, flags=1 if i == 1 else 0)
        s.process_sample(100, [(3 * v, e, r) for v, e, r in c],
                         exited=1 if i == 3 else 0)
    s.process(200, sw, kind=KIND_PID, flags=ATTACH_ALL_THREADS, threads=0,
              comm=b"worker", vm=b"", uuid=b"")
    s.process(300, sw, vm=b"v" * VM_NAME_LEN, uuid=b"u" * UUID_LEN)
    s.process_sample(300, [(1, 1, 1)] * 17)
    out.append(s.bytes())

    # plain and multiplexed sessions, odd event sets, a tid-attached thread
    out.append(session().bytes())
    out.append(session(nr_samples=4, mux=True).bytes())
    evs = [(b"cycles:u", HW, MOD_U, 0), (b"cycles:k", HW, MOD_K, 0),
           (b"instructions:u", HW, MOD_U, 1),
           (b"instructions:k", HW, MOD_K, 1),
           (b"L1-dcache-load-misses", HW_CACHE, 0, 0x10000),
           (b"r1c2", RAW, MOD_G, 0x1c2),
           (b"sched:sched_switch", TRACEPOINT, 0, 321),
           (b"cycles", HW, MOD_D, 0), (b"cycles-", HW, 0, 0),
           (b"cycles:", HW, 0, 0), (b"t_mono_ns", SW, 0, 1),
           (b'quote"back\\slash', SW, 0, 2), (b"\xff\x01name", SW, 0, 3),
           (b"x" * 48, SW, 0, 4), (b"", SW, 0, 5), (b"cycles_", HW, 0, 0)]
    out.append(session(nr_samples=2, events=evs, vcpu=NO_VCPU).bytes())
    # counters that go backwards (restart) and exited mid-way
    s = session(nr_samples=2, events=DEFAULT[:4])
    s.sample(1001, [(1, 1, 1)] * 4, mask=0x7, flags=2)
    out.append(s.bytes())
    # damaged: truncated record, bad size, unknown type, wrong magic/abi
    good = session(nr_samples=2).bytes()
    out.append(good[:-5])
    bad = bytearray(good)
    struct.pack_into("=H", bad, 72 + 2, 12)          # size not a multiple
    out.append(bytes(bad))
    s = session(nr_samples=1)
    s.put(99, 0, b"\xab" * 24)
    s.put(SAMPLE, 1001, struct.pack("=IiIIIIQQQ", 100, 0, 17, 0, 0, 0, 0, 0,
                                    0))
    s.put(SAMPLE, 4242, struct.pack("=IiIIIIQQQ", 100, 0, 0, 0, 0, 0, 0, 0,
                                    0))
    out.append(s.bytes())
    hdr = bytearray(Stream().bytes())
    struct.pack_into("=I", hdr, 32, 0x12345678)
    out.append(bytes(hdr))
    hdr = bytearray(Stream().bytes())
    struct.pack_into("=I", hdr, 36, ABI + 1)
    out.append(bytes(hdr))
    return out


def cmdline(*args, terminated=True):
    b = b"\0".join(a.encode() for a in args)
    return b + b"\0" if terminated else b


QEMU = [
    cmdline("qemu-system-x86_64", "-name", "vm1,debug-threads=on",
            "-uuid", "6f1c2b7e-3a4d-4e5f-8a9b-0c1d2e3f4a5b"),
    cmdline("qemu-system-x86_64", "-name", "guest=lab-a,debug-threads=on"),
    cmdline("qemu-system-x86_64", "--name", "debug-threads=on,guest=b"),
    cmdline("qemu", "-name", "a,,b,,,c,guest=d,,e"),
    cmdline("qemu", "-name", "first", "-name", "second", "-uuid"),
    cmdline("qemu", "-name", "-uuid", "-uuid", "x" * 60),
    cmdline("qemu", "-name", "n" * 200, terminated=False),
    cmdline("qemu", "-name", "", "-uuid", ""),
    cmdline("qemu", "-name", "guest=", "--uuid", "u,v"),
    cmdline("qemu", "-name", ",", "-accel", "kvm", "-m", "2048"),
]


def write(sub, items, keep):
    d = os.path.join(CORPUS, sub)
    os.makedirs(d, exist_ok=True)
    for data in items:
        if isinstance(data, str):
            data = data.encode("latin-1")
        name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
        keep.add(os.path.join(d, name))
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    keep = set()
    write("fuzz_cmd", COMMANDS, keep)
    write("fuzz_event", EVENTS + LISTS + ARITH, keep)
    write("fuzz_decode", streams(), keep)
    write("fuzz_qemu", QEMU, keep)
    for sub in ("fuzz_cmd", "fuzz_event", "fuzz_decode", "fuzz_qemu"):
        d = os.path.join(CORPUS, sub)
        for name in os.listdir(d):
            p = os.path.join(d, name)
            if name.startswith("seed-") and p not in keep:
                os.unlink(p)
    print("wrote %d seeds under %s" % (len(keep), CORPUS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
