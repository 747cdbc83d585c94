// SPDX-License-Identifier: GPL-2.0
/*
 * The sampler: a kthread that wakes on a drift-free CLOCK_MONOTONIC grid
 * (base + k * interval, hrtimer-based, not jiffies), reads every counter
 * of every thread with perf_event_read_value() (which sleeps, hence a
 * thread and not a timer), queues samples and drives each thread's
 * lifecycle: first_row, multiplexed, no_counters and task_exited.
 */
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/math64.h>
#include <linux/sched/task.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "vcpuperf.h"

/* Timer slack of the sampler's sleep: well under the 1 ms minimum. */
#define VP_SLACK_NS	(10 * NSEC_PER_USEC)
#define VP_PPM		1000000ULL

/*
 * The counters whose silence means something: the PMU counters when the
 * thread has any (software events always count while a thread runs, and
 * would hide a PMU that never schedules its counters), else all.
 */
static u32 vp_watched(const struct vp_target *t, u32 counting)
{
	u32 pmu = 0, i;

	for (i = 0; i < t->nr_events; i++)
		if ((counting & BIT(i)) && vp_is_pmu_event(t->events[i].type))
			pmu |= BIT(i);
	return pmu ? pmu : counting;
}

static void vp_emit_first_row(struct vp_state *vp, struct vp_target *t,
			      u32 counting)
{
	struct vcpuperf_first_row *r;
	u32 populated = 0, i;

	for (i = 0; i < t->nr_events; i++)
		if ((counting & BIT(i)) && t->counters[i].last.running)
			populated |= BIT(i);
	r = vp_rec_begin(vp, VCPUPERF_REC_FIRST_ROW, sizeof(*r), t->tid);
	r->id = t->id;
	r->counters_populated = populated != 0;
	r->populated_mask = populated;
	r->counting_mask = counting;
	r->nr_events = t->nr_events;
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
	t->first_row_sent = true;
}

static void vp_emit_multiplexed(struct vp_state *vp, struct vp_target *t,
				u32 mask, u32 min_ppm)
{
	struct vcpuperf_multiplexed *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_MULTIPLEXED, sizeof(*r), t->tid);
	r->id = t->id;
	r->mask = mask;
	r->min_ratio_ppm = min_ppm;
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
	t->multiplexed_sent = true;
}

static void vp_emit_no_counters(struct vp_state *vp, struct vp_target *t,
				u32 counting)
{
	struct vcpuperf_no_counters *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_NO_COUNTERS, sizeof(*r), t->tid);
	r->id = t->id;
	r->intervals_seen = t->intervals_seen;
	r->intervals_ran = t->intervals_ran;
	r->cause = VCPUPERF_CAUSE_NEVER_COUNTED;
	r->counting_mask = counting;
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
	t->no_counters_sent = true;
}

static void vp_emit_task_exited(struct vp_state *vp, struct vp_target *t,
				u32 exited)
{
	struct vcpuperf_task_exited *r;
	u32 i;

	r = vp_rec_begin(vp, VCPUPERF_REC_TASK_EXITED,
			 struct_size(r, counts, t->nr_events), t->tid);
	r->id = t->id;
	r->nr_events = t->nr_events;
	r->exited_mask = exited;
	for (i = 0; i < t->nr_events; i++)
		r->counts[i] = t->counters[i].last;
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
}

/* Has the thread exited?  Its counters say so, or, with none, its task. */
static bool vp_target_exited(struct vp_target *t, u32 counting, u32 exited)
{
	if (counting)
		return exited == counting;
	return READ_ONCE(t->task->exit_state) != 0;
}

/**
 * vp_sample_account() - queue a sample and the lifecycle records it implies
 * @vp:		module state, lock held
 * @t:		the thread
 * @s:		the sample, begun with vp_rec_begin() in the scratch buffer,
 *		with @s->counts holding the cumulative values just read
 * @counting:	counters that exist and were read
 * @exited:	counters that saw their thread exit
 * @window_ns:	time taken by the reads
 * @flags:	VCPUPERF_SAMPLE_* to set on the sample
 *
 * The lifecycle state machine: first_row after the first sample;
 * multiplexed at the first interval in which a counter ran for less than
 * it was enabled; no_counters once the thread ran in
 * VCPUPERF_NO_COUNTERS_INTERVALS intervals with no watched counter ever
 * on the PMU (the PMU counters when the thread has any, else all: see
 * vp_watched()); task_exited (and a final sample) once every counter saw the exit.
 * Separate from the reads so that it can be tested with any values.
 *
 * Return: true when the thread has exited: the caller ends it.
 */
bool vp_sample_account(struct vp_state *vp, struct vp_target *t,
		       struct vcpuperf_sample *s, u32 counting, u32 exited,
		       u64 window_ns, u32 flags)
{
	u32 mux = 0, min_ppm = VP_PPM, watch, i;
	bool ran = false, counted = false, pmu_counted = false, gone;

	lockdep_assert_held(&vp->lock);
	watch = vp_watched(t, counting);
	for (i = 0; i < t->nr_events; i++) {
		struct vp_counter *c = &t->counters[i];
		struct vp_delta d;

		if (!(counting & BIT(i)))
			continue;
		vp_count_delta(&c->last, &s->counts[i], &d);
		c->last = s->counts[i];
		ran |= d.enabled != 0;
		counted |= d.running != 0;
		if (watch & BIT(i))
			pmu_counted |= d.running != 0;
		if (d.running && d.running < d.enabled) {
			bool ovf;

			mux |= BIT(i);
			min_ppm = min_t(u64, min_ppm,
					vp_mul_div(d.running, VP_PPM, d.enabled,
						   &ovf));
		}
	}
	gone = vp_target_exited(t, counting, exited);
	if (gone)
		flags |= VCPUPERF_SAMPLE_FINAL;
	if (!t->intervals_seen)
		flags |= VCPUPERF_SAMPLE_FIRST;

	s->id = t->id;
	s->nr_events = t->nr_events;
	s->counting_mask = counting;
	s->exited_mask = exited;
	s->flags = flags;
	s->interval_ns = vp->interval_ns;
	s->read_window_ns = window_ns;
	vp_rec_emit(vp, s, VP_REC_SAMPLE);

	t->intervals_seen++;
	vp->session.intervals_seen++;
	if (ran)
		t->intervals_ran++;
	if (counted) {
		t->intervals_with_values++;
		vp->session.intervals_with_values++;
	}
	if (pmu_counted)
		t->ever_counted = true;
	if (!t->first_row_sent)
		vp_emit_first_row(vp, t, watch);
	if (mux && !t->multiplexed_sent)
		vp_emit_multiplexed(vp, t, mux, min_ppm);
	if (watch && !t->ever_counted && !t->no_counters_sent &&
	    t->intervals_ran >= VCPUPERF_NO_COUNTERS_INTERVALS)
		vp_emit_no_counters(vp, t, watch);
	if (gone)
		vp_emit_task_exited(vp, t, exited);
	return gone;
}

/**
 * vp_sample_target() - read one thread's counters and queue the sample
 * @vp:		module state, lock held
 * @t:		the thread
 * @flags:	VCPUPERF_SAMPLE_* to set on the sample
 *
 * The counters are read back to back with perf_event_read_value() (kernel
 * counters cannot be grouped through the exported API); the sample
 * records how long that took.  A counter perf has put in error state is
 * left out of the sample (its field is null, never a 0 that looks like a
 * thread that did not run) and reported once by an unavailable record.
 * See vp_sample_account() for the rest.
 *
 * Return: true when the thread has exited: the caller ends it.
 */
bool vp_sample_target(struct vp_state *vp, struct vp_target *t, u32 flags)
{
	u32 counting = 0, exited = 0, newly_failed = 0, i;
	struct vcpuperf_sample *s;
	bool gone;
	u64 t0, t1;

	lockdep_assert_held(&vp->lock);
	/* vp_rec_begin() stamps the record: that is the first read's time. */
	s = vp_rec_begin(vp, VCPUPERF_REC_SAMPLE,
			 struct_size(s, counts, t->nr_events), t->tid);
	t0 = s->rec.t_mono_ns;
	for (i = 0; i < t->nr_events; i++) {
		struct vp_counter *c = &t->counters[i];
		struct vcpuperf_count *v = &s->counts[i];

		if (!c->event)
			continue;
		v->value = perf_event_read_value(c->event, &v->enabled,
						 &v->running);
		/* Sticky: the thread's exit moves it from error to exit. */
		if (c->in_error || vp_counter_in_error(c)) {
			if (!c->in_error)
				newly_failed |= BIT(i);
			c->in_error = true;
			*v = (struct vcpuperf_count){ 0 };
			continue;
		}
		counting |= BIT(i);
		if (vp_counter_exited(c))
			exited |= BIT(i);
	}
	t1 = ktime_get_ns();
	gone = vp_sample_account(vp, t, s, counting, exited, t1 - t0, flags);
	/* After the sample: its record is built in the same scratch buffer. */
	for (i = 0; i < t->nr_events; i++)
		if (newly_failed & BIT(i))
			vp_emit_unavailable(vp, t, i);
	return gone;
}

/*
 * One pass over every target.  With a thousand targets a pass can outlast
 * the interval, and the next one then starts at once: the kthread gives
 * the CPU up between targets, or on a kernel without preemption it would
 * keep its CPU (and everything queued behind it) for as long as passes
 * overrun.  The lock stays held: targets change only under it.
 */
static void vp_sample_pass(struct vp_state *vp)
{
	struct vp_target *t, *tmp;

	vp_scan_groups(vp);
	/* One wake-up per pass, not one per record. */
	vp->ring.defer_wake = true;
	list_for_each_entry_safe(t, tmp, &vp->targets, node) {
		if (vp_sample_target(vp, t, 0))
			vp_target_end(vp, t, VCPUPERF_DETACH_EXITED);
		cond_resched();
	}
	vp->ring.defer_wake = false;
	vp_ring_wake(&vp->ring);
	vp->passes++;
}

/* One turn of the loop; returns the deadline to sleep to, 0 for none. */
static u64 vp_sampler_turn(struct vp_state *vp)
{
	u64 now, deadline, tick;

	mutex_lock(&vp->lock);
	if (list_empty(&vp->targets) && list_empty(&vp->groups)) {
		vp->grid_base = 0;
		mutex_unlock(&vp->lock);
		return 0;
	}
	now = ktime_get_ns();
	if (!vp->grid_base) {
		vp->grid_base = now;
		vp->tick = 0;
	}
	deadline = vp->grid_base + (vp->tick + 1) * vp->interval_ns;
	if (now >= deadline) {
		vp_sample_pass(vp);
		/* Grid point now due; points overrun by the pass are skipped. */
		tick = div64_u64(ktime_get_ns() - vp->grid_base,
				 vp->interval_ns);
		vp->missed_ticks += tick - (vp->tick + 1);
		vp->tick = tick;
		deadline = vp->grid_base + (vp->tick + 1) * vp->interval_ns;
	}
	mutex_unlock(&vp->lock);
	return deadline;
}

static int vp_sampler_fn(void *data)
{
	struct vp_state *vp = data;

	while (!kthread_should_stop()) {
		u64 deadline;

		atomic_set(&vp->kick, 0);
		deadline = vp_sampler_turn(vp);
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop() || atomic_read(&vp->kick)) {
			__set_current_state(TASK_RUNNING);
			continue;
		}
		if (deadline) {
			ktime_t kt = ns_to_ktime(deadline);

			if (ktime_get_ns() < deadline)
				schedule_hrtimeout_range(&kt, VP_SLACK_NS,
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
 * @vp:		module state, lock held
 *
 * After an attach, a detach or an interval change.
 */
void vp_sampler_kick(struct vp_state *vp)
{
	lockdep_assert_held(&vp->lock);
	atomic_set(&vp->kick, 1);
	if (vp->sampler)
		wake_up_process(vp->sampler);
}

/**
 * vp_sampler_start() - create the sampling kthread
 * @vp:		module state
 *
 * Return: 0 or the error of kthread_run().
 */
int vp_sampler_start(struct vp_state *vp)
{
	struct task_struct *k;

	k = kthread_run(vp_sampler_fn, vp, "vcpuperf");
	if (IS_ERR(k))
		return PTR_ERR(k);
	vp->sampler = k;
	return 0;
}

/**
 * vp_sampler_stop() - stop the sampling kthread and wait for it
 * @vp:		module state, lock not held
 *
 * The kthread is unpublished under the lock first, so that a command
 * finishing concurrently cannot kick a thread that is going away.
 */
void vp_sampler_stop(struct vp_state *vp)
{
	struct task_struct *k;

	mutex_lock(&vp->lock);
	k = vp->sampler;
	vp->sampler = NULL;
	mutex_unlock(&vp->lock);
	if (k)
		kthread_stop(k);
}
