// SPDX-License-Identifier: GPL-2.0
/*
 * vpfloor - benchmark floor for vcpuperf.  NOT part of the product.
 *
 * Creates one kernel counter per (tid, event) with
 * perf_event_create_kernel_counter() and calls perf_event_read_value() on
 * every counter once per interval from a kthread on a drift-free
 * CLOCK_MONOTONIC grid based on a scheduler tick (as vcpuperf's),
 * discarding the values.  No ring, no records, no reader: the least any
 * in-kernel per-thread collector must do.  The
 * counters are created and released by the kthread itself so that its
 * /proc/<pid>/schedstat holds all the CPU time the floor costs.
 *
 * Parameters:
 *   tids=T1,T2,...     threads to count (required, up to 4096)
 *   events=TYPE:CONFIG[:MODS],...  perf type/config pairs, MODS of
 *                      u, k, G, H as vcpuperf's event names (default:
 *                      software task-clock, context-switches, page-faults,
 *                      cpu-clock)
 *   interval_us=N      read interval (default 100000)
 * Read-only results under /sys/module/vpfloor/parameters/:
 *   kpid ticks missed counters failed late_max_ns late_sum_ns
 *   base_ns            the grid's base (the scheduler tick it starts on)
 *   late_pct: "TICKS P50 P99 MAX" of the lateness of the pass starts
 *             (ns after their grid point) whose grid point lies in
 *             [win_lo_ns, win_hi_ns] (writable, CLOCK_MONOTONIC ns; 0 0
 *             for every tick), from the first VPF_MAX_LATE ticks
 */
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "../vpmods.h"

#define VPF_MAX_TIDS	4096
#define VPF_MAX_EVENTS	16
#define VPF_MAX_LATE	65536	/* ticks whose lateness is kept */

/* An int array, not a charp: charp values are limited to 1024 bytes. */
static int tids[VPF_MAX_TIDS];
static unsigned int nr_tids;
module_param_array(tids, int, &nr_tids, 0);
MODULE_PARM_DESC(tids, "comma list of thread ids");
static char *events = "1:1,1:3,1:2,1:0";
module_param(events, charp, 0444);
MODULE_PARM_DESC(events, "comma list of perf TYPE:CONFIG[:MODS]");
static uint interval_us = 100000;
module_param(interval_us, uint, 0444);
MODULE_PARM_DESC(interval_us, "read interval in microseconds");

static int kpid;
module_param(kpid, int, 0444);
static ulong ticks;
module_param(ticks, ulong, 0444);
static ulong missed;
module_param(missed, ulong, 0444);
static uint counters;
module_param(counters, uint, 0444);
static uint failed;
module_param(failed, uint, 0444);
static ulong late_max_ns;
module_param(late_max_ns, ulong, 0444);
static ulong late_sum_ns;
module_param(late_sum_ns, ulong, 0444);
/* The grid's base: CLOCK_MONOTONIC ns of the scheduler tick it starts on. */
static ulong base_ns;
module_param(base_ns, ulong, 0444);

static ulong win_lo_ns;
module_param(win_lo_ns, ulong, 0644);
static ulong win_hi_ns;
module_param(win_hi_ns, ulong, 0644);

/* Per tick: its grid point and how late the pass started after it. */
static u64 *late_grid, *late_ns;
static unsigned long nr_late;

static int vpf_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* late_pct: computed when read (racy against the kthread: a benchmark). */
static int vpf_late_pct_get(char *buf, const struct kernel_param *kp)
{
	unsigned long i, n, m = 0;
	u64 *v;
	int ret;

	/* pairs with smp_store_release() in the sampling kthread */
	n = smp_load_acquire(&nr_late);

	v = vmalloc(array_size(n + 1, sizeof(*v)));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if (win_hi_ns && (late_grid[i] < win_lo_ns ||
				  late_grid[i] > win_hi_ns))
			continue;
		v[m++] = late_ns[i];
	}
	sort(v, m, sizeof(*v), vpf_cmp_u64, NULL);
	ret = sysfs_emit(buf, "%lu %llu %llu %llu\n", m, m ? v[m / 2] : 0,
			 m ? v[m * 99 / 100] : 0, m ? v[m - 1] : 0);
	vfree(v);
	return ret;
}

static const struct kernel_param_ops vpf_late_pct_ops = {
	.get = vpf_late_pct_get,
};
module_param_cb(late_pct, &vpf_late_pct_ops, NULL, 0444);

static struct perf_event_attr attrs[VPF_MAX_EVENTS];
static unsigned int nr_events;
static struct perf_event **evs;
static struct task_struct *worker;
static u64 sink;

static int vpf_parse(void)
{
	char *s, *tok, *buf;
	unsigned int i;
	int ret = 0;

	if (!nr_tids) {
		pr_err("vpfloor: tids= is required\n");
		return -EINVAL;
	}
	for (i = 0; i < nr_tids; i++)
		if (tids[i] <= 0)
			return -EINVAL;
	buf = kstrdup(events, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	s = buf;
	while ((tok = strsep(&s, ",")) != NULL) {
		char *c = strchr(tok, ':'), *mods;
		u32 type;
		u64 config;

		if (!*tok)
			continue;
		if (!c || nr_events >= VPF_MAX_EVENTS) {
			ret = -EINVAL;
			break;
		}
		*c++ = '\0';
		mods = strchr(c, ':');
		if (mods)
			*mods++ = '\0';
		if (kstrtou32(tok, 0, &type) || kstrtou64(c, 0, &config)) {
			ret = -EINVAL;
			break;
		}
		memset(&attrs[nr_events], 0, sizeof(attrs[0]));
		attrs[nr_events].type = type;
		attrs[nr_events].size = sizeof(attrs[0]);
		attrs[nr_events].config = config;
		attrs[nr_events].read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					       PERF_FORMAT_TOTAL_TIME_RUNNING;
		if (mods && vpb_set_mods(&attrs[nr_events], mods)) {
			ret = -EINVAL;
			break;
		}
		nr_events++;
	}
	kfree(buf);
	if (!ret && (!nr_tids || !nr_events || !interval_us))
		ret = -EINVAL;
	return ret;
}

static void vpf_create(void)
{
	unsigned int i, j;

	for (i = 0; i < nr_tids; i++) {
		struct task_struct *task;
		struct pid *pid = find_get_pid(tids[i]);

		task = pid ? get_pid_task(pid, PIDTYPE_PID) : NULL;
		put_pid(pid);
		for (j = 0; j < nr_events; j++) {
			struct perf_event *ev = NULL;

			if (task) {
				ev = perf_event_create_kernel_counter(&attrs[j], -1,
								      task, NULL, NULL);
				if (IS_ERR(ev))
					ev = NULL;
			}
			evs[i * nr_events + j] = ev;
			if (ev)
				counters++;
			else
				failed++;
		}
		if (task)
			put_task_struct(task);
	}
}

static void vpf_release(void)
{
	unsigned int i;

	for (i = 0; i < nr_tids * nr_events; i++) {
		if (evs[i])
			perf_event_release_kernel(evs[i]);
		evs[i] = NULL;
	}
}

static int vpf_fn(void *data)
{
	u64 interval = (u64)interval_us * NSEC_PER_USEC;
	unsigned int i, n = nr_tids * nr_events;
	ktime_t next;
	u32 rem;

	vpf_create();
	/* The grid's base on a scheduler tick, as vcpuperf's sampler's. */
	next = ktime_get();
	div_u64_rem(ktime_to_ns(next), TICK_NSEC, &rem);
	if (rem)
		next = ktime_add_ns(next, TICK_NSEC - rem);
	base_ns = ktime_to_ns(next);
	while (!kthread_should_stop()) {
		ktime_t now;
		u64 late;

		next = ktime_add_ns(next, interval);
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop()) {
			__set_current_state(TASK_RUNNING);
			break;
		}
		schedule_hrtimeout_range(&next, 0, HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
		if (kthread_should_stop())
			break;
		now = ktime_get();
		late = ktime_after(now, next) ? ktime_to_ns(ktime_sub(now, next)) : 0;
		late_sum_ns += late;
		if (nr_late < VPF_MAX_LATE) {
			late_grid[nr_late] = ktime_to_ns(next);
			late_ns[nr_late] = late;
			/* pairs with smp_load_acquire() in vpf_late_pct_get() */
			smp_store_release(&nr_late, nr_late + 1);
		}
		if (late > late_max_ns)
			late_max_ns = late;
		for (i = 0; i < n; i++) {
			u64 en, ru;

			if (evs[i])
				sink += perf_event_read_value(evs[i], &en, &ru);
		}
		ticks++;
		/* An overrun pass skips grid points instead of bunching up. */
		now = ktime_get();
		while (ktime_compare(ktime_add_ns(next, interval), now) <= 0) {
			next = ktime_add_ns(next, interval);
			missed++;
		}
		cond_resched();
	}
	vpf_release();
	return 0;
}

static int __init vpf_init(void)
{
	int ret = vpf_parse();

	if (ret) {
		pr_err("vpfloor: bad parameters\n");
		return ret;
	}
	evs = kcalloc(nr_tids * nr_events, sizeof(*evs), GFP_KERNEL);
	late_grid = vcalloc(VPF_MAX_LATE, sizeof(*late_grid));
	late_ns = vcalloc(VPF_MAX_LATE, sizeof(*late_ns));
	if (!evs || !late_grid || !late_ns) {
		ret = -ENOMEM;
		goto fail;
	}
	worker = kthread_run(vpf_fn, NULL, "vpfloor");
	if (IS_ERR(worker)) {
		ret = PTR_ERR(worker);
		goto fail;
	}
	kpid = worker->pid;
	return 0;
fail:
	kfree(evs);
	vfree(late_grid);
	vfree(late_ns);
	return ret;
}

static void __exit vpf_exit(void)
{
	kthread_stop(worker);
	kfree(evs);
	vfree(late_grid);
	vfree(late_ns);
	pr_info("vpfloor: %lu ticks, %lu missed, %u counters (%u failed), sink %llu\n",
		ticks, missed, counters, failed, sink);
}

module_init(vpf_init);
module_exit(vpf_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vcpuperf benchmark floor: create counters, read them, discard");
