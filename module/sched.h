/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the scheduler keeps of a thread (sched.c), in every sample: CPU
 * time, time waiting for a CPU, timeslices, switches, migrations, the
 * CPU it last ran on.
 */
#ifndef _VCPUPERF_SCHED_H
#define _VCPUPERF_SCHED_H

#include <linux/overflow.h>
#include <linux/types.h>

#include "vcpuperf.h"

struct task_struct;

/* Do @t's samples carry its scheduler figures (not attached no_sched)? */
static inline bool vp_target_sched(const struct vp_target *t)
{
	return !(t->flags & VCPUPERF_ATTACH_NO_SCHED);
}

/* Do @t's samples say who took its CPU (attached who)? */
static inline bool vp_target_who(const struct vp_target *t)
{
	return t->flags & VCPUPERF_ATTACH_WHO;
}

/*
 * Bytes of a sample of @t: its counts, then its scheduler figures, then
 * who took its CPU.
 */
static inline size_t vp_target_sample_size(const struct vp_target *t)
{
	struct vcpuperf_sample *s;

	return struct_size(s, counts, t->nr_events) +
	       (vp_target_sched(t) ? sizeof(struct vcpuperf_sched) : 0) +
	       (vp_target_who(t) ? sizeof(struct vcpuperf_who) : 0);
}

/* The scheduler figures of sample @s, after its @nr counts. */
static inline struct vcpuperf_sched *vp_sample_sched(struct vcpuperf_sample *s,
						     u32 nr)
{
	return (struct vcpuperf_sched *)&s->counts[nr];
}

/* Who took the CPU of @t, at the end of its sample @s. */
static inline struct vcpuperf_who *vp_sample_who(struct vcpuperf_sample *s,
						 const struct vp_target *t)
{
	return (struct vcpuperf_who *)((char *)&s->counts[t->nr_events] +
				       (vp_target_sched(t) ?
					sizeof(struct vcpuperf_sched) : 0));
}

struct pid;
struct vp_sched_proc;

void vp_sched_read(struct task_struct *task, struct vcpuperf_sched *out);
void vp_sched_start(struct vp_target *t);
void vp_sched_end(struct vp_target *t);
void vp_sched_who_snap(struct vp_target *t);
u32 vp_sched_sample(struct vp_target *t, const struct vcpuperf_sched *now,
		    struct vcpuperf_sample *s);
struct vp_sched_proc *vp_sched_proc_new(struct task_struct *leader);
void vp_sched_proc_free(struct vp_sched_proc *sp);
int vp_sched_proc_sample(struct vp_sched_proc *sp, struct pid *pid,
			 struct vcpuperf_sched *out);

#endif /* _VCPUPERF_SCHED_H */
