# SPDX-License-Identifier: GPL-2.0
"""TAP output for vcpuperf's Python test suites (the integration tests'
runner in tests/integration/vptest.py, the stress test and the host tool
tests in tests/tool/runner.py).

The stream is TAP version 13 with the plan first, which Perl's
TAP::Parser (prove) and any other TAP consumer read:

    TAP version 13
    1..3
    #   tid 501: page_faults 3012 (/proc 3010), ...
    # took 12.3 s
    ok 1 - counts_match_proc_oracles
    # took 0.4 s
    not ok 2 - malformed_commands_change_nothing
    # 'attach': errno EINVAL, want ENOENT
    ok 3 - kernel_thread_read_directly # SKIP needs 2 CPUs, this boot has 1
    # 1 passed, 1 failed, 1 skipped (kernel_thread_read_directly)

While a Tap is open, everything else the process writes to its stdout or
stderr (print(), a traceback, a child process that inherited them) is
turned into '# ' comment lines, in order, nothing dropped: both file
descriptors go into a pipe that a thread reads, and the result lines are
written only once that thread has passed on everything written before
them; a line Python prints is out as a comment when print() returns, so
a process that dies right after it (os._exit, a VM going down) loses
nothing it printed.  The last line, a comment, is the one 'N passed, N failed' line the
test scripts sum (scripts/result-lib.sh)."""

import os
import sys
import threading

# Written through the pipe by sync(): the thread has passed on everything
# before it once it reads this.  NULs keep it apart from any real output.
_SYNC = b"\0tap-sync\0"


class _Synced:
    """sys.stdout or sys.stderr while a Tap is open: a write that ends a
    line returns once the Tap has passed it on."""

    def __init__(self, stream, tap):
        self._stream = stream
        self._tap = tap

    def write(self, text):
        n = self._stream.write(text)
        if "\n" in text:
            self._tap.sync()
        return n

    def __getattr__(self, name):
        return getattr(self._stream, name)


class Tap:
    """A TAP stream on the process's stdout (see the module's doc).  Use
    plan(), then ok(), not_ok() or skip() for every test, then close()."""

    def __init__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self._out = os.dup(1)           # the real stdout: TAP lines only
        self._err = os.dup(2)
        r, w = os.pipe()
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.close(w)
        self._r = r
        # prints reach the pipe at once, not when a test ends
        try:
            sys.stdout.reconfigure(line_buffering=True)
        except (AttributeError, ValueError):
            pass
        self._lock = threading.Lock()   # one line at a time on _out
        self._cond = threading.Condition()
        self._synced = 0
        self._thread = threading.Thread(target=self._pump, daemon=True,
                                         name="tap-comments")
        self._thread.start()
        self.number = 0
        self.passed = 0
        self.failed = 0
        self.skipped = []
        self._closed = False
        self._streams = (sys.stdout, sys.stderr)
        sys.stdout = _Synced(sys.stdout, self)
        sys.stderr = _Synced(sys.stderr, self)
        self._line("TAP version 13")

    # ------------------------------------------------------------ output

    def _write(self, data):
        with self._lock:
            while data:
                n = os.write(self._out, data)
                data = data[n:]

    def _line(self, text):
        self._write(text.encode("utf-8", "replace") + b"\n")

    def _comment(self, raw):
        raw = raw.rstrip(b"\r")
        self._write(b"# " + raw + b"\n" if raw else b"#\n")

    def _pump(self):
        """Copy the pipe to the real stdout as comment lines; count the
        sync marks it passes."""
        buf = b""
        while True:
            try:
                data = os.read(self._r, 65536)
            except OSError:
                data = b""
            if not data:
                if buf:
                    self._comment(buf)
                return
            buf += data
            while True:
                i = buf.find(b"\n")
                if i < 0:
                    break
                line, buf = buf[:i], buf[i + 1:]
                sync = line.endswith(_SYNC)
                if sync:
                    line = line[:-len(_SYNC)]
                if line or not sync:
                    self._comment(line)
                if sync:
                    with self._cond:
                        self._synced += 1
                        self._cond.notify_all()

    def sync(self, timeout=30):
        """Return once everything written to stdout and stderr so far is
        out as comments.  A line a child process left unfinished is ended
        there."""
        for stream in self._streams:
            stream.flush()
        with self._cond:
            want = self._synced + 1
        os.write(1, _SYNC + b"\n")
        with self._cond:
            self._cond.wait_for(lambda: self._synced >= want, timeout)

    def comment(self, text):
        """@text (any number of lines) as comment lines, in order."""
        self.sync()
        for ln in str(text).splitlines() or [""]:
            self._comment(ln.encode("utf-8", "replace"))

    # ------------------------------------------------------------ results

    def plan(self, n):
        self._line("1..%d" % n)

    def _result(self, ok, name, directive=""):
        self.sync()
        self.number += 1
        self._line("%s %d - %s%s" % ("ok" if ok else "not ok", self.number,
                                      _desc(name), directive))

    def ok(self, name):
        self.passed += 1
        self._result(True, name)

    def not_ok(self, name, why=""):
        """A failed test; @why (a reason, a traceback) follows as comments."""
        self.failed += 1
        self._result(False, name)
        if why:
            self.comment(why)

    def skip(self, name, why):
        self.skipped.append(name)
        self._result(True, name, " # SKIP %s" % " ".join(str(why).split()))

    def summary(self):
        """The closing 'N passed, N failed[, N skipped (NAMES)]' line."""
        s = "%d passed, %d failed" % (self.passed, self.failed)
        if self.skipped:
            s += ", %d skipped (%s)" % (len(self.skipped),
                                        ", ".join(self.skipped))
        return s

    def close(self, summary=True):
        """End the stream (with the summary line) and give stdout and
        stderr back.  A child process that still holds the pipe keeps
        its comments going until it ends or the process exits."""
        if self._closed:
            return
        if summary:
            self.comment(self.summary())
        else:
            self.sync()
        self._closed = True
        sys.stdout, sys.stderr = self._streams
        sys.stdout.flush()
        sys.stderr.flush()
        with self._lock:
            os.dup2(self._out, 1)
            os.dup2(self._err, 2)
            os.close(self._out)
            os.close(self._err)
            self._out = 1


def _desc(text):
    """One line of TAP text: no newline, no '#' (a directive marker)."""
    return " ".join(str(text).split()).replace("#", "\\#")
