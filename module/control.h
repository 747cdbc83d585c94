/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Control commands (control.c): parsing one and carrying it out on a
 * collection, whichever file it was written to; the collection's
 * configuration written back in the same grammar.
 */
#ifndef _VCPUPERF_CONTROL_H
#define _VCPUPERF_CONTROL_H

#include <linux/compiler_types.h>
#include <linux/types.h>

struct file;
struct seq_file;
struct vp_coll;

int vp_control_apply(struct vp_coll *c, const struct file *file,
		     const char *buf, size_t len);
ssize_t vp_control_write(struct vp_coll *c, const struct file *file,
			 const char __user *ubuf, size_t count);
void vp_control_show(struct seq_file *m, struct vp_coll *c);

#endif /* _VCPUPERF_CONTROL_H */
