/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel counters shared by every user (shared.c): one per (thread, event)
 * in the whole module, whoever counts it, each user reading it from its own
 * baseline.  Its registry's mutex is taken inside vp_coll.lock (lock order:
 * vcpuperf.h).
 */
#ifndef _VCPUPERF_SHARED_H
#define _VCPUPERF_SHARED_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct perf_event;
struct task_struct;
struct vp_shared;

struct perf_event *vp_shared_get(const struct vcpuperf_event_desc *desc,
				 struct task_struct *task, bool inherit,
				 struct vp_shared **shp);
void vp_shared_put(struct vp_shared *sh);
u32 vp_shared_users(const struct vp_shared *sh);
void vp_shared_load(struct task_struct *task, struct vcpuperf_pmu_load *load);

#endif /* _VCPUPERF_SHARED_H */
