// SPDX-License-Identifier: GPL-2.0
/*
 * Stream decoding: reassembly of records split across read() calls,
 * validation of each record against the uapi layouts and the
 * sequence-number check (gaps are explained only by a dropped record).
 * Each record is applied to its thread's state (threads.c) and handed to
 * the sink; the decoder knows nothing about output.
 */
#include <errno.h>
#include <stdlib.h>

#include "common.h"
#include "decode.h"
#include "procs.h"
#include "threads.h"

#define VC_DEC_BUFSZ	(4U << 20)	/* > the largest record (64 KiB) */
#define VC_MAX_WARN	10		/* warnings of one kind printed */
#define VC_REC_ALIGN	8		/* records are padded to this */

/**
 * vc_dec_init() - set up a decoder
 * @d:		the decoder
 * @sink:	where decoded records go
 *
 * Return: 0 or -ENOMEM.
 */
int vc_dec_init(struct vc_decoder *d, struct vc_sink *sink)
{
	memset(d, 0, sizeof(*d));
	d->sink = sink;
	d->cap = VC_DEC_BUFSZ;
	d->buf = malloc(d->cap);
	if (!d->buf || vc_threads_init(&d->threads, sink)) {
		vc_dec_free(d);
		return -ENOMEM;
	}
	return 0;
}

/**
 * vc_dec_free() - release a decoder's memory
 * @d:		the decoder
 */
void vc_dec_free(struct vc_decoder *d)
{
	vc_threads_free(&d->threads);
	vc_procs_free(&d->procs, d->sink);
	free(d->buf);
	d->buf = NULL;
}

/* Smallest size of a record of @type, or 0 for types we do not know. */
static size_t vc_fixed_size(__u16 type)
{
	switch (type) {
	case VCPUPERF_REC_HEADER:
		return sizeof(struct vcpuperf_header);
	case VCPUPERF_REC_SAMPLE:
		return sizeof(struct vcpuperf_sample);
	case VCPUPERF_REC_STARTED:
		return sizeof(struct vcpuperf_started);
	case VCPUPERF_REC_UNAVAILABLE:
		return sizeof(struct vcpuperf_unavailable);
	case VCPUPERF_REC_FIRST_ROW:
		return sizeof(struct vcpuperf_first_row);
	case VCPUPERF_REC_MULTIPLEXED:
		return sizeof(struct vcpuperf_multiplexed);
	case VCPUPERF_REC_NO_COUNTERS:
		return sizeof(struct vcpuperf_no_counters);
	case VCPUPERF_REC_VCPU_ADDED:
		return sizeof(struct vcpuperf_vcpu_added);
	case VCPUPERF_REC_TASK_EXITED:
		return sizeof(struct vcpuperf_task_exited);
	case VCPUPERF_REC_DROPPED:
		return sizeof(struct vcpuperf_dropped);
	case VCPUPERF_REC_FINISHED:
		return sizeof(struct vcpuperf_finished);
	case VCPUPERF_REC_DETACHED:
		return sizeof(struct vcpuperf_detached);
	case VCPUPERF_REC_PROCESS:
		return sizeof(struct vcpuperf_process);
	case VCPUPERF_REC_PROCESS_SAMPLE:
		return sizeof(struct vcpuperf_process_sample);
	case VCPUPERF_REC_MUX_EXPECTED:
		return sizeof(struct vcpuperf_mux_expected);
	default:
		return 0;
	}
}

/* Does the record fit its type's layout?  NULL if so, else why not. */
static const char *vc_rec_layout_error(const struct vcpuperf_rec *rec)
{
	size_t fixed = vc_fixed_size(rec->type), need = fixed;
	__u32 nr = 0;

	if (rec->size < fixed)
		return "shorter than its type's layout";
	switch (rec->type) {
	case VCPUPERF_REC_SAMPLE:
		nr = ((const struct vcpuperf_sample *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_count);
		if (((const struct vcpuperf_sample *)rec)->flags &
		    VCPUPERF_SAMPLE_SCHED)
			need += sizeof(struct vcpuperf_sched);
		if (((const struct vcpuperf_sample *)rec)->flags &
		    VCPUPERF_SAMPLE_WHO)
			need += sizeof(struct vcpuperf_who);
		break;
	case VCPUPERF_REC_TASK_EXITED:
		nr = ((const struct vcpuperf_task_exited *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_count);
		break;
	case VCPUPERF_REC_STARTED:
		nr = ((const struct vcpuperf_started *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_event_desc);
		break;
	case VCPUPERF_REC_PROCESS:
		nr = ((const struct vcpuperf_process *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_event_desc);
		break;
	case VCPUPERF_REC_PROCESS_SAMPLE:
		nr = ((const struct vcpuperf_process_sample *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_count);
		if (((const struct vcpuperf_process_sample *)rec)->flags &
		    VCPUPERF_SAMPLE_SCHED)
			need += sizeof(struct vcpuperf_sched);
		break;
	}
	if (nr > VCPUPERF_MAX_EVENTS)
		return "nr_events above VCPUPERF_MAX_EVENTS";
	if (rec->size < need)
		return "shorter than its nr_events";
	return NULL;
}

static void vc_warn(struct vc_decoder *d, __u64 *count,
		    const struct vcpuperf_rec *rec, const char *what)
{
	if (++*count > VC_MAX_WARN)
		return;
	fprintf(stderr, VC_NAME ": record seq %llu (%s, tid %u, size %u) at "
		"offset %llu: %s%s\n", (unsigned long long)rec->seq,
		vp_rec_name(rec->type) ? vp_rec_name(rec->type) : "?",
		rec->tid, rec->size,
		(unsigned long long)(d->offset + ((const unsigned char *)rec -
						  d->buf)),
		what, *count == VC_MAX_WARN ? " (further ones not shown)" :
		"");
}

/* The stream header: the first record of every open. */
static int vc_header(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_header *h = (const void *)rec;

	if (rec->type != VCPUPERF_REC_HEADER || rec->size < sizeof(*h) ||
	    h->magic != VCPUPERF_MAGIC) {
		fprintf(stderr, VC_NAME ": not a vcpuperf stream (no "
			"VCPUPERF_MAGIC header at offset %llu)\n",
			(unsigned long long)d->offset);
		return -EPROTO;
	}
	if (h->abi_version != VCPUPERF_ABI_VERSION) {
		fprintf(stderr, VC_NAME ": stream has ABI version %u, tool "
			"expects %u: use the vcpuperf-cat built with this "
			"module\n", h->abi_version, VCPUPERF_ABI_VERSION);
		return -EPROTO;
	}
	if (h->rec_size != sizeof(struct vcpuperf_rec)) {
		fprintf(stderr, VC_NAME ": stream record header is %u bytes, "
			"tool expects %zu\n", h->rec_size,
			sizeof(struct vcpuperf_rec));
		return -EPROTO;
	}
	d->have_header = true;
	d->next_seq = h->next_seq;
	d->ring_bytes = h->ring_bytes;
	return 0;
}

/* Sequence check: every record is its predecessor + 1, or a gap. */
static void vc_check_seq(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_dropped *dr = (const void *)rec;
	bool explained;

	if (rec->seq == d->next_seq) {
		d->next_seq++;
		return;
	}
	explained = rec->seq > d->next_seq &&
		    rec->type == VCPUPERF_REC_DROPPED &&
		    rec->size >= sizeof(*dr) &&
		    dr->count == rec->seq - d->next_seq &&
		    dr->first_seq == d->next_seq;
	d->stats.gaps++;
	if (!explained)
		d->stats.unexplained++;
	d->sink->gap(d->sink, rec, d->next_seq, explained);
	d->next_seq = rec->seq + 1;
}

static void vc_sample(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_sample *s = (const void *)rec;
	struct vc_tid *t = vc_thread_find(&d->threads, rec->tid);
	struct vc_row row;

	if (!t || !t->started) {
		vc_warn(d, &d->stats.orphans, rec,
			"sample of a thread without a started record: skipped");
		return;
	}
	if (s->nr_events != t->nr_events) {
		vc_warn(d, &d->stats.bad, rec,
			"nr_events differs from the started record: skipped");
		return;
	}
	vc_thread_sample(t, s, &row);
	d->stats.rows++;
	if (s->grid_ns) {
		d->grid_ns = s->grid_ns;
		d->interval_ns = s->interval_ns;
	}
	d->sink->row(d->sink, t, &row);
}

/* A process record: its state, then the sink. */
static int vc_process(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	struct vc_proc *p = vc_proc_start(&d->procs, (const void *)rec,
					  d->sink);

	if (!p)
		return -ENOMEM;
	d->sink->process(d->sink, rec, p);
	return 0;
}

/* A process sample: the per-VM row. */
static void vc_process_sample(struct vc_decoder *d,
			      const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_process_sample *s = (const void *)rec;
	struct vc_proc *p = vc_proc_find(d->procs, s->pid);
	struct vc_row row;

	if (!p) {
		vc_warn(d, &d->stats.orphans, rec,
			"process sample without a process record: skipped");
		return;
	}
	if (s->nr_events != p->nr_events) {
		vc_warn(d, &d->stats.bad, rec,
			"nr_events differs from the process record: skipped");
		return;
	}
	vc_proc_sample(p, s, &row);
	if (p->flags & VCPUPERF_ATTACH_PROCESS_TOTALS)
		d->stats.proc_rows++;
	d->sink->process_row(d->sink, p, &row);
}

/* Any record but header and sample: apply it, then hand it on. */
static int vc_lifecycle(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_started *st = (const void *)rec;
	struct vc_tid *t = NULL;
	__u64 rows;

	if (rec->type == VCPUPERF_REC_STARTED &&
	    !vc_thread_start(&d->threads, st,
			     st->kind == VCPUPERF_TARGET_TID ? NULL :
			     vc_proc_find(d->procs, st->id.pid)))
		return -ENOMEM;
	if (rec->type == VCPUPERF_REC_DROPPED)
		d->stats.drops += ((const struct vcpuperf_dropped *)rec)->count;
	if (rec->type == VCPUPERF_REC_FINISHED && !rec->tid)
		d->finished = true;
	if (rec->tid)
		t = vc_thread_find(&d->threads, rec->tid);
	/* A process counter of the thread leaves its own alone. */
	if (t && rec->type == VCPUPERF_REC_UNAVAILABLE &&
	    !(((const struct vcpuperf_unavailable *)rec)->flags &
	      VCPUPERF_UNAVAILABLE_PROCESS))
		vc_thread_unavailable(t, (const void *)rec);
	rows = rec->tid ? (t ? t->rows : 0) : d->stats.rows;
	d->sink->lifecycle(d->sink, rec, t, rows);
	return 0;
}

static int vc_decode_record(struct vc_decoder *d,
			    const struct vcpuperf_rec *rec)
{
	const char *why;

	d->stats.records++;
	if (!d->have_header || rec->type == VCPUPERF_REC_HEADER)
		return vc_header(d, rec);
	vc_check_seq(d, rec);
	if (!vc_fixed_size(rec->type)) {
		d->stats.unknown++;
		return 0;
	}
	why = vc_rec_layout_error(rec);
	if (why) {
		vc_warn(d, &d->stats.bad, rec, why);
		return 0;
	}
	if (rec->type == VCPUPERF_REC_SAMPLE) {
		vc_sample(d, rec);
		return 0;
	}
	if (rec->type == VCPUPERF_REC_PROCESS_SAMPLE) {
		vc_process_sample(d, rec);
		return 0;
	}
	if (rec->type == VCPUPERF_REC_PROCESS)
		return vc_process(d, rec);
	return vc_lifecycle(d, rec);
}

/**
 * vc_dec_space() - where the next read() should put its bytes
 * @d:		the decoder
 * @room:	set to the number of bytes that fit
 *
 * Return: pointer into the reassembly buffer.
 */
void *vc_dec_space(struct vc_decoder *d, size_t *room)
{
	*room = d->cap - d->len;
	return d->buf + d->len;
}

/**
 * vc_dec_commit() - decode the bytes a read() added
 * @d:		the decoder
 * @n:		bytes added at vc_dec_space()
 *
 * Every complete record is decoded; an incomplete tail waits for more.
 *
 * Return: 0, or a negative errno when the stream cannot be decoded
 * (not a vcpuperf stream, wrong ABI, broken framing); a message has been
 * printed then.
 */
int vc_dec_commit(struct vc_decoder *d, size_t n)
{
	size_t off = 0;
	int ret = 0;

	if (d->fatal)
		return -EPROTO;
	d->len += n;
	while (d->len - off >= sizeof(struct vcpuperf_rec)) {
		const struct vcpuperf_rec *rec = (const void *)(d->buf + off);

		if (rec->size < sizeof(*rec) || rec->size % VC_REC_ALIGN) {
			if (!d->have_header)
				fprintf(stderr, VC_NAME ": not a vcpuperf "
					"stream (bad first record)\n");
			else
				fprintf(stderr, VC_NAME ": corrupt stream at "
					"offset %llu: record size %u\n",
					(unsigned long long)(d->offset + off),
					rec->size);
			ret = -EPROTO;
			break;
		}
		if (d->len - off < rec->size)
			break;
		ret = vc_decode_record(d, rec);
		if (ret)
			break;
		off += rec->size;
	}
	if (ret)
		d->fatal = true;
	memmove(d->buf, d->buf + off, d->len - off);
	d->len -= off;
	d->offset += off;
	return ret;
}

/**
 * vc_dec_end() - the stream reached EOF
 * @d:		the decoder
 *
 * Return: 0, or -EPROTO if the stream ended inside a record or before
 * its header (a message has been printed).
 */
int vc_dec_end(struct vc_decoder *d)
{
	if (d->fatal)
		return -EPROTO;
	if (d->len) {
		fprintf(stderr, VC_NAME ": stream ends inside a record "
			"(%zu bytes at offset %llu)\n", d->len,
			(unsigned long long)d->offset);
		return -EPROTO;
	}
	if (!d->have_header) {
		fprintf(stderr, VC_NAME ": empty stream: not a vcpuperf "
			"stream\n");
		return -EPROTO;
	}
	return 0;
}
