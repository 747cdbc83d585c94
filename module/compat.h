/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version and configuration differences, all in one place.
 * Features are tested, not version numbers, wherever the kernel allows.
 */
#ifndef _VCPUPERF_COMPAT_H
#define _VCPUPERF_COMPAT_H

#include <linux/kconfig.h>

#if !IS_ENABLED(CONFIG_PERF_EVENTS)
#error "vcpuperf needs a kernel built with CONFIG_PERF_EVENTS"
#endif
#if !IS_ENABLED(CONFIG_DEBUG_FS)
#error "vcpuperf needs a kernel built with CONFIG_DEBUG_FS"
#endif

/* Tracepoints are resolved through the trace event files. */
#define VP_HAVE_TRACEPOINTS	IS_ENABLED(CONFIG_TRACING)

/*
 * Linux 7.2 moved a task's dumpability and the user namespace it belongs
 * to from its mm (mm->user_ns, get_dumpable()) to its exec state
 * (task->exec_state, an RCU pointer whose accessors are not exported).
 * Kbuild defines VP_HAVE_EXEC_STATE when the kernel has its header.
 */
#ifndef VP_HAVE_EXEC_STATE
#define VP_HAVE_EXEC_STATE	0
#endif

/*
 * Linux 6.11 replaced struct arm_pmu's num_events by a bitmap of the
 * counters, cntr_mask (Kbuild defines VP_ARM_PMU_CNTR_MASK then).
 */
#ifndef VP_ARM_PMU_CNTR_MASK
#define VP_ARM_PMU_CNTR_MASK	0
#endif

/*
 * Newer kernels (7.2 in the matrix) export perf_get_x86_pmu_capability()
 * to KVM alone (EXPORT_SYMBOL_FOR_KVM); Kbuild defines VP_X86_PMU_CAP_KVM_ONLY
 * when the kernel's Module.symvers says so, and module/pmu.c reads CPUID,
 * whose helpers such kernels declare in <asm/cpuid/api.h>.
 */
#ifndef VP_X86_PMU_CAP_KVM_ONLY
#define VP_X86_PMU_CAP_KVM_ONLY	0
#endif

/*
 * Linux 6.4 made vhost's and io_uring's workers user workers: threads of
 * the process that never return to user mode.  io_uring's run task work
 * in their loop (PF_IO_WORKER); vhost's never do.  Before 6.4 vhost's
 * were kernel threads (PF_KTHREAD), which are never asked anyway.
 */
#ifdef PF_USER_WORKER
#define VP_PF_NO_TASK_WORK(flags) \
	(((flags) & (PF_USER_WORKER | PF_IO_WORKER)) == PF_USER_WORKER)
#else
#define VP_PF_NO_TASK_WORK(flags)	false
#endif

/*
 * The scheduler clock of a CPU, which a wait's start (sched_info's
 * last_queued, from rq_clock()) is taken by: sched_clock_cpu() is exported
 * only where each CPU keeps its own (CONFIG_HAVE_UNSTABLE_SCHED_CLOCK:
 * x86); elsewhere (arm64) it is sched_clock() on every CPU.
 */
#ifdef CONFIG_HAVE_UNSTABLE_SCHED_CLOCK
#define vp_sched_clock_cpu(cpu)	sched_clock_cpu(cpu)
#else
#define vp_sched_clock_cpu(cpu)	sched_clock()
#endif

#endif /* _VCPUPERF_COMPAT_H */
