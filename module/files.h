/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Open-file accounting shared by every vcpuperf file (files.c): the
 * capability check, refusing opens once unload has begun, and unload
 * waiting for the last release.
 */
#ifndef _VCPUPERF_FILES_H
#define _VCPUPERF_FILES_H

struct vp_module;

int vp_file_get(struct vp_module *mod);
void vp_file_put(struct vp_module *mod);
void vp_files_wait(struct vp_module *mod);

#endif /* _VCPUPERF_FILES_H */
