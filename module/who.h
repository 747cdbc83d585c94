/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who took a thread's CPU while it waited for one (who.c): its run-queue
 * wait and its involuntary switches by what ran instead, kept by probes
 * on the scheduler's tracepoints while any thread is attached "who".
 */
#ifndef _VCPUPERF_WHO_H
#define _VCPUPERF_WHO_H

#include <linux/types.h>

#include "../include/uapi/vcpuperf.h"

struct task_struct;
struct vp_who;

struct vp_who *vp_who_get(struct task_struct *task);
void vp_who_put(struct vp_who *w);
void vp_who_read(struct vp_who *w, struct vcpuperf_who *out);
enum vcpuperf_cause vp_who_cause(int err);
void vp_who_exit(void);

/* For the KUnit tests: the attribution of one part of a wait. */
enum vcpuperf_who_kind vp_who_kind_of(pid_t waiter_tgid, bool idle,
				      bool kthread, pid_t tgid, bool vcpu);
void vp_who_add_vm(struct vcpuperf_who *acc, pid_t tgid, u64 ns);

#endif /* _VCPUPERF_WHO_H */
