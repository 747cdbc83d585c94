/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who may open a vcpuperf file, and who may count which thread (access.c):
 * the authority the file's opener had over it, checked at each attach.
 */
#ifndef _VCPUPERF_ACCESS_H
#define _VCPUPERF_ACCESS_H

#include <linux/types.h>

struct cred;
struct task_struct;

int vp_may_open(void);
int vp_may_count(const struct cred *cred, struct task_struct *task,
		 pid_t tid, char *err, size_t errlen);

#endif /* _VCPUPERF_ACCESS_H */
