/* SPDX-License-Identifier: GPL-2.0 */
/*
 * threads.c: the decoder's per-thread state, by tid (its events, its
 * previous counts, its process), and the interpretation of a sample
 * against it: a struct vc_row, which the sink's writers turn into output.
 * threads.c is the only file that changes a struct vc_tid.
 */
#ifndef _VC_THREADS_H
#define _VC_THREADS_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

struct vc_proc;
struct vc_sink;

#define VC_BITS_PER_MASK	32	/* events an event mask (__u32) can name */

/**
 * struct vc_ratios - where the operands of a row's derived ratios are
 * @i_cycles:	index of the cycles event used for ipc, -1 if none
 * @i_insns:	index of instructions, -1 if none
 * @i_refs:	index of cache-references, -1 if none
 * @i_misses:	index of cache-misses, -1 if none
 *
 * Set by vc_pick_ratios() from a thread's or a process's events.
 */
struct vc_ratios {
	int i_cycles;
	int i_insns;
	int i_refs;
	int i_misses;
};

/**
 * struct vc_sched - the scheduler figures of a thread or process so far
 * @have:	a sample carried them
 * @last:	the last, since its attach (its totals)
 */
struct vc_sched {
	bool have;
	struct vcpuperf_sched last;
};

/* Room for a key of who took the CPU: ,"sched_preempted_other_vm": */
#define VC_WHO_KEY_MAX	40

/**
 * struct vc_who - who took a thread's CPU so far
 * @have:	a sample carried them, kept
 * @last:	the last figures, since its attach (its totals)
 */
struct vc_who {
	bool have;
	struct vcpuperf_who last;
};

/**
 * struct vc_tid - what the decoder knows about one sampled thread
 * @tid:	thread id
 * @started:	a started record was seen
 * @pid:	thread group id
 * @vcpu:	vCPU index or VCPUPERF_NO_VCPU
 * @kind:	enum vcpuperf_target_kind
 * @nr_events:	configured events
 * @exist_mask:	counters believed to exist (unavailable/sample records)
 * @comm:	thread name, NUL terminated
 * @ev:		the configured events
 * @prev:	previous cumulative counts (zero before the first sample)
 * @sched:	its scheduler figures so far
 * @have_prev_t: @prev_t_mono is valid
 * @prev_t_mono: t_mono_ns of the previous sample
 * @ratios:	operands of ipc and cache_miss_rate among @ev
 * @rows:	rows written for this thread since its started record
 * @not_applied: events whose command keyword modifiers were left out,
 *		because the kernel would ignore them (bit i)
 * @proc:	its process (VM identity), NULL when attached by tid= or
 *		its process record is not known
 * @sink_data:	the sink's own data for this thread (from its thread_start)
 *
 * Only threads.c changes these fields; the sink gets them read-only.
 */
struct vc_tid {
	__u32 tid;
	bool started;
	__u32 pid;
	__s32 vcpu;
	__u32 kind;
	__u32 nr_events;
	__u32 exist_mask;
	char comm[VCPUPERF_COMM_LEN + 1];
	struct vcpuperf_event_desc ev[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count prev[VCPUPERF_MAX_EVENTS];
	bool have_prev_t;
	__u64 prev_t_mono;
	struct vc_sched sched;
	struct vc_who who;
	struct vc_ratios ratios;
	__u64 rows;
	__u32 not_applied;
	const struct vc_proc *proc;
	void *sink_data;
};

/**
 * struct vc_row - one sample record, interpreted against its thread
 * @s:		the validated sample record (NULL for a process sample)
 * @ps:		the validated process sample record (NULL for a sample)
 * @d:		per event, the raw deltas of value, enabled and running
 * @value:	per event, the interval's delta scaled by enabled/running
 * @have:	per event, @value is known: the counter exists, and it ran on
 *		the PMU if it was enabled (else the row says null)
 * @enabled_ns:	largest time_enabled delta over the existing counters
 * @running_ns:	smallest time_running delta over the existing counters
 * @counted:	at least one counter exists (@enabled_ns, @running_ns and
 *		@ran mean nothing otherwise)
 * @ran:	some counter was enabled during the interval
 * @multiplexed: some counter ran for only part of its enabled time
 * @have_dt:	@dt_ns is known (not the thread's first sample)
 * @dt_ns:	t_mono_ns since the thread's previous sample
 * @sched:	the scheduler figures of the interval (deltas; @sched.cpu
 *		the CPU the thread last ran on), NULL when the sample has
 *		none; @sched.valid says which the kernel keeps
 * @who:	who took the thread's CPU in the interval (deltas; the
 *		other VMs' slots by pid), NULL when the sample does not say;
 *		@who.valid 0 when the module could not keep it (@who.cause)
 */
struct vc_row {
	const struct vcpuperf_sample *s;
	const struct vcpuperf_process_sample *ps;
	struct vp_delta d[VCPUPERF_MAX_EVENTS];
	__u64 value[VCPUPERF_MAX_EVENTS];
	bool have[VCPUPERF_MAX_EVENTS];
	__u64 enabled_ns;
	__u64 running_ns;
	bool counted;
	bool ran;
	bool multiplexed;
	bool have_dt;
	__s64 dt_ns;
	const struct vcpuperf_sched *sched;
	struct vcpuperf_sched sched_delta;
	const struct vcpuperf_who *who;
	struct vcpuperf_who who_delta;
};

/**
 * struct vc_threads - the per-thread state, by tid
 * @slot:	open-addressing table of threads
 * @size:	slots in @slot (power of two)
 * @used:	slots in use
 * @sink:	whose thread_start and thread_free keep @sink_data
 */
struct vc_threads {
	struct vc_tid **slot;
	size_t size;
	size_t used;
	struct vc_sink *sink;
};

int vc_threads_init(struct vc_threads *th, struct vc_sink *sink);
void vc_threads_free(struct vc_threads *th);
struct vc_tid *vc_thread_find(const struct vc_threads *th, __u32 tid);
struct vc_tid *vc_thread_start(struct vc_threads *th,
			       const struct vcpuperf_started *s,
			       const struct vc_proc *proc);
void vc_thread_unavailable(struct vc_tid *t,
			   const struct vcpuperf_unavailable *u);
void vc_thread_sample(struct vc_tid *t, const struct vcpuperf_sample *s,
		      struct vc_row *row);
void vc_pick_ratios(const struct vcpuperf_event_desc *ev, __u32 nr,
		    struct vc_ratios *r);
void vc_sched_delta(struct vc_sched *prev, __u32 flags, const void *after,
		    struct vc_row *row);
void vc_counts_delta(struct vcpuperf_count *prev,
		     const struct vcpuperf_count *cur, __u32 nr, __u32 mask,
		     struct vc_row *row);

#endif /* _VC_THREADS_H */
