/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sampling pass (pass.c): how it reads each thread, directly or by the
 * thread itself (selfread.h), by the collection's read mode.
 */
#ifndef _VCPUPERF_PASS_H
#define _VCPUPERF_PASS_H

#include <linux/types.h>

struct vp_coll;
struct vp_target;

u32 vp_read_mode(struct vp_coll *c);
bool vp_read_start(struct vp_coll *c, struct vp_target *t, u64 pass,
		   u32 mode);
void vp_read_pass(struct vp_coll *c, u64 pass);

#endif /* _VCPUPERF_PASS_H */
