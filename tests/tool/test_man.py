#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Host tests of the man pages (no VM, no module loaded).

vcpuperf-cat(1) against ``tools/vcpuperf-cat --help`` (every option in
both), vcpuperf(4) against the sources it documents: the module
parameters (module_param() in module/main.c, and ``modinfo -p`` of a built
vcpuperf.ko when there is one), the control keywords (the words the parser
in lib/vcpuperf_cmd.c accepts), the record types, causes, detach reasons
and target kinds (include/uapi/vcpuperf.h and their names in
lib/vcpuperf_names.c), the lifecycle event names of the tool
(tools/util/lifecycle.c) and every key of the rows it writes in
vcpuperf-cat(1); and both pages rendered by groff
with all warnings (-ww) and by ``man -l``, with no diagnostic.

Run from the repository root:  python3 tests/tool/test_man.py
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import run_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "vcpuperf-cat")
MAN1 = os.path.join(ROOT, "man", "vcpuperf-cat.1")
MAN4 = os.path.join(ROOT, "man", "vcpuperf.4")
PLOT = os.path.join(ROOT, "tools", "vcpuperf-plot")
MAN1_PLOT = os.path.join(ROOT, "man", "vcpuperf-plot.1")
UAPI = os.path.join(ROOT, "include", "uapi", "vcpuperf.h")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def unroff(text):
    """roff source to plain words: font escapes dropped, \\- to -."""
    text = re.sub(r"\\f(\[[^]]*\]|\(..|.)", "", text)
    text = text.replace("\\-", "-").replace("\\e", "\\").replace("\\c", "")
    text = text.replace("\\(dq", '"').replace("\\~", " ").replace("\\&", "")
    text = re.sub(r"\\\(..", " ", text)
    return text


def sections(path):
    """{'.SH name': [lines]} of a page, lines unroffed."""
    out = {}
    cur = None
    for line in unroff(read(path)).splitlines():
        m = re.match(r'\.SH\s+"?([^"]*)"?\s*$', line)
        if m:
            cur = m.group(1).strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


OPT_RE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])(?![\w-])")


def man_options(path):
    """Options tagged in the OPTIONS section (the line after each .TP)."""
    lines = sections(path).get("OPTIONS", [])
    opts = set()
    for i, line in enumerate(lines):
        if line.strip() == ".TP" and i + 1 < len(lines):
            opts.update(OPT_RE.findall(lines[i + 1]))
    return opts


def help_options():
    p = subprocess.run([TOOL, "--help"], capture_output=True, text=True,
                       check=False)
    if p.returncode != 0:
        raise AssertionError("vcpuperf-cat --help exit %d" % p.returncode)
    opts = set()
    for line in p.stdout.splitlines():
        m = re.match(r"^  (-[a-zA-Z], )?(--[a-z][a-z0-9-]*)", line)
        if m:
            if m.group(1):
                opts.add(m.group(1)[:2])
            opts.add(m.group(2))
    return opts


def plot_help_options():
    """Options of vcpuperf-plot --help (argparse: "  -o OUTPUT, --output")."""
    p = subprocess.run([sys.executable, PLOT, "--help"], capture_output=True,
                       text=True, check=False)
    if p.returncode != 0:
        raise AssertionError("vcpuperf-plot --help exit %d" % p.returncode)
    opts = set()
    for line in p.stdout.splitlines():
        if re.match(r"^  -", line):
            opts.update(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])"
                                   r"(?![\w-])", line.split("  ")[1]))
    return opts


def words(path):
    """Set of the identifier-like words of a page (source, unroffed)."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", unroff(read(path))))


def uapi_enum(prefix):
    """VCPUPERF_<prefix>* enumerators and #defines of the uapi header."""
    src = read(UAPI)
    names = re.findall(r"^\s*(VCPUPERF_%s\w*)\s*[=,]" % prefix, src, re.M)
    names += re.findall(r"^#define\s+(VCPUPERF_%s\w*)" % prefix, src, re.M)
    return {n for n in names if not n.endswith("_MAX")}


def lib_table(name):
    """The string values of a designated-initializer table in lib/."""
    src = read(os.path.join(ROOT, "lib", "vcpuperf_names.c"))
    m = re.search(r"%s\[[^]]*\] = \{(.*?)\n\};" % name, src, re.S)
    if not m:
        raise AssertionError("table %s not found in lib/" % name)
    return set(re.findall(r'=\s*"([^"]*)"', m.group(1)))


def lib_switch(func):
    """The string literals returned by a switch function in lib/."""
    src = read(os.path.join(ROOT, "lib", "vcpuperf_names.c"))
    m = re.search(r"\n[^\n]*\b%s\(.*?\n\}" % func, src, re.S)
    if not m:
        raise AssertionError("%s not found in lib/" % func)
    return set(re.findall(r'return "([a-z_]+)"', m.group(0))) - {"unknown"}


def module_params_src():
    src = read(os.path.join(ROOT, "module", "main.c"))
    return set(re.findall(r"^module_param\((\w+),", src, re.M))


def built_module():
    for ko in [os.path.join(ROOT, "vcpuperf.ko")] + sorted(glob.glob(
            os.path.join(ROOT, "out", "install", "*", "vcpuperf.ko"))):
        if os.path.exists(ko):
            return ko
    return None


class HelpVsMan(unittest.TestCase):
    def test_every_help_option_in_man(self):
        missing = sorted(help_options() - man_options(MAN1))
        self.assertEqual(missing, [], "in --help, not in vcpuperf-cat(1) "
                         "OPTIONS: %s" % missing)

    def test_every_man_option_in_help(self):
        missing = sorted(man_options(MAN1) - help_options())
        self.assertEqual(missing, [], "in vcpuperf-cat(1) OPTIONS, not in "
                         "--help: %s" % missing)

    def test_parsers_see_options(self):
        # guard against a parser that finds nothing on either side
        for opts in (help_options(), man_options(MAN1)):
            self.assertTrue({"--qemu", "--pid", "-o", "--output",
                             "--replay", "--help"} <= opts, sorted(opts))

    def test_lifecycle_events_in_man1(self):
        src = "".join(read(p) for p in glob.glob(
            os.path.join(ROOT, "tools", "*.c")) + glob.glob(
            os.path.join(ROOT, "tools", "util", "*.c")))
        names = set(re.findall(r'"(perf_[a-z_]+)"', src))
        self.assertGreaterEqual(len(names), 11, names)
        missing = sorted(names - words(MAN1))
        self.assertEqual(missing, [], missing)

    def test_exit_status_and_files(self):
        sec = sections(MAN1)
        for s in ("EXIT STATUS", "FILES", "EXAMPLES", "OPTIONS"):
            self.assertIn(s, sec)
        text = "\n".join(sec["EXIT STATUS"])
        for code in ("0", "1", "2"):
            self.assertRegex(text, r"\.B %s\n" % code)


class RowKeysInMan(unittest.TestCase):
    """Every key of a row vcpuperf-cat writes is described in the OUTPUT
    section of vcpuperf-cat(1): the keys are taken from the tool's own
    output for a stream of thread and per-VM samples (--raw, a modifier
    not applied), the event keys left out (the page describes them as a
    rule)."""

    def rows(self):
        import test_decode as td
        events = td.DEFAULT_EVENTS + [
            ("task-clock", td.SW, td.MOD_G << 8, td.SW_TASK_CLOCK)]
        counts = [(10 * (i + 1), 50, 50) for i in range(len(events))]
        s = td.Stream()
        s.process(vm=b"vm1", uuid=b"c7a5fdbd-edaf-9455-926a-d65c16db1809",
                  events=events)
        s.started(7, events=events, vcpu=0)
        s.sample(7, counts)
        s.process_sample(counts)
        s.sample(7, [(c * 2, e * 2, r) for c, e, r in counts])
        s.process_sample([(c * 2, e * 2, r) for c, e, r in counts],
                         flags=td.SAMPLE_FINAL)
        with tempfile.TemporaryDirectory() as d:
            src, out = os.path.join(d, "s.bin"), os.path.join(d, "o.jsonl")
            with open(src, "wb") as f:
                f.write(s.bytes())
            p = subprocess.run([TOOL, "--replay", src, "--raw", "-o", out,
                                "--events-out", os.devnull],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            return td.load(out)

    def test_every_row_key_in_man1(self):
        rows = self.rows()
        threads = [r for r in rows if r["tid"] is not None]
        vms = [r for r in rows if r["tid"] is None]
        self.assertTrue(threads and vms, rows)
        # the page's rule: the event's name with - and : turned into _
        event_keys = set()
        for r in threads:
            event_keys |= {re.sub("[-:]", "_", n) for n in r["raw"]}
        keys = set()
        for r in rows:
            keys |= set(r) - event_keys
            for v in (r.get("raw") or {}).values():
                keys |= set(v or {})
        self.assertTrue({"late_ns", "threads", "raw", "value",
                         "modifiers_not_applied"} <= keys, sorted(keys))
        text = "\n".join(sections(MAN1)["OUTPUT"])
        described = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
        missing = sorted(keys - described)
        self.assertEqual(missing, [], "row keys not in vcpuperf-cat(1) "
                         "OUTPUT: %s" % missing)


class PlotHelpVsMan(unittest.TestCase):
    def test_both_ways(self):
        helped, paged = plot_help_options(), man_options(MAN1_PLOT)
        self.assertTrue({"-h", "--help", "-o", "--output", "--events",
                         "--title", "--summary"} <= helped, sorted(helped))
        self.assertEqual(sorted(helped - paged), [], "in --help, not in "
                         "vcpuperf-plot(1) OPTIONS")
        self.assertEqual(sorted(paged - helped), [], "in vcpuperf-plot(1) "
                         "OPTIONS, not in --help")

    def test_markers_and_sections(self):
        src = read(PLOT)
        names = set(re.findall(r'\("(perf_[a-z_]+)"', src))
        self.assertGreaterEqual(len(names), 7, names)
        self.assertEqual(sorted(names - words(MAN1_PLOT)), [])
        sec = sections(MAN1_PLOT)
        for s in ("EXIT STATUS", "EXAMPLES", "OPTIONS"):
            self.assertIn(s, sec)


class ModulePage(unittest.TestCase):
    def params_section(self):
        return "\n".join(sections(MAN4)["MODULE PARAMETERS"])

    def test_module_params_from_source(self):
        params = module_params_src()
        self.assertGreaterEqual(len(params), 7, params)
        text = self.params_section()
        missing = sorted(p for p in params
                         if not re.search(r"\b%s=" % p, text))
        self.assertEqual(missing, [], missing)

    def test_module_params_modinfo(self):
        ko = built_module()
        if not ko or not shutil.which("modinfo"):
            self.skipTest("no built vcpuperf.ko or no modinfo")
        p = subprocess.run(["modinfo", "-p", ko], capture_output=True,
                           text=True, check=True)
        params = {l.split(":", 1)[0] for l in p.stdout.splitlines() if l}
        self.assertEqual(params, module_params_src(), ko)
        text = self.params_section()
        missing = sorted(p for p in params
                         if not re.search(r"\b%s=" % p, text))
        self.assertEqual(missing, [], missing)

    def test_control_keywords(self):
        src = read(os.path.join(ROOT, "lib", "vcpuperf_cmd.c"))
        kw = set(re.findall(r'"([a-z_]+)"', src))
        self.assertTrue({"attach", "detach", "interval", "stop", "all",
                         "events", "tid", "pid", "qemu", "pinned"} <= kw, kw)
        text = "\n".join(sections(MAN4)["CONTROL COMMANDS"])
        w = set(re.findall(r"[A-Za-z_]+", text))
        missing = sorted(kw - w)
        self.assertEqual(missing, [], "control keywords not in "
                         "CONTROL COMMANDS: %s" % missing)

    def test_record_types(self):
        enum = uapi_enum("REC_")
        self.assertEqual(len(enum), 15, enum)
        names = lib_table("vp_rec_names")
        self.assertEqual(len(names), 15, names)
        text = "\n".join(sections(MAN4)["RECORD FORMAT"])
        w = set(re.findall(r"[A-Za-z_]+", text))
        missing = sorted((enum | names) - w)
        self.assertEqual(missing, [], missing)

    def test_causes_reasons_kinds(self):
        want = (uapi_enum("CAUSE_") | lib_table("vp_cause_names") |
                uapi_enum("DETACH_") | lib_switch("vp_detach_name") |
                uapi_enum("TARGET_") | lib_switch("vp_kind_name") |
                uapi_enum("MUX_") | lib_switch("vp_mux_cause_name") |
                uapi_enum("SAMPLE_") | uapi_enum("MOD_") - {"VCPUPERF_MOD_ALL"})
        self.assertGreaterEqual(len(want), 30, want)
        w = words(MAN4)
        # the MOD_ flags are documented as their letters and modifiers
        missing = sorted(n for n in want - w if not n.startswith(
            "VCPUPERF_MOD_"))
        self.assertEqual(missing, [], missing)

    def test_structs_and_limits(self):
        src = read(UAPI)
        structs = set(re.findall(r"^struct (vcpuperf_\w+) \{", src, re.M))
        limits = {n for n in re.findall(r"^#define\s+(VCPUPERF_\w+)", src,
                                        re.M)
                  if re.match(r"VCPUPERF_(MAX_|CMD_|NAME_|COMM_|INTERVAL_|"
                              r"NO_|MAGIC|ABI|RING_|ERR_|IOC_)", n)}
        w = words(MAN4)
        missing = sorted((structs | limits) - w)
        self.assertEqual(missing, [], missing)

    def test_device_and_permissions(self):
        sec = sections(MAN4)
        for s in ("CHARACTER DEVICE", "PERMISSIONS", "LIMITS",
                  "DEBUGFS FILES", "LIFECYCLE AND CAUSES"):
            self.assertIn(s, sec)
        dev = "\n".join(sec["CHARACTER DEVICE"])
        for word in ("/dev/vcpuperf", "O_WRONLY", "0600", "EUSERS",
                     "ENOSPC", "VCPUPERF_IOC_LAST_ERROR", "dup", "fork",
                     "max_collections", "ring_total_kb"):
            self.assertIn(word, dev)
        perm = "\n".join(sec["PERMISSIONS"])
        # module/access.c, vp_may_open(): every open needs CAP_SYS_ADMIN
        access = read(os.path.join(ROOT, "module", "access.c"))
        self.assertIn("capable(CAP_SYS_ADMIN)", access)
        self.assertNotIn("perfmon_capable()", access)
        for word in ("CAP_SYS_ADMIN", "EPERM"):
            self.assertIn(word, perm)
        self.assertIn("--device", words_dash(MAN1))


def words_dash(path):
    return set(re.findall(r"--?[a-z][a-z0-9-]*", unroff(read(path))))


class Rendering(unittest.TestCase):
    def render(self, cmd):
        env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           check=False)
        return p.returncode, p.stdout, p.stderr

    def test_groff_no_warnings(self):
        if not shutil.which("groff"):
            self.skipTest("groff missing (scripts/setup.sh installs it)")
        for page in (MAN1, MAN1_PLOT, MAN4):
            rc, out, err = self.render(["groff", "-man", "-Tutf8", "-ww", "-P", "-cbou",
                                        "-rCHECKSTYLE=3", page])
            self.assertEqual((rc, err), (0, ""), page)
            self.assertIn("SEE ALSO", out)

    def test_man_l_no_warnings(self):
        if not shutil.which("man"):
            self.skipTest("man missing (scripts/setup.sh installs man-db)")
        for page in (MAN1, MAN1_PLOT, MAN4):
            rc, out, err = self.render(["man", "--warnings=w", "-l", page])
            self.assertEqual((rc, err), (0, ""), page)
            self.assertIn("NAME", out)


class Version(unittest.TestCase):
    """The version has one place, dkms.conf: the installed pages' footers
    and the module's MODULE_VERSION are made from it."""

    def version(self):
        m = re.search(r'^PACKAGE_VERSION="([^"]+)"$',
                      read(os.path.join(ROOT, "dkms.conf")), re.M)
        self.assertIsNotNone(m, "no PACKAGE_VERSION in dkms.conf")
        return m.group(1)

    def test_no_version_written_elsewhere(self):
        v = self.version()
        for page in (MAN1, MAN1_PLOT, MAN4):
            th = next(line for line in read(page).splitlines()
                      if line.startswith(".TH "))
            self.assertNotIn(v, th, page)
        self.assertIn("MODULE_VERSION(VP_VERSION)",
                      read(os.path.join(ROOT, "module", "main.c")))

    def test_installed_pages_carry_it(self):
        import tempfile
        v = self.version()
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run(["make", "-s", "-C", ROOT, "install-files",
                                "DESTDIR=" + d], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            pages = glob.glob(os.path.join(d, "**", "*.[14]"),
                              recursive=True)
            self.assertEqual(len(pages), 3, pages)
            for page in pages:
                th = next(line for line in read(page).splitlines()
                          if line.startswith(".TH "))
                self.assertIn('"vcpuperf %s"' % v, th, page)

    def test_built_module_carries_it(self):
        ko = built_module()
        if not ko or not shutil.which("modinfo"):
            self.skipTest("no vcpuperf.ko built, or no modinfo")
        p = subprocess.run(["modinfo", "-F", "version", ko],
                           capture_output=True, text=True, check=True)
        self.assertEqual(p.stdout.strip(), self.version(), ko)


def ensure_built():
    if not os.access(TOOL, os.X_OK):
        subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "tools")],
                       check=True)


def main():
    ensure_built()
    return run_module(__name__)


if __name__ == "__main__":
    sys.exit(main())
