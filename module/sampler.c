// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler: one kthread per collection that wakes on the collection's
 * drift-free CLOCK_MONOTONIC grid (base + k * interval, hrtimer-based, not
 * jiffies) and makes one pass over its threads: picking up new threads of
 * attached processes, sampling each (perf_event_read_value() sleeps, hence
 * a thread and not a timer) and ending those that exited.  Every grid is
 * made of multiples of its interval (vp_grid_base()): grid points fall on
 * scheduler ticks where they can, and collections of one interval wake
 * together.
 */
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/sched/task.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "attach.h"
#include "pass.h"
#include "process.h"
#include "ring.h"
#include "sampler.h"
#include "vcpuperf.h"

/* Timer slack of the sampler's sleep: well under the 1 ms minimum. */
#define VP_SLACK_NS	(10 * NSEC_PER_USEC)
/* In lazy mode the pass may wait up to this part of the interval. */
#define VP_LAZY_SLACK_DIV	2

/*
 * One pass over every target (pass.c).  With a thousand targets a pass can
 * outlast the interval, and the next one then starts at once: the pass
 * gives the CPU up between targets, or on a kernel without preemption it
 * would keep its CPU (and everything queued behind it) for as long as
 * passes overrun.  The lock stays held: targets change only under it.
 */
static void vp_sample_pass(struct vp_coll *c, u64 grid)
{
	vp_scan_groups(c);
	/* One wake-up per pass, not one per record. */
	vp_ring_defer_wake(&c->ring, true);
	c->pass_grid = grid;
	vp_read_pass(c, ++c->passes);
	vp_proc_sample_all(c);
	c->pass_grid = 0;
	vp_ring_defer_wake(&c->ring, false);
}

/*
 * How late the sampler's wake-up may come.  In lazy mode (no thread is
 * interrupted for a read) a jiffy: the scheduler tick comes at least that
 * often on a busy CPU, so the pass starts in the tick's own interrupt and
 * adds none, and with it no VM exit of a guest running there; the rows
 * stay exact (each has its own read time), only later by up to a jiffy.
 * The other modes read close to the grid point.
 */
static u64 vp_sampler_slack(struct vp_coll *c)
{
	if (vp_read_mode(c) != VCPUPERF_READ_LAZY)
		return VP_SLACK_NS;
	return min_t(u64, TICK_NSEC, c->interval_ns / VP_LAZY_SLACK_DIV);
}

/*
 * The base of a new grid of @interval: a multiple of @interval, so that
 * the collections of one interval share their grid points (as far as
 * their intervals allow, over different intervals), and its first point
 * is the multiple nearest to @now plus @interval, but at least half an
 * interval away: the first sample covers between a half and one and a
 * half intervals.  The kernel keeps its ticks at multiples of TICK_NSEC
 * of CLOCK_MONOTONIC (tick_init_jiffy_update()), so every grid point
 * that is a multiple of TICK_NSEC (all of them when @interval is a
 * multiple of the tick) expires in the tick's own interrupt: the sampler's
 * wake-up costs no interrupt of its own, and with it no VM exit of a guest
 * running on its CPU (one per grid point otherwise, in kick and direct
 * mode).  And on one CPU the samplers of every collection, and the readers
 * that pace themselves on their grid (vcpuperf-cat), run in one
 * preemption of the thread running there, a guest's on a lab host, per
 * grid point instead of one each: a switch of a vCPU thread out and in is
 * what costs a guest most (measured on the arm64 bed: bench/results).
 */
static u64 vp_grid_base(u64 now, u64 interval)
{
	u64 first = div64_u64(now + interval / 2 + interval - 1, interval) *
		    interval;

	/* 0 is "no grid": only within half an interval of boot. */
	return first - interval ?: interval;
}

/*
 * One turn of the loop; returns the deadline to sleep to, 0 for none, and
 * in @slack how late it may be.
 */
static u64 vp_sampler_turn(struct vp_coll *c, u64 *slack)
{
	u64 now, deadline, tick, interval;

	mutex_lock(&c->lock);
	interval = c->interval_ns;
	if (list_empty(&c->targets) && list_empty(&c->groups)) {
		c->grid_base = 0;
		mutex_unlock(&c->lock);
		return 0;
	}
	now = ktime_get_ns();
	if (!c->grid_base) {
		c->grid_base = vp_grid_base(now, interval);
		c->tick = 0;
	}
	deadline = c->grid_base + (c->tick + 1) * interval;
	if (now >= deadline) {
		vp_sample_pass(c, deadline);
		/* Grid point now due; points overrun by the pass are skipped. */
		tick = div64_u64(ktime_get_ns() - c->grid_base, interval);
		c->missed_ticks += tick - (c->tick + 1);
		c->tick = tick;
		deadline = c->grid_base + (c->tick + 1) * interval;
	}
	*slack = vp_sampler_slack(c);
	mutex_unlock(&c->lock);
	return deadline;
}

static int vp_sampler_fn(void *data)
{
	struct vp_coll *c = data;

	while (!kthread_should_stop()) {
		u64 deadline, slack = VP_SLACK_NS;

		atomic_set(&c->kick, 0);
		deadline = vp_sampler_turn(c, &slack);
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop() || atomic_read(&c->kick)) {
			__set_current_state(TASK_RUNNING);
			continue;
		}
		if (deadline) {
			ktime_t kt = ns_to_ktime(deadline);

			if (ktime_get_ns() < deadline)
				schedule_hrtimeout_range(&kt, slack,
							 HRTIMER_MODE_ABS);
			__set_current_state(TASK_RUNNING);
		} else {
			schedule();
		}
	}
	return 0;
}

/**
 * vp_sampler_kick() - make the sampler re-read its schedule now
 * @c:		the collection, lock held
 *
 * After an attach, a detach or an interval change.
 */
void vp_sampler_kick(struct vp_coll *c)
{
	lockdep_assert_held(&c->lock);
	atomic_set(&c->kick, 1);
	if (c->sampler)
		wake_up_process(c->sampler);
}

/**
 * vp_sampler_start() - create the sampling kthread
 * @c:		the collection
 *
 * Return: 0 or the error of kthread_run().
 */
int vp_sampler_start(struct vp_coll *c)
{
	struct task_struct *k;

	k = kthread_run(vp_sampler_fn, c, "vcpuperf/%u", c->id);
	if (IS_ERR(k))
		return PTR_ERR(k);
	c->sampler = k;
	return 0;
}

/**
 * vp_sampler_stop() - stop the sampling kthread and wait for it
 * @c:		the collection, lock not held
 *
 * The kthread is unpublished under the lock first, so that a command
 * finishing concurrently cannot kick a thread that is going away.
 */
void vp_sampler_stop(struct vp_coll *c)
{
	struct task_struct *k;

	mutex_lock(&c->lock);
	k = c->sampler;
	c->sampler = NULL;
	mutex_unlock(&c->lock);
	if (k)
		kthread_stop(k);
}
