/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sampler of a collection (sampler.c): its kthread, on a drift-free
 * CLOCK_MONOTONIC grid, one pass per grid point.
 */
#ifndef _VCPUPERF_SAMPLER_H
#define _VCPUPERF_SAMPLER_H

struct vp_coll;

int vp_sampler_start(struct vp_coll *c);
void vp_sampler_stop(struct vp_coll *c);
void vp_sampler_kick(struct vp_coll *c);

#endif /* _VCPUPERF_SAMPLER_H */
