// SPDX-License-Identifier: GPL-2.0
/*
 * Two sinks as one: the decoder has one sink, and --textfile adds the
 * Prometheus textfile (prom.c) beside the JSONL rows (output.c) or the
 * episode files (episodes.c).  Each callback goes to the first sink, then
 * to the second if it has one.  The per-thread and per-process data is the
 * first's: the second keeps its own state by what the rows say.
 */
#include "tee.h"

static void *vc_tee_thread_start(struct vc_sink *sink, const struct vc_tid *t,
				 void *data)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	return tee->first->thread_start(tee->first, t, data);
}

static void vc_tee_thread_free(struct vc_sink *sink, void *data)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->thread_free(tee->first, data);
}

static void *vc_tee_process_start(struct vc_sink *sink,
				  const struct vc_proc *p, void *data)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	return tee->first->process_start(tee->first, p, data);
}

static void vc_tee_process_free(struct vc_sink *sink, void *data)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->process_free(tee->first, data);
}

static void vc_tee_row(struct vc_sink *sink, const struct vc_tid *t,
		       const struct vc_row *row)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->row(tee->first, t, row);
	if (tee->second->row)
		tee->second->row(tee->second, t, row);
}

static void vc_tee_lifecycle(struct vc_sink *sink,
			     const struct vcpuperf_rec *rec,
			     const struct vc_tid *t, __u64 rows)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->lifecycle(tee->first, rec, t, rows);
	if (tee->second->lifecycle)
		tee->second->lifecycle(tee->second, rec, t, rows);
}

static void vc_tee_gap(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		       __u64 expected, bool explained)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->gap(tee->first, rec, expected, explained);
	if (tee->second->gap)
		tee->second->gap(tee->second, rec, expected, explained);
}

static void vc_tee_process(struct vc_sink *sink,
			   const struct vcpuperf_rec *rec,
			   const struct vc_proc *p)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->process(tee->first, rec, p);
	if (tee->second->process)
		tee->second->process(tee->second, rec, p);
}

static void vc_tee_process_row(struct vc_sink *sink, const struct vc_proc *p,
			       const struct vc_row *row)
{
	struct vc_tee *tee = container_of(sink, struct vc_tee, sink);

	tee->first->process_row(tee->first, p, row);
	if (tee->second->process_row)
		tee->second->process_row(tee->second, p, row);
}

/**
 * vc_tee_init() - set up a sink that hands every record to two
 * @tee:	the sink; give &@tee->sink to vc_dec_init()
 * @first:	gets every record and keeps the per-thread and per-process
 *		data
 * @second:	gets what it has a callback for, after @first (no
 *		per-thread or per-process data)
 */
void vc_tee_init(struct vc_tee *tee, struct vc_sink *first,
		 struct vc_sink *second)
{
	tee->sink.thread_start = vc_tee_thread_start;
	tee->sink.thread_free = vc_tee_thread_free;
	tee->sink.process_start = vc_tee_process_start;
	tee->sink.process_free = vc_tee_process_free;
	tee->sink.row = vc_tee_row;
	tee->sink.lifecycle = vc_tee_lifecycle;
	tee->sink.gap = vc_tee_gap;
	tee->sink.process = vc_tee_process;
	tee->sink.process_row = vc_tee_process_row;
	tee->first = first;
	tee->second = second;
}
