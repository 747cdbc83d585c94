#!/usr/bin/python3
"""Module signature enforcement, the Secure Boot stand-in: run as root
inside the test VM booted with module.sig_enforce=1 by
tests/harness/signed-vm-test.sh secure-boot, from the repository root.

Environment: VP_MODULE (vcpuperf.ko signed with the kernel's build key,
whose certificate is built into the kernel's keyring as an enrolled MOK
would be), VP_MODULE_UNSIGNED (the same module unsigned),
VP_MODULE_OTHERKEY (signed with a freshly generated key the kernel does
not know).  The loads go through finit_module(2) directly, so the errno
is the kernel's own."""

import errno
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from vptest import (Cat, Workload, check, dmesg_mark,  # noqa: E402
                    finit_module, is_signed, load, main, run_workload, sh,
                    test, unload, MODULE)

UNSIGNED = os.environ.get("VP_MODULE_UNSIGNED", "")
OTHERKEY = os.environ.get("VP_MODULE_OTHERKEY", "")
TAINT_UNSIGNED_MODULE = 1 << 13     # 'E'


def refused(path, want_log):
    unload()
    mark = dmesg_mark()
    err = finit_module(path)
    check(err == errno.EKEYREJECTED, "%s: %s, want EKEYREJECTED" %
          (os.path.basename(path), errno.errorcode.get(err, err)))
    check(not os.path.isdir("/sys/module/vcpuperf"), "module loaded")
    log = "\n".join(sh("dmesg").stdout.splitlines()[mark:])
    check(want_log in log, "no %r in the kernel log:\n%s" %
          (want_log, log[-2000:]))
    print("  %s: EKEYREJECTED, log: %s" % (os.path.basename(path), want_log))


@test
def enforcement_is_on():
    """module.sig_enforce=1 took effect; the three modules are what they
    claim to be (unsigned has no signature, the others have one)."""
    with open("/sys/module/module/parameters/sig_enforce") as f:
        check(f.read().strip() == "Y", "sig_enforce is not on")
    check(UNSIGNED and not is_signed(UNSIGNED), "unsigned module missing")
    check(OTHERKEY and is_signed(OTHERKEY), "other-key module missing")
    check(is_signed(MODULE), "build-key module not signed")


@test
def unsigned_module_refused():
    """The unsigned vcpuperf.ko: EKEYREJECTED."""
    refused(UNSIGNED, "Loading of unsigned module is rejected")


@test
def unknown_key_refused():
    """vcpuperf.ko signed with a key the kernel does not trust:
    EKEYREJECTED because the key is unavailable (the signature itself
    parses)."""
    refused(OTHERKEY, "Loading of module with unavailable key is rejected")


@test
def build_key_loads_and_counts():
    """vcpuperf.ko signed with the kernel's build key loads without the
    unsigned-module taint and counts: page faults agree with the
    workload's /proc readings."""
    unload()
    tainted = int(open("/proc/sys/kernel/tainted").read())
    load()
    with open("/sys/module/vcpuperf/taint") as f:
        taint = f.read().strip()
    check("E" not in taint, "module taint %r" % taint)
    now = int(open("/proc/sys/kernel/tainted").read())
    check(not (now & ~tainted & TAINT_UNSIGNED_MODULE),
          "kernel tainted by an unsigned module")
    pages = 1500
    w = Workload("sb", "--threads", "1", "--wait-go", "--pages", str(pages),
                 "--hold-ms", "500")
    c = Cat("sb", "--qemu", str(w.pid), "--interval", "100ms", "--events",
            "page-faults,task-clock")
    rep = run_workload(c, w, 1, timeout=60)
    th = rep["threads"][0]
    rows = [r for r in c.rows() if r["tid"] == th["tid"]]
    pf = sum(r["page_faults"] for r in rows)
    opf = (th["after"]["minflt"] - th["before"]["minflt"] +
           th["after"]["majflt"] - th["before"]["majflt"])
    check(len(rows) >= 3 and opf >= pages and opf <= pf <= opf + 100,
          "page_faults %d over %d rows, /proc %d" % (pf, len(rows), opf))
    print("  tid %d: page_faults %d (/proc %d), %d rows" %
          (th["tid"], pf, opf, len(rows)))
    unload()


if __name__ == "__main__":
    sys.exit(main())
