#!/bin/bash
# kunit.sh - run the vcpuperf KUnit suites in a debug kernel, in a VM.
#
# Usage: scripts/kunit.sh [--suite NAME]... [--out DIR] [--timeout SEC]
#                         [--mem MB] [--smp N]
#
#   --suite NAME   only this suite (make kunit T="NAME ..."): a unit of
#                  tests/kunit/UNIT_kunit.c or its suite's name
#                  (vcpuperf_UNIT), shell globs allowed; the test module
#                  is then linked with those suites alone; every suite
#                  when none is given
#   --out DIR      results directory (default out/kunit); holds
#                  results.ktap     the suites' KTAP, one document with a
#                                   subtest per suite, from each
#                                   /sys/kernel/debug/kunit/vcpuperf_*/results
#                                   (results-SUITE.ktap)
#                  results.json     kunit.py's parse of it
#                  dmesg.txt        the guest's kernel log
#                  kmemleak.txt     kmemleak's report after the run
#                  console.log      the guest's serial console
#   --timeout SEC  VM time limit (default 1500; TCG + KASAN is slow)
#
# Steps: scripts/setup.sh (packages), scripts/kunit-kernel.sh (build or
# reuse the debug kernel: KASAN, lockdep, kmemleak, DEBUG_ATOMIC_SLEEP),
# build tests/kunit/vcpuperf_kunit.ko against it, boot it with
# scripts/vm-run.sh --kernel, insmod the test module (the suite runs at
# load), save each suite's KTAP results, unload it, scan for leaks and
# save dmesg.
# On the host the KTAP is parsed by the kernel's own
# tools/testing/kunit/kunit.py parse.
#
# Exit status: 0 when every case passed or was skipped and the kernel
# reported no KASAN, lockdep, BUG, WARNING, atomic-sleep or kmemleak
# finding; 1 otherwise; 2 on usage errors.

prog=kunit
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
out=$top/out/kunit
timeout_s=1500
mem=1024
smp=2
# The suites are named vcpuperf_UNIT (tests/kunit/*_kunit.c).
suite_prefix=vcpuperf_
module=vcpuperf_kunit
want=()

while [ $# -gt 0 ]; do
	case "$1" in
	--suite) [ $# -ge 2 ] || { log "$1 needs an argument"; exit 2; }; want+=("${2#"$suite_prefix"}"); shift 2 ;;
	--out) [ $# -ge 2 ] || { log "$1 needs an argument"; exit 2; }; out=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || { log "$1 needs an argument"; exit 2; }; timeout_s=$2; shift 2 ;;
	--mem) [ $# -ge 2 ] || { log "$1 needs an argument"; exit 2; }; mem=$2; shift 2 ;;
	--smp) [ $# -ge 2 ] || { log "$1 needs an argument"; exit 2; }; smp=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) log "unknown argument '$1'"; exit 2 ;;
	esac
done

# The units chosen (every one by default), checked before anything is
# built: a name that matches none is an error.
all_units=$(find "$top/tests/kunit" -maxdepth 1 -name '*_kunit.c' -printf '%f\n' |
	sed 's/_kunit\.c$//' | sort | tr '\n' ' ')
units=""
if [ ${#want[@]} -eq 0 ]; then
	units=$all_units
else
	for w in "${want[@]}"; do
		hit=""
		for u in $all_units; do
			# shellcheck disable=SC2053 # $w is a glob on purpose
			if [[ $u == $w ]]; then hit="$hit $u"; fi
		done
		[ -n "$hit" ] || {
			log "no KUnit suite '$w' (suites: ${all_units% })"
			exit 2
		}
		units="$units$hit"
	done
	units=$(echo "$units" | tr ' ' '\n' | sed '/^$/d' | sort -u | tr '\n' ' ')
fi
units=${units% }
sources=""
for u in $units; do
	sources="$sources $top/tests/kunit/${u}_kunit.c"
done

"$top/scripts/setup.sh"

bzimage=$("$top/scripts/kunit-kernel.sh")
kbuild=${bzimage%/arch/x86/boot/bzImage}
ksrc=$(dirname "$kbuild")/src
kunit_py=$ksrc/tools/testing/kunit/kunit.py
[ -f "$kunit_py" ] || die "$kunit_py missing"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out"/results.ktap "$out"/results-*.ktap "$out"/results.json "$out"/dmesg.txt \
	"$out"/kmemleak.txt "$out"/console.log "$out"/guest.log "$out"/.rc

log "building $module.ko against $kbuild (suites: $units)"
if ! nice -n 19 make -s -C "$top/tests/kunit" KDIR="$kbuild" BUILD="$out/kmod" W=1 \
	VPK_SUITES="$units" \
	>"$out/kmod.log" 2>&1; then
	cat "$out/kmod.log" >&2
	die "building the test module failed"
fi
if grep -E 'warning:|error:' "$out/kmod.log" >&2; then
	die "the test module builds with warnings"
fi
ko=$out/kmod/tests/kunit/$module.ko
[ -f "$ko" ] || die "$ko not built"

# The guest side.  The test module and this script go into the VM's
# writable share ($VP_OUT in the guest), so nothing depends on where the
# repository lives (a CI clone under /tmp is not visible through the root).
vmout=$out/vm
rm -rf "$vmout"
mkdir -p "$vmout"
cp "$ko" "$vmout/$module.ko"
cat >"$vmout/guest.sh" <<EOF
#!/bin/sh
set -u
O=\$VP_OUT
D=/sys/kernel/debug
ML=\$D/kmemleak
# Leaks found before the test (boot) are not the test's: forget them.
if [ -w \$ML ]; then
	echo scan >\$ML
	echo clear >\$ML
else
	echo "guest: kmemleak not available" >&2
fi
echo "guest: insmod $module"
insmod \$O/$module.ko || echo "guest: insmod failed: \$?"
n=0
for r in \$D/kunit/$suite_prefix*/results; do
	[ -r "\$r" ] || continue
	s=\${r%/results}
	cat "\$r" >"\$O/results-\${s##*/}.ktap"
	n=\$((n + 1))
done
[ \$n -gt 0 ] || echo "guest: no \$D/kunit/$suite_prefix*/results" >&2
rmmod $module || echo "guest: rmmod failed: \$?"
if [ -w \$ML ]; then
	# kmemleak reports objects unreferenced for 5 s, over two scans.
	sleep 6
	echo scan >\$ML
	echo scan >\$ML
	cat \$ML >\$O/kmemleak.txt
fi
dmesg >\$O/dmesg.txt
echo "guest: done"
EOF

log "booting $bzimage (TCG; this takes a few minutes)"
set +e
(cd "$vmout" && "$top/scripts/vm-run.sh" --kernel "$bzimage" --smp "$smp" \
	--mem "$mem" --timeout "$timeout_s" --out "$vmout" \
	--log "$out/console.log" -- sh /tmp/out/guest.sh) \
	</dev/null >"$out/guest.log" 2>&1
vrc=$?
set -e
for f in kmemleak.txt dmesg.txt; do
	[ ! -f "$vmout/$f" ] || mv -f "$vmout/$f" "$out/$f"
done
for f in "$vmout"/results-*.ktap; do
	[ ! -f "$f" ] || mv -f "$f" "$out/"
done
# One KTAP document of every suite's: each debugfs results file is a
# document of its own ("KTAP version 1", "1..1", the suite, "ok 1 NAME"),
# so the suites become subtests 1..N of one plan.
if compgen -G "$out/results-*.ktap" >/dev/null; then
	python3 - "$out/results.ktap" "$out"/results-*.ktap <<'PY'
import re, sys
dst, srcs = sys.argv[1], sys.argv[2:]
out = ["KTAP version 1", "1..%d" % len(srcs)]
for i, path in enumerate(srcs, 1):
    for line in open(path).read().splitlines():
        if line.startswith("KTAP version") or re.fullmatch(r"1\.\.\d+", line):
            continue
        out.append(re.sub(r"^((?:not )?ok) 1 ", r"\g<1> %d " % i, line))
open(dst, "w").write("\n".join(out) + "\n")
PY
fi

fail=0
if [ $vrc -ne 0 ]; then
	log "the VM run failed (status $vrc); console: $out/console.log"
	tail -n 30 "$out/console.log" >&2 || true
	fail=1
fi

# Kernel findings: any of these fails the run.
bad_re='BUG:|WARNING:|KASAN|UBSAN|Oops|kernel BUG|Call Trace:|general protection fault|possible (circular|recursive) locking|inconsistent lock state|DEBUG_LOCKS_WARN_ON|sleeping function called from invalid context|ODEBUG:|kmemleak: [0-9]+ new suspected|unreferenced object|INFO: task .* blocked'
if [ -f "$out/dmesg.txt" ]; then
	if grep -En "$bad_re" "$out/dmesg.txt" >"$out/findings.txt"; then
		log "kernel findings in dmesg ($out/dmesg.txt):"
		head -n 40 "$out/findings.txt" >&2
		fail=1
	fi
else
	log "no dmesg.txt from the guest"
	fail=1
fi
if [ ! -f "$out/kmemleak.txt" ]; then
	log "no kmemleak report from the guest"
	fail=1
elif [ -s "$out/kmemleak.txt" ]; then
	log "kmemleak found leaks ($out/kmemleak.txt):"
	head -n 40 "$out/kmemleak.txt" >&2
	fail=1
fi

# The results, parsed by the kernel's own KTAP parser.
if [ ! -s "$out/results.ktap" ]; then
	log "no KTAP results from the guest"
	exit 1
fi
set +e
python3 "$kunit_py" parse --json="$out/results.json" "$out/results.ktap"
prc=$?
set -e
if [ $prc -ne 0 ]; then
	log "kunit.py parse reports failures (status $prc)"
	# Linux 6.1 keeps only 512 bytes of log per case in debugfs: the
	# kernel log has the untruncated messages.
	if [ -f "$out/dmesg.txt" ]; then
		log "failed expectations, from the kernel log:"
		grep -E -A4 '(EXPECTATION|ASSERTION) FAILED' "$out/dmesg.txt" |
			sed 's/^\[ *[0-9.]*\] *//' | head -n 80 >&2 || true
	fi
	fail=1
fi

# Every suite and every case of the sources must have a result: none
# missing.
# shellcheck disable=SC2086 # one word per source
expected=$(cat $sources | grep -c 'KUNIT_CASE(')
# shellcheck disable=SC2086
suites=$(sed -n 's/^\t\.name = "\('"$suite_prefix"'[a-z0-9_]*\)",$/\1/p' \
	$sources)
got=$(python3 - "$out/results.json" "$suites" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
groups = d.get("sub_groups", [])
missing = sorted(set(sys.argv[2].split()) - {s["name"] for s in groups})
for name in missing:
    print("kunit: no results for suite " + name, file=sys.stderr)
cases = [c for s in groups for c in s.get("test_cases", [])]
for c in cases:
    if c["status"] == "SKIP":
        print("kunit: skipped: " + c["name"], file=sys.stderr)
print(-1 if missing else len(cases))
PY
) || got=0
if [ "$got" != "$expected" ]; then
	log "expected $expected cases, kunit.py saw $got"
	fail=1
fi

if [ $fail -ne 0 ]; then
	log "FAILED (results in $out)"
	exit 1
fi
log "PASSED: $got cases in $(echo "$suites" | wc -w) suites (results in $out)"
