/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Attaching and detaching (attach.c): threads by tid, processes by pid, QEMU
 * processes by their vCPU threads; and the threads that appear later in an
 * attached process.
 */
#ifndef _VCPUPERF_ATTACH_H
#define _VCPUPERF_ATTACH_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct file;
struct vp_coll;

int vp_attach(struct vp_coll *c, const struct file *file, struct vp_cmd *cmd,
	      char *err, size_t errlen);
int vp_detach(struct vp_coll *c, const struct vp_cmd *cmd, char *err,
	      size_t errlen);
void vp_detach_all(struct vp_coll *c, u32 reason);
void vp_forget_all(struct vp_coll *c);
void vp_scan_groups(struct vp_coll *c);

#endif /* _VCPUPERF_ATTACH_H */
