/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A thread's sample (sample.c): its counters read (or the values it read
 * itself) into a sample record, from each counter's baseline; the records
 * that follow from it are decided in lifecycle.c.
 */
#ifndef _VCPUPERF_SAMPLE_H
#define _VCPUPERF_SAMPLE_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct vp_coll;
struct vp_reading;
struct vp_target;

bool vp_sample_target(struct vp_coll *c, struct vp_target *t, u32 flags);
bool vp_sample_deferred(struct vp_coll *c, struct vp_target *t);
bool vp_sample_values(struct vp_coll *c, struct vp_target *t,
		      const struct vp_reading *r, u32 flags);
bool vp_sample_account(struct vp_coll *c, struct vp_target *t,
		       struct vcpuperf_sample *s, u32 counting, u32 exited,
		       u64 window_ns, u32 flags);

#endif /* _VCPUPERF_SAMPLE_H */
