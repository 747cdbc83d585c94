// SPDX-License-Identifier: GPL-2.0
/*
 * Names of records, errors, causes and reasons, shared by vcpuperf.ko (for
 * its status file and log) and vcpuperf-cat (for JSONL).
 */
#include "vcpuperf_lib.h"

/* |@err| for any int, INT_MIN included (where -err would overflow). */
static unsigned int vp_errno_abs(int err)
{
	return err < 0 ? 0U - (unsigned int)err : (unsigned int)err;
}

/**
 * vp_errno_name() - symbolic name of a positive or negative errno
 * @err:	the errno
 *
 * Return: "ENOENT" and the like; "E?" for one perf does not return.
 */
const char *vp_errno_name(int err)
{
	/* not -err: the tool passes record fields, and -INT_MIN overflows */
	switch (vp_errno_abs(err)) {
	case 0:
		return "OK";
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case EINTR:
		return "EINTR";
	case E2BIG:
		return "E2BIG";
	case ENOMEM:
		return "ENOMEM";
	case EACCES:
		return "EACCES";
	case EFAULT:
		return "EFAULT";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case ENODEV:
		return "ENODEV";
	case EINVAL:
		return "EINVAL";
	case EMFILE:
		return "EMFILE";
	case ENOSPC:
		return "ENOSPC";
	case ERANGE:
		return "ERANGE";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case ENOTSUPP:
		return "ENOTSUPP";
	case EOVERFLOW:
		return "EOVERFLOW";
	default:
		return "E?";
	}
}

/**
 * vp_cause_from_errno() - likely reason a counter could not be created
 * @err:	errno from perf_event_create_kernel_counter(), either sign
 * @type:	perf_event_attr.type of the counter
 * @mods:	VCPUPERF_MOD_* applied to it
 *
 * Return: the enum vcpuperf_cause that best explains @err.
 */
enum vcpuperf_cause vp_cause_from_errno(int err, __u32 type, __u32 mods)
{
	switch (vp_errno_abs(err)) {
	case ENOENT:
		if (type == PERF_TYPE_TRACEPOINT)
			return VCPUPERF_CAUSE_NO_TRACEPOINT;
		return VCPUPERF_CAUSE_NO_PMU;
	case EOPNOTSUPP:
	case ENOTSUPP:
		/*
		 * With a mediated vPMU, host events that would count guest
		 * time are refused while a guest owns the PMU.
		 */
		if (vp_is_pmu_event(type) && !(mods & VCPUPERF_MOD_HOST))
			return VCPUPERF_CAUSE_MEDIATED_PMU;
		return VCPUPERF_CAUSE_NOT_SUPPORTED;
	case EACCES:
	case EPERM:
		return VCPUPERF_CAUSE_ACCESS;
	case EINVAL:
		return VCPUPERF_CAUSE_INVALID;
	case ESRCH:
		return VCPUPERF_CAUSE_GONE;
	case EBUSY:
		return VCPUPERF_CAUSE_BUSY;
	case ENOMEM:
		return VCPUPERF_CAUSE_NO_MEMORY;
	default:
		return VCPUPERF_CAUSE_UNKNOWN;
	}
}

static const char *const vp_cause_names[VCPUPERF_CAUSE_MAX] = {
	[VCPUPERF_CAUSE_UNKNOWN] = "unknown",
	[VCPUPERF_CAUSE_NO_PMU] = "no_pmu_event",
	[VCPUPERF_CAUSE_NOT_SUPPORTED] = "not_supported",
	[VCPUPERF_CAUSE_MEDIATED_PMU] = "not_supported_or_mediated_pmu",
	[VCPUPERF_CAUSE_ACCESS] = "access_denied",
	[VCPUPERF_CAUSE_INVALID] = "invalid_attr",
	[VCPUPERF_CAUSE_GONE] = "thread_gone",
	[VCPUPERF_CAUSE_BUSY] = "pmu_busy",
	[VCPUPERF_CAUSE_NO_MEMORY] = "no_memory",
	[VCPUPERF_CAUSE_NEVER_COUNTED] = "never_counted",
	[VCPUPERF_CAUSE_PINNED_NO_SLOT] = "pinned_no_slot",
	[VCPUPERF_CAUSE_PMU_LACKS_EVENT] = "pmu_lacks_event",
	[VCPUPERF_CAUSE_STARVED] = "starved",
	[VCPUPERF_CAUSE_NO_TRACEPOINT] = "no_tracepoint",
};

static const char *const vp_cause_texts[VCPUPERF_CAUSE_MAX] = {
	[VCPUPERF_CAUSE_UNKNOWN] = "unexpected error from perf",
	[VCPUPERF_CAUSE_NO_PMU] =
		"no hardware PMU counts on this machine (a VM without a virtual PMU, or no PMU driver): not even cycles",
	[VCPUPERF_CAUSE_NOT_SUPPORTED] =
		"the PMU does not support this event or modifier",
	[VCPUPERF_CAUSE_MEDIATED_PMU] =
		"the PMU does not support this event or modifier, or (Linux 7.x) a VM with KVM's mediated vPMU is running, which refuses events that count guest mode: count host mode only (the :H suffix or host_only), or stop that VM or load kvm with enable_mediated_pmu=0",
	[VCPUPERF_CAUSE_ACCESS] =
		"refused by a security module or missing capability",
	[VCPUPERF_CAUSE_INVALID] =
		"the PMU rejected the attribute (modifier or config not valid here)",
	[VCPUPERF_CAUSE_GONE] = "the thread exited before its counter existed",
	[VCPUPERF_CAUSE_BUSY] = "the counter is in exclusive use by another user",
	[VCPUPERF_CAUSE_NO_MEMORY] = "out of memory",
	[VCPUPERF_CAUSE_NEVER_COUNTED] =
		"thread ran but no counter got onto the PMU, while its hardware events do not outnumber the PMU's counters (or the PMU's counters are not known): others hold them (another perf user, pinned events, a guest vPMU, the NMI watchdog)",
	[VCPUPERF_CAUSE_PINNED_NO_SLOT] =
		"pinned counter found no free PMU counter (others pinned first, the NMI watchdog or a guest vPMU): perf put it in error state and it counts no more; detach and attach again when the PMU is free, or attach it unpinned",
	[VCPUPERF_CAUSE_PMU_LACKS_EVENT] =
		"the PMU does not implement this event (its other events count: cycles does)",
	[VCPUPERF_CAUSE_STARVED] =
		"the thread's hardware events (of every collection) outnumber the PMU's counters and it never ran long enough for perf to rotate these in: perf rotates only at its timer tick (perf_event_mux_interval_ms) while the thread is on the CPU, and the counters created first hold the PMU whenever it is; count fewer hardware events on it, or pin these",
	[VCPUPERF_CAUSE_NO_TRACEPOINT] =
		"this kernel has no such tracepoint: kvm is not loaded (load it, or kvm_intel/kvm_amd, before the recording), or this architecture traces no such event",
};

/**
 * vp_cause_name() - short identifier of a cause
 * @cause:	enum vcpuperf_cause
 *
 * Return: a snake_case name.
 */
const char *vp_cause_name(enum vcpuperf_cause cause)
{
	if ((unsigned int)cause >= VCPUPERF_CAUSE_MAX)
		return "unknown";
	return vp_cause_names[cause];
}

/**
 * vp_cause_text() - human-readable explanation of a cause
 * @cause:	enum vcpuperf_cause
 *
 * Return: one sentence.
 */
const char *vp_cause_text(enum vcpuperf_cause cause)
{
	if ((unsigned int)cause >= VCPUPERF_CAUSE_MAX)
		return vp_cause_texts[VCPUPERF_CAUSE_UNKNOWN];
	return vp_cause_texts[cause];
}

static const char *const vp_rec_names[VCPUPERF_REC_MAX] = {
	[VCPUPERF_REC_HEADER] = "header",
	[VCPUPERF_REC_SAMPLE] = "sample",
	[VCPUPERF_REC_STARTED] = "started",
	[VCPUPERF_REC_UNAVAILABLE] = "unavailable",
	[VCPUPERF_REC_FIRST_ROW] = "first_row",
	[VCPUPERF_REC_MULTIPLEXED] = "multiplexed",
	[VCPUPERF_REC_NO_COUNTERS] = "no_counters",
	[VCPUPERF_REC_VCPU_ADDED] = "vcpu_added",
	[VCPUPERF_REC_TASK_EXITED] = "task_exited",
	[VCPUPERF_REC_DROPPED] = "dropped",
	[VCPUPERF_REC_FINISHED] = "finished",
	[VCPUPERF_REC_DETACHED] = "detached",
	[VCPUPERF_REC_PROCESS] = "process",
	[VCPUPERF_REC_PROCESS_SAMPLE] = "process_sample",
	[VCPUPERF_REC_MUX_EXPECTED] = "multiplexed_expected",
};

/**
 * vp_rec_name() - name of a record type
 * @type:	enum vcpuperf_rec_type
 *
 * Return: the lifecycle name ("started", ...), or NULL if unknown.
 */
const char *vp_rec_name(__u16 type)
{
	if (type >= VCPUPERF_REC_MAX)
		return NULL;
	return vp_rec_names[type];
}

/**
 * vp_mux_cause_name() - name of a multiplexing cause
 * @cause:	enum vcpuperf_mux_cause
 *
 * Return: "more_events_than_counters", "pmu_shared", "process_totals" or
 * "unknown".
 */
const char *vp_mux_cause_name(__u32 cause)
{
	switch (cause) {
	case VCPUPERF_MUX_MORE_EVENTS:
		return "more_events_than_counters";
	case VCPUPERF_MUX_PMU_SHARED:
		return "pmu_shared";
	case VCPUPERF_MUX_PROCESS_TOTALS:
		return "process_totals";
	default:
		return "unknown";
	}
}

/**
 * vp_detach_name() - name of a detach reason
 * @reason:	enum vcpuperf_detach_reason
 *
 * Return: "command", "exited", "stop", "unload", "close", "exec" or
 * "unknown".
 */
const char *vp_detach_name(__u32 reason)
{
	switch (reason) {
	case VCPUPERF_DETACH_COMMAND:
		return "command";
	case VCPUPERF_DETACH_EXITED:
		return "exited";
	case VCPUPERF_DETACH_STOP:
		return "stop";
	case VCPUPERF_DETACH_UNLOAD:
		return "unload";
	case VCPUPERF_DETACH_CLOSE:
		return "close";
	case VCPUPERF_DETACH_EXEC:
		return "exec";
	default:
		return "unknown";
	}
}

/**
 * vp_kind_name() - name of a target kind
 * @kind:	enum vcpuperf_target_kind
 *
 * Return: "tid", "pid", "qemu" or "unknown".
 */
const char *vp_kind_name(__u32 kind)
{
	switch (kind) {
	case VCPUPERF_TARGET_TID:
		return "tid";
	case VCPUPERF_TARGET_PID:
		return "pid";
	case VCPUPERF_TARGET_QEMU:
		return "qemu";
	default:
		return "unknown";
	}
}

/**
 * vp_read_mode_name() - the word of a read mode in the read command
 * @mode:	enum vcpuperf_read_mode
 *
 * Return: "auto", "direct", "kick", "lazy" or "unknown".
 */
const char *vp_read_mode_name(__u32 mode)
{
	switch (mode) {
	case VCPUPERF_READ_AUTO:
		return "auto";
	case VCPUPERF_READ_DIRECT:
		return "direct";
	case VCPUPERF_READ_KICK:
		return "kick";
	case VCPUPERF_READ_LAZY:
		return "lazy";
	default:
		return "unknown";
	}
}

/**
 * vp_who_kind_name() - name of what took a thread's CPU
 * @kind:	enum vcpuperf_who_kind
 *
 * As the row keys sched_wait_NAME_ns and sched_preempted_NAME have it.
 *
 * Return: "same_vm", "other_vm", "kernel", "host", "idle" or "unknown".
 */
const char *vp_who_kind_name(__u32 kind)
{
	switch (kind) {
	case VCPUPERF_WHO_SAME_VM:
		return "same_vm";
	case VCPUPERF_WHO_OTHER_VM:
		return "other_vm";
	case VCPUPERF_WHO_KERNEL:
		return "kernel";
	case VCPUPERF_WHO_HOST:
		return "host";
	case VCPUPERF_WHO_IDLE:
		return "idle";
	default:
		return "unknown";
	}
}
