// SPDX-License-Identifier: GPL-2.0
/*
 * How a sampling pass reads each thread: directly when the thread is not
 * on a CPU (its counters are inactive: no interrupt), by the thread
 * itself when it is running on another CPU (selfread.c: one interrupt or
 * none instead of one cross-CPU call per counter), and directly again,
 * counted per reason, whenever the thread cannot or did not read itself
 * in time.
 *
 * A pass does not wait for the threads it asks: it collects their values
 * at the next pass (sample.c, vp_sample_deferred()), so that the
 * sampler sleeps once per interval.  Every extra wake-up of the sampler
 * may itself cost interrupts (bench/README.md has the figures), and on a
 * CPU running a guest a preemption of the vCPU: what the self-read saves.
 * The values keep their own time and grid point; only their sample is
 * queued one interval later.  A thread that has not read itself by then
 * did not return to user or guest mode for a whole interval: it is read
 * directly, at no cost if it was switched out, across CPUs if it is still
 * in the kernel.
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "compat.h"
#include "exec.h"
#include "pass.h"
#include "sample.h"
#include "sched.h"
#include "selfread.h"
#include "target.h"
#include "vcpuperf.h"

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
	return c->interval_ns >= VP_LAZY_MIN_INTERVAL_NS ?
	       VCPUPERF_READ_LAZY : VCPUPERF_READ_KICK;
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
	if (VP_PF_NO_TASK_WORK(task->flags)) {
		c->reads.fb_user_worker++;
		return false;
	}
	if (task->flags & PF_EXITING) {
		c->reads.fb_exiting++;
		return false;
	}
	return true;
}

/**
 * vp_read_start() - ask a thread running elsewhere to read itself
 * @c:		the collection, lock held
 * @t:		the thread, with no self-read of an earlier pass outstanding
 * @pass:	the pass number
 * @mode:	from vp_read_mode()
 *
 * Remembers in the target that the thread was asked (t->self_pass and
 * t->self_grid, the pass's grid point).
 *
 * Return: true when it was asked; false when the caller reads it directly
 * (at once: a thread not on a CPU now may well be on one later in the
 * pass, and a direct read would then cost a cross-CPU call).
 */
bool vp_read_start(struct vp_coll *c, struct vp_target *t, u64 pass,
		   u32 mode)
{
	int ret;

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
	t->self_grid = c->pass_grid;
	vp_sched_who_snap(t);
	if (mode == VCPUPERF_READ_KICK)
		c->reads.kicks++;
	return true;
}

/**
 * vp_read_pass() - read every thread of a collection once
 * @c:		the collection, lock held
 * @pass:	the pass number
 *
 * First the values the threads asked in the previous pass read
 * themselves (or, where they did not, direct reads) become their samples;
 * then, in list order, threads running elsewhere are asked to read
 * themselves and the others are read at once.  Threads that exited are
 * ended, and those whose counters an exec ended attached again (exec.c).
 */
void vp_read_pass(struct vp_coll *c, u64 pass)
{
	u32 mode = vp_read_mode(c);
	struct vp_target *t, *tmp;

	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		if (!t->self_pass)
			continue;
		if (vp_sample_deferred(c, t))
			vp_target_gone(c, t);
		cond_resched();
	}
	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		if (vp_read_start(c, t, pass, mode))
			continue;
		if (vp_sample_target(c, t, 0))
			vp_target_gone(c, t);
		cond_resched();
	}
	/* Threads whose counters an exec ended: attached again. */
	vp_restarts_run(c);
}
