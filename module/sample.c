// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's sample: reading one thread's counters (or taking the values
 * it read itself) into a sample record, relative to the counters' bases;
 * what the sample says about the thread goes to its lifecycle
 * (lifecycle.c).
 */
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "counter.h"
#include "lifecycle.h"
#include "record.h"
#include "ring.h"
#include "sample.h"
#include "sched.h"
#include "selfread.h"
#include "vcpuperf.h"

#define VP_PPM		1000000ULL

/**
 * vp_sample_account() - queue a sample and the lifecycle records it implies
 * @c:		the collection, lock held
 * @t:		the thread
 * @s:		the sample, begun with vp_rec_begin() in the scratch buffer,
 *		with @s->counts holding the cumulative values just read
 * @counting:	counters that exist and were read
 * @exited:	counters that saw their thread exit
 * @window_ns:	time taken by the reads
 * @flags:	VCPUPERF_SAMPLE_* to set on the sample
 *
 * What the sample says against each counter's last one (did the thread
 * run, did a counter count, was one multiplexed) goes, after the sample,
 * to vp_lifecycle_sample(); the sample is final once every counter saw
 * the thread's end (vp_lifecycle_exited()).  The sample of a thread read
 * off every CPU (@t->idle_known) is also copied to @t->idle_rec, if any:
 * the next sample of a thread that has not run since is that copy with
 * new times.  Separate from the reads so that it can be tested with any
 * values.
 *
 * Return: true when every counter saw its thread's end (an exit or an exec
 * that changed its credentials): the caller ends it (vp_target_gone()).
 */
bool vp_sample_account(struct vp_coll *c, struct vp_target *t,
		       struct vcpuperf_sample *s, u32 counting, u32 exited,
		       u64 window_ns, u32 flags)
{
	struct vp_sample_facts f = { .min_ppm = VP_PPM };
	bool gone;
	u32 i;

	lockdep_assert_held(&c->lock);
	f.watch = vp_lifecycle_watched(t, counting);
	for (i = 0; i < t->nr_events; i++) {
		struct vp_counter *ctr = &t->counters[i];
		struct vp_delta d;

		if (!(counting & BIT(i)))
			continue;
		vp_count_delta(&ctr->last, &s->counts[i], &d);
		ctr->last = s->counts[i];
		f.ran |= d.enabled != 0;
		f.counted |= d.running != 0;
		if (f.watch & BIT(i))
			f.watched_counted |= d.running != 0;
		if (d.running && d.running < d.enabled) {
			bool ovf;

			f.mux |= BIT(i);
			f.min_ppm = min_t(u64, f.min_ppm,
					  vp_mul_div(d.running, VP_PPM,
						     d.enabled, &ovf));
		}
	}
	gone = vp_lifecycle_exited(t, counting, exited);
	if (gone)
		flags |= VCPUPERF_SAMPLE_FINAL;
	if (!t->intervals_seen)
		flags |= VCPUPERF_SAMPLE_FIRST;

	s->id = t->id;
	s->nr_events = t->nr_events;
	s->counting_mask = counting;
	s->exited_mask = exited;
	s->flags = flags;
	s->interval_ns = READ_ONCE(c->interval_ns);
	s->read_window_ns = window_ns;
	s->grid_ns = c->pass_grid;
	vp_rec_emit(c, s, VP_REC_SAMPLE);
	/* Only a thread read off every CPU can have its sample repeated. */
	if (t->idle_rec && t->idle_known)
		memcpy(t->idle_rec, s, s->rec.size);

	t->intervals_seen++;
	c->totals.intervals_seen++;
	if (f.counted) {
		t->intervals_with_values++;
		c->totals.intervals_with_values++;
	}
	vp_lifecycle_sample(c, t, &f, exited, gone);
	return gone;
}

/*
 * A pinned PMU counter that was never enabled although its thread ran
 * after every counter of the target existed: perf put it in error state
 * at its first schedule-in (no free PMU counter, and every pinned one
 * after it too), and the thread's exit, which moves every counter to the
 * exit state, may have hidden that before a sample saw it.
 */
static bool vp_pinned_never_on(const struct vp_target *t,
			       const struct vcpuperf_count *v, u32 i,
			       u64 runtime)
{
	return (t->events[i].mods & VCPUPERF_MOD_PINNED) &&
	       vp_is_pmu_event(t->events[i].type) && !v->enabled &&
	       runtime > t->runtime_at_start;
}

/*
 * Counters perf has put in error state (a pinned counter that found no
 * free PMU counter) are left out of the sample: their fields are null,
 * never a 0 that looks like a thread that did not run.  Returns the
 * counters that went into that state since the last sample: the caller
 * reports each once, after the sample (both records use the scratch
 * buffer).  @runtime is the thread's sum_exec_runtime read before the
 * counters: a thread that ran later may have enabled them since.
 */
static u32 vp_sample_drop_errors(struct vp_target *t,
				 struct vcpuperf_sample *s, u32 *counting,
				 u64 runtime)
{
	u32 newly = 0, i;

	for (i = 0; i < t->nr_events; i++) {
		struct vp_counter *ctr = &t->counters[i];

		if (!(*counting & BIT(i)))
			continue;
		/* Sticky: the thread's exit moves it from error to exit. */
		if (!ctr->in_error && !vp_counter_in_error(ctr) &&
		    !vp_pinned_never_on(t, &s->counts[i], i, runtime))
			continue;
		if (!ctr->in_error)
			newly |= BIT(i);
		ctr->in_error = true;
		memset(&s->counts[i], 0, sizeof(s->counts[i]));
		*counting &= ~BIT(i);
	}
	return newly;
}

/*
 * Is @task off every CPU, and how many times has it been switched out?
 * A thread that ran since an earlier look has been switched out since
 * (its switch count moved) or is on a CPU now: on_cpu is cleared only
 * after the switch that counted (release in finish_task_switch()), so it
 * is read first, with acquire.
 */
static bool vp_task_off_cpu(struct task_struct *task, unsigned long *csw)
{
	/* Pairs with the release of on_cpu in finish_task_switch(). */
	bool off = !smp_load_acquire(&task->on_cpu);

	*csw = READ_ONCE(task->nvcsw) + READ_ONCE(task->nivcsw);
	return off;
}

/* @sum = @a + @b, every field: a cumulative value from base and last. */
static void vp_count_sum(struct vcpuperf_count *sum,
			 const struct vcpuperf_count *a,
			 const struct vcpuperf_count *b)
{
	sum->value = a->value + b->value;
	sum->enabled = a->enabled + b->enabled;
	sum->running = a->running + b->running;
}

/*
 * The counts of a sample relative to each counter's base: what a counter
 * of this target's own would read (the counter may be shared, shared.c).
 */
static void vp_sample_rebase(const struct vp_target *t,
			     struct vcpuperf_sample *s, u32 counting)
{
	u32 i;

	for (i = 0; i < t->nr_events; i++) {
		const struct vcpuperf_count *b = &t->counters[i].base;

		if (!(counting & BIT(i)))
			continue;
		s->counts[i].value -= b->value;
		s->counts[i].enabled -= b->enabled;
		s->counts[i].running -= b->running;
	}
}

/* Account the sample, then report counters newly in error state. */
static bool vp_sample_finish(struct vp_coll *c, struct vp_target *t,
			     struct vcpuperf_sample *s, u32 counting,
			     u32 exited, u64 window_ns, u64 runtime,
			     u32 flags)
{
	u32 newly, i;
	bool gone;

	vp_sample_rebase(t, s, counting);
	newly = vp_sample_drop_errors(t, s, &counting, runtime);
	gone = vp_sample_account(c, t, s, counting, exited & counting,
				 window_ns, flags);
	for (i = 0; i < t->nr_events; i++)
		if (newly & BIT(i))
			vp_emit_unavailable(c, t, i);
	return gone;
}

/**
 * vp_sample_values() - queue a sample of values read elsewhere
 * @c:		the collection, lock held
 * @t:		the thread
 * @r:		the read
 * @flags:	VCPUPERF_SAMPLE_* to set on the sample
 *
 * For values the thread read itself (pass.c).  See vp_sample_account().
 *
 * Return: true when the thread's counters ended: the caller ends it.
 */
bool vp_sample_values(struct vp_coll *c, struct vp_target *t,
		      const struct vp_reading *r, u32 flags)
{
	struct vcpuperf_sample *s;
	u32 counting = 0, i;

	lockdep_assert_held(&c->lock);
	/* Read at another time than a direct read: nothing to keep. */
	t->idle_known = false;
	s = vp_rec_begin(c, VCPUPERF_REC_SAMPLE, vp_target_sample_size(t),
			 t->tid);
	s->rec.t_mono_ns = r->t_mono;
	s->rec.t_wall_ns = r->t_wall;
	for (i = 0; i < t->nr_events; i++) {
		if (!t->counters[i].event)
			continue;
		counting |= BIT(i);
		s->counts[i] = r->vals[i];
	}
	/* Read by the thread too, just before its counters. */
	flags |= vp_sched_sample(t, &r->sched, s);
	return vp_sample_finish(c, t, s, counting, r->exited, r->window,
				r->runtime, flags);
}

/**
 * vp_sample_deferred() - the sample of a thread asked to read itself
 * @c:		the collection, lock held
 * @t:		the thread, with t->self_pass set (cleared here)
 *
 * Its own values when its work has run; else a direct read now, counted
 * by why: still on a CPU (in the kernel since it was asked: a cross-CPU
 * read) or switched out (no cost).  Either way the sample is of the pass
 * the thread was asked in (its grid point; late_ns shows when the read
 * was).  Called by the next pass, and before a target ends.
 *
 * Return: true when the thread's counters ended: the caller ends it.
 */
bool vp_sample_deferred(struct vp_coll *c, struct vp_target *t)
{
	u64 pass = t->self_pass, grid = c->pass_grid;
	struct vp_reading r;
	bool gone;

	lockdep_assert_held(&c->lock);
	t->self_pass = 0;
	c->pass_grid = t->self_grid;
	if (vp_selfread_take(t->sr, pass, &r)) {
		c->reads.self++;
		gone = vp_sample_values(c, t, &r, 0);
	} else {
		if (READ_ONCE(t->task->on_cpu))
			c->reads.fb_timeout++;
		else
			c->reads.fb_switched++;
		gone = vp_sample_target(c, t, 0);
	}
	c->pass_grid = grid;
	return gone;
}

/*
 * The sample of a thread off every CPU since its last direct read: the
 * last one again (every count, mask and lifecycle state is as it was:
 * nothing of the thread ran), with the time, interval and grid point of
 * now, and its scheduler figures of now (a thread woken and waiting for a
 * CPU has not run, and waits).  No counter is read: its read window is 0.
 */
static void vp_sample_again(struct vp_coll *c, struct vp_target *t)
{
	struct vcpuperf_sample *s = t->idle_rec;

	s->rec.t_mono_ns = ktime_get_ns();
	s->rec.t_wall_ns = ktime_get_real_ns();
	s->flags = vp_sched_sample(t, NULL, s);
	s->interval_ns = READ_ONCE(c->interval_ns);
	s->read_window_ns = 0;
	s->grid_ns = c->pass_grid;
	vp_rec_emit(c, s, VP_REC_SAMPLE);
	t->intervals_seen++;
	c->totals.intervals_seen++;
	c->reads.unchanged++;
}

/**
 * vp_sample_target() - read one thread's counters and queue the sample
 * @c:		the collection, lock held
 * @t:		the thread
 * @flags:	VCPUPERF_SAMPLE_* to set on the sample
 *
 * The counters are read from here, back to back (kernel counters cannot
 * be grouped through the exported API): a thread running on another CPU
 * costs one cross-CPU call per counter.  The sample records how long the
 * reads took.  A counter in error state is left out and reported once.
 * See vp_sample_account() for the rest.
 *
 * Return: true when the thread's counters ended: the caller ends it.
 */
bool vp_sample_target(struct vp_coll *c, struct vp_target *t, u32 flags)
{
	u32 counting = 0, exited = 0, i;
	struct vcpuperf_sample *s;
	unsigned long csw;
	u64 t0, t1, runtime;
	bool off, same;

	lockdep_assert_held(&c->lock);
	off = vp_task_off_cpu(t->task, &csw);
	/* Before the counters: see vp_sample_drop_errors(). */
	runtime = READ_ONCE(t->task->se.sum_exec_runtime);
	same = off && t->idle_known && csw == t->idle_csw;
	if (same && !flags && t->idle_rec) {
		vp_sample_again(c, t);
		return false;
	}
	/* vp_rec_begin() stamps the record: that is the first read's time. */
	s = vp_rec_begin(c, VCPUPERF_REC_SAMPLE, vp_target_sample_size(t),
			 t->tid);
	t0 = s->rec.t_mono_ns;
	flags |= vp_sched_sample(t, NULL, s);
	for (i = 0; i < t->nr_events; i++) {
		struct vp_counter *ctr = &t->counters[i];

		if (!ctr->event)
			continue;
		counting |= BIT(i);
		if (same)
			vp_count_sum(&s->counts[i], &ctr->base, &ctr->last);
		else
			vp_counter_read(ctr, &s->counts[i]);
		if (vp_counter_exited(ctr))
			exited |= BIT(i);
	}
	t1 = ktime_get_ns();
	if (same) {
		c->reads.unchanged++;
	} else {
		unsigned long after;

		/* Off every CPU throughout: the values hold until it runs. */
		t->idle_known = t->idle_able && off &&
				vp_task_off_cpu(t->task, &after) &&
				after == csw;
		t->idle_csw = csw;
	}
	return vp_sample_finish(c, t, s, counting, exited, t1 - t0, runtime,
				flags);
}
