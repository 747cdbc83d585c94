#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The arm64 bed benchmark's report (scripts/bench-arm64.sh):

    arm64_report.py ARM64_JSON[,ARM64_JSON...] META_JSON OUTDIR [NAME]

Reads what bench/arm64.py measured and writes OUTDIR/arm64.json (every
figure, every run's) and OUTDIR/arm64.md: per configuration and collector
the instructions per sample by share (module, target, tool) and the VM
exits per vCPU per tick the collector caused, with their reasons; each
figure a run's (boot's) median of its passes, the mean of the runs, with
the runs' largest disagreement; the interrupts that were not a scheduler
tick (the collector's own) per run; then the goals of issue 23, each met
or not.  NAME arm64-lab (bench/arm64_lab.py's results, many VMs at once)
writes OUTDIR/arm64-lab.{json,md} with issue 36's goals for the lab's
shape."""

import json
import sys

# KVM's arm64 exit counters (debugfs, one file each); "exits" counts them
# all, the rest of it is interrupts (a timer, an IPI).
REASONS = ["hvc_exit_stat", "wfe_exit_stat", "wfi_exit_stat",
           "mmio_exit_user", "mmio_exit_kernel"]
SHARES = ["module", "target", "tool"]


def figures(cfg, runs, base_vmm_ns):
    """{collector: {module, target, tool, total (instructions per sample),
    exits, reasons (per vCPU per tick), ticks}} of one pass; the target
    share above @base_vmm_ns, the vCPU threads' CPU time without a
    collector (base_vmm())."""
    base = runs.get("none")
    if not base:
        return {}
    ivn = cfg["interval_ms"] * 1e6
    out = {}
    for kind, r in runs.items():
        if kind == "none":
            continue
        # The intervals it read in the window when it says (one that
        # falls behind reads fewer), else the window's.
        window_ticks = r["window_ns"] / ivn
        ticks = r.get("ticks") or window_ticks
        samples = ticks * cfg["vcpus"] * cfg["events"]
        self_ns = r.get("self_ns", 0)
        # The tool's CPU time over the rows it wrote in the window where
        # they were counted (bench/arm64.py ROWS_COUNTED: a row is one
        # thread's pass, a sample per event), else over the window's.
        rows = r.get("rows_written")
        tool_samples = rows * cfg["events"] if rows else samples
        f = dict(kept=ticks / window_ticks,
                 module=(r["kthread_ns"] + self_ns) / samples,
                 target=(r["vmm_ns"] - base_vmm_ns - self_ns) / samples,
                 tool=r["tool_ns"] / tool_samples, ticks=ticks,
                 window_s=r["window_ns"] / 1e9)
        f["total"] = f["module"] + f["target"] + f["tool"]
        if r.get("saturated"):
            # It could not keep up (bench/arm64.py keep_up_bound_s()):
            # the VMs did only part of their work in its window, so
            # neither the target share nor the exits are known; what it
            # cost itself per sample it read is, and is a lower bound of
            # its total.
            f["saturated"] = dict(
                window_s=r["window_ns"] / 1e9,
                collector_cpu=(r["tool_ns"] + r["kthread_ns"]) /
                r["window_ns"], vm_cpu=r["vmm_ns"] / r["window_ns"])
            f["target"] = None
            f["total"] = f["module"] + f["tool"]
        # Every run has the vCPUs run the same guest code, so as long in
        # the guest: the exits of the run without a collector are those
        # of the same work, by reason (the MMIO exits between phases) and
        # by interrupt (the tick exits a guest only while a vCPU is in
        # it, so the tick's exits too come with the guest's time, not
        # with the window's).  Scaled by the window (earlier reports),
        # a collector that holds the CPU (while it runs no vCPU is in the
        # guest to exit) was credited with the tick exits its own time
        # kept away: perf stat at 64x8x10ms -0.0037 per vCPU per tick
        # where it causes +0.0157 (one exit per interval: its timer).
        per = cfg["vcpus"] * ticks

        def irq(run):
            return run["kvm"].get("exits", 0) - sum(run["kvm"].get(k, 0)
                                                    for k in REASONS)
        f["reasons"] = {k: (r["kvm"].get(k, 0) - base["kvm"].get(k, 0)) /
                        per for k in REASONS}
        f["reasons"]["interrupt"] = (irq(r) - irq(base)) / per
        f["exits"] = sum(f["reasons"].values())
        if "saturated" in f:
            f["reasons"] = {k: None for k in f["reasons"]}
            f["exits"] = None
        if "status" in r:
            f["mode"] = r["status"].get("mode_now")
            f["self_reads"] = r["status"].get("self")
            f["kicks"] = r["status"].get("kicks")
        f["base_exits_per_vcpu_tick"] = base["kvm"].get("exits", 0) / per
        # The CPU's interrupts that were not a tick, per run ([least,
        # most]: a tick at a reading's time may be in it or not).
        if "own_irqs" in r:
            f["own_irqs_run"] = r["own_irqs"]
        # Per run, above the run without a collector: its exits, and the
        # scheduler ticks its window holds (each exits a guest that it
        # finds running: a collector's CPU time that holds no tick, as
        # one woken by the tick's interrupt, adds a tick exit per tick
        # of it on a CPU the vCPUs keep busy).
        f["exits_more_run"] = r["kvm"].get("exits", 0) - \
            base["kvm"].get("exits", 0)
        if "sched_ticks" in r and "sched_ticks" in base:
            f["ticks_more_run"] = r["sched_ticks"] - base["sched_ticks"]
        if "saturated" in f:
            del f["exits_more_run"]
            f.pop("ticks_more_run", None)
        out[kind] = f
    return out


def base_vmm(run):
    """The vCPU threads' CPU time for the work without a collector in one
    run (boot): the median of its passes.  Those runs are the same (no
    collector, the window at the same phase of the tick in every pass)
    but for a few tens of thousands of instructions in 7.5 G that come
    and go with no count the harness reads (vCPU switches, exits and
    softirqs equal); taken from one pass, that noise went whole into
    the pass's target share of every collector (at 8x4x100ms up to 7 per
    sample of 270, 2.5%)."""
    return median([p["none"]["vmm_ns"] for p in run if "none" in p])


def spread(vals):
    """The runs' largest disagreement, relative to their mean."""
    vals = [v for v in vals if v is not None]
    if len(vals) < 2:
        return None
    m = sum(vals) / len(vals)
    return (max(vals) - min(vals)) / abs(m) if m else 0.0


def median(vals):
    """The middle of @vals (the mean of the middle two of an even
    number): one pass that a wake-up landed in the same tick as another
    does not move it.  None if one of them is (not known)."""
    if any(x is None for x in vals):
        return None
    v = sorted(vals)
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


def mean(vals):
    if any(x is None for x in vals):
        return None
    return sum(vals) / len(vals)


def combine(per_run):
    """@per_run: for every run (boot), its passes' figures.  A run's
    figure is the median of its passes (each started at its own phase of
    the scheduler tick); the result the mean of the runs, with their
    largest disagreement."""
    per_pass = [p for run in per_run for p in run]
    kinds = sorted(set().union(*[set(p) for p in per_pass]),
                   key=lambda k: order(k))
    out = {}
    for k in kinds:
        ps = [p[k] for p in per_pass if k in p]
        c = {}
        for name in SHARES + ["total", "exits"]:
            runs = [median([p[k][name] for p in run if k in p])
                    for run in per_run if any(k in p for p in run)]
            c[name] = mean(runs)
            c[name + "_runs"] = runs
            c[name + "_spread"] = spread(runs)
        c["reasons"] = {r: mean([p["reasons"][r] for p in ps])
                        for r in ps[0]["reasons"]}
        c["kept"] = min(p["kept"] for p in ps)
        sat = [p["saturated"] for p in ps if "saturated" in p]
        if sat:
            # Passes that could not keep up, of all; the least and most
            # of each share.
            c["saturated"] = dict(passes=len(sat), of=len(ps), **{
                n: [min(x[n] for x in sat), max(x[n] for x in sat)]
                for n in ("window_s", "collector_cpu", "vm_cpu")})
        for name in ("exits_more_run", "ticks_more_run"):
            v = [p[name] for p in ps if name in p]
            if v:
                c[name] = [min(v), max(v)]
        # The exits it caused per run, a run's the median of its passes:
        # a count of a few, whose runs agree within an exit or two, not
        # within a percentage of it.
        c["exits_more_run_runs"] = [
            median([p[k].get("exits_more_run") for p in run if k in p])
            for run in per_run if any(k in p for p in run)]
        if None in c["exits_more_run_runs"]:
            c["exits_more_run_runs"] = []
        own = hull([p["own_irqs_run"] for p in ps if "own_irqs_run" in p])
        if own:
            c["own_irqs_run"] = own
        for extra in ("mode", "self_reads", "kicks", "ticks", "window_s"):
            if extra in ps[0]:
                c[extra] = ps[0][extra]
        out[k] = c
    return out


ORDER = ["vcpuperf-direct", "vcpuperf-kick", "vcpuperf-lazy", "perf",
         "perf-group", "ureader", "ureader-group", "ureader-group-jsonl",
         "floor", "vcpuperf-per-vm", "vcpuperf-all-qemu", "perf-per-vm",
         "ureader-group-jsonl-per-vm", "ureader-group-jsonl-host"]


def order(k):
    return ORDER.index(k) if k in ORDER else len(ORDER)


def default_mode(ims):
    """vcpuperf's default (auto) read mode at this interval: lazy from
    50 ms, kick below."""
    return "lazy" if ims >= 50 else "kick"


def pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def num(x, places=0):
    """@x with @places decimals, "-" if not known."""
    return "-" if x is None else "%.*f" % (places, x)


def pct_span(r):
    """A [least, most] share as one percentage or a range."""
    a, b = ("%.0f%%" % (100 * x) for x in r)
    return a if a == b else "%s to %s" % (a, b)


def span(r):
    """A [least, most] count as one figure or a range."""
    if r is None:
        return "-"
    return "%d" % r[0] if r[0] == r[1] else "%d to %d" % (r[0], r[1])


def hull(ranges):
    """The [least, most] that covers every [least, most] of @ranges;
    None for none."""
    if not ranges:
        return None
    return [min(r[0] for r in ranges), max(r[1] for r in ranges)]


def base_irqs(cfg):
    """[least, most] interrupts not a tick of the runs without a
    collector (none expected: the count's own check)."""
    return hull([p["none"]["own_irqs"] for run in cfg["runs"] for p in run
                 if "none" in p and "own_irqs" in p["none"]])


def load_runs(paths):
    """One result of several runs (boots), of one part or of several
    parts of a run (each part's boots in order): each configuration's
    passes by run, in order (c["runs"])."""
    runs = [json.load(open(p)) for p in paths.split(",")]
    vm = runs[0]
    vm["runs"] = len(runs)
    for c in vm["configs"]:
        c["runs"] = [c["passes"]]
    by_name = {c["name"]: c for c in vm["configs"]}
    for other in runs[1:]:
        vm["problems"] = vm.get("problems", []) + other.get("problems", [])
        vm["bench_seconds"] = max(vm.get("bench_seconds") or 0,
                                  other.get("bench_seconds") or 0)
        for c in other["configs"]:
            if c["name"] in by_name:
                by_name[c["name"]]["runs"].append(c["passes"])
            else:
                # a configuration of another part of the run (bench-arm64.sh)
                c["runs"] = [c["passes"]]
                vm["configs"].append(c)
                by_name[c["name"]] = c
    return vm


def lab_goals(c):
    """Issue 36's goals for the lab's shape in configuration @c: (config,
    goal, met, figures)."""
    col = c["collectors"]
    hw, pv = col.get("vcpuperf-all-qemu"), col.get("vcpuperf-per-vm")
    up, uh = col.get("ureader-group-jsonl-per-vm"), \
        col.get("ureader-group-jsonl-host")
    pf = col.get("perf-per-vm")
    out = []
    if hw and up:
        out.append((c["name"], "host-wide recorder at most half of "
                    "ureader-group-jsonl per VM", hw["total"] <=
                    0.5 * up["total"], "%.0f vs %.0f instructions per "
                    "sample (%.2f)" % (hw["total"], up["total"],
                                       hw["total"] / up["total"])))
    if hw and uh:
        out.append((c["name"], "host-wide recorder below the host-wide "
                    "ureader", hw["total"] < uh["total"],
                    "%.0f vs %.0f" % (hw["total"], uh["total"])))
    if pv and up:
        out.append((c["name"], "vcpuperf-cat per VM below "
                    "ureader-group-jsonl per VM", pv["total"] < up["total"],
                    "%.0f vs %.0f" % (pv["total"], up["total"])))
    if pf and hw:
        # One that cannot keep up has only a lower bound of its total.
        out.append((c["name"], "perf stat -I per VM at least 20x the "
                    "host-wide recorder", pf["total"] >= 20 * hw["total"],
                    "%s%.1fx%s" % (
                        "at least " if "saturated" in pf else "",
                        pf["total"] / hw["total"],
                        ": perf stat per VM cannot keep up"
                        if "saturated" in pf else "")))
    return out


def main():
    vm = load_runs(sys.argv[1])
    meta = json.load(open(sys.argv[2]))
    outdir = sys.argv[3]
    report = sys.argv[4] if len(sys.argv) > 4 else "arm64"
    lab = report == "arm64-lab"
    res = dict(meta=meta, kernel=vm["kernel"], perf=vm["perf"],
               passes=vm["passes"], events=vm["events"], configs=[],
               problems=vm.get("problems", []),
               bench_seconds=vm.get("bench_seconds"))
    for cfg in vm["configs"]:
        per_run = [[f for f in (figures(cfg, p, base_vmm(run))
                                for p in run) if f]
                   for run in cfg["runs"]]
        per_run = [r for r in per_run if r]
        res["configs"].append(dict(
            name=cfg["name"], vcpus=cfg["vcpus"], events=cfg["events"],
            interval_ms=cfg["interval_ms"],
            guest_instructions=cfg["guest_instructions"],
            none_own_irqs_run=base_irqs(cfg),
            collectors=combine(per_run) if per_run else {}))
    goals = []
    agree = {n: [0, 0, 0.0] for n in SHARES + ["total"]}
    for c in res["configs"]:
        for k, f in c["collectors"].items():
            for name in agree:
                s = f.get(name + "_spread")
                if s is None:
                    continue
                agree[name][1] += 1
                agree[name][0] += s <= 0.02
                agree[name][2] = max(agree[name][2], s)
        if lab:
            goals += lab_goals(c)
            continue
        if c["vcpus"] < 64 or c["events"] < 8:
            continue
        col = c["collectors"]
        mode = default_mode(c["interval_ms"])
        vp = col.get("vcpuperf-" + mode)
        if not vp:
            continue
        ug = col.get("ureader-group-jsonl")
        pf = col.get("perf")
        pg = col.get("perf-group")
        lz = col.get("vcpuperf-lazy")
        kk = col.get("vcpuperf-kick")
        if ug:
            goals.append((c["name"], "total below ureader-group-jsonl's",
                          vp["total"] < ug["total"],
                          "vcpuperf-%s %.0f, ureader-group-jsonl %.0f "
                          "instructions per sample" %
                          (mode, vp["total"], ug["total"])))
        if pf:
            goals.append((c["name"], "perf stat -I at least 10x",
                          pf["total"] >= 10 * vp["total"],
                          "%.1fx (grouped %.1fx)" %
                          (pf["total"] / vp["total"],
                           pg["total"] / vp["total"] if pg else 0)))
        if lz:
            goals.append((c["name"], "lazy: 0 VM exits per vCPU per tick",
                          lz["exits"] < 0.0005,
                          "%.4f: exits per run above the run without a "
                          "collector %s, ticks %s, interrupts of its own "
                          "%s" %
                          (lz["exits"], span(lz.get("exits_more_run")),
                           span(lz.get("ticks_more_run")),
                           span(lz.get("own_irqs_run")))))
        if kk and pg:
            goals.append((c["name"], "kick: exits at most grouped perf "
                          "stat's", kk["exits"] <= pg["exits"] + 0.0005,
                          "%.4f vs %.4f; interrupts of their own per run: "
                          "%s vs %s" %
                          (kk["exits"], pg["exits"],
                           span(kk.get("own_irqs_run")),
                           span(pg.get("own_irqs_run")))))
    exits_apart = [abs(max(f["exits_more_run_runs"]) -
                       min(f["exits_more_run_runs"]))
                   for c in res["configs"] for f in c["collectors"].values()
                   if len(f.get("exits_more_run_runs", [])) > 1]
    res["goals"] = [dict(config=g[0], goal=g[1], met=g[2], figures=g[3])
                    for g in goals]
    res["run_agreement"] = {n: dict(within_2pct=a[0], figures=a[1],
                                     largest=a[2])
                             for n, a in agree.items()}
    if exits_apart:
        res["run_agreement"]["exits_per_run"] = dict(
            figures=len(exits_apart),
            within_1=sum(d <= 1 for d in exits_apart),
            within_2=sum(d <= 2 for d in exits_apart),
            largest=max(exits_apart))
    with open("%s/%s.json" % (outdir, report), "w") as f:
        json.dump(res, f, indent=1)

    w = []
    w.append("# vcpuperf benchmark on the arm64 bed%s\n" %
             (": the lab's shape" if lab else ""))
    w.append("`make bench-%sarm64` (`scripts/bench-arm64.sh%s`), commit "
             "`%s`%s, "
             "kernel %s, %s, %s; %s, %.0f s.\n" %
             ("lab-" if lab else "", " --lab" if lab else "",
              meta["commit"][:12], " (dirty tree)" if meta["dirty"] else "",
              res["kernel"], res["perf"], meta.get("qemu", "?"),
              meta.get("runs", "one boot"), meta["script_seconds"]))
    w.append("One emulated CPU, `-icount shift=0`: CPU time in ns is "
             "instructions executed.  Instructions per sample (a sample: "
             "one event of one thread in one interval) by share, and VM "
             "exits the collector caused per vCPU per tick (KVM's exit "
             "counters above the same work's without a collector); "
             "\"interrupts not a tick\": the CPU's interrupts in the "
             "window (/proc/interrupts) less the scheduler ticks' times "
             "it holds, the least and most of the passes (a tick at a "
             "reading's time may be counted or not): a collector's own, "
             "each of which exits a guest if one is running; \"per run: "
             "exits, ticks above\": the least and most of the passes "
             "above the run without a collector (a tick exits the guest "
             "it finds, and a collector's CPU time that holds no tick "
             "makes the window a tick longer for every tick of it).  Each "
             "figure is the mean of the runs, a run's the median of its "
             "passes (each collector started at its pass's phase of the "
             "scheduler tick); `±` the runs' largest disagreement.  Samples "
             "count only the intervals a collector read (\"intervals "
             "read\": of those in the window, the least of the passes; "
             "perf stat -I falls behind at 10 ms).  Events: 4 = %s; "
             "8 = %s.\n" %
             (", ".join(res["events"]["4"]), ", ".join(res["events"]["8"])))
    if lab:
        w.append("N VMs x k vCPU threads, each VM its own VMM process "
                 "(bench/arm64_lab.py); a collector per VM is the sum of "
                 "its processes and samplers, its intervals their mean.\n")
    for c in res["configs"]:
        w.append("\n## %s (%d vCPU threads, %d events, %d ms; default "
                 "read mode %s; %s M guest instructions a run)\n" % (
                     c["name"], c["vcpus"], c["events"], c["interval_ms"],
                     default_mode(c["interval_ms"]),
                     "{:,}".format(c["guest_instructions"] // 1000000)))
        w.append("| collector | intervals read | module (±) | target (±) "
                 "| tool (±) | total (±) | exits / vCPU / tick | of which "
                 "interrupt, mmio | per run: exits, ticks above | "
                 "interrupts not a tick, per run |")
        w.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for k, f in c["collectors"].items():
            r = f["reasons"]
            mmio = None if r["mmio_exit_user"] is None else \
                r["mmio_exit_user"] + r["mmio_exit_kernel"]
            w.append("| %s | %s | %s (%s) | %s (%s) | %s (%s) | "
                     "%s%s (%s) | %s | %s, %s | %s; %s | %s |" % (
                         k, pct(f["kept"]), num(f["module"]),
                         pct(f["module_spread"]),
                         num(f["target"]), pct(f["target_spread"]),
                         num(f["tool"]), pct(f["tool_spread"]),
                         "at least " if "saturated" in f else "",
                         num(f["total"]), pct(f["total_spread"]),
                         num(f["exits"], 4), num(r["interrupt"], 4),
                         num(mmio, 4),
                         span(f.get("exits_more_run")),
                         span(f.get("ticks_more_run")),
                         span(f.get("own_irqs_run"))))
        for k, f in c["collectors"].items():
            sat = f.get("saturated")
            if sat:
                w.append("\n%s cannot keep up in %d of %d passes: it used "
                         "%s of the CPU, the VMs %s, and the window "
                         "ended at the bound after %s s (bench/arm64.py "
                         "keep_up_bound_s()); its figures are those of "
                         "that window, its total only module and tool." %
                         (k, sat["passes"], sat["of"],
                          pct_span(sat["collector_cpu"]),
                          pct_span(sat["vm_cpu"]),
                          "%.1f" % sat["window_s"][0]
                          if round(sat["window_s"][0], 1) ==
                          round(sat["window_s"][1], 1) else
                          "%.1f to %.1f" % tuple(sat["window_s"])))
        if c.get("none_own_irqs_run"):
            w.append("\nWithout a collector, interrupts not a tick per "
                     "run: %s." % span(c["none_own_irqs_run"]))
    w.append("\n## Goals (default read mode%s)\n" %
             ("" if lab else ", 64 threads x 8 events and above"))
    for g in res["goals"]:
        w.append("- %s: %s: %s (%s)" % (g["config"], g["goal"],
                                        "met" if g["met"] else "NOT met",
                                        g["figures"]))
    w.append("\nThe runs agree within 2%% on %s." % "; ".join(
        "%s %d of %d figures (largest disagreement %s)" %
        (n, a[0], a[1], pct(a[2])) for n, a in agree.items()))
    ea = res["run_agreement"].get("exits_per_run")
    if ea:
        w.append("The exits a collector caused per run (a run's median of "
                 "its passes, above the run without a collector) agree "
                 "within 1 exit on %d of %d figures, within 2 on %d "
                 "(largest difference %g)." %
                 (ea["within_1"], ea["figures"], ea["within_2"],
                  ea["largest"]))
    if res["problems"]:
        w.append("\n## Problems\n")
        for p in res["problems"]:
            w.append("- " + p.replace("\n", " "))
    with open("%s/%s.md" % (outdir, report), "w") as f:
        f.write("\n".join(w) + "\n")


if __name__ == "__main__":
    main()
