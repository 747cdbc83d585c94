"""The host tests' common ending: run a test module's unittest cases and
print the closing 'N passed, N failed' line that make check sums."""

import sys
import unittest


def run_module(name, resultclass=None):
    """Run every test case of module @name (with @resultclass, if given);
    the exit status."""
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules[name])
    kw = {"resultclass": resultclass} if resultclass else {}
    res = unittest.TextTestRunner(verbosity=2, **kw).run(suite)
    failed = len(res.failures) + len(res.errors)
    passed = res.testsRun - failed - len(res.skipped)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0
