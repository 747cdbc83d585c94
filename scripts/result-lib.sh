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
