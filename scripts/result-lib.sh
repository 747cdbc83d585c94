# shellcheck shell=bash
# result-lib.sh - sourced by the test scripts that sum up the
# "N passed, M failed" lines other suites end with.  The Python suites
# print TAP (tests/tap.py) and end with that line as a TAP comment,
# "# N passed, M failed"; the shell suites print it plain.

# result_line FILE: the last "N passed, M failed" line of FILE (plain or
# as a TAP comment), without the "# ", or nothing.
result_line() {
	grep -aE '^(# )?[0-9]+ passed, [0-9]+ failed' "$1" 2>/dev/null |
		tail -n1 | sed 's/^# //' || true
}

# result_add LINE: add LINE's two counts to $npass and $nfail (nothing if
# LINE is empty).
result_add() {
	local words
	[ -n "$1" ] || return 0
	read -r -a words <<<"$1"
	npass=$((npass + words[0]))
	nfail=$((nfail + words[2]))
}

# The host test suites, one per line, "LOG FILE WHAT": make check runs
# each as a step of its own ("host tests: WHAT", its TAP in LOG.log) and
# sums their result lines; make check-host runs them all but prom (only
# with VP_CHECK_PROM=1: it starts node-exporter and Prometheus).
# shellcheck disable=SC2034 # read by check.sh and check-host.sh
vp_host_suites=(
	"tool tests/tool/test_decode.py vcpuperf-cat decoder"
	"man tests/tool/test_man.py man pages against --help, the uapi header, lib/ and the module parameters"
	"prom tests/tool/test_prom.py --textfile read by prometheus-node-exporter, scraped and queried by prometheus"
	"plot tests/tool/test_plot.py vcpuperf-plot renders an episode"
	"tap tests/tool/test_tap.py the suites' TAP output, read by Perl's TAP::Parser"
)
