// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process decoder state: the processes attached by pid= or qemu=,
 * from their process record (the VM identity of a QEMU, the events of
 * its whole-process totals) through their process samples (deltas of
 * the summed counts, scaled as a thread's are).  No other file changes
 * a struct vc_proc.
 */
#include <stdlib.h>

#include "decode.h"
#include "procs.h"
#include "threads.h"

/**
 * vc_proc_find() - the state of a process, if known
 * @procs:	the list
 * @pid:	process id
 *
 * Return: the state or NULL.
 */
struct vc_proc *vc_proc_find(struct vc_proc *procs, __u32 pid)
{
	for (; procs; procs = procs->next)
		if (procs->pid == pid)
			return procs;
	return NULL;
}

/* A fixed-size string field of a record, NUL terminated in @dst. */
static void vc_copy_field(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* @s as a JSON value in @out: quoted and escaped, or null when empty. */
static void vc_json_value(char *out, size_t len, const char *s)
{
	size_t n;

	if (!*s) {
		snprintf(out, len, "null");
		return;
	}
	out[0] = '"';
	n = 1 + json_escape(out + 1, len - 2, s, strlen(s));
	out[n] = '"';
	out[n + 1] = '\0';
}

/**
 * vc_proc_start() - apply a process record
 * @procs:	the list (its head may change)
 * @r:		the validated record
 * @sink:	makes its data for the process (process_start)
 *
 * A process seen before (the pid attached again) is reset in place, so
 * that threads pointing at it see the new identity.
 *
 * Return: the process, or NULL when out of memory.
 */
struct vc_proc *vc_proc_start(struct vc_proc **procs,
			      const struct vcpuperf_process *r,
			      struct vc_sink *sink)
{
	static __u64 generation;
	struct vc_proc *p = vc_proc_find(*procs, r->pid), *next;
	void *data;
	__u32 i;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		p->next = *procs;
		*procs = p;
	}
	next = p->next;
	data = p->sink_data;
	memset(p, 0, sizeof(*p));
	p->next = next;
	p->sink_data = data;
	p->gen = ++generation;
	p->pid = r->pid;
	p->kind = r->kind;
	p->flags = r->flags;
	p->nr_events = r->nr_events;
	p->threads = r->threads;
	vc_copy_field(p->comm, r->comm, VCPUPERF_COMM_LEN);
	vc_copy_field(p->vm, r->vm, VCPUPERF_VM_NAME_LEN);
	vc_copy_field(p->uuid, r->uuid, VCPUPERF_UUID_LEN);
	vc_json_value(p->vm_json, sizeof(p->vm_json), p->vm);
	vc_json_value(p->uuid_json, sizeof(p->uuid_json), p->uuid);
	for (i = 0; i < r->nr_events; i++) {
		p->ev[i] = r->events[i];
		p->ev[i].name[VCPUPERF_NAME_LEN - 1] = '\0';
	}
	vc_pick_ratios(p->ev, p->nr_events, &p->ratios);
	if (sink->process_start) {
		data = sink->process_start(sink, p, p->sink_data);
		if (!data)
			return NULL;
		p->sink_data = data;
	}
	return p;
}

/**
 * vc_proc_sample() - interpret a process sample and advance past it
 * @p:		the process, with as many events as @s
 * @s:		the validated process sample
 * @row:	filled as for a thread's sample (vc_counts_delta())
 */
void vc_proc_sample(struct vc_proc *p,
		    const struct vcpuperf_process_sample *s,
		    struct vc_row *row)
{
	row->s = NULL;
	row->ps = s;
	vc_counts_delta(p->prev, s->counts, s->nr_events, s->counting_mask,
			row);
	vc_sched_delta(&p->sched, s->flags, &s->counts[s->nr_events], row);
	/* Who took the CPU is a thread's alone. */
	row->who = NULL;
	row->have_dt = p->have_prev_t;
	row->dt_ns = (__s64)(s->rec.t_mono_ns - p->prev_t_mono);
	p->have_prev_t = true;
	p->prev_t_mono = s->rec.t_mono_ns;
	/* Without totals the one process sample is the end: no row. */
	if (p->flags & VCPUPERF_ATTACH_PROCESS_TOTALS)
		p->rows++;
}

/**
 * vc_procs_free() - forget every process (the sink's data included)
 * @procs:	the list, emptied
 * @sink:	releases its data for each (process_free)
 */
void vc_procs_free(struct vc_proc **procs, struct vc_sink *sink)
{
	struct vc_proc *p = *procs, *next;

	for (; p; p = next) {
		next = p->next;
		if (sink->process_free)
			sink->process_free(sink, p->sink_data);
		free(p);
	}
	*procs = NULL;
}
