/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One sampled thread of a collection (target.c): made with its counters,
 * started (its started and unavailable records), ended (a final sample,
 * finished and detached records, counters released) and freed.
 */
#ifndef _VCPUPERF_TARGET_H
#define _VCPUPERF_TARGET_H

#include <linux/sched.h>
#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct cred;
struct pid_namespace;
struct task_struct;
struct vp_coll;
struct vp_group;
struct vp_target;

struct vp_target *vp_target_new(struct vp_coll *c, struct task_struct *task,
				struct pid_namespace *ns,
				enum vcpuperf_target_kind kind, u32 flags,
				struct vp_group *group,
				const struct vcpuperf_event_desc *descs,
				u32 nr_events, const struct cred *cred);
void vp_target_discard(struct vp_coll *c, struct vp_target *t);
void vp_target_start(struct vp_coll *c, struct vp_target *t);
void vp_target_end(struct vp_coll *c, struct vp_target *t, u32 reason);
void vp_target_free(struct vp_coll *c, struct vp_target *t);

/*
 * Is @task exiting or gone?  do_exit() sets PF_EXITING before it ends the
 * thread's perf counters: counters that ended while it is clear were
 * ended by an exec (exec.c).
 */
static inline bool vp_task_exiting(struct task_struct *task)
{
	return (READ_ONCE(task->flags) & PF_EXITING) ||
	       READ_ONCE(task->exit_state);
}

#endif /* _VCPUPERF_TARGET_H */
