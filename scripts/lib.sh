# shellcheck shell=bash
# lib.sh - sourced by the bash scripts of scripts/ and tests/harness/ for
# what they share (. "$(dirname "$0")/lib.sh", or ../../scripts/lib.sh):
#
#   strict mode     set -euo pipefail
#   top             the repository's top directory (sourcing does not cd)
#   VCPUPERF_CACHE  the cache root, default ~/.cache/vcpuperf
#   log, die        a line on stderr after "$prog: " (default: the script's
#                   name); die exits 1
#   ok, bad, check, vp_summary, vp_table, vp_table_file
#                   checks counted in npass and nfail, the closing
#                   "N passed, M failed" line and the result tables (with
#                   result_line and result_add of result-lib.sh, which read
#                   such lines back)
#   step, step_failed   the headed steps of check.sh and check-host.sh
#   VP_IDLE_S       vm-run.sh --idle for the integration suites
#   vp_help, vp_outdir, vp_warnings, vp_copy_sources, vp_dkms_conf
#   vp_host_kver, vp_matrix_kvers   the host kernels of the test matrix
#   vp_profile and vp_profile_*     the kernel profiles (below)
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VCPUPERF_CACHE=${VCPUPERF_CACHE:-${HOME:-/tmp}/.cache/vcpuperf}
prog=${prog:-$(basename "$0" .sh)}
# shellcheck source=scripts/result-lib.sh
. "$top/scripts/result-lib.sh"

# A suite's console silent this long is a hung guest (vm-run.sh --idle):
# the longest a test stays silent is about two minutes (the debug kernel's
# kmemleak scan, a reader of 16,000 rows a second).
VP_IDLE_S=${VP_IDLE_S:-300}

log() { echo "$prog: $*" >&2; }
die() { echo "$prog: error: $*" >&2; exit 1; }

# vp_help: the script's leading comment, its usage (for -h and --help).
vp_help() {
	awk 'NR == 1 { next } !/^#/ || /^# shellcheck/ { exit } { sub(/^# ?/, ""); print }' "$0"
}

# ------------------------------------------------------------- results ---
npass=0
nfail=0
# ok TEXT, bad TEXT: a check that passed or failed, counted in npass or
# nfail; the line also goes to the file $vp_results when that is set.
ok() { vp_say "ok: $*"; npass=$((npass + 1)); }
bad() { vp_say "FAIL: $*"; nfail=$((nfail + 1)); }
vp_say() {
	if [ -n "${vp_results:-}" ]; then
		echo "$1" | tee -a "$vp_results"
	else
		echo "$1"
	fi
}
# check TEXT COMMAND...: ok TEXT if COMMAND succeeds, else bad TEXT.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
# vp_summary: the closing "N passed, M failed" line of npass and nfail.
vp_summary() { echo "$npass passed, $nfail failed"; }
# vp_table TITLE HEADER [ROW...]: "==== TITLE", then the header and the
# rows (fields separated by |) in aligned columns.
vp_table() {
	echo "==== $1"
	shift
	printf '%s\n' "$@" | column -t -s '|'
}
# vp_table_file FILE TITLE HEADER [ROW...]: the table and vp_summary into
# FILE (a suite's result.log, which make check sums up), then on stdout
# after a blank line.
vp_table_file() {
	local file=$1
	shift
	{
		vp_table "$@"
		vp_summary
	} >"$file"
	echo
	cat "$file"
}

# step TEXT: the heading of a step of a check, with the seconds since the
# start, so that a run's log shows where its time goes.  step_failed NAME:
# a step's command failed (a build, a sanitizer report, a timeout: not
# always a test saying "not ok"); its name is kept in failed_steps for
# the closing lines.
failed_steps=()
step() {
	echo
	echo "==== [${SECONDS} s] $*"
}
step_failed() {
	echo "step failed: $1"
	failed_steps+=("$1")
	# shellcheck disable=SC2034 # the script's own failure flag
	fail=1
}

# -------------------------------------------------------------- builds ---
# vp_warnings LOG: the compiler's warnings and errors in a build log (not
# pahole's "Skipping BTF" notes); status 0 if there is one.
vp_warnings() {
	grep -E 'warning:|error:' "$1" | grep -v 'Skipping BTF'
}

# The directories of the module's sources (besides Kbuild).
vp_kmod_dirs=(include/uapi lib module)

# vp_copy_sources DIR: a copy in DIR of what DKMS builds: Kbuild,
# dkms.conf and the module's sources (no object of the working tree).
vp_copy_sources() {
	local d
	mkdir -p "$1"
	cp "$top/Kbuild" "$top/dkms.conf" "$1/"
	for d in "${vp_kmod_dirs[@]}"; do
		mkdir -p "$1/$d"
		cp "$top/$d"/*.[ch] "$1/$d/"
	done
}

# vp_dkms_conf VAR: VAR's value in dkms.conf (PACKAGE_NAME, PACKAGE_VERSION).
vp_dkms_conf() {
	sed -n "s/^$1=\"\{0,1\}\([^\"]*\)\"\{0,1\}\$/\1/p" "$top/dkms.conf"
}

# vp_outdir DIR: make DIR and print its absolute path.  Status 2, with a
# line on stderr, for a DIR the VM guest cannot see: under /tmp, /run or
# /var/tmp (fresh tmpfs in the guest) and outside the repository.
vp_outdir() {
	local d
	mkdir -p "$1"
	d=$(cd "$1" && pwd)
	case "$d/" in
	"$top"/*) ;;
	/tmp/* | /run/* | /var/tmp/*)
		echo "$prog: --out $d: outside the repository, the VM guest cannot see /tmp, /run or /var/tmp" >&2
		return 2
		;;
	esac
	echo "$d"
}

# ------------------------------------------------------------- kernels ---
# vp_host_kver 6.1|6.12: the version of that host kernel of the test
# matrix if it is installed (with its headers), else nothing: Debian 12's
# own 6.1 (the one linux-headers-amd64 points at), the newest 6.12 of
# bookworm-backports (generic flavour; scripts/setup.sh installs it).
vp_host_kver() {
	local p vers=()
	case "$1" in
	6.1)
		dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
			sed -n 's/^linux-headers-\(6\.1\.[^ ,]*\).*/\1/p' || true
		;;
	6.12)
		for p in $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' \
			'linux-headers-6.12.*-amd64' 2>/dev/null | awk '$1 == "ii" { print $2 }'); do
			case "$p" in *-cloud-amd64 | *-rt-amd64) continue ;; esac
			vers+=("${p#linux-headers-}")
		done
		[ ${#vers[@]} -eq 0 ] || printf '%s\n' "${vers[@]}" | sort -V | tail -n1
		;;
	esac
}

# vp_matrix_kvers: the matrix's host kernels that are installed, one per
# line (scripts/matrix.sh --list).
vp_matrix_kvers() {
	vp_host_kver 6.1
	vp_host_kver 6.12
}

# ------------------------------------------------------ kernel profiles ---
# The kernels the VM tests run on, each built for and booted the same way
# wherever it is used (check-vm.sh, check.sh, matrix.sh, stress.sh,
# kunit.sh, install-test.sh, signed-kmod.sh):
#   6.1    Debian 12's own, two vCPUs;
#   6.12   bookworm-backports';
#   sid    Debian sid's newest (7.2), built in the chroot of
#          tests/harness/sid-kernel.sh with sid's gcc;
#   debug  the KASAN, lockdep and kmemleak kernel of scripts/kunit-kernel.sh,
#          two vCPUs: the timing figures are said, not enforced
#          (VP_SLOW_KERNEL: it runs several times slower), and kmemleak is
#          scanned after the last rmmod (VP_KMEMLEAK).
# 6.12 and sid die at random in static-key patching with two
# multi-threaded TCG vCPUs, so they boot one (timing said, not enforced:
# the sampler shares the CPU with the workloads), or with SMP 2 two vCPUs
# in one QEMU thread (--tcg-single: what the tests that need a second CPU
# run on); --mttcg boots them as 6.1 is booted anyway.
#
# vp_profile [--out DIR] [--mttcg] NAME [SMP]: kernel NAME for a boot on
# SMP vCPUs (default: the profile's); builds nothing.  Sets
#   PROFILE_NAME, PROFILE_KVER  NAME and the kernel's version ("debug")
#   PROFILE_KDIR    its build tree (empty for sid: built in its chroot)
#   PROFILE_KERNEL  the image booted, for one not installed (sid, debug)
#   PROFILE_SMP     the vCPUs booted
#   PROFILE_DIR     where the builds for it go: DIR/PROFILE_KVER (DIR
#                   default out/profile)
#   PROFILE_VMRUN   vm-run.sh's options to boot it (an array)
#   PROFILE_ENV     the environment of the tests on it (an array of
#                   VAR=VALUE): VP_MODULE and VP_TESTPMU (the builds in
#                   PROFILE_DIR), VP_SLOW_KERNEL, VP_KMEMLEAK
# Status 1, with the reason on stderr, when the kernel is not there
# (PROFILE_KVER is then empty if it is not installed at all); 2 for an
# unknown NAME.
vp_profile() {
	local dir=$top/out/profile mttcg="" name smp sidenv
	while [ $# -gt 0 ]; do
		case "$1" in
		--out) dir=$2; shift 2 ;;
		--mttcg) mttcg=1; shift ;;
		*) break ;;
		esac
	done
	name=$1
	smp=${2:-}
	PROFILE_NAME=$name
	PROFILE_KVER=""
	PROFILE_KDIR=""
	PROFILE_KERNEL=""
	PROFILE_VMRUN=()
	PROFILE_ENV=()
	case "$name" in
	6.1 | 6.12)
		PROFILE_KVER=$(vp_host_kver "$name")
		PROFILE_KDIR=/lib/modules/$PROFILE_KVER/build
		PROFILE_VMRUN=(--kver "$PROFILE_KVER")
		;;
	sid)
		sidenv=$("$top/tests/harness/sid-kernel.sh" env) || return 1
		eval "$sidenv"
		PROFILE_KVER=$SID_KVER
		PROFILE_KERNEL=$SID_VMLINUZ
		PROFILE_VMRUN=(--kernel "$SID_VMLINUZ" --modules-dir "$SID_MODDIR")
		;;
	debug)
		PROFILE_KERNEL=$("$top/scripts/kunit-kernel.sh") || return 1
		PROFILE_KDIR=${PROFILE_KERNEL%/arch/x86/boot/bzImage}
		PROFILE_KVER=debug
		PROFILE_VMRUN=(--kernel "$PROFILE_KERNEL" --mem 2048)
		PROFILE_ENV=(VP_SLOW_KERNEL=1 VP_KMEMLEAK=1)
		;;
	*)
		echo "profile: unknown kernel profile '$name' (6.1, 6.12, sid, debug)" >&2
		return 2
		;;
	esac
	if [ -z "$PROFILE_KVER" ] || { [ -n "$PROFILE_KDIR" ] && [ ! -d "$PROFILE_KDIR" ]; }; then
		echo "profile $name: no kernel build tree (run scripts/setup.sh)" >&2
		return 1
	fi
	case "$name" in
	6.12 | sid)
		if [ -n "$mttcg" ]; then
			PROFILE_SMP=${smp:-2}
		else
			PROFILE_SMP=${smp:-1}
			[ "$PROFILE_SMP" = 1 ] || PROFILE_VMRUN+=(--tcg-single)
			PROFILE_ENV+=(VP_SLOW_KERNEL=1)
		fi
		;;
	*) PROFILE_SMP=${smp:-2} ;;
	esac
	PROFILE_VMRUN+=(--smp "$PROFILE_SMP")
	PROFILE_DIR=$dir/$PROFILE_KVER
	PROFILE_ENV+=(VP_MODULE="$PROFILE_DIR/kmod/vcpuperf.ko"
		VP_TESTPMU="$PROFILE_DIR/testpmu/vp_testpmu.ko")
}

# vp_profile_kmod [--clean]: build vcpuperf.ko (W=1) for the profile in
# PROFILE_DIR/kmod, a mirror of the sources (log: build.log there), from
# scratch with --clean (an incremental build does not repeat warnings).
# shellcheck disable=SC2120 # matrix.sh passes --clean
vp_profile_kmod() {
	local d=$PROFILE_DIR/kmod
	if [ "$PROFILE_NAME" = sid ]; then
		"$top/tests/harness/sid-kernel.sh" build "$d" >/dev/null
		return
	fi
	"$top/scripts/stage-kmod.sh" "$d"
	if [ "${1:-}" = --clean ]; then
		make -C "$PROFILE_KDIR" M="$d" clean >/dev/null 2>&1 || true
	fi
	make -C "$PROFILE_KDIR" M="$d" W=1 modules >"$d/build.log" 2>&1
}

# vp_profile_testpmu: build the test PMU (tests/pmu, W=1, failing on a
# warning) for the profile in PROFILE_DIR/testpmu (log: build.log there).
vp_profile_testpmu() {
	local d=$PROFILE_DIR/testpmu
	if [ "$PROFILE_NAME" = sid ]; then
		"$top/tests/harness/sid-kernel.sh" testpmu "$d" >/dev/null ||
			{ tail -n 30 "$d/build.log" >&2 || true; return 1; }
		return 0
	fi
	"$top/tests/harness/testpmu.sh" "$PROFILE_KDIR" "$d" W=1
}

# vp_profile_build: both; status 1, with the reason on stderr, if one fails.
vp_profile_build() {
	# shellcheck disable=SC2119 # no --clean
	if ! vp_profile_kmod; then
		tail -n 20 "$PROFILE_DIR/kmod/build.log" >&2 || true
		echo "profile $PROFILE_NAME: build failed (see $PROFILE_DIR/kmod/build.log)" >&2
		return 1
	fi
	if ! vp_profile_testpmu; then
		echo "profile $PROFILE_NAME: the test PMU's build failed (see $PROFILE_DIR/testpmu/build.log)" >&2
		return 1
	fi
}

# vp_profile_vm VM-RUN-OPTIONS... -- COMMAND...: scripts/vm-run.sh on the
# profile's kernel with its environment, run from the top directory (the
# guest's working directory).
vp_profile_vm() {
	(cd "$top" && env "${PROFILE_ENV[@]}" scripts/vm-run.sh "${PROFILE_VMRUN[@]}" "$@")
}
