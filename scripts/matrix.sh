#!/bin/bash
# matrix.sh - build vcpuperf.ko against every installed kernel of the test
# matrix (W=1, fail on any warning) and run the integration tests in a VM
# booted on that kernel.
#
# Usage: scripts/matrix.sh [--quick] [--out DIR]
#        scripts/matrix.sh --list     print the installed matrix kernels
#
#   --quick   skip the integration run on Debian 12's 6.1 (make check runs it)
#   --out DIR results (default out/matrix): DIR/<kver>/{kmod,build.log,vm/},
#             DIR/result.log (the table and "N passed, M failed")
#
# The matrix: Debian 12's own 6.1 (the kernel linux-headers-amd64 points at)
# and the 6.12 of bookworm-backports (linux-headers-6.12.*-amd64, installed
# by scripts/setup.sh), both installed on the host, and Debian sid's newest
# (7.2 at the time of writing), built in a cached chroot of sid
# (tests/harness/sid-kernel.sh; VP_MATRIX_SID=0 leaves it out).  A host kernel
# that is not installed is reported and skipped.
#
# Each kernel's module is built in a mirror of the sources (symlinks) under
# DIR/<kver>/kmod, so objects of different kernels never mix with each other
# or with the source tree's own build.  Exit status: 0 if every installed
# kernel built without warnings and passed its tests, 1 otherwise.

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
out=$top/out/matrix
quick=""
list=""
while [ $# -gt 0 ]; do
	case "$1" in
	--quick) quick=1; shift ;;
	--list) list=1; shift ;;
	--out) [ $# -ge 2 ] || { echo "matrix: --out needs a directory" >&2; exit 2; }
		out=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -eu/{/^set -eu/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "matrix: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done

if [ -z "$list" ]; then
	mkdir -p "$out"
	out=$(cd "$out" && pwd)
	# The guest mounts fresh tmpfs on /tmp, /run and /var/tmp; vm-run.sh
	# shares only the working directory (the repository) there.
	case "$out/" in
	"$top"/*) ;;
	/tmp/* | /run/* | /var/tmp/*)
		echo "matrix: --out $out: outside the repository, the VM guest cannot see /tmp, /run or /var/tmp" >&2
		exit 2 ;;
	esac
fi

# The kernels of the matrix, "<label> <kver or ->" per line.
matrix_kernels() {
	local k61 k612 p
	k61=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 2>/dev/null |
		sed -n 's/^linux-headers-\(6\.1\.[^ ,]*\).*/\1/p')
	k612=""
	for p in $(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' \
		'linux-headers-6.12.*-amd64' 2>/dev/null | awk '$1 == "ii" { print $2 }'); do
		case "$p" in *-cloud-amd64 | *-rt-amd64) continue ;; esac
		k612="$k612 ${p#linux-headers-}"
	done
	k612=$(echo "$k612" | tr ' ' '\n' | sed '/^$/d' | sort -V | tail -n1)
	echo "6.1-debian12 ${k61:--}"
	echo "6.12-bookworm-backports ${k612:--}"
}

if [ -n "$list" ]; then
	matrix_kernels | awk '$2 != "-" { print $2 }'
	exit 0
fi

# Mirror the module sources into $1 (symlinks).
stage_sources() {
	"$top/scripts/stage-kmod.sh" "$1"
}

# The integration tests in a VM booted on one kernel, with the module built
# in DIR/kmod: vm_tests DIR SUB SMP 'TEST...' VM-RUN-OPTIONS...  (empty
# TEST list: all of them; logs in DIR/SUB).  Appends to $tests (the table
# cell), adds to $npass/$nfail, sets fail=1 on any failure.
vm_tests() {
	local dir=$1 sub=$2 smp=$3 names=$4 rc line
	shift 4
	rm -rf "${dir:?}/$sub"
	set +e
	# shellcheck disable=SC2086 # the test names are words
	(cd "$top" && VP_MODULE=$dir/kmod/vcpuperf.ko \
		VP_TESTPMU=$dir/testpmu/vp_testpmu.ko \
		scripts/vm-run.sh "$@" --smp "$smp" --timeout 1800 --idle "$VP_IDLE_S" \
		--out "$dir/$sub" -- python3 tests/integration/run.py $names)
	rc=$?
	set -e
	line=$(result_line "$dir/$sub/console.log")
	tests="${tests:+$tests; }${line:-no result line} (smp $smp${names:+: ${names// /, }})"
	result_add "$line"
	[ "$rc" -eq 0 ] || { tests="$tests (exit $rc)"; fail=1; }
	case "$line" in *", 0 failed"*) ;; *) fail=1 ;; esac
}

# The tests that need a thread running on another CPU than the sampler's:
# tagged so where they are written (needs_cpus() in vptest.py).
TWO_CPU_TESTS=$(cd "$top/tests/integration" && python3 run.py --list --cpus 2 | tr '\n' ' ')
[ -n "$TWO_CPU_TESTS" ] || { echo "matrix: no test tagged needs_cpus(2)" >&2; exit 1; }
TWO_CPU_TESTS=${TWO_CPU_TESTS% }

# vm_matrix DIR VM-RUN-OPTIONS...: the integration tests of one matrix
# kernel.  With two vCPUs in one QEMU thread each (MTTCG) 6.12 and sid's
# kernel die at random in static-key patching ("Oops: int3" in __schedule
# or sched_clock_cpu while a jump label is rewritten), with or without
# vcpuperf loaded (toggling a sched tracepoint 400 times is enough, even
# early boot); 6.1 only in modifier_table's probe, which opens and closes
# tracepoint events dozens of times and now runs with one CPU online
# (tests/integration/pmu.py).  So these kernels run the whole suite on one
# vCPU, with timing figures said but not enforced (the sampler shares the
# CPU with the workloads), and then the tests that need a second CPU on two
# vCPUs that QEMU runs in one thread (--tcg-single: no cross-CPU
# code-patching race; the guest's clocks are too uneven there for the
# whole suite's task-clock oracles).  VP_MATRIX_SMP=2 runs the whole suite
# on two MTTCG vCPUs instead.
vm_matrix() {
	local dir=$1
	shift
	tests=""
	if [ "${VP_MATRIX_SMP:-1}" = 2 ]; then
		echo "==== $label: integration tests in the VM (smp 2)"
		vm_tests "$dir" vm 2 "" "$@"
		return
	fi
	echo "==== $label: integration tests in the VM (smp 1)"
	VP_SLOW_KERNEL=1 vm_tests "$dir" vm 1 "" "$@"
	echo "==== $label: the tests that need two CPUs (smp 2, one QEMU thread)"
	VP_SLOW_KERNEL=1 vm_tests "$dir" vm-2cpu 2 "$TWO_CPU_TESTS" \
		--tcg-single "$@"
}

# The kernels whose suites run on one host thread each (6.12 and sid's:
# one vCPU, then two in one QEMU thread, see vm_matrix) run side by side,
# one per host CPU; each one's output goes to DIR/matrix-run.log and its
# table cell and counts to files, read back here.
run_deferred() {
	local job label dir args pids=() i
	for job in "${deferred[@]}"; do
		IFS='|' read -r -a args <<<"$job"
		label=${args[0]}
		dir=${args[1]}
		args=("${args[@]:2}")
		echo "==== $label: integration tests in the VM (output: $dir/matrix-run.log)"
		(
			tests=""
			npass=0
			nfail=0
			fail=0
			t0=$(date +%s)
			vm_matrix "$dir" "${args[@]}"
			printf '%s\n' "$tests" >"$dir/tests.cell"
			echo "$npass $nfail $fail $(($(date +%s) - t0))" >"$dir/tests.counts"
		) >"$dir/matrix-run.log" 2>&1 &
		pids+=($!)
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || true
	done
	for i in "${!rows[@]}"; do
		case "${rows[$i]}" in
		*"|@"*)
			dir=${rows[$i]#*|@}
			dir=${dir%%|*}
			local cell counts
			cell=$(cat "$dir/tests.cell" 2>/dev/null || echo "no result (see $dir/matrix-run.log)")
			read -r -a counts <"$dir/tests.counts" 2>/dev/null || counts=(0 1 1 0)
			npass=$((npass + counts[0]))
			nfail=$((nfail + counts[1]))
			[ "${counts[2]}" -eq 0 ] || fail=1
			local f
			IFS='|' read -r -a f <<<"${rows[$i]}"
			f[3]=$cell
			f[4]="${f[4]%, tests*}, tests ${counts[3]}s (side by side)"
			rows[i]=$(IFS='|'; echo "${f[*]}")
			grep -E '^(not )?ok [0-9]+ - |passed, ' "$dir/matrix-run.log" | sed "s|^|$(basename "$dir"): |" || true
			;;
		esac
	done
}
# The modifier probe the integration tests run (tests/pmu).
make -C "$top/tests/pmu" >/dev/null
mkdir -p "$out"
rows=()
deferred=()
fail=0
npass=0
nfail=0
t_all=$(date +%s)
while read -r label kver; do
	if [ "$kver" = - ]; then
		rows+=("$label|not installed|-|-|skipped (run scripts/setup.sh)")
		echo "matrix: $label: not installed, skipped" >&2
		continue
	fi
	dir=$out/$kver
	kdir=/lib/modules/$kver/build
	build="" tests=""
	t0=$(date +%s)

	echo
	echo "==== $label ($kver): build (W=1)"
	if [ ! -d "$kdir" ]; then
		build="no headers"
		fail=1
	else
		stage_sources "$dir/kmod"
		# from scratch: an incremental build would not repeat the warnings
		make -C "$kdir" M="$dir/kmod" clean >/dev/null 2>&1 || true
		if make -C "$kdir" M="$dir/kmod" W=1 modules >"$dir/build.log" 2>&1; then
			nwarn=$(grep -E 'warning:|error:' "$dir/build.log" |
				grep -vc 'Skipping BTF' || true)
			if [ "$nwarn" -eq 0 ]; then
				build="ok, 0 warnings"
			else
				grep -E 'warning:|error:' "$dir/build.log" | grep -v 'Skipping BTF' || true
				build="$nwarn warnings"
				fail=1
			fi
		else
			tail -n 30 "$dir/build.log"
			build="FAILED"
			fail=1
		fi
		# The test PMU of the integration tests, W=1 clean as well.
		if ! "$top/tests/harness/testpmu.sh" "$kdir" "$dir/testpmu" W=1; then
			build="$build; test PMU FAILED"
			fail=1
		fi
	fi
	t1=$(date +%s)

	if [ ! -f "$dir/kmod/vcpuperf.ko" ] || [ "$build" = FAILED ]; then
		tests="not run"
	elif [ -n "$quick" ] && [ "$label" = 6.1-debian12 ]; then
		tests="skipped (--quick; make check runs it)"
	elif [ ! -r "/boot/vmlinuz-$kver" ]; then
		tests="no /boot/vmlinuz-$kver"
		fail=1
	else
		case "$label" in
		6.12-*)
			tests="@$dir"
			deferred+=("$label|$dir|--kver|$kver")
			;;
		*)
			echo "==== $label ($kver): integration tests in the VM (smp 2)"
			tests=""
			vm_tests "$dir" vm 2 "" --kver "$kver"
			;;
		esac
	fi
	t2=$(date +%s)
	rows+=("$label|$kver|$build|$tests|build $((t1 - t0))s, tests $((t2 - t1))s")
done < <(matrix_kernels)
# Debian sid's newest kernel: its headers want sid's gcc, so the module is
# built in a cached debootstrap chroot of sid (tests/harness/sid-kernel.sh), and
# its stock vmlinuz boots with its own modules unpacked from the chroot's
# packages.  VP_MATRIX_SID=0 skips it.
if [ "${VP_MATRIX_SID:-1}" != 0 ]; then
	t0=$(date +%s)
	label=sid
	echo
	echo "==== $label: chroot, build (W=1)"
	if ! sid_env=$("$top/tests/harness/sid-kernel.sh" env); then
		rows+=("$label|-|chroot FAILED|not run|-")
		fail=1
	else
		eval "$sid_env"
		label="${SID_KVER%%.*}.$(echo "$SID_KVER" | cut -d. -f2)-sid"
		dir=$out/$SID_KVER
		rm -rf "$dir"
		mkdir -p "$dir"
		if ! "$top/tests/harness/sid-kernel.sh" testpmu "$dir/testpmu" >/dev/null 2>&1; then
			tail -n 30 "$dir/testpmu/build.log" || true
			fail=1
			testpmu_failed=1
		fi
		if "$top/tests/harness/sid-kernel.sh" build "$dir/kmod" >/dev/null 2>&1; then
			nwarn=$(grep -E 'warning:|error:' "$dir/kmod/build.log" |
				grep -vc 'Skipping BTF' || true)
			if [ "$nwarn" -eq 0 ]; then
				build="ok, 0 warnings ($(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"/\1/p' \
					"$SID_ROOT/usr/src/linux-headers-$SID_KVER/.config" | cut -d' ' -f1,4))"
			else
				grep -E 'warning:|error:' "$dir/kmod/build.log" | grep -v 'Skipping BTF' || true
				build="$nwarn warnings"
				fail=1
			fi
		else
			tail -n 30 "$dir/kmod/build.log" || true
			build="FAILED"
			fail=1
		fi
		[ -z "${testpmu_failed:-}" ] || build="$build; test PMU FAILED"
		t1=$(date +%s)
		if [ "$build" = FAILED ]; then
			tests="not run"
		else
			# like 6.12 (see vm_matrix)
			tests="@$dir"
			deferred+=("$label|$dir|--kernel|$SID_VMLINUZ|--modules-dir|$SID_MODDIR")
		fi
		rows+=("$label|$SID_KVER|$build|$tests|build $((t1 - t0))s, tests $(($(date +%s) - t1))s")
	fi
fi

run_deferred

# DIR/result.log: the table, then the integration tests summed over the
# kernels booted, in the "N passed, M failed" form make check sums up.
vp_table_file "$out/result.log" \
	"matrix ($(($(date +%s) - t_all))s; logs in $out)" \
	"kernel|version|build (W=1)|integration tests|time" "${rows[@]}"
if [ "$fail" -ne 0 ]; then
	echo "matrix: FAILED"
	exit 1
fi
echo "matrix: all passed"
