/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The status file's text (status.c): the module's limits and every
 * collection, the default one first.
 */
#ifndef _VCPUPERF_STATUS_H
#define _VCPUPERF_STATUS_H

struct seq_file;

int vp_status_show(struct seq_file *m, void *unused);

#endif /* _VCPUPERF_STATUS_H */
