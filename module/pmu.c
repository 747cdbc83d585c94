// SPDX-License-Identifier: GPL-2.0
/*
 * What the PMU under a thread's hardware counters offers: how many
 * counters it has (to tell "more events than counters" from "others hold
 * the PMU" when counters multiplex or never count) and how often perf
 * rotates multiplexed counters.  Architecture specific: x86 says it with
 * perf_get_x86_pmu_capability() (exported for KVM), arm64's PMU drivers
 * in struct arm_pmu; elsewhere it is unknown (0).
 */
#include <linux/perf_event.h>
#include <linux/string.h>
#if IS_ENABLED(CONFIG_X86)
#include <asm/perf_event.h>
#endif
#if IS_ENABLED(CONFIG_ARM_PMU)
#include <linux/bitmap.h>
#include <linux/perf/arm_pmu.h>
#endif

#include "compat.h"
#include "pmu.h"

/* The names arm_pmu drivers register under ("armv8_pmuv3_0", ...). */
#define VP_ARM_PMU_PREFIX	"armv"

/**
 * vp_pmu_counters() - the counters of the PMU a hardware counter is on
 * @event:	a counter of a PMU event type (vp_is_pmu_event())
 *
 * Return: general and fixed counters, 0 when they cannot be told.
 */
u32 vp_pmu_counters(struct perf_event *event)
{
#if IS_ENABLED(CONFIG_X86)
	struct x86_pmu_capability cap;

	if (event->pmu->task_ctx_nr != perf_hw_context)
		return 0;
	perf_get_x86_pmu_capability(&cap);
	return cap.num_counters_gp + cap.num_counters_fixed;
#elif IS_ENABLED(CONFIG_ARM_PMU)
	struct arm_pmu *armpmu;

	if (!event->pmu->name || strncmp(event->pmu->name, VP_ARM_PMU_PREFIX,
					 strlen(VP_ARM_PMU_PREFIX)))
		return 0;
	armpmu = to_arm_pmu(event->pmu);
#if VP_ARM_PMU_CNTR_MASK
	return bitmap_weight(armpmu->cntr_mask, ARMPMU_MAX_HWEVENTS);
#else
	return armpmu->num_events;
#endif
#else
	return 0;
#endif
}

/**
 * vp_pmu_rotate_ms() - how often perf rotates a PMU's multiplexed counters
 * @event:	a counter on it
 *
 * Return: perf_event_mux_interval_ms of its PMU.
 */
u32 vp_pmu_rotate_ms(struct perf_event *event)
{
	return event->pmu->hrtimer_interval_ms > 0 ?
	       event->pmu->hrtimer_interval_ms : 0;
}
