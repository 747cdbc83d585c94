// SPDX-License-Identifier: GPL-2.0
/*
 * Building lifecycle records.  Records are assembled in vp_state.scratch
 * under vp_state.lock and copied into the ring, which numbers them.
 */
#include <linux/string.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>

#include "vcpuperf.h"

/**
 * vp_rec_begin() - start a record in the scratch buffer
 * @vp:		module state, lock held
 * @type:	enum vcpuperf_rec_type
 * @size:	record size in bytes (rounded up to 8 here)
 * @tid:	thread, 0 for a session record
 *
 * The record is zeroed and time-stamped now.
 *
 * Return: the record, to be finished and passed to vp_rec_emit().
 */
void *vp_rec_begin(struct vp_state *vp, u16 type, u32 size, u32 tid)
{
	struct vcpuperf_rec *rec = vp->scratch;

	lockdep_assert_held(&vp->lock);
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
 * @vp:		module state, lock held
 * @rec:	the record
 * @cls:	how much of the ring it may use
 *
 * Return: 0, or -ENOSPC when it was dropped (and counted as such).
 */
int vp_rec_emit(struct vp_state *vp, void *rec, enum vp_rec_class cls)
{
	lockdep_assert_held(&vp->lock);
	return vp_ring_put(&vp->ring, rec, cls);
}

/**
 * vp_emit_started() - queue the started record of a thread
 * @vp:		module state, lock held
 * @t:		the thread
 */
void vp_emit_started(struct vp_state *vp, struct vp_target *t)
{
	struct vcpuperf_started *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_STARTED,
			 struct_size(r, events, t->nr_events), t->tid);
	r->id = t->id;
	r->kind = t->kind;
	r->nr_events = t->nr_events;
	r->interval_ns = vp->interval_ns;
	memcpy(r->comm, t->comm, sizeof(r->comm));
	memcpy(r->events, t->events, t->nr_events * sizeof(r->events[0]));
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_unavailable() - queue why a thread's counter does not count
 * @vp:		module state, lock held
 * @t:		the thread
 * @idx:	index of the event
 */
void vp_emit_unavailable(struct vp_state *vp, struct vp_target *t, u32 idx)
{
	const struct vcpuperf_event_desc *d = &t->events[idx];
	struct vcpuperf_unavailable *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_UNAVAILABLE, sizeof(*r), t->tid);
	r->id = t->id;
	r->event = idx;
	r->error = t->counters[idx].error;
	if (t->counters[idx].in_error)
		r->cause = (d->mods & VCPUPERF_MOD_PINNED) ?
			   VCPUPERF_CAUSE_PINNED_NO_SLOT :
			   VCPUPERF_CAUSE_UNKNOWN;
	else
		r->cause = vp_cause_from_errno(r->error, d->type, d->mods);
	strscpy(r->name, d->name, sizeof(r->name));
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_vcpu_added() - queue the discovery of a thread after attach
 * @vp:		module state, lock held
 * @t:		the new thread
 */
void vp_emit_vcpu_added(struct vp_state *vp, struct vp_target *t)
{
	struct vcpuperf_vcpu_added *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_VCPU_ADDED, sizeof(*r), t->tid);
	r->id = t->id;
	memcpy(r->comm, t->comm, sizeof(r->comm));
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_finished() - queue a thread's final tally
 * @vp:		module state, lock held
 * @t:		the thread
 */
void vp_emit_finished(struct vp_state *vp, struct vp_target *t)
{
	struct vcpuperf_finished *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_FINISHED, sizeof(*r), t->tid);
	r->id = t->id;
	r->intervals_seen = t->intervals_seen;
	r->intervals_with_values = t->intervals_with_values;
	r->targets = 1;
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_detached() - queue the end of a thread's sampling
 * @vp:		module state, lock held
 * @t:		the thread
 * @reason:	enum vcpuperf_detach_reason
 */
void vp_emit_detached(struct vp_state *vp, struct vp_target *t, u32 reason)
{
	struct vcpuperf_detached *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_DETACHED, sizeof(*r), t->tid);
	r->id = t->id;
	r->reason = reason;
	vp_rec_emit(vp, r, VP_REC_LIFECYCLE);
}

/**
 * vp_emit_session_finished() - queue the end of the session and mark EOF
 * @vp:		module state, lock held
 *
 * Readers see end of file once they have read this record.
 */
void vp_emit_session_finished(struct vp_state *vp)
{
	struct vp_session *s = &vp->session;
	struct vcpuperf_finished *r;

	r = vp_rec_begin(vp, VCPUPERF_REC_FINISHED, sizeof(*r), 0);
	r->id.vcpu = VCPUPERF_NO_VCPU;
	r->intervals_seen = s->intervals_seen;
	r->intervals_with_values = s->intervals_with_values;
	r->targets = s->targets;
	r->drops = vp_ring_drops(&vp->ring) - s->drops_at_start;
	vp_rec_emit(vp, r, VP_REC_SESSION_END);
	vp_ring_set_ended(&vp->ring, true);
	memset(s, 0, sizeof(*s));
}
