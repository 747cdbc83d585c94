/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread's lifecycle as its samples show it (lifecycle.c): which of the
 * records first_row, multiplexed, no_counters and task_exited a sample
 * implies, each queued once.
 */
#ifndef _VCPUPERF_LIFECYCLE_H
#define _VCPUPERF_LIFECYCLE_H

#include <linux/types.h>

struct vp_coll;
struct vp_target;

/**
 * struct vp_sample_facts - what one sample says about its thread
 * @watch:	the counters whose silence means something
 *		(vp_lifecycle_watched())
 * @mux:	counters that ran for less time than they were enabled
 * @min_ppm:	the least running / enabled of those, in parts per million
 * @ran:	a counter was enabled in the interval: the thread ran
 * @counted:	a counter counted (time_running advanced)
 * @watched_counted: one of @watch counted
 */
struct vp_sample_facts {
	u32 watch;
	u32 mux;
	u32 min_ppm;
	bool ran;
	bool counted;
	bool watched_counted;
};

u32 vp_lifecycle_watched(const struct vp_target *t, u32 counting);
bool vp_lifecycle_exited(const struct vp_target *t, u32 counting,
			 u32 exited);
void vp_lifecycle_sample(struct vp_coll *c, struct vp_target *t,
			 const struct vp_sample_facts *f, u32 exited,
			 bool gone);

#endif /* _VCPUPERF_LIFECYCLE_H */
