/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /sys/kernel/debug/vcpuperf/ (debugfs.c): the default collection's control
 * and stream files, and status.
 */
#ifndef _VCPUPERF_DEBUGFS_H
#define _VCPUPERF_DEBUGFS_H

struct vp_module;

int vp_debugfs_init(struct vp_module *mod);
void vp_debugfs_exit(struct vp_module *mod);

#endif /* _VCPUPERF_DEBUGFS_H */
