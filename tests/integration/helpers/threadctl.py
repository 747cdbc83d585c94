#!/usr/bin/python3
"""A process whose threads the integration tests drive one command at a
time: it makes threads when told, has a given thread touch a number of
pages (its minor faults then grow by that much), and has a given thread
exec a program (from a worker thread: de_thread() gives it the leader's
pid).  Commands come one per line on stdin, replies one per line on
stdout:

  spawn              a new thread, blocked until told something; "tid N"
  touch TID PAGES    thread TID (or the main one) writes one byte to each
                     of PAGES fresh pages; "done"
  exec TID PROG ARG  thread TID calls execv(PROG, [PROG, ARG...]): no reply
                     (the program's own, if any, comes on the same stdout)
  quit               exit 0

Started, and after an exec into itself, it prints "ready PID" once it
waits for commands.  Nothing else runs in it: between two commands every
thread is blocked (no page fault, no CPU time)."""

import mmap
import os
import queue
import sys
import threading

PAGE = mmap.PAGESIZE
out_lock = threading.Lock()


def reply(line):
    with out_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def touch(pages):
    m = mmap.mmap(-1, pages * PAGE)
    for off in range(0, pages * PAGE, PAGE):
        m[off] = 1
    m.close()


def do(cmd, args):
    if cmd == "touch":
        touch(int(args[0]))
        reply("done")
    elif cmd == "exec":
        os.execv(args[0], args)


def worker(q, ready):
    ready.put(threading.get_native_id())
    while True:
        cmd, args = q.get()
        do(cmd, args)


def main():
    threads = {}
    reply("ready %d" % os.getpid())
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        if cmd == "spawn":
            q, ready = queue.Queue(), queue.Queue()
            threading.Thread(target=worker, args=(q, ready),
                             daemon=True).start()
            tid = ready.get()
            threads[tid] = q
            reply("tid %d" % tid)
        elif cmd == "quit":
            return 0
        elif int(args[0]) == os.getpid():
            do(cmd, args[1:])
        else:
            threads[int(args[0])].put((cmd, args[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
