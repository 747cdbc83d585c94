/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes as a whole (process.c): the VM identity of a QEMU (read from its
 * command line before any lock is taken), the process record, and, with
 * process_totals, the whole-process counters: inherited counters on every
 * thread that holds none yet but the vCPU threads, which count for the
 * process with their own.
 */
#ifndef _VCPUPERF_PROCESS_H
#define _VCPUPERF_PROCESS_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct perf_event;
struct task_struct;
struct vp_coll;
struct vp_group;
struct vp_sched_proc;
struct vp_shared;
struct vp_target;

/**
 * struct vp_pthread - a thread given process counters (process_totals)
 * @task:	the thread, referenced
 * @exec_id:	its self_exec_id when they were made
 * @sh:		one inherited counter per event (shared.c), NULL where the
 *		thread already held one by inheritance or where creation
 *		failed
 * @event:	those counters
 * @error:	per event, the positive errno of a creation that failed
 *		(EACCES: the group's authority does not reach the thread)
 * @base:	their values when the group began to use them
 */
struct vp_pthread {
	struct task_struct *task;
	u64 exec_id;
	struct vp_shared *sh[VCPUPERF_MAX_EVENTS];
	struct perf_event *event[VCPUPERF_MAX_EVENTS];
	int error[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count base[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_proc - a process's whole-process counters (process_totals)
 * @nr:		entries used in @threads
 * @cap:	entries allocated
 * @threads:	the threads given inherited counters (perf gives every
 *		thread they create afterwards a child counter, whose count
 *		folds back when it exits); kept after they exit, since their
 *		counters hold their children's counts.  vCPU threads are not
 *		among them: their own counters count for the process
 *		(vp_target.proc_own)
 * @vcpus:	vCPU threads the process had at attach (left to their own
 *		counters)
 * @own:	vCPU threads counting for the process with their own
 *		counters now
 * @own_gone:	vCPU threads that counted so and ended (exited or
 *		detached)
 * @gone_mask:	events with counts in @gone
 * @gone:	per event, the final counts of the ended ones
 * @sched:	its threads' scheduler figures summed (sched.c), NULL when
 *		attached no_sched
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
	struct vp_sched_proc *sched;
};

void vp_proc_identity(struct task_struct *leader, char *vm, size_t vmlen,
		      char *uuid, size_t uuidlen);
int vp_proc_start(struct vp_coll *c, struct vp_group *g,
		  struct task_struct *leader);
int vp_proc_exec(struct vp_coll *c, struct vp_group *g,
		 struct task_struct *leader);
void vp_proc_sample(struct vp_coll *c, struct vp_group *g, u32 flags);
void vp_proc_own_start(struct vp_group *g, struct vp_target *t);
void vp_proc_own_end(struct vp_group *g, struct vp_target *t);
void vp_proc_sample_all(struct vp_coll *c);
void vp_proc_free(struct vp_group *g);
u32 vp_proc_inherited(const struct vp_proc *p, u32 nr_events,
		      struct task_struct *t);

#endif /* _VCPUPERF_PROCESS_H */
