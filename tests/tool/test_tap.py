#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host test of the test suites' output (tests/tap.py), no VM, no module:
small fake test files run through the integration tests' runner
(tests/integration/vptest.py, as run.py, tests/arm64/kvm.py and the
stress test drive it) and through the host tests' runner
(tests/tool/runner.py), and what they print is read by a standard TAP
consumer, Perl's core TAP::Parser (the parser behind prove).

Checked: TAP version 13, the plan first and kept, every line a TAP line
(no line the parser calls unknown), each test's result, name and skip
as the parser reads them, every print of a test, of a child process and
on stderr as a comment in order, the failure reason after its 'not ok',
a run that dies mid-way read as a bad plan, and the closing comment
read by scripts/result-lib.sh as the 'N passed, N failed' line that
make check sums.

Run from the repository root:  python3 tests/tool/test_tap.py
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import run_module  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INTEGRATION = os.path.join(REPO, "tests", "integration")

# Every result TAP::Parser reads, and its totals, as JSON.
PARSE = r"""
use strict;
use TAP::Parser;
use JSON::PP;
my $tap = do { local $/; <STDIN> };
my $p = TAP::Parser->new({ tap => $tap });
my @lines;
while (my $r = $p->next) {
    my %l = (type => $r->type, text => $r->as_string);
    if ($r->is_test) {
        $l{number} = $r->number + 0;
        $l{ok} = $r->is_ok ? JSON::PP::true : JSON::PP::false;
        $l{description} = $r->description;
        $l{directive} = $r->directive;
        $l{explanation} = $r->explanation;
    }
    push @lines, \%l;
}
print encode_json({
    lines => \@lines,
    version => $p->version + 0,
    plan => $p->plan,
    tests_planned => ($p->tests_planned // -1) + 0,
    tests_run => $p->tests_run + 0,
    passed => [map { $_ + 0 } $p->passed],
    failed => [map { $_ + 0 } $p->failed],
    skipped => [map { $_ + 0 } $p->skipped],
    parse_errors => [$p->parse_errors],
    good_plan => $p->is_good_plan ? JSON::PP::true : JSON::PP::false,
});
"""

# A test file as run.py's files are, with the kernel taken out: the
# runner's closing kernel-log check sees a clean log.
FAKE_INTEGRATION = r'''
import os
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
import vptest
from vptest import TestSkip, check, test

vptest.dmesg_mark = lambda: 0
vptest.unload = lambda tries=50: None
vptest.dmesg_clean_since = lambda mark: print("  log looked at")


@test
def prints_and_passes():
    print("  figure one")
    print("  figure two", flush=True)
    sys.stderr.write("said on stderr\n")
    os.write(1, b"written to fd 1\n")
    subprocess.run(["sh", "-c", "echo child out; echo child err >&2; "
                    "printf 'child, no newline'"])


@test
def fails_with_reason():
    print("  before the failure")
    check(False, "first reason line\nsecond line # with a hash")


@test
def skips():
    raise TestSkip("needs 2 CPUs, this boot has 1")


@test
def raises():
    {}["no such key"]


@test
def not_selected():
    print("  not run")


@test
def dies():
    print("  about to die", flush=True)
    os._exit(3)


if __name__ == "__main__":
    sys.exit(vptest.main(sys.argv[2:]))
'''

# The stress test's use: its own final checks and hooks.
FAKE_HOOKS = r'''
import sys

sys.path.insert(0, sys.argv[1])
import vptest
from vptest import check


def phase_a():
    print("  phase a works")


def phase_b():
    check(False, "phase b broke")


def leak_check():
    print("  no leak")


def start(t):
    print("== %s" % t.__name__)


def cleanup(t, e):
    print("  cleaning up after %s: %s" % (t.__name__, e))


sys.exit(vptest.run([phase_a, phase_b], final=[leak_check],
                    before_each=start, on_failure=cleanup))
'''

# A host test module as tests/tool/test_*.py are.
FAKE_UNITTEST = r'''
import sys
import unittest

sys.path.insert(0, sys.argv[1])
from runner import run_module


class Fake(unittest.TestCase):
    def test_a_passes(self):
        print("  a figure")

    def test_b_fails(self):
        self.assertEqual(1, 2, "one is not two")

    @unittest.skip("not on this machine")
    def test_c_skips(self):
        pass

    def test_d_errors(self):
        raise RuntimeError("boom")

    def test_e_subtests(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)


class WithBadFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no fixture")

    def test_never_runs(self):
        pass


if __name__ == "__main__":
    sys.exit(run_module(__name__))
'''


class TapCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="vp-tap-")

    def tearDown(self):
        subprocess.run(["rm", "-rf", self.dir])

    def run_fake(self, source, *args):
        """Run @source as a script with @args; (exit status, stdout,
        stderr)."""
        path = os.path.join(self.dir, "fake.py")
        with open(path, "w") as f:
            f.write(textwrap.dedent(source))
        p = subprocess.run([sys.executable, path] + list(args),
                           capture_output=True, text=True, timeout=60,
                           cwd=REPO)
        return p.returncode, p.stdout, p.stderr

    def parse(self, out):
        """What TAP::Parser reads in @out."""
        p = subprocess.run(["perl", "-e", PARSE], input=out,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def result_line(self, out):
        """scripts/result-lib.sh's result_line of @out."""
        path = os.path.join(self.dir, "out.log")
        with open(path, "w") as f:
            f.write(out)
        p = subprocess.run(["bash", "-c", '. scripts/result-lib.sh && '
                            'result_line "$1"', "-", path],
                           capture_output=True, text=True, cwd=REPO)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout.strip()

    def assert_pure_tap(self, tap, out):
        """Version 13, the plan on the second line, nothing the parser
        cannot place, no parse error."""
        self.assertEqual(tap["version"], 13)
        self.assertEqual(out.splitlines()[:1], ["TAP version 13"])
        self.assertEqual(tap["lines"][1]["type"], "plan")
        self.assertEqual([ln["text"] for ln in tap["lines"]
                          if ln["type"] == "unknown"], [])
        self.assertEqual(tap["parse_errors"], [])

    def results(self, tap):
        return [(ln["number"], ln["ok"], ln["description"], ln["directive"])
                for ln in tap["lines"] if ln["type"] == "test"]

    def comments(self, out):
        return [ln[2:] for ln in out.splitlines() if ln.startswith("# ")]

    def test_integration_runner(self):
        rc, out, err = self.run_fake(
            FAKE_INTEGRATION, INTEGRATION, "prints_and_passes",
            "fails_with_reason", "skips", "raises")
        self.assertEqual(rc, 1, err)
        self.assertEqual(err, "")
        tap = self.parse(out)
        self.assert_pure_tap(tap, out)
        self.assertEqual(tap["plan"], "1..5")
        self.assertTrue(tap["good_plan"])
        self.assertEqual(tap["tests_run"], 5)
        self.assertEqual(self.results(tap), [
            (1, True, "- prints_and_passes", ""),
            (2, False, "- fails_with_reason", ""),
            (3, True, "- skips", "SKIP"),
            (4, False, "- raises", ""),
            (5, True, "- kernel_log_clean", "")])
        self.assertEqual(tap["passed"], [1, 3, 5])
        self.assertEqual(tap["failed"], [2, 4])
        self.assertEqual(tap["skipped"], [3])
        skip = [ln for ln in tap["lines"] if ln.get("number") == 3][0]
        self.assertEqual(skip["explanation"], "needs 2 CPUs, this boot has 1")
        lines = out.splitlines()
        # every print, of the test and of its child, on stdout and
        # stderr, as a comment, in order, before its result line
        want = ["#   figure one", "#   figure two", "# said on stderr",
                "# written to fd 1", "# child out", "# child err",
                "# child, no newline", "ok 1 - prints_and_passes",
                "#   before the failure", "not ok 2 - fails_with_reason",
                "# first reason line", "# second line # with a hash",
                "ok 3 - skips # SKIP needs 2 CPUs, this boot has 1",
                "not ok 4 - raises", "#   log looked at",
                "ok 5 - kernel_log_clean"]
        at = [lines.index(w) for w in want]
        self.assertEqual(at, sorted(at), out)
        self.assertIn("# KeyError: 'no such key'", lines)
        self.assertNotIn("not run", out)
        self.assertEqual(lines[-1],
                         "# 2 passed, 2 failed, 1 skipped (skips)")
        self.assertEqual(self.result_line(out),
                         "2 passed, 2 failed, 1 skipped (skips)")

    def test_all_pass(self):
        rc, out, err = self.run_fake(FAKE_INTEGRATION, INTEGRATION,
                                     "prints_and_passes")
        self.assertEqual(rc, 0, err)
        tap = self.parse(out)
        self.assert_pure_tap(tap, out)
        self.assertEqual((tap["plan"], tap["passed"], tap["failed"]),
                         ("1..2", [1, 2], []))
        self.assertEqual(self.result_line(out), "2 passed, 0 failed")

    def test_death_is_a_bad_plan(self):
        """A run that ends mid-way (a VM that died) has fewer results than
        its plan and no closing line."""
        rc, out, err = self.run_fake(FAKE_INTEGRATION, INTEGRATION,
                                     "prints_and_passes", "dies")
        self.assertEqual(rc, 3)
        tap = self.parse(out)
        self.assertEqual((tap["plan"], tap["tests_run"]), ("1..3", 1))
        self.assertFalse(tap["good_plan"])
        self.assertIn("about to die", self.comments(out)[-1])
        self.assertEqual(self.result_line(out), "")

    def test_names_list_and_unknown(self):
        rc, out, _ = self.run_fake(FAKE_INTEGRATION, INTEGRATION, "--list")
        self.assertEqual(rc, 0)
        self.assertEqual(out.split(), [
            "prints_and_passes", "fails_with_reason", "skips", "raises",
            "not_selected", "dies"])
        rc, out, err = self.run_fake(FAKE_INTEGRATION, INTEGRATION,
                                     "prints_and_passes", "no_such_test")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("no test named no_such_test", err)
        rc, out, err = self.run_fake(
            FAKE_INTEGRATION, INTEGRATION, "--all-but", "fails_with_reason",
            "raises", "dies")
        self.assertEqual(rc, 0, err)
        self.assertEqual([t[2] for t in self.results(self.parse(out))], [
            "- prints_and_passes", "- skips", "- not_selected",
            "- kernel_log_clean"])

    def test_hooks_and_final_checks(self):
        rc, out, err = self.run_fake(FAKE_HOOKS, INTEGRATION)
        self.assertEqual(rc, 1, err)
        tap = self.parse(out)
        self.assert_pure_tap(tap, out)
        self.assertEqual(self.results(tap), [
            (1, True, "- phase_a", ""), (2, False, "- phase_b", ""),
            (3, True, "- leak_check", "")])
        lines = out.splitlines()
        want = ["# == phase_a", "#   phase a works", "ok 1 - phase_a",
                "# == phase_b", "not ok 2 - phase_b", "# phase b broke",
                "#   cleaning up after phase_b: phase b broke",
                "#   no leak", "ok 3 - leak_check",
                "# 2 passed, 1 failed"]
        at = [lines.index(w) for w in want]
        self.assertEqual(at, sorted(at), out)

    def test_unittest_runner(self):
        rc, out, err = self.run_fake(FAKE_UNITTEST, HERE)
        self.assertEqual(rc, 1, err)
        self.assertEqual(err, "")
        tap = self.parse(out)
        self.assert_pure_tap(tap, out)
        self.assertEqual(tap["plan"], "1..6")
        self.assertEqual(self.results(tap), [
            (1, True, "- Fake.test_a_passes", ""),
            (2, False, "- Fake.test_b_fails", ""),
            (3, True, "- Fake.test_c_skips", "SKIP"),
            (4, False, "- Fake.test_d_errors", ""),
            (5, False, "- Fake.test_e_subtests", ""),
            (6, False, "- setUpClass (__main__.WithBadFixture)", "")])
        # the class that could not be set up ran nothing: 6 of 6 lines,
        # its test is not among them
        self.assertTrue(tap["good_plan"])
        text = "\n".join(self.comments(out))
        for s in ("a figure", "AssertionError: 1 != 2 : one is not two",
                  "RuntimeError: boom", "(i=1)", "RuntimeError: no fixture"):
            self.assertIn(s, text)
        self.assertEqual(self.result_line(out),
                         "1 passed, 4 failed, 1 skipped (Fake.test_c_skips)")


def main():
    return run_module(__name__)


if __name__ == "__main__":
    sys.exit(main())
