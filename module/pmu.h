/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the PMU under a hardware counter offers (pmu.c): how many counters it
 * has and how often perf rotates multiplexed ones; 0 where unknown.
 */
#ifndef _VCPUPERF_PMU_H
#define _VCPUPERF_PMU_H

#include <linux/types.h>

struct perf_event;

u32 vp_pmu_counters(struct perf_event *event);
u32 vp_pmu_rotate_ms(struct perf_event *event);

#endif /* _VCPUPERF_PMU_H */
