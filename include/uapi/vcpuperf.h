/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * vcpuperf: per-thread in-kernel perf counters, the ABI between the module
 * and its readers (vcpuperf-cat): the records of the stream, the ioctls,
 * the attach flags and event modifiers, and the limits commands are
 * checked against, each defined here once.  The command words are parsed
 * by lib/vcpuperf_cmd.c, which the module and the tool both build.
 * vcpuperf(4) is the reference for all of it (the command grammar, what
 * each record means, every error a write() returns), and
 * tests/tool/test_man.py checks that every record, cause and command word
 * is there.  Nothing here may depend on kernel-internal headers.  The
 * module's own defaults and thresholds are in module/vcpuperf.h: they are
 * not ABI.
 *
 * The stream is a byte FIFO of records in host byte order, each padded to
 * a multiple of 8 bytes with its size in vcpuperf_rec.size, so that a
 * reader skips the types it does not know.
 */
#ifndef _UAPI_LINUX_VCPUPERF_H
#define _UAPI_LINUX_VCPUPERF_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define VCPUPERF_MAGIC		0x46504356U	/* "VCPF" little endian */
#define VCPUPERF_ABI_VERSION	5U

/* Compile-time limits, enforced with -E2BIG / -ENOSPC. */
#define VCPUPERF_MAX_EVENTS	16	/* events per target */
#define VCPUPERF_MAX_TARGETS	1024	/* tids in one command; the default
					 * of the max_targets parameter
					 */
#define VCPUPERF_MAX_GROUPS	256	/* pid=/qemu= attachments at once,
					 * per collection
					 */
#define VCPUPERF_CMD_MAX	16384	/* bytes in one control write */
#define VCPUPERF_NAME_LEN	48	/* event name, NUL included */
#define VCPUPERF_COMM_LEN	16	/* TASK_COMM_LEN */

#define VCPUPERF_INTERVAL_MIN_NS	1000000ULL	/* 1 ms */
#define VCPUPERF_INTERVAL_MAX_NS	60000000000ULL	/* 60 s */

/* Ring size of one collection, KiB. */
#define VCPUPERF_RING_MIN_KB		64U
#define VCPUPERF_RING_MAX_KB		(1024U * 1024U)	/* 1 GiB */

/* How a running thread is read (the read command). */
enum vcpuperf_read_mode {
	VCPUPERF_READ_AUTO = 0,
	VCPUPERF_READ_DIRECT,
	VCPUPERF_READ_KICK,
	VCPUPERF_READ_LAZY,
};

/* Length of a rejected command's reason, NUL included. */
#define VCPUPERF_ERR_LEN	160

#define VCPUPERF_NO_VCPU	(-1)

enum vcpuperf_rec_type {
	VCPUPERF_REC_HEADER = 1,
	VCPUPERF_REC_SAMPLE,
	VCPUPERF_REC_STARTED,
	VCPUPERF_REC_UNAVAILABLE,
	VCPUPERF_REC_FIRST_ROW,
	VCPUPERF_REC_MULTIPLEXED,
	VCPUPERF_REC_NO_COUNTERS,
	VCPUPERF_REC_VCPU_ADDED,
	VCPUPERF_REC_TASK_EXITED,
	VCPUPERF_REC_DROPPED,
	VCPUPERF_REC_FINISHED,
	VCPUPERF_REC_DETACHED,
	VCPUPERF_REC_PROCESS,
	VCPUPERF_REC_PROCESS_SAMPLE,
	VCPUPERF_REC_MUX_EXPECTED,
	VCPUPERF_REC_MAX,
};

/* How a target was attached. */
enum vcpuperf_target_kind {
	VCPUPERF_TARGET_TID = 1,
	VCPUPERF_TARGET_PID,
	VCPUPERF_TARGET_QEMU,
};

/* Attach flags: the attach words that are not event modifiers. */
#define VCPUPERF_ATTACH_PROCESS_TOTALS	(1U << 0)	/* process_totals */
#define VCPUPERF_ATTACH_ALL_THREADS	(1U << 1)	/* all_threads */
#define VCPUPERF_ATTACH_NO_SCHED	(1U << 2)	/* no_sched: samples
							 * without struct
							 * vcpuperf_sched
							 */
#define VCPUPERF_ATTACH_WHO		(1U << 3)	/* who: samples end
							 * with struct
							 * vcpuperf_who
							 */
#define VCPUPERF_ATTACH_ALL		0xfU

/* VM identity from a QEMU command line (-name guest=NAME, -uuid UUID). */
#define VCPUPERF_VM_NAME_LEN	128	/* NUL included; longer is cut */
#define VCPUPERF_UUID_LEN	40	/* 36 characters and a NUL, padded */

/* Event modifier flags (vcpuperf_event_desc.mods). */
#define VCPUPERF_MOD_USER	(1U << 0)	/* u: exclude_kernel, exclude_hv */
#define VCPUPERF_MOD_KERNEL	(1U << 1)	/* k: exclude_user, exclude_hv */
#define VCPUPERF_MOD_GUEST	(1U << 2)	/* G: exclude_host */
#define VCPUPERF_MOD_HOST	(1U << 3)	/* H: exclude_guest */
#define VCPUPERF_MOD_PINNED	(1U << 4)	/* D: pinned */
#define VCPUPERF_MOD_ALL	0x1fU
/*
 * vcpuperf_event_desc.mods also carries, shifted by this, the modifiers
 * given as command keywords (user_only, kernel_only, guest_only,
 * host_only) that the kernel would ignore for this event's class: they
 * are not applied, and the started record says so.  The same modifier
 * given as an event suffix (task-clock:u) is refused with -EINVAL.
 */
#define VCPUPERF_MOD_NOT_APPLIED_SHIFT	8

/*
 * vcpuperf_event_desc.config of a named KVM event (kvm-exits ...) whose
 * tracepoint this kernel does not have (kvm not loaded, or another
 * architecture's): the event keeps its place in every sample, counts
 * nothing, and each of its counters is reported unavailable with
 * VCPUPERF_CAUSE_NO_TRACEPOINT.  A tracepoint named SUBSYS:NAME that does
 * not exist is refused instead (-ENOENT).
 */
#define VCPUPERF_CONFIG_ABSENT		(~0ULL)

/* Why a counter is not counting (vcpuperf_unavailable.cause). */
enum vcpuperf_cause {
	VCPUPERF_CAUSE_UNKNOWN = 0,
	VCPUPERF_CAUSE_NO_PMU,		/* ENOENT: no hardware PMU counts here */
	VCPUPERF_CAUSE_NOT_SUPPORTED,	/* EOPNOTSUPP: PMU lacks event/modifier */
	VCPUPERF_CAUSE_MEDIATED_PMU,	/* EOPNOTSUPP: guest vPMU owns the PMU */
	VCPUPERF_CAUSE_ACCESS,		/* EACCES/EPERM: LSM or capability */
	VCPUPERF_CAUSE_INVALID,		/* EINVAL: attr rejected by the PMU */
	VCPUPERF_CAUSE_GONE,		/* ESRCH: thread exited */
	VCPUPERF_CAUSE_BUSY,		/* EBUSY: counter in exclusive use */
	VCPUPERF_CAUSE_NO_MEMORY,	/* ENOMEM */
	VCPUPERF_CAUSE_NEVER_COUNTED,	/* no_counters: ran, never on PMU */
	VCPUPERF_CAUSE_PINNED_NO_SLOT,	/* pinned counter found no PMU slot */
	VCPUPERF_CAUSE_PMU_LACKS_EVENT,	/* ENOENT: the PMU has no such event */
	VCPUPERF_CAUSE_STARVED,		/* no_counters: more events than PMU
					 * counters, the thread never on long
					 * enough for perf to rotate them in
					 */
	VCPUPERF_CAUSE_NO_TRACEPOINT,	/* ENOENT: a named KVM event whose
					 * tracepoint this kernel lacks, or
					 * a scheduler tracepoint the who
					 * figures need
					 */
	VCPUPERF_CAUSE_MAX,
};

/* Why counters ran for less than they were enabled (multiplexed.cause). */
enum vcpuperf_mux_cause {
	VCPUPERF_MUX_UNKNOWN = 0,	/* the PMU's counters are not known */
	VCPUPERF_MUX_MORE_EVENTS,	/* the thread's hardware events (of all
					 * collections) outnumber the counters
					 */
	VCPUPERF_MUX_PMU_SHARED,	/* they do not: others hold counters
					 * (perf, the NMI watchdog, a guest
					 * vPMU, pinned events)
					 */
	VCPUPERF_MUX_PROCESS_TOTALS,	/* they do with the process counters
					 * of per-VM totals the thread
					 * inherited (load.inherited), not
					 * without
					 */
};

/* Why a target stopped being sampled (vcpuperf_detached.reason). */
enum vcpuperf_detach_reason {
	VCPUPERF_DETACH_COMMAND = 1,	/* detach command */
	VCPUPERF_DETACH_EXITED,		/* thread exited */
	VCPUPERF_DETACH_STOP,		/* stop command */
	VCPUPERF_DETACH_UNLOAD,		/* module unloaded (not produced since
					 * 0.4: rmmod is refused while a file
					 * is open)
					 */
	VCPUPERF_DETACH_CLOSE,		/* collection's file closed */
	VCPUPERF_DETACH_EXEC,		/* thread exec'd: took another tid, or
					 * perf ended its counters (new
					 * credentials); attached again as a
					 * new target if the authority allows
					 */
};

/* vcpuperf_unavailable.flags */
#define VCPUPERF_UNAVAILABLE_PROCESS	(1U << 0)	/* a process counter */

/* vcpuperf_sample.flags */
#define VCPUPERF_SAMPLE_FIRST	(1U << 0)	/* first sample of this target */
#define VCPUPERF_SAMPLE_FINAL	(1U << 1)	/* last sample of this target */
#define VCPUPERF_SAMPLE_SCHED	(1U << 2)	/* a struct vcpuperf_sched
						 * follows the counts
						 */
#define VCPUPERF_SAMPLE_SCHED_STALE (1U << 3)	/* process sample: out of
						 * memory, its figures are
						 * the last ones again
						 */
#define VCPUPERF_SAMPLE_WHO	(1U << 4)	/* a struct vcpuperf_who
						 * ends the sample
						 */

/* What struct vcpuperf_sched holds (its @valid). */
#define VCPUPERF_SCHED_RUN	(1U << 0)	/* run_ns, voluntary,
						 * involuntary, migrations, cpu
						 */
#define VCPUPERF_SCHED_INFO	(1U << 1)	/* wait_ns, timeslices
						 * (CONFIG_SCHED_INFO)
						 */

/**
 * struct vcpuperf_rec - common header of every record
 * @type:	enum vcpuperf_rec_type
 * @size:	total size of the record in bytes, header included
 * @tid:	thread the record is about, 0 for session-wide records
 * @seq:	global sequence number (0 only for the stream header)
 * @t_mono_ns:	CLOCK_MONOTONIC when the record was produced (for samples:
 *		when the first counter of the pass was read)
 * @t_wall_ns:	CLOCK_REALTIME at the same moment
 */
struct vcpuperf_rec {
	__u16 type;
	__u16 size;
	__u32 tid;
	__u64 seq;
	__u64 t_mono_ns;
	__u64 t_wall_ns;
};

/**
 * struct vcpuperf_header - first record of every open of the stream
 * @rec:	common header, seq 0
 * @magic:	VCPUPERF_MAGIC
 * @abi_version: VCPUPERF_ABI_VERSION
 * @rec_size:	sizeof(struct vcpuperf_rec)
 * @max_events:	VCPUPERF_MAX_EVENTS of the module
 * @ring_bytes:	size of the ring
 * @collection:	id of the collection (0: the module's default one), as
 *		listed in the status file
 * @next_seq:	sequence number of the first record this open will read
 * @interval_ns: sampling interval in force
 */
struct vcpuperf_header {
	struct vcpuperf_rec rec;
	__u32 magic;
	__u32 abi_version;
	__u32 rec_size;
	__u32 max_events;
	__u32 ring_bytes;
	__u32 collection;
	__u64 next_seq;
	__u64 interval_ns;
};

/**
 * struct vcpuperf_target_id - who a per-thread record is about
 * @pid:	thread group id of the thread
 * @vcpu:	vCPU index from the thread name, VCPUPERF_NO_VCPU otherwise
 */
struct vcpuperf_target_id {
	__u32 pid;
	__s32 vcpu;
};

/**
 * struct vcpuperf_count - one counter as perf_event_read_value() saw it
 * @value:	cumulative count since the counter was created
 * @enabled:	cumulative time_enabled (ns)
 * @running:	cumulative time_running (ns)
 */
struct vcpuperf_count {
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/**
 * struct vcpuperf_sample - one read pass over one thread's counters
 * @rec:	common header; t_mono_ns/t_wall_ns taken at the first read
 * @id:		thread identity
 * @nr_events:	entries in @counts (same order as the started record)
 * @counting_mask: bit i set when counter i exists and was read
 * @exited_mask: bit i set when counter i saw its thread exit
 * @flags:	VCPUPERF_SAMPLE_*
 * @interval_ns: nominal sampling interval of this pass
 * @read_window_ns: ns from the first to the last read of this pass; 0
 *		when no counter was read (the thread has not run since its
 *		last sample: the values are that sample's)
 * @grid_ns:	CLOCK_MONOTONIC of the grid point this pass is for (the
 *		read is @rec.t_mono_ns - @grid_ns late); 0 for a sample off
 *		the grid (the final sample of a detach, stop or unload)
 * @counts:	cumulative values; zero where the bit in @counting_mask is 0
 */
struct vcpuperf_sample {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 nr_events;
	__u32 counting_mask;
	__u32 exited_mask;
	__u32 flags;
	__u64 interval_ns;
	__u64 read_window_ns;
	__u64 grid_ns;
	struct vcpuperf_count counts[];
};

/**
 * struct vcpuperf_sched - what the scheduler keeps of a thread
 * @run_ns:	CPU time (se.sum_exec_runtime), as of the thread's last
 *		scheduler update (a switch or a tick)
 * @wait_ns:	time runnable but waiting for a CPU (sched_info.run_delay),
 *		a wait in progress included up to the read
 * @timeslices:	times the thread was given a CPU (sched_info.pcount)
 * @voluntary:	switches the thread asked for (nvcsw)
 * @involuntary: switches it was made to take (nivcsw)
 * @migrations:	moves to another CPU (se.nr_migrations)
 * @cpu:	the CPU the thread last ran on
 * @valid:	VCPUPERF_SCHED_*: the fields the kernel keeps; the others
 *		are zero
 *
 * Cumulative since the thread's attach, read at the sample's
 * @rec.t_mono_ns; follows @counts of a sample whose flags have
 * VCPUPERF_SAMPLE_SCHED (every sample of a target attached without
 * no_sched).  In a process sample: summed over the process's threads
 * since its attach, @cpu zero (vcpuperf(4) says what a thread that has
 * exited leaves in each field).
 */
struct vcpuperf_sched {
	__u64 run_ns;
	__u64 wait_ns;
	__u64 timeslices;
	__u64 voluntary;
	__u64 involuntary;
	__u64 migrations;
	__u32 cpu;
	__u32 valid;
};

/**
 * enum vcpuperf_who_kind - what ran on a thread's CPU while it waited
 * @VCPUPERF_WHO_SAME_VM:	another thread of its own process (a vCPU, an
 *				iothread, a vhost worker of the same VM)
 * @VCPUPERF_WHO_OTHER_VM:	a vCPU thread of another process: a thread
 *				named "CPU <n>/KVM" or "CPU <n>/TCG"
 * @VCPUPERF_WHO_KERNEL:	a kernel thread
 * @VCPUPERF_WHO_HOST:		any other thread
 * @VCPUPERF_WHO_IDLE:		nothing: the CPU was idle, the wait is the
 *				wake-up's own latency
 * @VCPUPERF_WHO_NR:		number of kinds
 */
enum vcpuperf_who_kind {
	VCPUPERF_WHO_SAME_VM = 0,
	VCPUPERF_WHO_OTHER_VM,
	VCPUPERF_WHO_KERNEL,
	VCPUPERF_WHO_HOST,
	VCPUPERF_WHO_IDLE,
	VCPUPERF_WHO_NR,
};

/* Other VMs a struct vcpuperf_who names, the first ones met. */
#define VCPUPERF_WHO_VMS	4

/**
 * struct vcpuperf_who_vm - the wait one other VM's vCPUs caused
 * @pid:	that VM's process id (0: slot unused)
 * @reserved:	zero
 * @wait_ns:	time the thread waited while one of its vCPUs ran
 */
struct vcpuperf_who_vm {
	__u32 pid;
	__u32 reserved;
	__u64 wait_ns;
};

/**
 * struct vcpuperf_who - who took a thread's CPU while it waited for one
 * @wait_ns:	time runnable but waiting for a CPU, by enum
 *		vcpuperf_who_kind of what ran on that CPU meanwhile
 * @preempted:	involuntary switches of the thread, by what ran next
 * @vms:	the first VCPUPERF_WHO_VMS other VMs in
 *		@wait_ns[VCPUPERF_WHO_OTHER_VM], each with its part of it;
 *		the part of the others is only in that sum
 * @valid:	1 when the figures are kept; 0 when not, @cause says why
 *		(the others are zero then)
 * @cause:	enum vcpuperf_cause when @valid is 0
 *
 * Cumulative since the thread's attach, read at the sample's
 * @rec.t_mono_ns; ends a sample whose flags have VCPUPERF_SAMPLE_WHO
 * (every sample of a thread attached with the attach word who), after
 * its struct vcpuperf_sched if any.  Kept by probes on the scheduler's
 * sched_switch, sched_wakeup and sched_migrate_task tracepoints while any
 * thread is attached who: a wait begins when the thread is woken or
 * preempted and ends when it is switched in, and each part of it is put
 * to what was running on the CPU it waited for.  vcpuperf(4) says how it
 * relates to sched_info.run_delay.
 */
struct vcpuperf_who {
	__u64 wait_ns[VCPUPERF_WHO_NR];
	__u64 preempted[VCPUPERF_WHO_NR];
	struct vcpuperf_who_vm vms[VCPUPERF_WHO_VMS];
	__u32 valid;
	__u32 cause;
};

/**
 * struct vcpuperf_event_desc - an event as it was configured
 * @name:	event name as given (perf spelling), NUL terminated
 * @type:	perf_event_attr.type
 * @mods:	VCPUPERF_MOD_* actually applied to the attr; above
 *		VCPUPERF_MOD_NOT_APPLIED_SHIFT the keyword modifiers left out
 * @config:	perf_event_attr.config
 */
struct vcpuperf_event_desc {
	char name[VCPUPERF_NAME_LEN];
	__u32 type;
	__u32 mods;
	__u64 config;
};

/**
 * struct vcpuperf_started - a thread is attached
 * @rec:	common header
 * @id:		thread identity
 * @kind:	enum vcpuperf_target_kind it was attached by
 * @nr_events:	entries in @events
 * @interval_ns: sampling interval in force
 * @comm:	thread name at attach time
 * @events:	the configured events, in sample order
 */
struct vcpuperf_started {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 kind;
	__u32 nr_events;
	__u64 interval_ns;
	char comm[VCPUPERF_COMM_LEN];
	struct vcpuperf_event_desc events[];
};

/**
 * struct vcpuperf_unavailable - a counter could not be created or stopped
 *	counting for good
 * @rec:	common header
 * @id:		thread identity
 * @event:	index of the event in the started record
 * @error:	positive errno returned by perf_event_create_kernel_counter(),
 *		or 0 for a counter that exists but that perf put in error
 *		state (a pinned counter that found no free PMU counter): it
 *		counts no more, and its bit is clear in later samples'
 *		counting_mask
 * @cause:	enum vcpuperf_cause, the likely reason
 * @flags:	VCPUPERF_UNAVAILABLE_PROCESS: the thread's process counter
 *		(per-VM totals, process_totals) of the event, not its own
 * @name:	event name
 */
struct vcpuperf_unavailable {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 event;
	__s32 error;
	__u32 cause;
	__u32 flags;
	char name[VCPUPERF_NAME_LEN];
};

/**
 * struct vcpuperf_first_row - the first sample of a thread was queued
 * @rec:	common header
 * @id:		thread identity
 * @counters_populated: 1 when at least one watched counter had counted
 * @populated_mask: watched counters that had time_running > 0 (the
 *		watched counters are the PMU counters when the thread has
 *		any, else all: software events always count while a thread
 *		runs and would hide a PMU that never does)
 * @counting_mask: watched counters that exist
 * @nr_events:	events configured
 */
struct vcpuperf_first_row {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 counters_populated;
	__u32 populated_mask;
	__u32 counting_mask;
	__u32 nr_events;
};

/**
 * struct vcpuperf_pmu_load - what a thread asks of its PMU, as the module
 *	sees it
 * @pmu_events:	hardware counters on the thread: one per event, whatever
 *		the collections that count it (they share it), and the
 *		process counters of per-VM totals on it (@inherited)
 * @pmu_counters: counters the PMU has, general and fixed; 0 when unknown
 * @users:	collections using the thread's most shared counter
 * @rotate_ms:	the PMU's rotation interval (perf_event_mux_interval_ms):
 *		perf rotates multiplexed counters only at this timer, and
 *		only while the thread is on the CPU; 0 when unknown
 * @inherited:	of @pmu_events, the process counters of per-VM totals
 *		(process_totals) the thread holds: a thread created after
 *		such an attach (a hot-plugged vCPU) inherits one per event
 *		besides its own
 * @reserved:	zero
 */
struct vcpuperf_pmu_load {
	__u32 pmu_events;
	__u32 pmu_counters;
	__u32 users;
	__u32 rotate_ms;
	__u32 inherited;
	__u32 reserved;
};

/**
 * struct vcpuperf_multiplexed - first interval with running < enabled
 * @rec:	common header
 * @id:		thread identity
 * @mask:	counters that ran for less than they were enabled
 * @min_ratio_ppm: smallest running/enabled ratio of the interval, ppm
 * @cause:	enum vcpuperf_mux_cause
 * @reserved:	zero
 * @load:	the thread's demand on the PMU then
 */
struct vcpuperf_multiplexed {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 mask;
	__u32 min_ratio_ppm;
	__u32 cause;
	__u32 reserved;
	struct vcpuperf_pmu_load load;
};

/**
 * struct vcpuperf_mux_expected - a thread has more hardware events than
 *	its PMU has counters, when attached (before its first sample)
 * @rec:	common header
 * @id:		thread identity
 * @load:	its demand on the PMU
 */
struct vcpuperf_mux_expected {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	struct vcpuperf_pmu_load load;
};

/**
 * struct vcpuperf_no_counters - a thread ran but nothing ever counted
 * @rec:	common header
 * @id:		thread identity
 * @intervals_seen: intervals observed so far
 * @intervals_ran: intervals in which the thread ran
 * @cause:	VCPUPERF_CAUSE_STARVED when its hardware events outnumber
 *		the PMU's counters (it never ran long enough for perf to
 *		rotate its counters in), else VCPUPERF_CAUSE_NEVER_COUNTED
 *		(others hold the PMU)
 * @counting_mask: watched counters that exist (and never counted; see
 *		struct vcpuperf_first_row)
 * @ran_ns:	mean time the thread ran per interval it ran in
 * @load:	its demand on the PMU
 */
struct vcpuperf_no_counters {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u64 intervals_seen;
	__u64 intervals_ran;
	__u32 cause;
	__u32 counting_mask;
	__u64 ran_ns;
	struct vcpuperf_pmu_load load;
};

/**
 * struct vcpuperf_vcpu_added - a vCPU thread appeared after attach
 * @rec:	common header
 * @id:		thread identity
 * @comm:	thread name
 */
struct vcpuperf_vcpu_added {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	char comm[VCPUPERF_COMM_LEN];
};

/**
 * struct vcpuperf_task_exited - a thread exited; its final counts
 * @rec:	common header
 * @id:		thread identity
 * @nr_events:	entries in @counts
 * @exited_mask: counters that saw the exit (PERF_EVENT_STATE_EXIT)
 * @counts:	final cumulative values
 */
struct vcpuperf_task_exited {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 nr_events;
	__u32 exited_mask;
	struct vcpuperf_count counts[];
};

/**
 * struct vcpuperf_dropped - records lost because the ring was full
 * @rec:	common header
 * @count:	records lost, equal to the sequence numbers skipped
 * @first_seq:	sequence number of the first lost record
 * @total:	records lost since the module was loaded
 */
struct vcpuperf_dropped {
	struct vcpuperf_rec rec;
	__u64 count;
	__u64 first_seq;
	__u64 total;
};

/**
 * struct vcpuperf_finished - end of a thread's sampling, or of the session
 * @rec:	common header; tid 0 marks the end of the session
 * @id:		thread identity (zero for the session record)
 * @intervals_seen: samples taken (session: of all threads)
 * @intervals_with_values: samples in which a counter counted
 * @targets:	threads sampled (1 for a thread record)
 * @drops:	records dropped (session record only)
 */
struct vcpuperf_finished {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u64 intervals_seen;
	__u64 intervals_with_values;
	__u64 targets;
	__u64 drops;
};

/**
 * struct vcpuperf_detached - a thread is no longer sampled
 * @rec:	common header
 * @id:		thread identity
 * @reason:	enum vcpuperf_detach_reason
 * @reserved:	zero
 */
struct vcpuperf_detached {
	struct vcpuperf_rec rec;
	struct vcpuperf_target_id id;
	__u32 reason;
	__u32 reserved;
};

/**
 * struct vcpuperf_process - a process is attached (pid= or qemu=)
 * @rec:	common header, tid 0
 * @pid:	the process, as the attaching writer numbers it
 * @kind:	VCPUPERF_TARGET_PID or VCPUPERF_TARGET_QEMU
 * @flags:	VCPUPERF_ATTACH_* given
 * @nr_events:	entries in @events
 * @threads:	threads counted for the process at attach: those given
 *		process counters and the vCPU threads, which count with
 *		their own counters (0 without process_totals)
 * @reserved:	zero
 * @interval_ns: sampling interval in force
 * @comm:	name of the process's leader thread
 * @vm:		for qemu=: the guest name of QEMU's -name option
 *		(guest=NAME or its first value), "" when absent
 * @uuid:	for qemu=: the value of QEMU's -uuid option, "" when absent
 * @events:	the configured events, in process sample order
 *
 * Queued before the started records of the process's threads; the VM
 * identity is read once, from the process's command line, at attach.
 */
struct vcpuperf_process {
	struct vcpuperf_rec rec;
	__u32 pid;
	__u32 kind;
	__u32 flags;
	__u32 nr_events;
	__u32 threads;
	__u32 reserved;
	__u64 interval_ns;
	char comm[VCPUPERF_COMM_LEN];
	char vm[VCPUPERF_VM_NAME_LEN];
	char uuid[VCPUPERF_UUID_LEN];
	struct vcpuperf_event_desc events[];
};

/**
 * struct vcpuperf_process_sample - one read of a process's totals
 * @rec:	common header, tid 0; time of the first read
 * @pid:	the process, as in its process record
 * @nr_events:	entries in @counts
 * @counting_mask: bit i set when event i is counted on some thread
 * @flags:	VCPUPERF_SAMPLE_FINAL on the last one; VCPUPERF_SAMPLE_SCHED
 *		when a struct vcpuperf_sched follows @counts: the figures
 *		of every thread of the process summed (vcpuperf(4)); with
 *		VCPUPERF_SAMPLE_SCHED_STALE they could not be summed (no
 *		memory for the process's thread list) and are the last
 *		ones again: unknown for this interval
 * @threads:	threads counted for the process: those holding the
 *		process counters (present at attach; the threads created
 *		since count through them) and the vCPU threads counting
 *		with their own counters (one counter per thread and event:
 *		a vCPU thread gets no second one)
 * @exited:	of those, threads that have exited (or, for a vCPU
 *		thread, were detached)
 * @interval_ns: nominal sampling interval of this pass
 * @read_window_ns: ns from the first to the last read
 * @counts:	per event, cumulative value, enabled and running summed
 *		over every thread of the process since attach (live and
 *		exited); zero where the bit in @counting_mask is 0
 *
 * Queued once per sampling pass per process attached with
 * process_totals, after the samples of its threads, and a final one
 * (VCPUPERF_SAMPLE_FINAL) when its sampling ends; for a process attached
 * without process_totals only that final one, with @counting_mask 0.
 */
struct vcpuperf_process_sample {
	struct vcpuperf_rec rec;
	__u32 pid;
	__u32 nr_events;
	__u32 counting_mask;
	__u32 flags;
	__u32 threads;
	__u32 exited;
	__u64 interval_ns;
	__u64 read_window_ns;
	struct vcpuperf_count counts[];
};

/**
 * struct vcpuperf_error - the reason of a collection's last rejected command
 * @error:	its errno, negative (-EINVAL ...), 0 when no command was
 *		rejected yet
 * @reserved:	zero
 * @reason:	text, NUL terminated ("" when @error is 0)
 */
struct vcpuperf_error {
	__s32 error;
	__u32 reserved;
	char reason[VCPUPERF_ERR_LEN];
};

/* ioctl()s of /dev/vcpuperf (no number registered: out of tree). */
#define VCPUPERF_IOC_MAGIC	0xB6
/* The reason the last command written to this file's collection failed. */
#define VCPUPERF_IOC_LAST_ERROR	_IOR(VCPUPERF_IOC_MAGIC, 1, struct vcpuperf_error)

#endif /* _UAPI_LINUX_VCPUPERF_H */
