// SPDX-License-Identifier: GPL-2.0
/*
 * What the PMU under a thread's hardware counters offers: how many
 * counters it has (to tell "more events than counters" from "others hold
 * the PMU" when counters multiplex or never count) and how often perf
 * rotates multiplexed counters.  Architecture specific: x86 says it with
 * perf_get_x86_pmu_capability() (exported for KVM) or, on kernels that
 * export it to KVM alone, with the CPUID leaves perf reads itself; arm64's
 * PMU drivers in struct arm_pmu; elsewhere it is unknown (0).
 */
#include <linux/perf_event.h>
#include <linux/string.h>
#if IS_ENABLED(CONFIG_X86)
#include <linux/bitfield.h>
#include <asm/cpufeature.h>
#include <asm/perf_event.h>
#include <asm/processor.h>
#ifdef VP_HAVE_ASM_CPUID_API
#include <asm/cpuid/api.h>
#endif
#endif
#if IS_ENABLED(CONFIG_ARM_PMU)
#include <linux/bitmap.h>
#include <linux/perf/arm_pmu.h>
#endif

#include "compat.h"
#include "pmu.h"

/* The names arm_pmu drivers register under ("armv8_pmuv3_0", ...). */
#define VP_ARM_PMU_PREFIX	"armv"

#if IS_ENABLED(CONFIG_X86) && VP_X86_PMU_CAP_KVM_ONLY
/* Intel's architectural performance monitoring leaf (SDM vol. 2, CPUID). */
#define VP_CPUID_ARCH_PERFMON		0xa
#define VP_ARCH_PERFMON_GP		GENMASK(15, 8)	/* EAX */
#define VP_ARCH_PERFMON_FIXED		GENMASK(4, 0)	/* EDX */
/* AMD: PerfMonV2 leaf (APM vol. 3); 6 core counters with PerfCtrExtCore. */
#define VP_CPUID_AMD_PERFMON		0x80000022
#define VP_AMD_PERFMON_CORE		GENMASK(3, 0)	/* EBX */
#define VP_AMD_CORE_COUNTERS_EXT	6
#define VP_AMD_CORE_COUNTERS		4

/*
 * The counters of the boot CPU's PMU from CPUID, as perf's x86 drivers
 * find them (without their model quirks), for kernels whose
 * perf_get_x86_pmu_capability() only KVM may call (module/compat.h).
 */
static u32 vp_x86_cpuid_counters(void)
{
	switch (boot_cpu_data.x86_vendor) {
	case X86_VENDOR_AMD:
	case X86_VENDOR_HYGON:
		if (boot_cpu_has(X86_FEATURE_PERFMON_V2))
			return FIELD_GET(VP_AMD_PERFMON_CORE,
					 cpuid_ebx(VP_CPUID_AMD_PERFMON));
		return boot_cpu_has(X86_FEATURE_PERFCTR_CORE) ?
		       VP_AMD_CORE_COUNTERS_EXT : VP_AMD_CORE_COUNTERS;
	default:
		if (!boot_cpu_has(X86_FEATURE_ARCH_PERFMON) ||
		    boot_cpu_data.cpuid_level < VP_CPUID_ARCH_PERFMON)
			return 0;
		return FIELD_GET(VP_ARCH_PERFMON_GP,
				 cpuid_eax(VP_CPUID_ARCH_PERFMON)) +
		       FIELD_GET(VP_ARCH_PERFMON_FIXED,
				 cpuid_edx(VP_CPUID_ARCH_PERFMON));
	}
}
#endif

/**
 * vp_pmu_counters() - the counters of the PMU a hardware counter is on
 * @event:	a counter of a PMU event type (vp_is_pmu_event())
 *
 * Return: general and fixed counters, 0 when they cannot be told.
 */
u32 vp_pmu_counters(struct perf_event *event)
{
#if IS_ENABLED(CONFIG_X86) && VP_X86_PMU_CAP_KVM_ONLY
	if (event->pmu->task_ctx_nr != perf_hw_context)
		return 0;
	return vp_x86_cpuid_counters();
#elif IS_ENABLED(CONFIG_X86)
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
