// SPDX-License-Identifier: GPL-2.0
/*
 * Lifecycle lines: one JSON object per non-sample record, named as the
 * Python perf-stat collector that vcpuperf replaces named its lifecycle
 * events (perf_started, perf_first_row, ...), plus perf_seq_gap for holes
 * in the sequence numbers.  These are the JSONL sink's lifecycle and gap
 * callbacks: they read the thread's state and never change it.
 */
#include <time.h>

#include "common.h"
#include "jsonl.h"
#include "lifecycle.h"
#include "output.h"
#include "procs.h"
#include "threads.h"

/* Open a lifecycle line with the common fields. */
static void vc_event_begin(const struct vc_jsonl *out, const char *name,
			   const struct vcpuperf_rec *rec)
{
	struct json_writer *w = out->events;

	json_begin(w, '{');
	json_key_str(w, "event", name);
	json_key_s64(w, "t_mono_ns",
		     (long long)(rec->t_mono_ns - out->mono_origin));
	json_key_u64(w, "t_wall_ns", rec->t_wall_ns);
	json_key_str(w, "source", "vcpuperf");
	json_key_u64(w, "seq", rec->seq);
}

static void vc_event_end(const struct vc_jsonl *out)
{
	json_end(out->events, '}');
	json_line_end(out->events);
}

/* "key":"string", or null when empty. */
static void vc_key_opt_str(struct json_writer *w, const char *key,
			   const char *s)
{
	if (*s)
		json_key_str(w, key, s);
	else
		json_key_null(w, key);
}

/*
 * The pid, tid and vcpu fields of the thread @rec is about, and the VM
 * identity (vm, uuid) of its process, null when not known.
 */
static void vc_event_id(const struct vc_jsonl *out,
			const struct vcpuperf_rec *rec,
			const struct vcpuperf_target_id *id,
			const struct vc_tid *t)
{
	const struct vc_proc *p = t ? t->proc : NULL;
	struct json_writer *w = out->events;

	json_key_u64(w, "pid", id->pid);
	json_key_u64(w, "tid", rec->tid);
	if (id->vcpu == VCPUPERF_NO_VCPU)
		json_key_null(w, "vcpu");
	else
		json_key_s64(w, "vcpu", id->vcpu);
	vc_key_opt_str(w, "vm", p ? p->vm : "");
	vc_key_opt_str(w, "uuid", p ? p->uuid : "");
}

/* The name of event @i of a thread ("#i" if its started record is gone). */
static void vc_event_name(struct json_writer *w, const struct vc_tid *t,
			  __u32 i)
{
	char tmp[sizeof("#4294967295")];

	if (t && t->started && i < t->nr_events) {
		json_strn(w, t->ev[i].name, VCPUPERF_NAME_LEN);
		return;
	}
	snprintf(tmp, sizeof(tmp), "#%u", i);
	json_str(w, tmp);
}

/* "key":[names of the events whose bit is set in @mask] */
static void vc_key_mask_names(struct json_writer *w, const char *key,
			      const struct vc_tid *t, __u32 nr, __u32 mask)
{
	__u32 i;

	json_key(w, key);
	json_begin(w, '[');
	for (i = 0; i < nr && i < VC_BITS_PER_MASK; i++) {
		if (!(mask & (1U << i)))
			continue;
		json_sep(w);
		vc_event_name(w, t, i);
	}
	json_end(w, ']');
}

/* Events a record with no count of its own can refer to. */
static __u32 vc_thread_nr_events(const struct vc_tid *t)
{
	return t && t->started ? t->nr_events : VCPUPERF_MAX_EVENTS;
}

/*
 * "modifiers_not_applied":{"event name":"G",...}: command keyword
 * modifiers the kernel would ignore for these events, left out.
 */
static void vc_not_applied_events(struct json_writer *w,
				  const struct vc_tid *t)
{
	char letters[VP_NR_MODS + 1];
	__u32 i;

	json_key(w, "modifiers_not_applied");
	json_begin(w, '{');
	for (i = 0; i < t->nr_events; i++) {
		if (!(t->not_applied & (1U << i)))
			continue;
		vc_mod_letters(letters, sizeof(letters),
			       t->ev[i].mods >> VCPUPERF_MOD_NOT_APPLIED_SHIFT);
		json_sep(w);
		vc_event_name(w, t, i);
		json_put_char(w, ':');
		json_str(w, letters);
	}
	json_end(w, '}');
}

static void vc_started(const struct vc_jsonl *out,
		       const struct vcpuperf_rec *rec, const struct vc_tid *t)
{
	const struct vcpuperf_started *s = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_started", rec);
	vc_event_id(out, rec, &s->id, t);
	json_key_str(w, "kind", vp_kind_name(s->kind));
	json_key_strn(w, "comm", s->comm, VCPUPERF_COMM_LEN);
	vc_key_mask_names(w, "events", t, s->nr_events, ~0U);
	json_key(w, "interval_ms");
	json_fixed(w, s->interval_ns, VC_NS_DIGITS_MS);
	if (t && t->started && t->not_applied)
		vc_not_applied_events(w, t);
	vc_event_end(out);
}

static void vc_unavailable(const struct vc_jsonl *out, const struct vc_tid *t,
			   const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_unavailable *u = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_unavailable", rec);
	vc_event_id(out, rec, &u->id, t);
	/* the thread's own counter, or its share of the per-VM totals */
	json_key_str(w, "scope", u->flags & VCPUPERF_UNAVAILABLE_PROCESS ?
		     "vm" : "thread");
	/* "event" is the line's own name: the counter's is "counter" */
	json_key_strn(w, "counter", u->name, VCPUPERF_NAME_LEN);
	json_key_u64(w, "index", u->event);
	/* 0: the counter exists, but perf put it in error state */
	if (u->error)
		json_key_str(w, "errno", vp_errno_name(u->error));
	else
		json_key_null(w, "errno");
	json_key_s64(w, "error", u->error);
	json_key_str(w, "reason", vp_cause_name(u->cause));
	json_key_str(w, "detail", vp_cause_text(u->cause));
	vc_event_end(out);
}

static void vc_first_row(const struct vc_jsonl *out,
			 const struct vcpuperf_rec *rec, const struct vc_tid *t)
{
	const struct vcpuperf_first_row *f = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_first_row", rec);
	vc_event_id(out, rec, &f->id, t);
	json_key_bool(w, "counters_populated", f->counters_populated != 0);
	vc_key_mask_names(w, "counters", t, f->nr_events, f->populated_mask);
	vc_event_end(out);
}

/*
 * "pmu_events":N,"pmu_events_inherited":I,"pmu_counters":M|null,
 * "collections":U,"rotate_ms":R|null: what the thread asks of its PMU (0
 * counters or interval: not known).
 */
static void vc_key_load(struct json_writer *w,
			const struct vcpuperf_pmu_load *l)
{
	json_key_u64(w, "pmu_events", l->pmu_events);
	json_key_u64(w, "pmu_events_inherited", l->inherited);
	json_key(w, "pmu_counters");
	json_opt_u64(w, l->pmu_counters, l->pmu_counters);
	json_key_u64(w, "collections", l->users);
	json_key(w, "rotate_ms");
	json_opt_u64(w, l->rotate_ms, l->rotate_ms);
}

static void vc_multiplexed(const struct vc_jsonl *out,
			   const struct vcpuperf_rec *rec,
			   const struct vc_tid *t)
{
	const struct vcpuperf_multiplexed *m = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_multiplexed", rec);
	vc_event_id(out, rec, &m->id, t);
	vc_key_mask_names(w, "events", t, vc_thread_nr_events(t), m->mask);
	json_key(w, "min_running_ratio");
	json_fixed(w, m->min_ratio_ppm, VC_PPM_DIGITS);
	json_key_str(w, "cause", vp_mux_cause_name(m->cause));
	vc_key_load(w, &m->load);
	vc_event_end(out);
}

static void vc_mux_expected(const struct vc_jsonl *out,
			    const struct vcpuperf_rec *rec,
			    const struct vc_tid *t)
{
	const struct vcpuperf_mux_expected *x = (const void *)rec;

	vc_event_begin(out, "perf_multiplexed_expected", rec);
	vc_event_id(out, rec, &x->id, t);
	vc_key_load(out->events, &x->load);
	vc_event_end(out);
}

static void vc_no_counters(const struct vc_jsonl *out,
			   const struct vcpuperf_rec *rec,
			   const struct vc_tid *t)
{
	const struct vcpuperf_no_counters *n = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_no_counters", rec);
	vc_event_id(out, rec, &n->id, t);
	json_key_u64(w, "intervals_seen", n->intervals_seen);
	json_key_u64(w, "intervals_ran", n->intervals_ran);
	json_key_str(w, "reason", vp_cause_name(n->cause));
	json_key_str(w, "likely_cause", vp_cause_text(n->cause));
	vc_key_mask_names(w, "events", t, vc_thread_nr_events(t),
			  n->counting_mask);
	json_key_u64(w, "ran_ns_per_interval", n->ran_ns);
	vc_key_load(w, &n->load);
	vc_event_end(out);
}

static void vc_vcpu_added(const struct vc_jsonl *out, const struct vc_tid *t,
			  const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_vcpu_added *v = (const void *)rec;

	vc_event_begin(out, "perf_vcpu_added", rec);
	vc_event_id(out, rec, &v->id, t);
	json_key_strn(out->events, "comm", v->comm, VCPUPERF_COMM_LEN);
	vc_event_end(out);
}

static void vc_task_exited(const struct vc_jsonl *out,
			   const struct vcpuperf_rec *rec,
			   const struct vc_tid *t)
{
	const struct vcpuperf_task_exited *x = (const void *)rec;
	struct json_writer *w = out->events;
	__u32 i;

	vc_event_begin(out, "perf_task_exited", rec);
	vc_event_id(out, rec, &x->id, t);
	json_key(w, "final");
	json_begin(w, '{');
	for (i = 0; i < x->nr_events; i++) {
		bool exists = !t || !t->started || (t->exist_mask & (1U << i));

		json_sep(w);
		vc_event_name(w, t, i);
		json_put_char(w, ':');
		if (exists)
			json_u64(w, x->counts[i].value);
		else
			json_null(w);
	}
	json_end(w, '}');
	vc_key_mask_names(w, "exited", t, x->nr_events, x->exited_mask);
	vc_event_end(out);
}

static void vc_dropped(const struct vc_jsonl *out,
		       const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_dropped *dr = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_dropped", rec);
	json_key_u64(w, "count", dr->count);
	json_key_u64(w, "first_seq", dr->first_seq);
	json_key_u64(w, "total", dr->total);
	vc_event_end(out);
}

/*
 * "totals":{"EVENT":{"value":V,"enabled":E,"running":R,"scaled":S},...}:
 * per event the cumulative counts over the whole collection (its last
 * sample) and the estimate value x enabled / running from them (null when
 * the counter never ran; null throughout for a counter that does not
 * exist).  Unlike the sum of the rows, which has nothing for an interval
 * in which a multiplexed counter did not run at all, the estimate covers
 * the whole episode.
 */
static void vc_key_totals(struct json_writer *w,
			  const struct vcpuperf_event_desc *ev, __u32 nr,
			  __u32 exist, const struct vcpuperf_count *c)
{
	__u64 scaled = 0;
	__u32 i;

	json_key(w, "totals");
	json_begin(w, '{');
	for (i = 0; i < nr; i++) {
		bool have = exist & (1U << i);
		bool est = have && vp_scale(c[i].value, c[i].enabled,
					    c[i].running, &scaled);

		json_sep(w);
		json_strn(w, ev[i].name, VCPUPERF_NAME_LEN);
		json_put_char(w, ':');
		json_begin(w, '{');
		json_key(w, "value");
		json_opt_u64(w, have, c[i].value);
		json_key(w, "enabled");
		json_opt_u64(w, have, c[i].enabled);
		json_key(w, "running");
		json_opt_u64(w, have, c[i].running);
		json_key(w, "scaled");
		json_opt_u64(w, est, scaled);
		json_end(w, '}');
	}
	json_end(w, '}');
}

/*
 * The scheduler figures over the whole collection, under the keys of the
 * rows they sum (null throughout when the samples carried none: attached
 * no_sched; wait and timeslices null where the kernel keeps none).
 */
static void vc_key_sched_totals(struct json_writer *w, const struct vc_sched *s)
{
	bool info = s->have && (s->last.valid & VCPUPERF_SCHED_INFO);

	json_key(w, "sched_run_ns");
	json_opt_u64(w, s->have, s->last.run_ns);
	json_key(w, "sched_wait_ns");
	json_opt_u64(w, info, s->last.wait_ns);
	json_key(w, "sched_timeslices");
	json_opt_u64(w, info, s->last.timeslices);
	json_key(w, "sched_voluntary_switches");
	json_opt_u64(w, s->have, s->last.voluntary);
	json_key(w, "sched_involuntary_switches");
	json_opt_u64(w, s->have, s->last.involuntary);
	json_key(w, "sched_migrations");
	json_opt_u64(w, s->have, s->last.migrations);
}

/*
 * Who took the thread's CPU over the whole collection, under the keys of
 * the rows they sum (--who; the other VMs' parts only in the rows).
 */
static void vc_key_who_totals(struct json_writer *w, const struct vc_who *s)
{
	char key[VC_WHO_KEY_MAX];
	__u32 i;

	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		snprintf(key, sizeof(key), "sched_wait_%s_ns",
			 vp_who_kind_name(i));
		json_key_u64(w, key, s->last.wait_ns[i]);
	}
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		if (i == VCPUPERF_WHO_IDLE)
			continue;
		snprintf(key, sizeof(key), "sched_preempted_%s",
			 vp_who_kind_name(i));
		json_key_u64(w, key, s->last.preempted[i]);
	}
}

static void vc_finished(const struct vc_jsonl *out, const struct vc_tid *t,
			const struct vcpuperf_rec *rec, __u64 rows)
{
	const struct vcpuperf_finished *f = (const void *)rec;
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_finished", rec);
	if (rec->tid) {
		json_key_str(w, "scope", "thread");
		vc_event_id(out, rec, &f->id, t);
		if (t && t->started) {
			vc_key_totals(w, t->ev, t->nr_events, t->exist_mask,
				      t->prev);
			vc_key_sched_totals(w, &t->sched);
			if (t->who.have)
				vc_key_who_totals(w, &t->who);
		}
	} else {
		json_key_str(w, "scope", "session");
		json_key_u64(w, "targets", f->targets);
		json_key_u64(w, "drops", f->drops);
	}
	json_key_u64(w, "intervals_seen", f->intervals_seen);
	json_key_u64(w, "intervals_with_values", f->intervals_with_values);
	json_key_u64(w, "rows", rows);
	vc_event_end(out);
}

static void vc_detached(const struct vc_jsonl *out, const struct vc_tid *t,
			const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_detached *x = (const void *)rec;

	vc_event_begin(out, "perf_detached", rec);
	vc_event_id(out, rec, &x->id, t);
	json_key_str(out->events, "reason", vp_detach_name(x->reason));
	vc_event_end(out);
}

/**
 * vc_write_lifecycle() - write the lifecycle line of a record
 * @sink:	the JSONL sink
 * @rec:	a validated record other than header and sample, already
 *		applied to its thread
 * @t:		its thread, NULL for tid 0 or a thread never started
 * @rows:	rows so far of the thread, or of the session for tid 0
 */
void vc_write_lifecycle(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			const struct vc_tid *t, __u64 rows)
{
	const struct vc_jsonl *out = container_of(sink, struct vc_jsonl, sink);

	switch (rec->type) {
	case VCPUPERF_REC_STARTED:
		vc_started(out, rec, t);
		break;
	case VCPUPERF_REC_UNAVAILABLE:
		vc_unavailable(out, t, rec);
		break;
	case VCPUPERF_REC_FIRST_ROW:
		vc_first_row(out, rec, t);
		break;
	case VCPUPERF_REC_MULTIPLEXED:
		vc_multiplexed(out, rec, t);
		break;
	case VCPUPERF_REC_NO_COUNTERS:
		vc_no_counters(out, rec, t);
		break;
	case VCPUPERF_REC_MUX_EXPECTED:
		vc_mux_expected(out, rec, t);
		break;
	case VCPUPERF_REC_VCPU_ADDED:
		vc_vcpu_added(out, t, rec);
		break;
	case VCPUPERF_REC_TASK_EXITED:
		vc_task_exited(out, rec, t);
		break;
	case VCPUPERF_REC_DROPPED:
		vc_dropped(out, rec);
		break;
	case VCPUPERF_REC_FINISHED:
		vc_finished(out, t, rec, rows);
		break;
	case VCPUPERF_REC_DETACHED:
		vc_detached(out, t, rec);
		break;
	}
}

/**
 * vc_write_sched_partial() - write the perf_sched_partial line of a thread
 * @out:	the JSONL sink
 * @t:		the thread
 * @s:		its first sample whose scheduler figures lack some
 *
 * The kernel keeps no wait and no timeslices (built without
 * CONFIG_SCHED_INFO): its rows have them null.  Once per thread.
 */
void vc_write_sched_partial(const struct vc_jsonl *out, const struct vc_tid *t,
			    const struct vcpuperf_sample *s)
{
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_sched_partial", &s->rec);
	vc_event_id(out, &s->rec, &s->id, t);
	json_key(w, "missing");
	json_put_lit(w, "[\"sched_wait_ns\",\"sched_timeslices\"]");
	json_key_str(w, "cause", "no_sched_info");
	vc_event_end(out);
}

/**
 * vc_write_who_partial() - say a thread's rows cannot say who took its CPU
 * @out:	the JSONL sink
 * @t:		the thread
 * @s:		its first sample
 * @cause:	enum vcpuperf_cause: why the module could not keep them
 *		(no_memory, no_tracepoint)
 *
 * Its rows have every sched_wait_KIND_ns, sched_preempted_KIND and
 * sched_wait_vms null.  Once per thread.
 */
void vc_write_who_partial(const struct vc_jsonl *out, const struct vc_tid *t,
			  const struct vcpuperf_sample *s, __u32 cause)
{
	struct json_writer *w = out->events;
	char key[VC_WHO_KEY_MAX];
	__u32 i;

	vc_event_begin(out, "perf_sched_partial", &s->rec);
	vc_event_id(out, &s->rec, &s->id, t);
	json_key(w, "missing");
	json_begin(w, '[');
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		snprintf(key, sizeof(key), "sched_wait_%s_ns",
			 vp_who_kind_name(i));
		json_sep(w);
		json_str(w, key);
	}
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		if (i == VCPUPERF_WHO_IDLE)
			continue;
		snprintf(key, sizeof(key), "sched_preempted_%s",
			 vp_who_kind_name(i));
		json_sep(w);
		json_str(w, key);
	}
	json_sep(w);
	json_str(w, "sched_wait_vms");
	json_end(w, ']');
	json_key_str(w, "cause", vp_cause_name(cause));
	vc_event_end(out);
}

/* An event of a whole process: scope "vm", its pid, VM name and UUID. */
static void vc_vm_event_begin(const struct vc_jsonl *out, const char *name,
			      const struct vcpuperf_rec *rec,
			      const struct vc_proc *p)
{
	struct json_writer *w = out->events;

	vc_event_begin(out, name, rec);
	json_key_str(w, "scope", "vm");
	json_key_u64(w, "pid", p->pid);
	vc_key_opt_str(w, "vm", p->vm);
	vc_key_opt_str(w, "uuid", p->uuid);
}

/**
 * vc_write_vm_sched_stale() - write the perf_sched_partial line of a VM
 * @out:	the JSONL sink
 * @p:		the process
 * @s:		its process sample whose figures could not be summed
 *
 * The module had no memory for the process's list of threads: the
 * row's scheduler figures are null, and the next row's cover this
 * interval too.  Each time it happens.
 */
void vc_write_vm_sched_stale(const struct vc_jsonl *out,
			     const struct vc_proc *p,
			     const struct vcpuperf_process_sample *s)
{
	struct json_writer *w = out->events;

	vc_vm_event_begin(out, "perf_sched_partial", &s->rec, p);
	json_key(w, "missing");
	json_put_lit(w, "[\"sched_run_ns\",\"sched_wait_ns\","
		     "\"sched_timeslices\",\"sched_voluntary_switches\","
		     "\"sched_involuntary_switches\",\"sched_migrations\"]");
	json_key_str(w, "cause", "no_memory");
	vc_event_end(out);
}

/**
 * vc_write_seq_gap() - write a perf_seq_gap line
 * @sink:	the JSONL sink
 * @rec:	the record that arrived at the gap
 * @expected:	the sequence number that should have come
 * @explained:	a dropped record accounts for exactly the missing numbers
 */
void vc_write_seq_gap(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      __u64 expected, bool explained)
{
	const struct vc_jsonl *out = container_of(sink, struct vc_jsonl, sink);
	struct json_writer *w = out->events;

	vc_event_begin(out, "perf_seq_gap", rec);
	json_key_u64(w, "expected", expected);
	json_key_u64(w, "got", rec->seq);
	json_key_bool(w, "explained", explained);
	vc_event_end(out);
}

/**
 * vc_write_vm_finished() - write the perf_finished line of a process
 * @out:	the JSONL sink
 * @p:		the process, after its final process sample
 * @s:		that sample
 *
 * Scope "vm": the process's rows and its totals over the whole
 * collection (see vc_key_totals(); the estimate is from the counts summed
 * over its threads).  For a process recorded without process totals it
 * only marks the end: rows and threads 0, every total null.
 */
void vc_write_vm_finished(const struct vc_jsonl *out, const struct vc_proc *p,
			  const struct vcpuperf_process_sample *s)
{
	struct json_writer *w = out->events;

	vc_vm_event_begin(out, "perf_finished", &s->rec, p);
	json_key_u64(w, "threads", s->threads);
	json_key_u64(w, "threads_exited", s->exited);
	json_key_u64(w, "rows", p->rows);
	vc_key_totals(w, p->ev, p->nr_events, s->counting_mask, s->counts);
	vc_key_sched_totals(w, &p->sched);
	vc_event_end(out);
}

/**
 * vc_write_attach_failed() - write the perf_attach_failed line of a VM
 * @out:	the JSONL sink of its episode
 * @pid:	its QEMU
 * @vm:		its VM name, "" for none
 * @uuid:	its UUID, "" for none
 * @err:	positive errno of its attach
 * @reason:	the module's reason, "" for none
 *
 * A VM a host-wide recording found and could not attach (the opener's
 * authority, the module's limits): said in its own episode.  Stamped now:
 * no record of the stream stands behind it.
 */
void vc_write_attach_failed(const struct vc_jsonl *out, int pid,
			    const char *vm, const char *uuid, int err,
			    const char *reason)
{
	struct json_writer *w = out->events;
	struct timespec mono, wall;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &wall);
	json_begin(w, '{');
	json_key_str(w, "event", "perf_attach_failed");
	json_key_s64(w, "t_mono_ns", (long long)((__u64)mono.tv_sec *
						  VP_NS_PER_S + (__u64)mono.tv_nsec -
						  out->mono_origin));
	json_key_u64(w, "t_wall_ns", (__u64)wall.tv_sec * VP_NS_PER_S +
		     (__u64)wall.tv_nsec);
	json_key_str(w, "source", "vcpuperf");
	json_key_u64(w, "pid", (__u64)pid);
	vc_key_opt_str(w, "vm", vm);
	vc_key_opt_str(w, "uuid", uuid);
	json_key_str(w, "errno", vp_errno_name(err));
	json_key_s64(w, "error", -err);
	vc_key_opt_str(w, "reason", reason);
	vc_event_end(out);
}

/**
 * vc_write_process() - write the perf_process_started line of a process
 * @sink:	the JSONL sink
 * @rec:	its process record
 * @p:		the process, as its process record set it
 */
void vc_write_process(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      const struct vc_proc *p)
{
	const struct vc_jsonl *out = container_of(sink, struct vc_jsonl, sink);
	struct json_writer *w = out->events;
	struct vc_tid fake;

	vc_event_begin(out, "perf_process_started", rec);
	json_key_u64(w, "pid", p->pid);
	json_key_str(w, "kind", vp_kind_name(p->kind));
	json_key_str(w, "comm", p->comm);
	vc_key_opt_str(w, "vm", p->vm);
	vc_key_opt_str(w, "uuid", p->uuid);
	json_key_bool(w, "process_totals",
		      p->flags & VCPUPERF_ATTACH_PROCESS_TOTALS);
	json_key_bool(w, "all_threads", p->flags & VCPUPERF_ATTACH_ALL_THREADS);
	json_key_u64(w, "threads", p->threads);
	memset(&fake, 0, sizeof(fake));
	fake.started = true;
	fake.nr_events = p->nr_events;
	memcpy(fake.ev, p->ev, sizeof(fake.ev));
	vc_key_mask_names(w, "events", &fake, p->nr_events, ~0U);
	vc_event_end(out);
}
