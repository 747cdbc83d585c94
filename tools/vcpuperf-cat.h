/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpuperf-cat: read the vcpuperf record stream and write JSONL.
 *
 * jsonl.c	buffered JSON writer (own number formatting, chunked fwrite)
 * decode.c	stream reassembly, record validation, sequence checking;
 *		hands what it decoded to a struct vc_sink
 * threads.c	per-thread state: the only place that changes it
 * procs.c	per-process state (process records: VM identity, totals)
 * output.c	the JSONL sink: the callbacks rows.c and lifecycle.c provide
 * rows.c	one JSONL row per sample record, one per-VM row per process
 *		sample record
 * lifecycle.c	one JSON line per lifecycle record (perf_started, ...)
 * prom.c	the node_exporter textfile (--textfile): counters summed
 *		from the rows
 * control.c	debugfs paths, control writes, status, error advice
 * options.c	the command line, --help, checks before any I/O
 * loop.c	the read loop: signals, stop, polling, flushing
 * main.c	a run: open the stream and outputs, attach, read, report
 */
#ifndef _VCPUPERF_CAT_H
#define _VCPUPERF_CAT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "vcpuperf_lib.h"

#define VC_NAME		"vcpuperf-cat"

/* Decimals of a fixed-point number of nanoseconds or parts per million. */
#define VC_NS_DIGITS_S	9	/* ns as seconds */
#define VC_NS_DIGITS_MS	6	/* ns as milliseconds */
#define VC_PPM_DIGITS	6	/* ppm as a ratio */

/* Exit codes. */
#define VC_EXIT_OK	0
#define VC_EXIT_RUNTIME	1
#define VC_EXIT_USAGE	2

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

#ifndef container_of
#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

/* ---- jsonl.c ---------------------------------------------------------- */

#define VC_JSON_BUFSZ	(1024U * 1024U)	/* output buffer */
#define VC_JSON_SLACK	(64U * 1024U)	/* room one line may need at most */
#define VC_JSON_DEPTH	8		/* object/array nesting */
#define VC_JSON_ESC_MAX	6		/* an escaped byte: \u00XX */
#define VC_JSON_INT_MAX	24		/* room for any json_u64/json_s64 */
#define VC_JSON_STR_MAX	4096		/* json_str() truncates here */

/**
 * struct json_writer - a JSON lines writer into a large buffer
 * @fp:		output stream (written with fwrite in big chunks)
 * @path:	its name, for error messages
 * @buf:	pending output
 * @len:	bytes pending in @buf
 * @cap:	size of @buf
 * @depth:	current nesting
 * @first:	per level: nothing written yet at this level (no comma)
 * @err:	errno of the first failed write, 0 if none
 */
struct json_writer {
	FILE *fp;
	const char *path;
	char *buf;
	size_t len;
	size_t cap;
	int depth;
	bool first[VC_JSON_DEPTH];
	int err;
};

int json_init(struct json_writer *w, FILE *fp, const char *path);
void json_free(struct json_writer *w);
int json_flush(struct json_writer *w);
void json_make_room(struct json_writer *w, size_t n);

/* Make sure @n more bytes fit (flushing if need be). */
static inline void json_need(struct json_writer *w, size_t n)
{
	if (w->cap - w->len < n)
		json_make_room(w, n);
}

static inline void json_putc(struct json_writer *w, char c)
{
	w->buf[w->len++] = c;
}

static inline void json_mem(struct json_writer *w, const void *s, size_t n)
{
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

#define json_lit(w, s)	json_mem((w), (s), sizeof(s) - 1)

/* Append @n bytes, making room for them first. */
static inline void json_put(struct json_writer *w, const void *s, size_t n)
{
	json_need(w, n);
	json_mem(w, s, n);
}

static inline void json_put_char(struct json_writer *w, char c)
{
	json_need(w, 1);
	json_putc(w, c);
}

#define json_put_lit(w, s)	json_put((w), (s), sizeof(s) - 1)

void json_u64(struct json_writer *w, __u64 v);
void json_s64(struct json_writer *w, long long v);
void json_fixed(struct json_writer *w, __u64 v, unsigned int scale_digits);
void json_double(struct json_writer *w, double v);
void json_strn(struct json_writer *w, const char *s, size_t n);
void json_str(struct json_writer *w, const char *s);
void json_bool(struct json_writer *w, bool v);
void json_null(struct json_writer *w);
void json_opt_u64(struct json_writer *w, bool have, __u64 v);
size_t json_escape(char *out, size_t outlen, const char *s, size_t n);

void json_begin(struct json_writer *w, char open);
void json_end(struct json_writer *w, char close);
void json_key(struct json_writer *w, const char *key);
void json_sep(struct json_writer *w);
void json_line_end(struct json_writer *w);

void json_key_u64(struct json_writer *w, const char *key, __u64 v);
void json_key_s64(struct json_writer *w, const char *key, long long v);
void json_key_str(struct json_writer *w, const char *key, const char *s);
void json_key_strn(struct json_writer *w, const char *key, const char *s,
		   size_t n);
void json_key_bool(struct json_writer *w, const char *key, bool v);
void json_key_null(struct json_writer *w, const char *key);
void json_key_double(struct json_writer *w, const char *key, double v);

/* ---- threads.c, procs.c, decode.c: the decoder ----------------------- */

#define VC_BITS_PER_MASK	32	/* events an event mask (__u32) can name */

/**
 * struct vc_ratios - where the operands of a row's derived ratios are
 * @i_cycles:	index of the cycles event used for ipc, -1 if none
 * @i_insns:	index of instructions, -1 if none
 * @i_refs:	index of cache-references, -1 if none
 * @i_misses:	index of cache-misses, -1 if none
 *
 * Set by vc_pick_ratios() from a thread's or a process's events.
 */
struct vc_ratios {
	int i_cycles;
	int i_insns;
	int i_refs;
	int i_misses;
};

/**
 * struct vc_proc - what the decoder knows about one attached process
 * @pid:	process id, as its records carry it
 * @kind:	VCPUPERF_TARGET_PID or VCPUPERF_TARGET_QEMU
 * @flags:	VCPUPERF_ATTACH_* it was attached with
 * @nr_events:	events of its process samples
 * @threads:	threads given process counters at attach
 * @comm:	its leader's name, NUL terminated
 * @vm:		VM name from QEMU's -name, "" if none
 * @uuid:	VM UUID from QEMU's -uuid, "" if none
 * @ev:		the events of its process samples
 * @prev:	previous cumulative counts of its process samples
 * @have_prev_t: @prev_t_mono is valid
 * @prev_t_mono: t_mono_ns of the previous process sample
 * @ratios:	operands of ipc and cache_miss_rate among @ev
 * @rows:	per-VM rows written since its process record
 * @next:	the next process the decoder knows
 *
 * Only procs.c changes these; a process record for a pid seen before
 * resets its entry in place (threads keep pointing at it).
 */
struct vc_proc {
	__u32 pid;
	__u32 kind;
	__u32 flags;
	__u32 nr_events;
	__u32 threads;
	char comm[VCPUPERF_COMM_LEN + 1];
	char vm[VCPUPERF_VM_NAME_LEN + 1];
	char uuid[VCPUPERF_UUID_LEN + 1];
	struct vcpuperf_event_desc ev[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count prev[VCPUPERF_MAX_EVENTS];
	bool have_prev_t;
	__u64 prev_t_mono;
	struct vc_ratios ratios;
	__u64 rows;
	struct vc_proc *next;
};

/**
 * struct vc_tid - what the decoder knows about one sampled thread
 * @tid:	thread id
 * @started:	a started record was seen
 * @pid:	thread group id
 * @vcpu:	vCPU index or VCPUPERF_NO_VCPU
 * @kind:	enum vcpuperf_target_kind
 * @nr_events:	configured events
 * @exist_mask:	counters believed to exist (unavailable/sample records)
 * @comm:	thread name, NUL terminated
 * @ev:		the configured events
 * @prev:	previous cumulative counts (zero before the first sample)
 * @have_prev_t: @prev_t_mono is valid
 * @prev_t_mono: t_mono_ns of the previous sample
 * @ratios:	operands of ipc and cache_miss_rate among @ev
 * @rows:	rows written for this thread since its started record
 * @not_applied: events whose command keyword modifiers were left out,
 *		because the kernel would ignore them (bit i)
 * @proc:	its process (VM identity), NULL when attached by tid= or
 *		its process record is not known
 * @sink_data:	the sink's own data for this thread (from its thread_start)
 *
 * Only threads.c changes these fields; the sink gets them read-only.
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
	struct vcpuperf_count prev[VCPUPERF_MAX_EVENTS];
	bool have_prev_t;
	__u64 prev_t_mono;
	struct vc_ratios ratios;
	__u64 rows;
	__u32 not_applied;
	const struct vc_proc *proc;
	void *sink_data;
};

/**
 * struct vc_row - one sample record, interpreted against its thread
 * @s:		the validated sample record (NULL for a process sample)
 * @ps:		the validated process sample record (NULL for a sample)
 * @d:		per event, the raw deltas of value, enabled and running
 * @value:	per event, the interval's delta scaled by enabled/running
 * @have:	per event, @value is known: the counter exists, and it ran on
 *		the PMU if it was enabled (else the row says null)
 * @enabled_ns:	largest time_enabled delta over the existing counters
 * @running_ns:	smallest time_running delta over the existing counters
 * @counted:	at least one counter exists (@enabled_ns, @running_ns and
 *		@ran mean nothing otherwise)
 * @ran:	some counter was enabled during the interval
 * @multiplexed: some counter ran for only part of its enabled time
 * @have_dt:	@dt_ns is known (not the thread's first sample)
 * @dt_ns:	t_mono_ns since the thread's previous sample
 */
struct vc_row {
	const struct vcpuperf_sample *s;
	const struct vcpuperf_process_sample *ps;
	struct vp_delta d[VCPUPERF_MAX_EVENTS];
	__u64 value[VCPUPERF_MAX_EVENTS];
	bool have[VCPUPERF_MAX_EVENTS];
	__u64 enabled_ns;
	__u64 running_ns;
	bool counted;
	bool ran;
	bool multiplexed;
	bool have_dt;
	__s64 dt_ns;
};

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
 * @process:	a process record was applied to @p
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
	void (*process)(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			const struct vc_proc *p);
	void (*process_row)(struct vc_sink *sink, const struct vc_proc *p,
			    const struct vc_row *row);
};

/**
 * struct vc_threads - the per-thread state, by tid
 * @slot:	open-addressing table of threads
 * @size:	slots in @slot (power of two)
 * @used:	slots in use
 * @sink:	whose thread_start and thread_free keep @sink_data
 */
struct vc_threads {
	struct vc_tid **slot;
	size_t size;
	size_t used;
	struct vc_sink *sink;
};

int vc_threads_init(struct vc_threads *th, struct vc_sink *sink);
void vc_threads_free(struct vc_threads *th);
struct vc_tid *vc_thread_find(const struct vc_threads *th, __u32 tid);
struct vc_tid *vc_thread_start(struct vc_threads *th,
			       const struct vcpuperf_started *s,
			       const struct vc_proc *proc);
void vc_thread_unavailable(struct vc_tid *t,
			   const struct vcpuperf_unavailable *u);
void vc_thread_sample(struct vc_tid *t, const struct vcpuperf_sample *s,
		      struct vc_row *row);
void vc_pick_ratios(const struct vcpuperf_event_desc *ev, __u32 nr,
		    struct vc_ratios *r);
void vc_counts_delta(struct vcpuperf_count *prev,
		     const struct vcpuperf_count *cur, __u32 nr, __u32 mask,
		     struct vc_row *row);

struct vc_proc *vc_proc_find(struct vc_proc *procs, __u32 pid);
struct vc_proc *vc_proc_start(struct vc_proc **procs,
			      const struct vcpuperf_process *r);
void vc_proc_sample(struct vc_proc *p,
		    const struct vcpuperf_process_sample *s,
		    struct vc_row *row);
void vc_procs_free(struct vc_proc **procs);

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

/* ---- output.c, rows.c, lifecycle.c: the JSONL sink -------------------- */

size_t vc_mod_letters(char *buf, size_t len, __u32 mods);

/**
 * struct vc_jsonl - the sink that writes JSONL
 * @sink:	its callbacks, for the decoder
 * @rows:	writer of sample rows
 * @events:	writer of lifecycle lines (may be @rows)
 * @mono_origin: subtracted from every t_mono_ns
 * @raw:	add the raw cumulative values to each row
 * @prom:	the textfile's totals (--textfile), or NULL
 */
struct vc_jsonl {
	struct vc_sink sink;
	struct json_writer *rows;
	struct json_writer *events;
	__u64 mono_origin;
	bool raw;
	struct vc_prom *prom;
};

void vc_jsonl_init(struct vc_jsonl *out, struct json_writer *rows,
		   struct json_writer *events, __u64 mono_origin, bool raw,
		   struct vc_prom *prom);

void *vc_row_thread_start(struct vc_sink *sink, const struct vc_tid *t,
			  void *data);
void vc_row_thread_free(struct vc_sink *sink, void *data);
void vc_write_row(struct vc_sink *sink, const struct vc_tid *t,
		  const struct vc_row *row);
void vc_write_vm_row(struct vc_sink *sink, const struct vc_proc *p,
		     const struct vc_row *row);

void vc_write_lifecycle(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			const struct vc_tid *t, __u64 rows);
void vc_write_seq_gap(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      __u64 expected, bool explained);
void vc_write_vm_finished(const struct vc_jsonl *out, const struct vc_proc *p,
			  const struct vcpuperf_process_sample *s);
void vc_write_process(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      const struct vc_proc *p);

/* ---- prom.c ----------------------------------------------------------- */

struct vc_prom;

struct vc_prom *vc_prom_new(const char *path);
void vc_prom_free(struct vc_prom *pr);
void vc_prom_row(struct vc_prom *pr, const struct vc_tid *t,
		 const struct vc_row *row);
void vc_prom_vm_row(struct vc_prom *pr, const struct vc_proc *p,
		    const struct vc_row *row);
int vc_prom_write(struct vc_prom *pr, bool up);
bool vc_prom_dirty(const struct vc_prom *pr);

/* ---- options.c -------------------------------------------------------- */

/**
 * struct vc_opts - the command line
 * @kind:	VCPUPERF_TARGET_* of --qemu, --pid or --tid; 0 for none
 * @ids:	its argument
 * @no_attach:	--no-attach
 * @events:	--events, or NULL
 * @interval:	--interval as given, or NULL
 * @ring:	--ring as given, or NULL
 * @read:	--read as given, or NULL
 * @mods:	keyword modifiers (guest_only ...) as VCPUPERF_MOD_*
 * @duration_ns: --duration, 0 for none
 * @out:	-o, or NULL for stdout
 * @events_out:	--events-out, or NULL for inline
 * @raw:	--raw
 * @mono_origin: --mono-origin
 * @dir:	--debugfs
 * @device:	--device
 * @replay:	--replay
 * @record:	--record
 * @flags:	VCPUPERF_ATTACH_* of --per-vm and --emulator-threads
 * @textfile:	--textfile, or NULL
 * @quiet:	-q: no live status line
 */
struct vc_opts {
	enum vcpuperf_target_kind kind;
	const char *ids;
	bool no_attach;
	const char *events;
	const char *interval;
	const char *ring;
	const char *read;
	__u32 mods;
	__u64 duration_ns;
	const char *out;
	const char *events_out;
	bool raw;
	__u64 mono_origin;
	const char *dir;
	const char *device;
	const char *replay;
	const char *record;
	__u32 flags;
	const char *textfile;
	bool quiet;
};

int vc_parse_args(int argc, char **argv, struct vc_opts *o);
int vc_validate(const struct vc_opts *o, char *attach, size_t len,
		__u64 *interval_ns);

/* ---- ringsize.c ------------------------------------------------------- */

/**
 * struct vc_ring_auto - grow the collection's ring with the stream's rate
 * @on:		the tool owns the collection and no --ring was given
 * @window_at:	start of the current rate window (0: none yet)
 * @window_bytes: bytes read since @window_at
 */
struct vc_ring_auto {
	bool on;
	__u64 window_at;
	__u64 window_bytes;
};

void vc_ring_auto(struct vc_ring_auto *r, struct vc_decoder *d, int ctl,
		  const char *dir, size_t n, __u64 now);

/* ---- loop.c ----------------------------------------------------------- */

/**
 * struct vc_loop - the read loop: its inputs, then its own state
 * @fd:		stream (non-blocking unless replayed)
 * @ctl:	where commands go, -1 when no stop is to be sent
 * @dir:	debugfs directory
 * @record:	copy of the raw bytes, or NULL
 * @deadline:	CLOCK_MONOTONIC ns to stop at, 0 for none
 * @d:		the decoder
 * @rows:	writer of its rows
 * @events:	writer of its lifecycle lines (may be @rows)
 * @flushed:	when the output was last written out
 * @stopping:	stop was sent: read on to the end of the stream
 * @stop_by:	give up waiting for the end of the stream at this time
 * @spurious:	reads in a row that found nothing after poll said ready
 * @paced:	the last wait was a paced sleep (no wake-up asked for)
 * @paced_empty: ... and the read after it found nothing
 * @prom:	the textfile to rewrite, or NULL
 * @prom_at:	when it was last written
 * @status:	show the live status line on standard error
 * @status_at:	when it was last shown
 * @started:	when the loop began
 * @ring:	the ring follows the stream's rate (see ringsize.c)
 */
struct vc_loop {
	int fd;
	int ctl;
	const char *dir;
	FILE *record;
	__u64 deadline;
	struct vc_decoder *d;
	struct json_writer *rows;
	struct json_writer *events;
	__u64 flushed;
	bool stopping;
	__u64 stop_by;
	int spurious;
	bool paced;
	bool paced_empty;
	struct vc_prom *prom;
	__u64 prom_at;
	bool status;
	__u64 status_at;
	__u64 started;
	struct vc_ring_auto ring;
};

void vc_signals_setup(void);
__u64 vc_now_ns(void);
int vc_read_loop(struct vc_loop *l);

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
	char path[PATH_MAX];
};

int vc_open_module(const char *dir, const char *device, bool control,
		   struct vc_files *files);

void vc_explain_missing(const char *dir);
void vc_explain_open(const char *path, int err, bool stream);
int vc_control(int fd, const char *dir, const char *cmd);
int vc_last_error(const char *dir, char *buf, size_t len);

#endif /* _VCPUPERF_CAT_H */
