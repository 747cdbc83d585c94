"""The host tests' common ending: run a test module's unittest cases and
print TAP (tests/tap.py): a plan, 'ok N - Class.test_name' or 'not ok N
- Class.test_name' with the traceback as comments, every print as a
comment, and the closing '# N passed, N failed' line that make check
sums."""

import fnmatch
import os
import sys
import unittest

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             ".."))
import tap  # noqa: E402  (tests/tap.py)


def _name(test):
    """Class.test_name, or what unittest calls a failed class or module
    fixture ('setUpClass (module.Class)')."""
    method = getattr(test, "_testMethodName", None)
    if method is None:
        return str(test)
    return "%s.%s" % (type(test).__name__, method)


class TapResult(unittest.TestResult):
    """One TAP result line per test, as it ends."""

    def __init__(self, out):
        super().__init__()
        self.out = out
        self._said = True
        self._subfailures = []

    def startTest(self, test):
        super().startTest(test)
        self._said = False
        self._subfailures = []

    def _ok(self, test):
        self._said = True
        self.out.ok(_name(test))

    def _not_ok(self, test, why):
        self._said = True
        self.out.not_ok(_name(test), why)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._ok(test)

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._not_ok(test, self.failures[-1][1])

    def addError(self, test, err):
        super().addError(test, err)
        self._not_ok(test, self.errors[-1][1])

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._said = True
        self.out.skip(_name(test), reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._ok(test)

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._ok(test)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._subfailures.append("%s\n%s" % (
                subtest, self._exc_info_to_string(err, test)))

    def stopTest(self, test):
        if not self._said:
            if self._subfailures:
                self._not_ok(test, "\n".join(self._subfailures))
            else:
                self._ok(test)
        super().stopTest(test)


def _tests(suite):
    """The test cases of @suite, flattened."""
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from _tests(t)
        else:
            yield t


def _chosen(suite):
    """@suite, or with VP_TESTS (make check-host T="GLOB ...") only the
    cases whose Class.test_name or test_name matches one of its globs."""
    globs = os.environ.get("VP_TESTS", "").split()
    if not globs:
        return suite
    keep = [t for t in _tests(suite)
            if any(fnmatch.fnmatchcase(_name(t), g) or
                   fnmatch.fnmatchcase(_name(t).split(".")[-1], g)
                   for g in globs)]
    return unittest.TestSuite(keep)


def run_module(name):
    """Run every test case of module @name as TAP (those VP_TESTS names,
    when set); the exit status."""
    suite = _chosen(unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[name]))
    out = tap.Tap()
    try:
        out.plan(suite.countTestCases())
        suite.run(TapResult(out))
    finally:
        out.close()
    return 1 if out.failed else 0
