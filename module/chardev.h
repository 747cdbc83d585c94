/* SPDX-License-Identifier: GPL-2.0 */
/*
 * /dev/vcpuperf (chardev.c): every open() creates a collection owned by
 * that open file.
 */
#ifndef _VCPUPERF_CHARDEV_H
#define _VCPUPERF_CHARDEV_H

struct vp_module;

int vp_chardev_register(struct vp_module *mod);
void vp_chardev_unregister(struct vp_module *mod);

#endif /* _VCPUPERF_CHARDEV_H */
