/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpuperf-cat: read the vcpuperf record stream and write JSONL.
 *
 * jsonl.c	buffered JSON writer (own number formatting, chunked fwrite)
 * decode.c	stream reassembly, record validation, sequence checking,
 *		per-thread state
 * rows.c	one JSONL row per sample record
 * lifecycle.c	one JSON line per lifecycle record (perf_started, ...)
 * control.c	debugfs paths, control writes, status, error advice
 * main.c	options, signals, the read loop
 */
#ifndef _VCPUPERF_CAT_H
#define _VCPUPERF_CAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vcpuperf_lib.h"

#define VC_NAME		"vcpuperf-cat"

/* Exit codes. */
#define VC_EXIT_OK	0
#define VC_EXIT_RUNTIME	1
#define VC_EXIT_USAGE	2

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

/* ---- jsonl.c ---------------------------------------------------------- */

#define VC_JW_BUFSZ	(1024U * 1024U)	/* output buffer */
#define VC_JW_SLACK	(64U * 1024U)	/* room one line may need at most */
#define VC_JW_DEPTH	8		/* object/array nesting */

/**
 * struct jw - a JSON lines writer into a large buffer
 * @fp:		output stream (written with fwrite in big chunks)
 * @path:	its name, for error messages
 * @buf:	pending output
 * @len:	bytes pending in @buf
 * @cap:	size of @buf
 * @depth:	current nesting
 * @first:	per level: nothing written yet at this level (no comma)
 * @err:	errno of the first failed write, 0 if none
 */
struct jw {
	FILE *fp;
	const char *path;
	char *buf;
	size_t len;
	size_t cap;
	int depth;
	bool first[VC_JW_DEPTH];
	int err;
};

int jw_init(struct jw *w, FILE *fp, const char *path);
void jw_free(struct jw *w);
int jw_flush(struct jw *w);
void jw_make_room(struct jw *w, size_t n);

/* Make sure @n more bytes fit (flushing if need be). */
static inline void jw_need(struct jw *w, size_t n)
{
	if (w->cap - w->len < n)
		jw_make_room(w, n);
}

static inline void jw_putc(struct jw *w, char c)
{
	w->buf[w->len++] = c;
}

static inline void jw_mem(struct jw *w, const void *s, size_t n)
{
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

#define jw_lit(w, s)	jw_mem((w), (s), sizeof(s) - 1)

void jw_u64(struct jw *w, __u64 v);
void jw_s64(struct jw *w, long long v);
void jw_fixed(struct jw *w, __u64 v, unsigned int scale_digits);
void jw_double(struct jw *w, double v);
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_str(struct jw *w, const char *s);
size_t jw_escape(char *out, size_t outlen, const char *s, size_t n);

void jw_begin(struct jw *w, char open);
void jw_end(struct jw *w, char close);
void jw_key(struct jw *w, const char *key);
void jw_sep(struct jw *w);
void jw_line_end(struct jw *w);

void jw_key_u64(struct jw *w, const char *key, __u64 v);
void jw_key_s64(struct jw *w, const char *key, long long v);
void jw_key_str(struct jw *w, const char *key, const char *s);
void jw_key_strn(struct jw *w, const char *key, const char *s, size_t n);
void jw_key_bool(struct jw *w, const char *key, bool v);
void jw_key_null(struct jw *w, const char *key);
void jw_key_double(struct jw *w, const char *key, double v);

/* ---- decode.c --------------------------------------------------------- */

#define VC_KEY_LEN	(VCPUPERF_NAME_LEN * 6 + 8)	/* escaped ,"key": */

/**
 * struct vc_tid - what the tool knows about one sampled thread
 * @tid:	thread id
 * @started:	a started record was seen
 * @pid:	thread group id
 * @vcpu:	vCPU index or VCPUPERF_NO_VCPU
 * @kind:	enum vcpuperf_target_kind
 * @nr_events:	configured events
 * @exist_mask:	counters believed to exist (unavailable/sample records)
 * @comm:	thread name, NUL terminated
 * @ev:		the configured events
 * @key:	per event, the JSON text ,"name": with - and : made _
 * @key_len:	lengths of @key
 * @prev:	previous cumulative counts (zero before the first sample)
 * @have_prev_t: @prev_t_mono is valid
 * @prev_t_mono: t_mono_ns of the previous sample
 * @i_cycles:	index of the cycles event used for ipc, -1 if none
 * @i_insns:	index of instructions, -1 if none
 * @i_refs:	index of cache-references, -1 if none
 * @i_misses:	index of cache-misses, -1 if none
 * @rows:	rows written for this thread since its started record
 * @not_applied: events with command keyword modifiers left out (bit i)
 */
struct vc_tid {
	__u32 tid;
	bool started;
	__u32 pid;
	__s32 vcpu;
	__u32 kind;
	__u32 nr_events;
	__u32 exist_mask;
	char comm[VCPUPERF_COMM_LEN + 1];
	struct vcpuperf_event_desc ev[VCPUPERF_MAX_EVENTS];
	char key[VCPUPERF_MAX_EVENTS][VC_KEY_LEN];
	unsigned short key_len[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count prev[VCPUPERF_MAX_EVENTS];
	bool have_prev_t;
	__u64 prev_t_mono;
	int i_cycles;
	int i_insns;
	int i_refs;
	int i_misses;
	__u64 rows;
	__u32 not_applied;
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
 */
struct vc_stats {
	__u64 records;
	__u64 rows;
	__u64 gaps;
	__u64 unexplained;
	__u64 bad;
	__u64 unknown;
	__u64 orphans;
};

/**
 * struct vc_decoder - the stream reader's state
 * @rows:	writer of sample rows
 * @events:	writer of lifecycle lines (may be @rows)
 * @mono_origin: subtracted from every t_mono_ns
 * @raw:	add the raw cumulative values to each row
 * @buf:	reassembly buffer
 * @len:	bytes in @buf
 * @cap:	size of @buf
 * @offset:	stream offset of @buf[0]
 * @have_header: the stream header was read
 * @finished:	the session finished record was read
 * @next_seq:	sequence number expected next
 * @tab:	open-addressing table of per-thread state
 * @tab_size:	slots in @tab (power of two)
 * @tab_used:	slots in use
 * @stats:	counters
 * @fatal:	the stream cannot be decoded further
 */
struct vc_decoder {
	struct jw *rows;
	struct jw *events;
	__u64 mono_origin;
	bool raw;
	unsigned char *buf;
	size_t len;
	size_t cap;
	__u64 offset;
	bool have_header;
	bool finished;
	__u64 next_seq;
	struct vc_tid **tab;
	size_t tab_size;
	size_t tab_used;
	struct vc_stats stats;
	bool fatal;
};

int vc_dec_init(struct vc_decoder *d, struct jw *rows, struct jw *events,
		__u64 mono_origin, bool raw);
void vc_dec_free(struct vc_decoder *d);
void *vc_dec_space(struct vc_decoder *d, size_t *room);
int vc_dec_commit(struct vc_decoder *d, size_t n);
int vc_dec_end(struct vc_decoder *d);
struct vc_tid *vc_tid_find(struct vc_decoder *d, __u32 tid);
struct vc_tid *vc_tid_get(struct vc_decoder *d, __u32 tid);
void vc_tid_start(struct vc_tid *t, const struct vcpuperf_started *s);
size_t vc_mod_letters(char *buf, size_t len, __u32 mods);

/* ---- rows.c ----------------------------------------------------------- */

void vc_write_row(struct vc_decoder *d, struct vc_tid *t,
		  const struct vcpuperf_sample *s);

/* ---- lifecycle.c ------------------------------------------------------ */

void vc_event_begin(struct vc_decoder *d, const char *name,
		    const struct vcpuperf_rec *rec);
void vc_event_end(struct vc_decoder *d);
void vc_event_id(struct vc_decoder *d, const struct vcpuperf_rec *rec,
		 const struct vcpuperf_target_id *id);
void vc_lifecycle(struct vc_decoder *d, const struct vcpuperf_rec *rec);
void vc_seq_gap(struct vc_decoder *d, const struct vcpuperf_rec *rec,
		__u64 expected, bool explained);

/* ---- control.c -------------------------------------------------------- */

#define VC_DEBUGFS_DIR	"/sys/kernel/debug/vcpuperf"
#define VC_DEVICE	"/dev/vcpuperf"

/**
 * struct vc_files - the module's files the tool uses
 * @stream:	the record stream (non-blocking)
 * @ctl:	where commands go, -1 if none; equals @stream for the device
 * @path:	the stream's path, for messages
 */
struct vc_files {
	int stream;
	int ctl;
	char path[4096];
};

int vc_open_module(const char *dir, const char *device, bool control,
		   struct vc_files *files);

void vc_explain_missing(const char *dir);
void vc_explain_open(const char *path, int err, bool stream);
int vc_control(int fd, const char *dir, const char *cmd);
int vc_last_error(const char *dir, char *buf, size_t len);

#endif /* _VCPUPERF_CAT_H */
