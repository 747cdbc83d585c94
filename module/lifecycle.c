// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's lifecycle as its samples show it: after each sample
 * (sample.c), which records it implies.  first_row after the first;
 * multiplexed at the first interval in which a counter ran for less time
 * than it was enabled; no_counters once the thread ran in
 * VP_NO_COUNTERS_INTERVALS intervals with no watched counter ever on the
 * PMU; task_exited once every counter saw the thread exit.  Each is
 * queued once; the records themselves are built in record.c.
 */
#include <linux/bits.h>
#include <linux/sched.h>

#include "lifecycle.h"
#include "record.h"
#include "target.h"
#include "vcpuperf.h"

/**
 * vp_lifecycle_watched() - the counters whose silence means something
 * @t:		the thread
 * @counting:	its counters that exist and were read
 *
 * The PMU counters when the thread has any (software events always count
 * while a thread runs, and would hide a PMU that never schedules its
 * counters), else all.
 *
 * Return: the watched counters, a subset of @counting.
 */
u32 vp_lifecycle_watched(const struct vp_target *t, u32 counting)
{
	u32 pmu = 0, i;

	for (i = 0; i < t->nr_events; i++)
		if ((counting & BIT(i)) && vp_is_pmu_event(t->events[i].type))
			pmu |= BIT(i);
	return pmu ? pmu : counting;
}

/**
 * vp_lifecycle_exited() - has the thread ended?
 * @t:		the thread
 * @counting:	its counters that exist and were read
 * @exited:	those that saw their thread's end
 *
 * Its counters say so (every one saw the end: an exit, or an exec that
 * changed its credentials), or, with none, its task.
 *
 * Return: true when the thread's sampling ends with this sample.
 */
bool vp_lifecycle_exited(const struct vp_target *t, u32 counting,
			 u32 exited)
{
	if (counting)
		return exited == counting;
	return READ_ONCE(t->task->exit_state) != 0;
}

/**
 * vp_lifecycle_sample() - the lifecycle records a queued sample implies
 * @c:		the collection, lock held
 * @t:		the thread, its sample just queued and counted
 * @f:		what the sample said (see struct vp_sample_facts)
 * @exited:	counters that saw their thread's end
 * @gone:	vp_lifecycle_exited() of the sample
 *
 * Keeps the thread's count of intervals it ran in and whether a watched
 * counter ever counted, and queues each record the first time it is due.
 * A thread that ended by an exec rather than an exit gets no task_exited
 * here: exec.c ends it with that reason.
 */
void vp_lifecycle_sample(struct vp_coll *c, struct vp_target *t,
			 const struct vp_sample_facts *f, u32 exited,
			 bool gone)
{
	lockdep_assert_held(&c->lock);
	if (f->ran)
		t->intervals_ran++;
	if (f->watched_counted)
		t->ever_counted = true;
	if (!t->first_row_sent)
		vp_emit_first_row(c, t, f->watch);
	if (f->mux && !t->multiplexed_sent)
		vp_emit_multiplexed(c, t, f->mux, f->min_ppm);
	if (f->watch && !t->ever_counted && !t->no_counters_sent &&
	    t->intervals_ran >= VP_NO_COUNTERS_INTERVALS)
		vp_emit_no_counters(c, t, f->watch);
	if (gone && vp_task_exiting(t->task))
		vp_emit_task_exited(c, t, exited);
}
