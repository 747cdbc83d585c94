// SPDX-License-Identifier: GPL-2.0
/*
 * Per-thread decoder state: the table of threads by tid, and everything
 * that changes a thread's state: its started record (events, counters
 * from zero), unavailable records (a counter that does not exist) and
 * samples (deltas against the previous cumulative counts, scaled for
 * multiplexing).  No other file changes a struct vc_tid.
 */
#include <errno.h>
#include <stdlib.h>

#include "decode.h"
#include "threads.h"

#define VC_TAB_MIN	64		/* initial slots */
#define VC_TID_HASH	2654435761U	/* Knuth's multiplicative hash */

/**
 * vc_threads_init() - set up an empty thread table
 * @th:		the table
 * @sink:	keeps its own data per thread (thread_start, thread_free)
 *
 * Return: 0 or -ENOMEM.
 */
int vc_threads_init(struct vc_threads *th, struct vc_sink *sink)
{
	th->sink = sink;
	th->used = 0;
	th->size = VC_TAB_MIN;
	th->slot = calloc(th->size, sizeof(*th->slot));
	return th->slot ? 0 : -ENOMEM;
}

/**
 * vc_threads_free() - forget every thread (the sink's data included)
 * @th:		the table
 */
void vc_threads_free(struct vc_threads *th)
{
	size_t i;

	if (th->slot) {
		for (i = 0; i < th->size; i++) {
			if (!th->slot[i])
				continue;
			th->sink->thread_free(th->sink, th->slot[i]->sink_data);
			free(th->slot[i]);
		}
	}
	free(th->slot);
	th->slot = NULL;
}

static size_t vc_slot(const struct vc_threads *th, __u32 tid)
{
	return (size_t)(tid * VC_TID_HASH) & (th->size - 1);
}

/**
 * vc_thread_find() - the state of a thread, if any
 * @th:		the table
 * @tid:	thread id
 *
 * Return: the state or NULL.
 */
struct vc_tid *vc_thread_find(const struct vc_threads *th, __u32 tid)
{
	size_t i = vc_slot(th, tid);

	while (th->slot[i]) {
		if (th->slot[i]->tid == tid)
			return th->slot[i];
		i = (i + 1) & (th->size - 1);
	}
	return NULL;
}

static int vc_threads_grow(struct vc_threads *th)
{
	struct vc_tid **old = th->slot;
	size_t old_size = th->size, i;

	th->slot = calloc(old_size * 2, sizeof(*th->slot));
	if (!th->slot) {
		th->slot = old;
		return -ENOMEM;
	}
	th->size = old_size * 2;
	for (i = 0; i < old_size; i++) {
		size_t j;

		if (!old[i])
			continue;
		j = vc_slot(th, old[i]->tid);
		while (th->slot[j])
			j = (j + 1) & (th->size - 1);
		th->slot[j] = old[i];
	}
	free(old);
	return 0;
}

/* The state of a thread, created (blank) if new; NULL when out of memory. */
static struct vc_tid *vc_thread_get(struct vc_threads *th, __u32 tid)
{
	struct vc_tid *t = vc_thread_find(th, tid);
	size_t i;

	if (t)
		return t;
	if ((th->used + 1) * 2 > th->size && vc_threads_grow(th))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->vcpu = VCPUPERF_NO_VCPU;
	vc_pick_ratios(NULL, 0, &t->ratios);
	i = vc_slot(th, tid);
	while (th->slot[i])
		i = (i + 1) & (th->size - 1);
	th->slot[i] = t;
	th->used++;
	return t;
}

/* Mask of the first @nr events (all of them from VC_BITS_PER_MASK on). */
static __u32 vc_first_events_mask(__u32 nr)
{
	return nr >= VC_BITS_PER_MASK ? ~0U : (1U << nr) - 1;
}

/*
 * A pair of hardware events (A, B) for a ratio, their indices in @ia and
 * @ib (-1 if none): both without modifiers if there is such a pair, else
 * the first pair counting the same thing (same u/k/G/H modifiers; pinning
 * does not matter).
 */
static void vc_pick_pair(const struct vcpuperf_event_desc *ev, __u32 nr,
			 __u64 cfg_a, __u64 cfg_b, int *ia, int *ib)
{
	const __u32 ign = VCPUPERF_MOD_PINNED;
	int pass, i, j;

	*ia = *ib = -1;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < (int)nr; i++) {
			const struct vcpuperf_event_desc *a = &ev[i];

			if (a->type != PERF_TYPE_HARDWARE || a->config != cfg_a)
				continue;
			if (pass == 0 && (a->mods & ~ign))
				continue;
			for (j = 0; j < (int)nr; j++) {
				const struct vcpuperf_event_desc *b = &ev[j];

				if (b->type != PERF_TYPE_HARDWARE ||
				    b->config != cfg_b ||
				    (a->mods & ~ign) != (b->mods & ~ign))
					continue;
				*ia = i;
				*ib = j;
				return;
			}
		}
	}
}

/**
 * vc_pick_ratios() - find the operands of ipc and cache_miss_rate
 * @ev:		the events
 * @nr:		how many (0: none, every index -1)
 * @r:		the indices found
 */
void vc_pick_ratios(const struct vcpuperf_event_desc *ev, __u32 nr,
		    struct vc_ratios *r)
{
	vc_pick_pair(ev, nr, PERF_COUNT_HW_INSTRUCTIONS,
		     PERF_COUNT_HW_CPU_CYCLES, &r->i_insns, &r->i_cycles);
	vc_pick_pair(ev, nr, PERF_COUNT_HW_CACHE_MISSES,
		     PERF_COUNT_HW_CACHE_REFERENCES, &r->i_misses, &r->i_refs);
}

/*
 * (Re)initialise a thread from its started record.  Thread ids are
 * reused, so everything from an earlier incarnation is forgotten: the
 * counters are new and count from zero.
 */
static void vc_thread_reset(struct vc_tid *t, const struct vcpuperf_started *s)
{
	__u32 i;

	t->started = true;
	t->pid = s->id.pid;
	t->vcpu = s->id.vcpu;
	t->kind = s->kind;
	t->nr_events = s->nr_events;
	t->exist_mask = vc_first_events_mask(s->nr_events);
	memcpy(t->comm, s->comm, VCPUPERF_COMM_LEN);
	t->comm[VCPUPERF_COMM_LEN] = '\0';
	memset(t->prev, 0, sizeof(t->prev));
	t->have_prev_t = false;
	t->prev_t_mono = 0;
	memset(&t->sched, 0, sizeof(t->sched));
	memset(&t->who, 0, sizeof(t->who));
	t->rows = 0;
	t->not_applied = 0;
	for (i = 0; i < s->nr_events; i++) {
		t->ev[i] = s->events[i];
		t->ev[i].name[VCPUPERF_NAME_LEN - 1] = '\0';
		if (t->ev[i].mods >> VCPUPERF_MOD_NOT_APPLIED_SHIFT)
			t->not_applied |= 1U << i;
	}
	vc_pick_ratios(t->ev, t->nr_events, &t->ratios);
}

/**
 * vc_thread_start() - apply a started record
 * @th:		the table
 * @s:		the validated started record
 * @proc:	the thread's process, or NULL
 *
 * The thread is created if new and (re)initialised; then the sink makes
 * its own data for it.
 *
 * Return: the thread, or NULL when out of memory.
 */
struct vc_tid *vc_thread_start(struct vc_threads *th,
			       const struct vcpuperf_started *s,
			       const struct vc_proc *proc)
{
	struct vc_tid *t = vc_thread_get(th, s->rec.tid);
	void *data;

	if (!t)
		return NULL;
	vc_thread_reset(t, s);
	t->proc = proc;
	data = th->sink->thread_start(th->sink, t, t->sink_data);
	if (!data)
		return NULL;
	t->sink_data = data;
	return t;
}

/**
 * vc_thread_unavailable() - apply an unavailable record
 * @t:		the thread
 * @u:		the validated record: its counter does not exist
 */
void vc_thread_unavailable(struct vc_tid *t,
			   const struct vcpuperf_unavailable *u)
{
	if (u->event < VC_BITS_PER_MASK)
		t->exist_mask &= ~(1U << u->event);
}

/**
 * vc_counts_delta() - interpret cumulative counts against the previous ones
 * @prev:	previous cumulative counts, replaced by @cur's
 * @cur:	the counts just read
 * @nr:		events
 * @mask:	counters that exist
 * @row:	filled: deltas, scaled values and what is known
 *
 * Per event: unknown when the counter does not exist; the raw delta (0)
 * when it was not enabled during the interval; unknown when it was
 * enabled but never ran on the PMU; else the delta scaled by
 * enabled/running.
 */
void vc_counts_delta(struct vcpuperf_count *prev,
		     const struct vcpuperf_count *cur, __u32 nr, __u32 mask,
		     struct vc_row *row)
{
	__u32 i;

	row->enabled_ns = 0;
	row->running_ns = ~0ULL;
	row->counted = false;
	row->ran = false;
	row->multiplexed = false;
	if (mask && !memcmp(prev, cur, nr * sizeof(*cur))) {
		/*
		 * Nothing moved: the thread did not run, and every counter
		 * that exists is an exact 0 (vp_scale() of 0 over 0).
		 */
		memset(row->d, 0, nr * sizeof(row->d[0]));
		for (i = 0; i < nr; i++) {
			row->have[i] = mask & (1U << i);
			row->value[i] = 0;
		}
		row->counted = true;
		row->running_ns = 0;
		return;
	}
	for (i = 0; i < nr; i++) {
		struct vp_delta *dl = &row->d[i];

		if (!(mask & (1U << i))) {
			row->have[i] = false;
			memset(dl, 0, sizeof(*dl));
			continue;
		}
		row->counted = true;
		vp_count_delta(&prev[i], &cur[i], dl);
		prev[i] = cur[i];
		if (dl->enabled > row->enabled_ns)
			row->enabled_ns = dl->enabled;
		if (dl->running < row->running_ns)
			row->running_ns = dl->running;
		if (dl->enabled)
			row->ran = true;
		if (dl->running && dl->running < dl->enabled)
			row->multiplexed = true;
		row->have[i] = vp_scale(dl->value, dl->enabled, dl->running,
					&row->value[i]);
	}
}

/**
 * vc_sched_delta() - the scheduler figures of a row's interval
 * @prev:	the last figures of the thread or process (since its
 *		attach), updated
 * @flags:	the sample's flags: without VCPUPERF_SAMPLE_SCHED it has
 *		none (attached no_sched); with VCPUPERF_SAMPLE_SCHED_STALE
 *		they are unknown for this interval (@row->sched->valid 0,
 *		@prev kept)
 * @after:	where its figures are, after its counts
 * @row:	its row: @row->sched set to the deltas, or NULL
 */
void vc_sched_delta(struct vc_sched *prev, __u32 flags, const void *after,
		    struct vc_row *row)
{
	const struct vcpuperf_sched *now = after, *p = &prev->last;
	struct vcpuperf_sched *d = &row->sched_delta;

	row->sched = NULL;
	if (!(flags & VCPUPERF_SAMPLE_SCHED))
		return;
	if (flags & VCPUPERF_SAMPLE_SCHED_STALE) {
		/* Not summed this time (valid 0): the next row's cover it. */
		memset(d, 0, sizeof(*d));
		row->sched = d;
		return;
	}
	/* Since the attach: the first one is its own delta. */
	d->run_ns = now->run_ns - p->run_ns;
	d->wait_ns = now->wait_ns - p->wait_ns;
	d->timeslices = now->timeslices - p->timeslices;
	d->voluntary = now->voluntary - p->voluntary;
	d->involuntary = now->involuntary - p->involuntary;
	d->migrations = now->migrations - p->migrations;
	d->cpu = now->cpu;
	d->valid = now->valid;
	prev->last = *now;
	prev->have = true;
	row->sched = d;
}

/*
 * Who took the thread's CPU in the interval of @s (attached who): the
 * deltas of its figures since the last sample.  An other VM keeps its slot
 * for good (struct vcpuperf_who), so slot i of this sample against slot i
 * of the last (0 where the slot was still free then).
 */
static void vc_who_delta(struct vc_who *prev, const struct vcpuperf_sample *s,
			 struct vc_row *row)
{
	const struct vcpuperf_who *now, *p = &prev->last;
	struct vcpuperf_who *d = &row->who_delta;
	const unsigned char *at = (const void *)&s->counts[s->nr_events];
	__u32 i;

	row->who = NULL;
	if (!(s->flags & VCPUPERF_SAMPLE_WHO))
		return;
	if (s->flags & VCPUPERF_SAMPLE_SCHED)
		at += sizeof(struct vcpuperf_sched);
	now = (const void *)at;
	row->who = d;
	if (!now->valid) {
		memset(d, 0, sizeof(*d));
		d->cause = now->cause;
		return;
	}
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		d->wait_ns[i] = now->wait_ns[i] - p->wait_ns[i];
		d->preempted[i] = now->preempted[i] - p->preempted[i];
	}
	for (i = 0; i < VCPUPERF_WHO_VMS; i++) {
		d->vms[i].pid = now->vms[i].pid;
		d->vms[i].reserved = 0;
		d->vms[i].wait_ns = now->vms[i].wait_ns -
				    (p->vms[i].pid == now->vms[i].pid ?
				     p->vms[i].wait_ns : 0);
	}
	d->valid = 1;
	d->cause = 0;
	prev->last = *now;
	prev->have = true;
}

/**
 * vc_thread_sample() - interpret a sample and advance the thread past it
 * @t:		the sampled thread, started, with as many events as @s
 * @s:		the validated sample record
 * @row:	filled with what the row says (see vc_counts_delta())
 *
 * The counts of @s become the thread's previous ones.
 */
void vc_thread_sample(struct vc_tid *t, const struct vcpuperf_sample *s,
		      struct vc_row *row)
{
	row->s = s;
	row->ps = NULL;
	vc_counts_delta(t->prev, s->counts, s->nr_events, s->counting_mask,
			row);
	t->exist_mask = s->counting_mask;
	vc_sched_delta(&t->sched, s->flags, &s->counts[s->nr_events], row);
	vc_who_delta(&t->who, s, row);
	row->have_dt = t->have_prev_t;
	row->dt_ns = (__s64)(s->rec.t_mono_ns - t->prev_t_mono);
	t->have_prev_t = true;
	t->prev_t_mono = s->rec.t_mono_ns;
	t->rows++;
}
