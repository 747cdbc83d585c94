#!/usr/bin/python3
"""vcpuperf's integration tests on x86: run as root inside the test VM
(scripts/vm-run.sh; `make check-vm T="NAME ..."`), from the repository
root, after `make`.

Usage: run.py [NAME...] | run.py --all-but NAME... | run.py --list

Runs the named tests (all of them for none) in the order below, then
checks that unloading the module leaves a clean kernel log.  Prints TAP
and a closing '# N passed, N failed' (vptest.run, tests/tap.py).  Each
test loads the freshly built module, drives it and checks what it
counted against an independent oracle."""

import importlib
import sys

import vptest

# The test files, in the order they run; each registers its tests with
# @vptest.test, which run in the order they are written.
FILES = (
    "counting",         # against /proc, perf stat; a tracepoint
    "lifecycle",        # vCPU hot-plug, a thread exiting, a real QEMU killed
    "commands",         # malformed control commands
    "debugfs",          # one stream reader, permissions, the tool's hints
    "module_load",      # rmmod while streaming, insmod parameters
    "sampling",         # the drift-free grid, drops explained exactly
    "perms",            # the permission table, special targets
    "independent_collections",  # several collections at once
    "selfread",         # how running threads are read
    "pmu",              # multiplexing and modifiers with the test PMU
    "per_vm",           # VM identity, whole-VM totals
    "overlap",          # recordings of one process started at other times
    "execs",            # threads that exec: a worker's, a setuid program
    "hostwide",         # --all-qemu: every VM of the host, an episode each
    "device",           # /dev/vcpuperf
)

for name in FILES:
    importlib.import_module(name)

if __name__ == "__main__":
    sys.exit(vptest.main())
