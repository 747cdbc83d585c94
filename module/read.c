// SPDX-License-Identifier: GPL-2.0
/*
 * How a sampling pass reads each thread: directly when the thread is not
 * on a CPU (its counters are inactive: no interrupt), by the thread
 * itself when it is running on another CPU (selfread.c: one interrupt or
 * none instead of one cross-CPU call per counter), and directly again,
 * counted per reason, whenever the thread cannot or did not read itself
 * in time.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/timekeeping.h>

#include "vcpuperf.h"

/* Share of the interval a pass waits for threads to read themselves. */
#define VP_SELF_WAIT_DIV	4
/* ... and never longer than this. */
#define VP_SELF_WAIT_MAX_NS	(20 * NSEC_PER_MSEC)
/* A thread found reading itself at the deadline gets this much more. */
#define VP_SELF_GRACE_NS	(1 * NSEC_PER_MSEC)
/* Lazy: a running thread returns by itself within a timer tick. */
#define VP_LAZY_WAIT_NS		(TICK_NSEC + TICK_NSEC / 2)

/**
 * vp_read_mode() - the read mode a collection's passes use now
 * @c:		the collection, lock held
 *
 * Return: VCPUPERF_READ_DIRECT, _KICK or _LAZY (auto resolved by the
 * interval).
 */
u32 vp_read_mode(struct vp_coll *c)
{
	if (c->read_mode != VCPUPERF_READ_AUTO)
		return c->read_mode;
	return c->interval_ns >= VCPUPERF_LAZY_MIN_INTERVAL_NS ?
	       VCPUPERF_READ_LAZY : VCPUPERF_READ_KICK;
}

/* How long a pass waits for self-reads, from its start. */
static u64 vp_self_budget(struct vp_coll *c, u32 mode)
{
	u64 ns = min_t(u64, div_u64(c->interval_ns, VP_SELF_WAIT_DIV),
		       VP_SELF_WAIT_MAX_NS);

	if (mode == VCPUPERF_READ_LAZY)
		ns += VP_LAZY_WAIT_NS;
	return ns;
}

/*
 * Should @t read itself?  Only a thread on a CPU now (another one: the
 * sampler runs on this one) costs a cross-CPU call to read; kernel threads
 * never run task work.  Counts the reason when it cannot.
 */
static bool vp_read_self_wanted(struct vp_coll *c, struct vp_target *t)
{
	struct task_struct *task = t->task;

	if (!t->sr || !READ_ONCE(task->on_cpu)) {
		c->reads.direct++;
		return false;
	}
	if (task->flags & PF_KTHREAD) {
		c->reads.fb_kthread++;
		return false;
	}
	if (task->flags & PF_EXITING) {
		c->reads.fb_exiting++;
		return false;
	}
	return true;
}

/**
 * vp_read_start() - first half of a pass over one thread: ask it to read
 * @c:		the collection, lock held
 * @t:		the thread
 * @pass:	the pass number
 * @mode:	from vp_read_mode()
 *
 * Remembers in the target whether the thread was asked (t->self_pass).
 *
 * Return: true when it was asked; false when the caller reads it directly
 * (at once: a thread not on a CPU now may well be on one later in the
 * pass, and a direct read would then cost a cross-CPU call).
 */
bool vp_read_start(struct vp_coll *c, struct vp_target *t, u64 pass,
		   u32 mode)
{
	int ret;

	t->self_pass = 0;
	if (mode == VCPUPERF_READ_DIRECT) {
		c->reads.direct++;
		return false;
	}
	if (!vp_read_self_wanted(c, t))
		return false;
	ret = vp_selfread_queue(t->sr, t->task, pass,
				mode == VCPUPERF_READ_LAZY);
	if (ret == -EBUSY) {
		c->reads.fb_pending++;
		return false;
	}
	if (ret) {
		c->reads.fb_exiting++;
		return false;
	}
	t->self_pass = pass;
	if (mode == VCPUPERF_READ_KICK)
		c->reads.kicks++;
	return true;
}

/**
 * vp_read_kick_late() - lazy mode: interrupt threads that did not read yet
 * @c:		the collection, lock held
 * @pass:	the pass number
 * @at:		CLOCK_MONOTONIC ns until which they had to do it by themselves
 *
 * Waits until @at for the threads asked in this pass, then kicks those
 * whose work has not run (one reschedule interrupt each).
 */
void vp_read_kick_late(struct vp_coll *c, u64 pass, u64 at)
{
	struct vp_target *t;

	list_for_each_entry(t, &c->targets, node) {
		if (t->self_pass != pass)
			continue;
		if (vp_selfread_wait(t->sr, pass, at))
			continue;
		/* kick_process() interrupts only a thread on a CPU */
		if (READ_ONCE(t->task->on_cpu))
			c->reads.kicks++;
		kick_process(t->task);
	}
}

/**
 * vp_read_finish() - second half for a thread that was asked to read
 * @c:		the collection, lock held
 * @t:		the thread, with t->self_pass == @pass
 * @pass:	the pass number
 * @deadline:	CLOCK_MONOTONIC ns until which its values are waited for
 *
 * Its values make the sample; if they did not come in time, it is read
 * directly (and counted).
 *
 * Return: true when the thread has exited: the caller ends it.
 */
bool vp_read_finish(struct vp_coll *c, struct vp_target *t, u64 pass,
		    u64 deadline)
{
	struct vcpuperf_count vals[VCPUPERF_MAX_EVENTS];
	u64 t_mono, t_wall, window;
	u32 exited;

	t->self_pass = 0;
	/* Reading itself at the deadline: it is done in microseconds. */
	if (!vp_selfread_wait(t->sr, pass, deadline) &&
	    vp_selfread_busy(t->sr))
		vp_selfread_wait(t->sr, pass, ktime_get_ns() + VP_SELF_GRACE_NS);
	if (vp_selfread_take(t->sr, pass, vals, &exited, &t_mono, &t_wall,
			     &window)) {
		c->reads.self++;
		return vp_sample_values(c, t, vals, exited, t_mono, t_wall,
					window, 0);
	}
	/*
	 * Not in time.  A thread that was switched out meanwhile (its
	 * counters are inactive) is read directly at no cost; one still on a
	 * CPU (in the kernel) costs the cross-CPU read.
	 */
	if (READ_ONCE(t->task->on_cpu))
		c->reads.fb_timeout++;
	else
		c->reads.fb_switched++;
	return vp_sample_target(c, t, 0);
}

/**
 * vp_read_pass() - read every thread of a collection once
 * @c:		the collection, lock held
 * @pass:	the pass number
 * @start:	CLOCK_MONOTONIC ns the pass began (its grid point, or later)
 *
 * In list order, threads running elsewhere are asked to read themselves
 * and the others are read at once; then the values of those asked are
 * collected, every wait bounded by the pass's deadline.  Threads that
 * exited are ended.
 */
void vp_read_pass(struct vp_coll *c, u64 pass, u64 start)
{
	u32 mode = vp_read_mode(c);
	u64 deadline = start + vp_self_budget(c, mode);
	struct vp_target *t, *tmp;
	bool asked = false;

	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		if (vp_read_start(c, t, pass, mode)) {
			asked = true;
			continue;
		}
		if (vp_sample_target(c, t, 0))
			vp_target_end(c, t, VCPUPERF_DETACH_EXITED);
		cond_resched();
	}
	if (!asked)
		return;
	if (mode == VCPUPERF_READ_LAZY)
		vp_read_kick_late(c, pass, start + VP_LAZY_WAIT_NS);
	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		if (t->self_pass != pass)
			continue;
		if (vp_read_finish(c, t, pass, deadline))
			vp_target_end(c, t, VCPUPERF_DETACH_EXITED);
		cond_resched();
	}
}
