// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle lines: one JSON object per non-sample record, named as the
 * perf_qemu.py collector named its events (perf_started, perf_first_row,
 * ...), plus perf_seq_gap for holes in the sequence numbers.
 */
#include "vcpuperf-cat.h"

/**
 * vc_event_begin() - open a lifecycle line with the common fields
 * @d:		the decoder (its events writer and mono origin)
 * @name:	"perf_started" and the like
 * @rec:	the record the line is about
 */
void vc_event_begin(struct vc_decoder *d, const char *name,
		    const struct vcpuperf_rec *rec)
{
	struct jw *w = d->events;

	jw_begin(w, '{');
	jw_key_str(w, "event", name);
	jw_key_s64(w, "t_mono_ns", (long long)(rec->t_mono_ns -
					       d->mono_origin));
	jw_key_u64(w, "t_wall_ns", rec->t_wall_ns);
	jw_key_str(w, "source", "vcpuperf");
	jw_key_u64(w, "seq", rec->seq);
}

/**
 * vc_event_end() - close a lifecycle line
 * @d:		the decoder
 */
void vc_event_end(struct vc_decoder *d)
{
	jw_end(d->events, '}');
	jw_line_end(d->events);
}

/**
 * vc_event_id() - the pid, tid and vcpu fields
 * @d:		the decoder
 * @rec:	the record (its tid)
 * @id:		its target identity
 */
void vc_event_id(struct vc_decoder *d, const struct vcpuperf_rec *rec,
		 const struct vcpuperf_target_id *id)
{
	struct jw *w = d->events;

	jw_key_u64(w, "pid", id->pid);
	jw_key_u64(w, "tid", rec->tid);
	if (id->vcpu == VCPUPERF_NO_VCPU)
		jw_key_null(w, "vcpu");
	else
		jw_key_s64(w, "vcpu", id->vcpu);
}

/* The name of event @i of a thread ("#i" if its started record is gone). */
static void vc_event_name(struct jw *w, const struct vc_tid *t, __u32 i)
{
	char tmp[16];

	if (t && t->started && i < t->nr_events) {
		jw_strn(w, t->ev[i].name, VCPUPERF_NAME_LEN);
		return;
	}
	snprintf(tmp, sizeof(tmp), "#%u", i);
	jw_str(w, tmp);
}

/* "key":[names of the events whose bit is set in @mask] */
static void vc_names(struct jw *w, const char *key, const struct vc_tid *t,
		     __u32 nr, __u32 mask)
{
	__u32 i;

	jw_key(w, key);
	jw_begin(w, '[');
	for (i = 0; i < nr && i < 32; i++) {
		if (!(mask & (1U << i)))
			continue;
		jw_sep(w);
		vc_event_name(w, t, i);
	}
	jw_end(w, ']');
}

/* Events a record with no count of its own can refer to. */
static __u32 vc_nr(const struct vc_tid *t)
{
	return t && t->started ? t->nr_events : VCPUPERF_MAX_EVENTS;
}

static void vc_started(struct vc_decoder *d, const struct vcpuperf_rec *rec,
		       const struct vc_tid *t)
{
	const struct vcpuperf_started *s = (const void *)rec;
	struct jw *w = d->events;

	vc_event_begin(d, "perf_started", rec);
	vc_event_id(d, rec, &s->id);
	jw_key_str(w, "kind", vp_kind_name(s->kind));
	jw_key_strn(w, "comm", s->comm, VCPUPERF_COMM_LEN);
	vc_names(w, "events", t, s->nr_events, ~0U);
	jw_key(w, "interval_ms");
	jw_fixed(w, s->interval_ns, 6);
	if (t && t->started && t->not_applied) {
		char letters[8];
		__u32 i;

		/* keyword modifiers the kernel would ignore: left out */
		jw_key(w, "modifiers_not_applied");
		jw_begin(w, '{');
		for (i = 0; i < t->nr_events; i++) {
			if (!(t->not_applied & (1U << i)))
				continue;
			vc_mod_letters(letters, sizeof(letters),
				       t->ev[i].mods >>
				       VCPUPERF_MOD_NOT_APPLIED_SHIFT);
			jw_sep(w);
			vc_event_name(w, t, i);
			jw_need(w, 1);
			jw_putc(w, ':');
			jw_str(w, letters);
		}
		jw_end(w, '}');
	}
	vc_event_end(d);
}

static void vc_unavailable(struct vc_decoder *d,
			   const struct vcpuperf_rec *rec, struct vc_tid *t)
{
	const struct vcpuperf_unavailable *u = (const void *)rec;
	struct jw *w = d->events;

	if (t && u->event < 32)
		t->exist_mask &= ~(1U << u->event);
	vc_event_begin(d, "perf_unavailable", rec);
	vc_event_id(d, rec, &u->id);
	/* "event" is the line's own name: the counter's is "counter" */
	jw_key_strn(w, "counter", u->name, VCPUPERF_NAME_LEN);
	jw_key_u64(w, "index", u->event);
	/* 0: the counter exists but perf put it in error state */
	if (u->error)
		jw_key_str(w, "errno", vp_errno_name(u->error));
	else
		jw_key_null(w, "errno");
	jw_key_s64(w, "error", u->error);
	jw_key_str(w, "reason", vp_cause_name(u->cause));
	jw_key_str(w, "detail", vp_cause_text(u->cause));
	vc_event_end(d);
}

static void vc_first_row(struct vc_decoder *d,
			 const struct vcpuperf_rec *rec, const struct vc_tid *t)
{
	const struct vcpuperf_first_row *f = (const void *)rec;
	struct jw *w = d->events;

	vc_event_begin(d, "perf_first_row", rec);
	vc_event_id(d, rec, &f->id);
	jw_key_bool(w, "counters_populated", f->counters_populated != 0);
	vc_names(w, "counters", t, f->nr_events, f->populated_mask);
	vc_event_end(d);
}

static void vc_multiplexed(struct vc_decoder *d,
			   const struct vcpuperf_rec *rec,
			   const struct vc_tid *t)
{
	const struct vcpuperf_multiplexed *m = (const void *)rec;
	struct jw *w = d->events;

	vc_event_begin(d, "perf_multiplexed", rec);
	vc_event_id(d, rec, &m->id);
	vc_names(w, "events", t, vc_nr(t), m->mask);
	jw_key(w, "min_running_ratio");
	jw_fixed(w, m->min_ratio_ppm, 6);
	vc_event_end(d);
}

static void vc_no_counters(struct vc_decoder *d,
			   const struct vcpuperf_rec *rec,
			   const struct vc_tid *t)
{
	const struct vcpuperf_no_counters *n = (const void *)rec;
	struct jw *w = d->events;

	vc_event_begin(d, "perf_no_counters", rec);
	vc_event_id(d, rec, &n->id);
	jw_key_u64(w, "intervals_seen", n->intervals_seen);
	jw_key_u64(w, "intervals_ran", n->intervals_ran);
	jw_key_str(w, "reason", vp_cause_name(n->cause));
	jw_key_str(w, "likely_cause", vp_cause_text(n->cause));
	vc_names(w, "events", t, vc_nr(t), n->counting_mask);
	vc_event_end(d);
}

static void vc_vcpu_added(struct vc_decoder *d,
			  const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_vcpu_added *v = (const void *)rec;

	vc_event_begin(d, "perf_vcpu_added", rec);
	vc_event_id(d, rec, &v->id);
	jw_key_strn(d->events, "comm", v->comm, VCPUPERF_COMM_LEN);
	vc_event_end(d);
}

static void vc_task_exited(struct vc_decoder *d,
			   const struct vcpuperf_rec *rec,
			   const struct vc_tid *t)
{
	const struct vcpuperf_task_exited *x = (const void *)rec;
	struct jw *w = d->events;
	__u32 i;

	vc_event_begin(d, "perf_task_exited", rec);
	vc_event_id(d, rec, &x->id);
	jw_key(w, "final");
	jw_begin(w, '{');
	for (i = 0; i < x->nr_events; i++) {
		bool exists = !t || !t->started || (t->exist_mask & (1U << i));

		jw_sep(w);
		vc_event_name(w, t, i);
		jw_need(w, 1);
		jw_putc(w, ':');
		if (exists) {
			jw_u64(w, x->counts[i].value);
		} else {
			jw_need(w, 4);
			jw_lit(w, "null");
		}
	}
	jw_end(w, '}');
	vc_names(w, "exited", t, x->nr_events, x->exited_mask);
	vc_event_end(d);
}

static void vc_dropped(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_dropped *dr = (const void *)rec;
	struct jw *w = d->events;

	vc_event_begin(d, "perf_dropped", rec);
	jw_key_u64(w, "count", dr->count);
	jw_key_u64(w, "first_seq", dr->first_seq);
	jw_key_u64(w, "total", dr->total);
	vc_event_end(d);
}

static void vc_finished(struct vc_decoder *d, const struct vcpuperf_rec *rec,
			const struct vc_tid *t)
{
	const struct vcpuperf_finished *f = (const void *)rec;
	struct jw *w = d->events;

	vc_event_begin(d, "perf_finished", rec);
	if (rec->tid) {
		jw_key_str(w, "scope", "thread");
		vc_event_id(d, rec, &f->id);
	} else {
		jw_key_str(w, "scope", "session");
		jw_key_u64(w, "targets", f->targets);
		jw_key_u64(w, "drops", f->drops);
	}
	jw_key_u64(w, "intervals_seen", f->intervals_seen);
	jw_key_u64(w, "intervals_with_values", f->intervals_with_values);
	jw_key_u64(w, "rows", rec->tid ? (t ? t->rows : 0) : d->stats.rows);
	vc_event_end(d);
}

static void vc_detached(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_detached *x = (const void *)rec;

	vc_event_begin(d, "perf_detached", rec);
	vc_event_id(d, rec, &x->id);
	jw_key_str(d->events, "reason", vp_detach_name(x->reason));
	vc_event_end(d);
}

/**
 * vc_lifecycle() - write the lifecycle line of a validated record
 * @d:		the decoder
 * @rec:	a record other than header and sample; a started record has
 *		already been applied to its thread's state
 */
void vc_lifecycle(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	struct vc_tid *t = rec->tid ? vc_tid_find(d, rec->tid) : NULL;

	switch (rec->type) {
	case VCPUPERF_REC_STARTED:
		vc_started(d, rec, t);
		break;
	case VCPUPERF_REC_UNAVAILABLE:
		vc_unavailable(d, rec, t);
		break;
	case VCPUPERF_REC_FIRST_ROW:
		vc_first_row(d, rec, t);
		break;
	case VCPUPERF_REC_MULTIPLEXED:
		vc_multiplexed(d, rec, t);
		break;
	case VCPUPERF_REC_NO_COUNTERS:
		vc_no_counters(d, rec, t);
		break;
	case VCPUPERF_REC_VCPU_ADDED:
		vc_vcpu_added(d, rec);
		break;
	case VCPUPERF_REC_TASK_EXITED:
		vc_task_exited(d, rec, t);
		break;
	case VCPUPERF_REC_DROPPED:
		vc_dropped(d, rec);
		break;
	case VCPUPERF_REC_FINISHED:
		vc_finished(d, rec, t);
		break;
	case VCPUPERF_REC_DETACHED:
		vc_detached(d, rec);
		break;
	}
}

/**
 * vc_seq_gap() - write a perf_seq_gap line
 * @d:		the decoder
 * @rec:	the record that arrived at the gap
 * @expected:	the sequence number that should have come
 * @explained:	a dropped record accounts for exactly the missing numbers
 */
void vc_seq_gap(struct vc_decoder *d, const struct vcpuperf_rec *rec,
		__u64 expected, bool explained)
{
	struct jw *w = d->events;

	vc_event_begin(d, "perf_seq_gap", rec);
	jw_key_u64(w, "expected", expected);
	jw_key_u64(w, "got", rec->seq);
	jw_key_bool(w, "explained", explained);
	vc_event_end(d);
}
