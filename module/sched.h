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

#include "../include/uapi/vcpuperf.h"

struct task_struct;
struct vp_target;

/* Bytes of a sample of @nr events with its scheduler figures. */
static inline size_t vp_sample_size(u32 nr)
{
	struct vcpuperf_sample *s;

	return struct_size(s, counts, nr) + sizeof(struct vcpuperf_sched);
}

/* The scheduler figures of sample @s, after its @nr counts. */
static inline struct vcpuperf_sched *vp_sample_sched(struct vcpuperf_sample *s,
						     u32 nr)
{
	return (struct vcpuperf_sched *)&s->counts[nr];
}

void vp_sched_read(struct task_struct *task, struct vcpuperf_sched *out);
void vp_sched_start(struct vp_target *t);
void vp_sched_since_start(struct vp_target *t,
			  const struct vcpuperf_sched *now,
			  struct vcpuperf_sched *out);

#endif /* _VCPUPERF_SCHED_H */
