/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decode.c: the stream decoder.  It reassembles records split across
 * reads, validates each one, checks the sequence numbers, applies each
 * record to its thread's or process's state (threads.h, procs.h) and
 * hands the result to a struct vc_sink; it knows nothing about output.
 */
#ifndef _VC_DECODE_H
#define _VC_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "procs.h"
#include "threads.h"

/**
 * struct vc_sink - where the decoder sends what it decoded
 * @thread_start: a started record was applied to @t: return the sink's
 *		data for the thread, made anew or reusing @data (what it
 *		returned for an earlier started record of the same tid, or
 *		NULL); NULL when out of memory
 * @thread_free: release what @thread_start returned (may be NULL)
 * @row:	a sample of thread @t, interpreted
 * @lifecycle:	any record but header and sample, after it was applied to
 *		its thread; @t is NULL for tid 0 or a thread never started;
 *		@rows is the number of rows decoded so far for the thread
 *		(since its started record), or for the session when tid is 0
 * @gap:	a sequence gap: @rec arrived when @expected was due;
 *		@explained when a dropped record accounts for exactly the
 *		missing numbers
 * @process_start: a process record was applied to @p: return the sink's
 *		data for the process, as @thread_start does for a thread
 *		(the same pid attached again passes what it returned
 *		before)
 * @process_free: release what @process_start returned (may be NULL)
 * @process:	a process record was applied to @p (after @process_start)
 * @process_row: a process sample of @p, interpreted
 *
 * A table of callbacks, as perf's struct perf_tool: the decoder calls out
 * through it and knows nothing about output.  An output embeds it in its
 * own struct and gets back to that with container_of().
 */
struct vc_sink {
	void *(*thread_start)(struct vc_sink *sink, const struct vc_tid *t,
			      void *data);
	void (*thread_free)(struct vc_sink *sink, void *data);
	void (*row)(struct vc_sink *sink, const struct vc_tid *t,
		    const struct vc_row *row);
	void (*lifecycle)(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			  const struct vc_tid *t, __u64 rows);
	void (*gap)(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		    __u64 expected, bool explained);
	void *(*process_start)(struct vc_sink *sink, const struct vc_proc *p,
			       void *data);
	void (*process_free)(struct vc_sink *sink, void *data);
	void (*process)(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			const struct vc_proc *p);
	void (*process_row)(struct vc_sink *sink, const struct vc_proc *p,
			    const struct vc_row *row);
};

/**
 * struct vc_stats - what happened while decoding
 * @records:	records decoded (header included)
 * @rows:	JSONL rows written
 * @gaps:	sequence gaps seen
 * @unexplained: gaps no dropped record explained
 * @bad:	records that failed validation and were skipped
 * @unknown:	records of unknown type skipped
 * @orphans:	samples for a thread without a started record
 * @drops:	records the module dropped, as dropped records said
 * @proc_rows:	process samples decoded (per-VM rows)
 */
struct vc_stats {
	__u64 records;
	__u64 rows;
	__u64 gaps;
	__u64 unexplained;
	__u64 bad;
	__u64 unknown;
	__u64 orphans;
	__u64 drops;
	__u64 proc_rows;
};

/**
 * struct vc_decoder - the stream reader's state
 * @sink:	where decoded records go
 * @buf:	reassembly buffer
 * @len:	bytes in @buf
 * @cap:	size of @buf
 * @offset:	stream offset of @buf[0]
 * @have_header: the stream header was read
 * @finished:	the session finished record was read
 * @next_seq:	sequence number expected next
 * @threads:	per-thread state
 * @procs:	per-process state, a list
 * @stats:	counters
 * @fatal:	the stream cannot be decoded further
 * @grid_ns:	grid point of the latest sample on the grid, 0 for none
 * @interval_ns: its interval
 * @ring_bytes:	the collection's ring size, from the stream header
 */
struct vc_decoder {
	struct vc_sink *sink;
	unsigned char *buf;
	size_t len;
	size_t cap;
	__u64 offset;
	bool have_header;
	bool finished;
	__u64 next_seq;
	struct vc_threads threads;
	struct vc_proc *procs;
	struct vc_stats stats;
	bool fatal;
	__u64 grid_ns;
	__u64 interval_ns;
	__u64 ring_bytes;
};

int vc_dec_init(struct vc_decoder *d, struct vc_sink *sink);
void vc_dec_free(struct vc_decoder *d);
void *vc_dec_space(struct vc_decoder *d, size_t *room);
int vc_dec_commit(struct vc_decoder *d, size_t n);
int vc_dec_end(struct vc_decoder *d);

#endif /* _VC_DECODE_H */
