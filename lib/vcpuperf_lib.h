/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logic shared by vcpuperf.ko and vcpuperf-cat: the control-command
 * parser, event-name resolution, perf_event_attr construction, counter
 * deltas and multiplex scaling, and the names of errors and causes.
 * Written once, compiled into both (and into the fuzz harnesses).
 */
#ifndef _VCPUPERF_LIB_H
#define _VCPUPERF_LIB_H

#include "vp_compat.h"
#include "../include/uapi/vcpuperf.h"

#define VP_ERR_LEN	VCPUPERF_ERR_LEN	/* room for a parse error message */

/* Nanoseconds per unit, for the module and the tool alike. */
#define VP_NS_PER_US	1000ULL
#define VP_NS_PER_MS	1000000ULL
#define VP_NS_PER_S	1000000000ULL
#define VP_TP_LEN	64	/* tracepoint subsystem or event name */
#define VP_DURATION_LEN	32	/* a duration printed by vp_format_duration() */

enum vp_op {
	VP_OP_ATTACH = 1,
	VP_OP_DETACH,
	VP_OP_DETACH_ALL,
	VP_OP_INTERVAL,
	VP_OP_STOP,
	VP_OP_RING,
	VP_OP_READ,
};

#define VP_KB_PER_MB	1024U

/* The modifier letters u k G H D: one per VCPUPERF_MOD_* bit. */
#define VP_NR_MODS	5

/**
 * struct vp_event_spec - one parsed event
 * @desc:	name, type, config and modifiers (type/config of a tracepoint
 *		are filled in by the module, which resolves it)
 * @tracepoint:	true when the event is SUBSYS:NAME or a named KVM event
 * @optional:	a named KVM event: a tracepoint this kernel lacks is no
 *		error (see VCPUPERF_CONFIG_ABSENT)
 * @tp_system:	tracepoint subsystem
 * @tp_event:	tracepoint name
 */
struct vp_event_spec {
	struct vcpuperf_event_desc desc;
	bool tracepoint;
	bool optional;
	char tp_system[VP_TP_LEN];
	char tp_event[VP_TP_LEN];
};

/**
 * struct vp_cmd - one parsed control command
 * @op:		enum vp_op
 * @kind:	enum vcpuperf_target_kind for attach/detach
 * @nr_ids:	thread or process ids in @ids
 * @ids:	tid list, or the single pid
 * @nr_events:	events in @events (the default set when none were given)
 * @events_given: events= was present
 * @mods:	modifiers given as keywords, applied to every event
 * @flags:	VCPUPERF_ATTACH_* words given (process_totals, all_threads)
 * @interval_ns: for VP_OP_INTERVAL
 * @ring_kb:	for VP_OP_RING
 * @read_mode:	enum vcpuperf_read_mode, for VP_OP_READ
 * @events:	the events, in sample order
 */
struct vp_cmd {
	enum vp_op op;
	enum vcpuperf_target_kind kind;
	__u32 nr_ids;
	__u32 ids[VCPUPERF_MAX_TARGETS];
	__u32 nr_events;
	bool events_given;
	__u32 mods;
	__u32 flags;
	__u64 interval_ns;
	__u32 ring_kb;
	__u32 read_mode;
	struct vp_event_spec events[VCPUPERF_MAX_EVENTS];
};

/*
 * The default event set: the canonical set that the Python perf-stat
 * collector vcpuperf replaces asks perf for.  The names are written once,
 * here, with the caller's separator between them: the string literal
 * VP_DEFAULT_EVENTS, the array vp_default_events[] and its size
 * VP_NR_DEFAULT_EVENTS all come from VP_DEFAULT_EVENT_NAMES().  The
 * separator is variadic so that it can hold a comma:
 * VP_DEFAULT_EVENT_NAMES(, "") lists the names as array elements (each
 * "" is joined to the name after it).
 */
#define VP_DEFAULT_EVENT_NAMES(...)					\
	"cycles" __VA_ARGS__ "instructions" __VA_ARGS__			\
	"cache-references" __VA_ARGS__ "cache-misses" __VA_ARGS__	\
	"branches" __VA_ARGS__ "branch-misses" __VA_ARGS__		\
	"page-faults" __VA_ARGS__ "context-switches"

/*
 * VP_DEFAULT_EVENTS - the default event set as one string literal,
 * "cycles,instructions,...", for help texts and parameter descriptions:
 * MODULE_PARM_DESC(events, "... (default: " VP_DEFAULT_EVENTS ")").
 */
#define VP_DEFAULT_EVENTS	VP_DEFAULT_EVENT_NAMES(",")

/* VP_NR_DEFAULT_EVENTS - the number of names in the default event set */
#define VP_NR_DEFAULT_EVENTS						\
	ARRAY_SIZE(((const char *const []){ VP_DEFAULT_EVENT_NAMES(, "") }))

/* The default event set, in sample order. */
extern const char *const vp_default_events[VP_NR_DEFAULT_EVENTS];

/*
 * VP_KVM_EVENTS - KVM's per-vCPU events, named (vcpuperf-cat --kvm-exits):
 * exits from the guest, returns to the VMM, MMIO accesses KVM traced,
 * halts and hypercalls, each KVM's own tracepoint counted per thread
 * (vp_kvm_events[] in vcpuperf_events.c maps them).
 */
#define VP_KVM_EVENTS \
	"kvm-exits,kvm-userspace-exits,kvm-mmio,kvm-halts,kvm-hypercalls"
/* The tracepoint subsystem of KVM's events (and of their counters). */
#define VP_KVM_TRACE_SYSTEM	"kvm"

int vp_parse_cmd(const char *buf, size_t len, struct vp_cmd *cmd,
		 char *err, size_t errlen);
int vp_build_attach(char *buf, size_t len, enum vcpuperf_target_kind kind,
		    const char *ids, const char *events, __u32 mods);
int vp_build_attach_flags(char *buf, size_t len, int n, __u32 flags);
const char *vp_attach_flag_word(__u32 flag);
int vp_parse_vcpu(const char *comm);
void vp_qemu_identity(const char *args, size_t len, char *vm, size_t vmlen,
		      char *uuid, size_t uuidlen);
int vp_parse_event(const char *s, size_t len, struct vp_event_spec *ev,
		   char *err, size_t errlen);
int vp_parse_event_list(const char *s, size_t len, struct vp_event_spec *evs,
			__u32 *nr, char *err, size_t errlen);
int vp_parse_duration(const char *s, size_t len, __u64 *ns);
int vp_format_duration(char *buf, size_t len, __u64 ns);
int vp_parse_ring_size(const char *s, size_t len, __u32 *kb);

void vp_build_attr(const struct vcpuperf_event_desc *desc,
		   struct perf_event_attr *attr);
bool vp_is_pmu_event(__u32 type);
__u32 vp_effective_mods(__u32 type, __u32 mods);
__u32 vp_mods_conflict(__u32 mods);
__u32 vp_ignored_mods(__u32 type, __u64 config);
const char *vp_ignored_why(__u32 type, __u64 config, __u32 mod);
char vp_mod_letter(__u32 mod);

/**
 * struct vp_delta - one counter over one interval
 * @value:	count increase (raw, unscaled)
 * @enabled:	time_enabled increase, ns
 * @running:	time_running increase, ns
 * @restarted:	the counter went backwards: the delta is from zero
 */
struct vp_delta {
	__u64 value;
	__u64 enabled;
	__u64 running;
	bool restarted;
};

__u64 vp_mul_div(__u64 a, __u64 b, __u64 c, bool *overflow);

/*
 * vp_scale() and vp_count_delta() are inline: vcpuperf-cat runs them for
 * every counter of every row.
 */

/**
 * vp_scale() - estimate a multiplexed count for the whole enabled time
 * @value:	raw count over the interval
 * @enabled:	time the counter was enabled over the interval
 * @running:	time it was on the PMU over the interval
 * @scaled:	value * enabled / running
 *
 * Return: false when no estimate exists (running is 0 while enabled is
 * not: the counter never got onto the PMU) or it would overflow; true
 * otherwise.  A counter that was not enabled at all (the thread did not
 * run) is an exact 0 when its value is 0.
 */
static inline bool vp_scale(__u64 value, __u64 enabled, __u64 running,
			    __u64 *scaled)
{
	bool overflow;

	if (!enabled) {
		*scaled = value;
		return true;
	}
	if (!running)
		return false;
	if (running >= enabled) {
		*scaled = value;
		return true;
	}
	*scaled = vp_mul_div(value, enabled, running, &overflow);
	return !overflow;
}

/**
 * vp_count_delta() - change of a cumulative counter between two reads
 * @prev:	earlier read (all zero before the first read)
 * @cur:	later read
 * @d:		the delta
 *
 * A counter that went backwards in any field was recreated (a new counter
 * on a reused thread id, say): the delta then runs from zero.
 */
static inline void vp_count_delta(const struct vcpuperf_count *prev,
				  const struct vcpuperf_count *cur,
				  struct vp_delta *d)
{
	d->restarted = cur->value < prev->value ||
		       cur->enabled < prev->enabled ||
		       cur->running < prev->running;
	if (d->restarted) {
		d->value = cur->value;
		d->enabled = cur->enabled;
		d->running = cur->running;
		return;
	}
	d->value = cur->value - prev->value;
	d->enabled = cur->enabled - prev->enabled;
	d->running = cur->running - prev->running;
}

const char *vp_errno_name(int err);
enum vcpuperf_cause vp_cause_from_errno(int err, __u32 type, __u32 mods);
const char *vp_cause_name(enum vcpuperf_cause cause);
const char *vp_cause_text(enum vcpuperf_cause cause);
const char *vp_rec_name(__u16 type);
const char *vp_detach_name(__u32 reason);
const char *vp_mux_cause_name(__u32 cause);
const char *vp_kind_name(__u32 kind);
const char *vp_read_mode_name(__u32 mode);
const char *vp_who_kind_name(__u32 kind);

#endif /* _VCPUPERF_LIB_H */
