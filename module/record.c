// SPDX-License-Identifier: GPL-2.0
/*
 * Building a collection's records: every record but the sample itself
 * (started, unavailable, vcpu_added, first_row, multiplexed,
 * mux_expected, no_counters, task_exited, finished, detached, the
 * session's finished) and the session totals its finished record carries.
 * Records are assembled in vp_coll.scratch under vp_coll.lock and copied
 * into the ring, which numbers them.  When a thread's samples call for a
 * lifecycle record is decided in lifecycle.c.
 */
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "counter.h"
#include "record.h"
#include "ring.h"
#include "shared.h"
#include "vcpuperf.h"

/**
 * vp_rec_begin() - start a record in the scratch buffer
 * @c:		the collection, lock held
 * @type:	enum vcpuperf_rec_type
 * @size:	record size in bytes (rounded up to 8 here)
 * @tid:	thread, 0 for a session record
 *
 * The record is zeroed and time-stamped now.
 *
 * Return: the record, to be finished and passed to vp_rec_emit().
 */
void *vp_rec_begin(struct vp_coll *c, u16 type, u32 size, u32 tid)
{
	struct vcpuperf_rec *rec = c->scratch;

	lockdep_assert_held(&c->lock);
	size = ALIGN(size, sizeof(u64));
	if (WARN_ON_ONCE(size > VP_MAX_REC_SIZE))
		size = VP_MAX_REC_SIZE;
	memset(rec, 0, size);
	rec->type = type;
	rec->size = size;
	rec->tid = tid;
	rec->t_mono_ns = ktime_get_ns();
	rec->t_wall_ns = ktime_get_real_ns();
	return rec;
}

/**
 * vp_rec_emit() - queue a record built with vp_rec_begin()
 * @c:		the collection, lock held
 * @rec:	the record
 * @cls:	how much of the ring it may use
 *
 * Return: 0, or -ENOSPC when it was dropped (and counted as such).
 */
int vp_rec_emit(struct vp_coll *c, void *rec, enum vp_rec_class cls)
{
	lockdep_assert_held(&c->lock);
	return vp_ring_put(&c->ring, rec, cls);
}

/**
 * vp_totals_begin() - begin the collection's session, if none is open
 * @c:		the collection, lock held
 *
 * A session runs from the first attach after a stop (or after creation)
 * to the next stop; its finished record carries its totals.
 */
void vp_totals_begin(struct vp_coll *c)
{
	lockdep_assert_held(&c->lock);
	if (c->totals.active)
		return;
	c->totals.active = true;
	c->totals.drops_at_start = vp_ring_drops(&c->ring);
	vp_ring_set_ended(&c->ring, false);
}

/**
 * vp_emit_started() - queue the started record of a thread
 * @c:		the collection, lock held
 * @t:		the thread
 */
void vp_emit_started(struct vp_coll *c, struct vp_target *t)
{
	struct vcpuperf_started *r;

	r = vp_rec_begin(c, VCPUPERF_REC_STARTED,
			 struct_size(r, events, t->nr_events), t->tid);
	r->id = t->id;
	r->kind = t->kind;
	r->nr_events = t->nr_events;
	r->interval_ns = READ_ONCE(c->interval_ns);
	memcpy(r->comm, t->comm, sizeof(r->comm));
	memcpy(r->events, t->events, t->nr_events * sizeof(r->events[0]));
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_unavailable_as() - queue why a counter of a thread does not count
 * @c:		the collection, lock held
 * @tid:	the thread, as the collection numbers it
 * @id:		its identity
 * @idx:	index of the event
 * @d:		the event
 * @error:	positive errno of the counter's creation, 0 for error state
 * @cause:	enum vcpuperf_cause
 * @flags:	VCPUPERF_UNAVAILABLE_PROCESS for a thread's process counter
 *		(process.c), 0 for a target's counter (vp_emit_unavailable())
 */
void vp_emit_unavailable_as(struct vp_coll *c, pid_t tid,
			    const struct vcpuperf_target_id *id, u32 idx,
			    const struct vcpuperf_event_desc *d, int error,
			    u32 cause, u32 flags)
{
	struct vcpuperf_unavailable *r;

	r = vp_rec_begin(c, VCPUPERF_REC_UNAVAILABLE, sizeof(*r), tid);
	r->id = *id;
	r->event = idx;
	r->error = error;
	r->cause = cause;
	r->flags = flags;
	strscpy(r->name, d->name, sizeof(r->name));
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_unavailable() - queue why a thread's counter does not count
 * @c:		the collection, lock held
 * @t:		the thread
 * @idx:	index of the event
 */
void vp_emit_unavailable(struct vp_coll *c, struct vp_target *t, u32 idx)
{
	const struct vcpuperf_event_desc *d = &t->events[idx];

	vp_emit_unavailable_as(c, t->tid, &t->id, idx, d,
			       t->counters[idx].error,
			       vp_counter_cause(&t->counters[idx], d), 0);
}

/**
 * vp_emit_vcpu_added() - queue the discovery of a thread after attach
 * @c:		the collection, lock held
 * @t:		the new thread
 */
void vp_emit_vcpu_added(struct vp_coll *c, struct vp_target *t)
{
	struct vcpuperf_vcpu_added *r;

	r = vp_rec_begin(c, VCPUPERF_REC_VCPU_ADDED, sizeof(*r), t->tid);
	r->id = t->id;
	memcpy(r->comm, t->comm, sizeof(r->comm));
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_finished() - queue a thread's final tally
 * @c:		the collection, lock held
 * @t:		the thread
 */
void vp_emit_finished(struct vp_coll *c, struct vp_target *t)
{
	struct vcpuperf_finished *r;

	r = vp_rec_begin(c, VCPUPERF_REC_FINISHED, sizeof(*r), t->tid);
	r->id = t->id;
	r->intervals_seen = t->intervals_seen;
	r->intervals_with_values = t->intervals_with_values;
	r->targets = 1;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_detached() - queue the end of a thread's sampling
 * @c:		the collection, lock held
 * @t:		the thread
 * @reason:	enum vcpuperf_detach_reason
 */
void vp_emit_detached(struct vp_coll *c, struct vp_target *t, u32 reason)
{
	struct vcpuperf_detached *r;

	r = vp_rec_begin(c, VCPUPERF_REC_DETACHED, sizeof(*r), t->tid);
	r->id = t->id;
	r->reason = reason;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_session_finished() - queue the end of the session and mark EOF
 * @c:		the collection, lock held
 *
 * Readers see end of file once they have read this record.
 */
void vp_emit_session_finished(struct vp_coll *c)
{
	struct vp_totals *s = &c->totals;
	struct vcpuperf_finished *r;

	r = vp_rec_begin(c, VCPUPERF_REC_FINISHED, sizeof(*r), 0);
	r->id.vcpu = VCPUPERF_NO_VCPU;
	r->intervals_seen = s->intervals_seen;
	r->intervals_with_values = s->intervals_with_values;
	r->targets = s->targets;
	r->drops = vp_ring_drops(&c->ring) - s->drops_at_start;
	vp_rec_emit(c, r, VP_REC_SESSION_END);
	vp_ring_set_ended(&c->ring, true);
	memset(s, 0, sizeof(*s));
}

/**
 * vp_emit_first_row() - queue the first_row record of a thread
 * @c:		the collection, lock held
 * @t:		the thread, after its first sample
 * @counting:	the counters watched (see vp_sample_account())
 *
 * Says which of them had been on the PMU by then.
 */
void vp_emit_first_row(struct vp_coll *c, struct vp_target *t,
		       u32 counting)
{
	struct vcpuperf_first_row *r;
	u32 populated = 0, i;

	for (i = 0; i < t->nr_events; i++)
		if ((counting & BIT(i)) && t->counters[i].last.running)
			populated |= BIT(i);
	r = vp_rec_begin(c, VCPUPERF_REC_FIRST_ROW, sizeof(*r), t->tid);
	r->id = t->id;
	r->counters_populated = populated != 0;
	r->populated_mask = populated;
	r->counting_mask = counting;
	r->nr_events = t->nr_events;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
	t->first_row_sent = true;
}

/* Does the thread ask for more hardware counters than its PMU has? */
static bool vp_load_exceeds(const struct vcpuperf_pmu_load *load)
{
	return load->pmu_counters && load->pmu_events > load->pmu_counters;
}

/**
 * vp_emit_multiplexed() - queue that a thread's counters are multiplexed
 * @c:		the collection, lock held
 * @t:		the thread
 * @mask:	counters that ran for less than they were enabled
 * @min_ppm:	the lowest running/enabled ratio among them, ppm
 *
 * With the thread's PMU load and the cause it implies.
 */
void vp_emit_multiplexed(struct vp_coll *c, struct vp_target *t,
			 u32 mask, u32 min_ppm)
{
	struct vcpuperf_multiplexed *r;

	r = vp_rec_begin(c, VCPUPERF_REC_MULTIPLEXED, sizeof(*r), t->tid);
	r->id = t->id;
	r->mask = mask;
	r->min_ratio_ppm = min_ppm;
	vp_shared_load(t->task, &r->load);
	if (!r->load.pmu_counters)
		r->cause = VCPUPERF_MUX_UNKNOWN;
	else if (r->load.pmu_events - r->load.inherited >
		 r->load.pmu_counters)
		r->cause = VCPUPERF_MUX_MORE_EVENTS;
	else if (vp_load_exceeds(&r->load))
		r->cause = VCPUPERF_MUX_PROCESS_TOTALS;
	else
		r->cause = VCPUPERF_MUX_PMU_SHARED;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
	t->multiplexed_sent = true;
}

/**
 * vp_emit_no_counters() - queue that a thread ran and its counters never
 *			   counted
 * @c:		the collection, lock held
 * @t:		the thread
 * @counting:	the counters watched (see vp_sample_account())
 *
 * With more hardware events than the PMU has counters the thread is
 * starved (perf rotates counters in only at its timer tick while the
 * thread runs, and the counters it created first hold the PMU whenever it
 * does); else others hold the PMU.
 */
void vp_emit_no_counters(struct vp_coll *c, struct vp_target *t,
			 u32 counting)
{
	struct vcpuperf_no_counters *r;
	u64 enabled = 0;
	u32 i;

	for (i = 0; i < t->nr_events; i++)
		if (counting & BIT(i))
			enabled = max(enabled, t->counters[i].last.enabled);
	r = vp_rec_begin(c, VCPUPERF_REC_NO_COUNTERS, sizeof(*r), t->tid);
	r->id = t->id;
	r->intervals_seen = t->intervals_seen;
	r->intervals_ran = t->intervals_ran;
	r->counting_mask = counting;
	r->ran_ns = t->intervals_ran ? div64_u64(enabled, t->intervals_ran) : 0;
	vp_shared_load(t->task, &r->load);
	r->cause = vp_load_exceeds(&r->load) ? VCPUPERF_CAUSE_STARVED :
		   VCPUPERF_CAUSE_NEVER_COUNTED;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
	t->no_counters_sent = true;
}

/**
 * vp_emit_mux_expected() - say at attach that a thread will multiplex
 * @c:		the collection, lock held
 * @t:		the thread, its counters made
 *
 * Queued when its hardware counters (of every collection: shared) now
 * outnumber its PMU's counters.
 */
void vp_emit_mux_expected(struct vp_coll *c, struct vp_target *t)
{
	struct vcpuperf_mux_expected *r;
	struct vcpuperf_pmu_load load;
	u32 i;

	for (i = 0; i < t->nr_events; i++)
		if (t->counters[i].event && vp_is_pmu_event(t->events[i].type))
			break;
	if (i == t->nr_events)
		return;
	vp_shared_load(t->task, &load);
	if (!vp_load_exceeds(&load))
		return;
	r = vp_rec_begin(c, VCPUPERF_REC_MUX_EXPECTED, sizeof(*r), t->tid);
	r->id = t->id;
	r->load = load;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_task_exited() - queue a thread's exit with its final counts
 * @c:		the collection, lock held
 * @t:		the thread
 * @exited:	counters that saw their thread exit
 */
void vp_emit_task_exited(struct vp_coll *c, struct vp_target *t,
			 u32 exited)
{
	struct vcpuperf_task_exited *r;
	u32 i;

	r = vp_rec_begin(c, VCPUPERF_REC_TASK_EXITED,
			 struct_size(r, counts, t->nr_events), t->tid);
	r->id = t->id;
	r->nr_events = t->nr_events;
	r->exited_mask = exited;
	for (i = 0; i < t->nr_events; i++)
		r->counts[i] = t->counters[i].last;
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}
