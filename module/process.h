/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes as a whole (process.c): the process record (with a QEMU's VM
 * identity) and, with process_totals, the whole-process counters: inherited
 * counters on every thread present at attach but the vCPU threads, which
 * count for the process with their own.
 */
#ifndef _VCPUPERF_PROCESS_H
#define _VCPUPERF_PROCESS_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct perf_event;
struct task_struct;
struct vp_coll;
struct vp_group;
struct vp_shared;
struct vp_target;

/**
 * struct vp_pthread - a thread holding process counters (process_totals)
 * @task:	the thread, referenced
 * @sh:		one inherited counter per event (shared.c), NULL where
 *		creation failed
 * @event:	those counters
 * @base:	their values when the group began to use them
 */
struct vp_pthread {
	struct task_struct *task;
	struct vp_shared *sh[VCPUPERF_MAX_EVENTS];
	struct perf_event *event[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count base[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_proc - a process's whole-process counters (process_totals)
 * @nr:		entries used in @threads
 * @cap:	entries allocated
 * @threads:	the threads the process had at attach, each with inherited
 *		counters (perf gives every thread they create a child
 *		counter, whose count folds back when it exits); kept after
 *		they exit, since their counters hold their children's counts.
 *		vCPU threads are not among them: their own counters count
 *		for the process (vp_target.proc_own)
 * @vcpus:	vCPU threads the process had at attach (left to their own
 *		counters)
 * @own:	vCPU threads counting for the process with their own
 *		counters now
 * @own_gone:	vCPU threads that counted so and ended (exited or
 *		detached)
 * @gone_mask:	events with counts in @gone
 * @gone:	per event, the final counts of the ended ones
 */
struct vp_proc {
	u32 nr;
	u32 cap;
	struct vp_pthread *threads;
	u32 vcpus;
	u32 own;
	u32 own_gone;
	u32 gone_mask;
	struct vcpuperf_count gone[VCPUPERF_MAX_EVENTS];
};

int vp_proc_start(struct vp_coll *c, struct vp_group *g,
		  struct task_struct *leader);
void vp_proc_sample(struct vp_coll *c, struct vp_group *g, u32 flags);
void vp_proc_own_start(struct vp_group *g, struct vp_target *t);
void vp_proc_own_end(struct vp_group *g, struct vp_target *t);
void vp_proc_sample_all(struct vp_coll *c);
void vp_proc_free(struct vp_group *g);

#endif /* _VCPUPERF_PROCESS_H */
