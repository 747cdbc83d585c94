// SPDX-License-Identifier: GPL-2.0
/*
 * One JSONL row per sample record: per-interval deltas of the cumulative
 * counters, scaled for multiplexing, with the null-versus-zero rules of
 * the row schema of the Python perf-stat collector that vcpuperf
 * replaces (one row per interval, null for "not counted", never a
 * made-up 0).  This is the hot path: no printf, and every key is written
 * with one memcpy.
 */
#include <stdlib.h>

#include "common.h"
#include "jsonl.h"
#include "lifecycle.h"
#include "output.h"
#include "procs.h"
#include "rows.h"
#include "threads.h"

/*
 * Room for an event's key: its name escaped, then "_N" to make it unique
 * (VC_KEY_SUFFIX_MAX, with the quotes, comma and colon around it).
 */
#define VC_KEY_SUFFIX_MAX	8
/* Spelled-out guest and host modifiers, and room for them in a name. */
#define VC_KEY_GUEST		"_guest"
#define VC_KEY_HOST		"_host"
#define VC_KEY_MODS_MAX		16
#define VC_KEY_LEN	((VCPUPERF_NAME_LEN + VC_KEY_MODS_MAX) * \
			 VC_JSON_ESC_MAX + VC_KEY_SUFFIX_MAX)

/* The keys of a row besides the events', in the order rows have them. */
enum vc_row_key {
	VC_ROW_T_MONO,
	VC_ROW_T_WALL,
	VC_ROW_SOURCE,
	VC_ROW_AVAILABLE,
	VC_ROW_INTERVAL,
	VC_ROW_DT,
	VC_ROW_SEQ,
	VC_ROW_PID,
	VC_ROW_TID,
	VC_ROW_VCPU,
	VC_ROW_ROLE,
	VC_ROW_VM,
	VC_ROW_UUID,
	VC_ROW_RAN,
	VC_ROW_IPC,
	VC_ROW_MISS_RATE,
	VC_ROW_ENABLED,
	VC_ROW_RUNNING,
	VC_ROW_MULTIPLEXED,
	VC_ROW_READ_WINDOW,
	VC_ROW_LATE,
	VC_ROW_SCHED_RUN,
	VC_ROW_SCHED_WAIT,
	VC_ROW_SCHED_SLICES,
	VC_ROW_SCHED_VOLUNTARY,
	VC_ROW_SCHED_INVOLUNTARY,
	VC_ROW_SCHED_MIGRATIONS,
	VC_ROW_CPU,
	VC_ROW_NOT_APPLIED,
	VC_ROW_RAW,
	VC_NR_ROW_KEYS
};

/* A key as a row has it: ,"name": */
#define VC_ROW_KEY(text)	{ text, sizeof(text) - 1 }
#define VC_KEY_QUOTES		4	/* ,"": around a bare key */

/* Every key of a row but the events': written from here, and kept free. */
static const struct {
	const char *text;
	size_t len;
} vc_row_keys[VC_NR_ROW_KEYS] = {
	[VC_ROW_T_MONO] = VC_ROW_KEY(",\"t_mono_ns\":"),
	[VC_ROW_T_WALL] = VC_ROW_KEY(",\"t_wall_ns\":"),
	[VC_ROW_SOURCE] = VC_ROW_KEY(",\"source\":"),
	[VC_ROW_AVAILABLE] = VC_ROW_KEY(",\"available_in_deployment\":"),
	[VC_ROW_INTERVAL] = VC_ROW_KEY(",\"interval_s\":"),
	[VC_ROW_DT] = VC_ROW_KEY(",\"dt_ns\":"),
	[VC_ROW_SEQ] = VC_ROW_KEY(",\"seq\":"),
	[VC_ROW_PID] = VC_ROW_KEY(",\"pid\":"),
	[VC_ROW_TID] = VC_ROW_KEY(",\"tid\":"),
	[VC_ROW_VCPU] = VC_ROW_KEY(",\"vcpu\":"),
	[VC_ROW_ROLE] = VC_ROW_KEY(",\"role\":"),
	[VC_ROW_VM] = VC_ROW_KEY(",\"vm\":"),
	[VC_ROW_UUID] = VC_ROW_KEY(",\"uuid\":"),
	[VC_ROW_RAN] = VC_ROW_KEY(",\"ran\":"),
	[VC_ROW_IPC] = VC_ROW_KEY(",\"ipc\":"),
	[VC_ROW_MISS_RATE] = VC_ROW_KEY(",\"cache_miss_rate\":"),
	[VC_ROW_ENABLED] = VC_ROW_KEY(",\"time_enabled_ns\":"),
	[VC_ROW_RUNNING] = VC_ROW_KEY(",\"time_running_ns\":"),
	[VC_ROW_MULTIPLEXED] = VC_ROW_KEY(",\"multiplexed\":"),
	[VC_ROW_READ_WINDOW] = VC_ROW_KEY(",\"read_window_ns\":"),
	[VC_ROW_LATE] = VC_ROW_KEY(",\"late_ns\":"),
	[VC_ROW_SCHED_RUN] = VC_ROW_KEY(",\"sched_run_ns\":"),
	[VC_ROW_SCHED_WAIT] = VC_ROW_KEY(",\"sched_wait_ns\":"),
	[VC_ROW_SCHED_SLICES] = VC_ROW_KEY(",\"sched_timeslices\":"),
	[VC_ROW_SCHED_VOLUNTARY] = VC_ROW_KEY(",\"sched_voluntary_switches\":"),
	[VC_ROW_SCHED_INVOLUNTARY] =
		VC_ROW_KEY(",\"sched_involuntary_switches\":"),
	[VC_ROW_SCHED_MIGRATIONS] = VC_ROW_KEY(",\"sched_migrations\":"),
	[VC_ROW_CPU] = VC_ROW_KEY(",\"cpu\":"),
	[VC_ROW_NOT_APPLIED] = VC_ROW_KEY(",\"modifiers_not_applied\":"),
	[VC_ROW_RAW] = VC_ROW_KEY(",\"raw\":"),
};

/*
 * An event's key is copied with this many bytes whatever its length (a
 * copy of constant size is a few moves, one of variable size a call):
 * the bytes past the key are overwritten by what follows.
 */
#define VC_KEY_COPY		32

/* Room for a thread's identity segment (see struct vc_row_keys). */
#define VC_ID_SEG_LEN	(VC_PROC_JSON_LEN(VCPUPERF_VM_NAME_LEN) + \
			 VC_PROC_JSON_LEN(VCPUPERF_UUID_LEN) + 256)
/* Room for the segment from "source" to "dt_ns". */
#define VC_IV_SEG_LEN		160

/**
 * struct vc_id_of - what a thread's identity segment was made from
 * @pid:	the samples' pid
 * @tid:	their tid
 * @vcpu:	their vCPU index
 * @role_vcpu:	the thread's own vCPU index (its role)
 * @kind:	its target kind (its role)
 * @proc:	its process, or NULL
 * @gen:	@proc's generation then (its VM name and UUID)
 */
struct vc_id_of {
	__u32 pid;
	__u32 tid;
	__s32 vcpu;
	__s32 role_vcpu;
	__u32 kind;
	const struct vc_proc *proc;
	__u64 gen;
};

/**
 * struct vc_row_keys - what one thread's rows repeat, written once
 * @key:	per event, ,"name": with - and : made _, escaped, unique in
 *		the row (room for VC_KEY_COPY bytes at least)
 * @len:	lengths of @key
 * @iv_seg:	,"source":...,"interval_s":I,"dt_ns": for @iv_ns
 * @iv_len:	its length, 0 before the first row
 * @iv_ns:	the interval it was made for
 * @id_seg:	,"pid":...,"vm":...,"uuid":...,"ran": for @id_of
 * @id_len:	its length, 0 before the first row
 * @id_of:	what it was made from
 *
 * The segments are remade when what they were made from changes (a new
 * interval, a process record that reset the VM's identity).
 */
struct vc_row_keys {
	char key[VCPUPERF_MAX_EVENTS][VC_KEY_LEN];
	unsigned short len[VCPUPERF_MAX_EVENTS];
	char iv_seg[VC_IV_SEG_LEN];
	size_t iv_len;
	__u64 iv_ns;
	char id_seg[VC_ID_SEG_LEN];
	size_t id_len;
	struct vc_id_of id_of;
};

/* Is the bare key already used by a fixed key or an event before @n? */
static bool vc_key_taken(const struct vc_row_keys *k, __u32 n,
			 const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < VC_NR_ROW_KEYS; i++)
		if (vc_row_keys[i].len == len + VC_KEY_QUOTES &&
		    !memcmp(vc_row_keys[i].text + 2, key, len))
			return true;
	for (i = 0; i < n; i++)
		if (k->len[i] == len + VC_KEY_QUOTES &&
		    !memcmp(k->key[i] + 2, key, len))
			return true;
	return false;
}

/*
 * The length of the name without a modifier suffix (":uG"): letters that
 * are all modifiers of the event; 0 if the name has no such suffix.
 */
static size_t vc_mod_suffix(const struct vcpuperf_event_desc *ev,
			    size_t len)
{
	static const char letters[] = "ukGHD";	/* VCPUPERF_MOD_* order */
	const char *colon = NULL;
	size_t i;

	for (i = len; i > 0; i--) {
		if (ev->name[i - 1] == ':') {
			colon = ev->name + i - 1;
			break;
		}
	}
	if (!colon || colon + 1 == ev->name + len)
		return 0;
	for (i = colon + 1 - ev->name; i < len; i++) {
		const char *m = strchr(letters, ev->name[i]);

		if (!m || !(ev->mods & (1U << (m - letters))))
			return 0;
	}
	return colon - ev->name;
}

/*
 * The name an event's key is made of: the guest and host modifiers are
 * spelled out (cycles:G is "cycles_guest", cycles:uH "cycles_u_host": a
 * key that differs from another by the case of one letter is easy to
 * misread).  Returns its length.
 */
static size_t vc_key_name(char *name, const struct vcpuperf_event_desc *ev)
{
	size_t len = strnlen(ev->name, VCPUPERF_NAME_LEN);
	size_t suffix, nmods, o, i;
	const char *mods;
	bool guest, host;

	memcpy(name, ev->name, len);
	suffix = vc_mod_suffix(ev, len);
	if (!suffix)
		return len;
	mods = ev->name + suffix + 1;
	nmods = len - suffix - 1;
	o = suffix;
	guest = memchr(mods, 'G', nmods);
	host = memchr(mods, 'H', nmods);
	if (nmods > (size_t)(guest + host)) {
		name[o++] = '_';
		for (i = 0; i < nmods; i++)
			if (mods[i] != 'G' && mods[i] != 'H')
				name[o++] = mods[i];
	}
	if (guest) {
		memcpy(name + o, VC_KEY_GUEST, sizeof(VC_KEY_GUEST) - 1);
		o += sizeof(VC_KEY_GUEST) - 1;
	}
	if (host) {
		memcpy(name + o, VC_KEY_HOST, sizeof(VC_KEY_HOST) - 1);
		o += sizeof(VC_KEY_HOST) - 1;
	}
	return o;
}

/* The key of event @n: its name with - and : made _, unique in the row. */
static void vc_make_key(struct vc_row_keys *k,
			const struct vcpuperf_event_desc *ev, __u32 n)
{
	char name[VCPUPERF_NAME_LEN + VC_KEY_MODS_MAX];
	char esc[VC_KEY_LEN];
	size_t len, base, i;
	int dup = 1;

	len = vc_key_name(name, &ev[n]);
	for (i = 0; i < len; i++)
		if (name[i] == '-' || name[i] == ':')
			name[i] = '_';
	if (!len)
		name[len++] = '_';
	base = len;
	for (;;) {
		len = json_escape(esc, sizeof(esc) - VC_KEY_SUFFIX_MAX, name,
				  base);
		if (dup > 1)
			len += (size_t)snprintf(esc + len, sizeof(esc) - len,
						"_%d", dup);
		if (!vc_key_taken(k, n, esc, len))
			break;
		dup++;
	}
	k->key[n][0] = ',';
	k->key[n][1] = '"';
	memcpy(k->key[n] + 2, esc, len);
	k->key[n][len + 2] = '"';
	k->key[n][len + 3] = ':';
	k->len[n] = (unsigned short)(len + VC_KEY_QUOTES);
}

/**
 * vc_row_thread_start() - the row keys of a thread that (re)started
 * @sink:	the JSONL sink
 * @t:		the thread, with its events
 * @data:	its keys from an earlier started record, or NULL
 *
 * Return: the keys (@data reused), or NULL when out of memory.
 */
void *vc_row_thread_start(struct vc_sink *sink, const struct vc_tid *t,
			  void *data)
{
	struct vc_row_keys *k = data;
	__u32 i;

	(void)sink;
	if (!k)
		k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->iv_len = 0;
	k->id_len = 0;
	for (i = 0; i < t->nr_events; i++)
		vc_make_key(k, t->ev, i);
	return k;
}

/**
 * vc_row_thread_free() - release what vc_row_thread_start() returned
 * @sink:	the JSONL sink
 * @data:	the keys, or NULL
 */
void vc_row_thread_free(struct vc_sink *sink, void *data)
{
	(void)sink;
	free(data);
}

/* Inlined: the key's text and length are then constants, its copy moves. */
static inline __attribute__((always_inline))
void vc_put_key(struct json_writer *w, enum vc_row_key key)
{
	json_put(w, vc_row_keys[key].text, vc_row_keys[key].len);
}

/*
 * "modifiers_not_applied":{"key":"G",...}: command keyword modifiers the
 * kernel would ignore for these events, left out (rare: not a hot path).
 */
static void vc_not_applied(struct json_writer *w, const struct vc_tid *t,
			   const struct vc_row_keys *k)
{
	char letters[VP_NR_MODS + 1];
	bool first = true;
	__u32 i;

	vc_put_key(w, VC_ROW_NOT_APPLIED);
	json_put_char(w, '{');
	for (i = 0; i < t->nr_events; i++) {
		if (!(t->not_applied & (1U << i)))
			continue;
		/* the event's key, without its leading comma the first time */
		json_put(w, k->key[i] + first, k->len[i] - first);
		first = false;
		vc_mod_letters(letters, sizeof(letters),
			       t->ev[i].mods >> VCPUPERF_MOD_NOT_APPLIED_SHIFT);
		json_str(w, letters);
	}
	json_put_char(w, '}');
}

/* A ratio of two event values, null unless both exist and b > 0. */
static void vc_ratio(struct json_writer *w, int ia, int ib,
		     const struct vc_row *row)
{
	if (ia < 0 || ib < 0 || !row->have[ia] || !row->have[ib] ||
	    !row->value[ib]) {
		json_null(w);
		return;
	}
	json_double(w, (double)row->value[ia] / (double)row->value[ib]);
}

/* A row key at a cursor (inlined: a copy of constant size). */
static inline __attribute__((always_inline))
char *vc_p_key(char *p, enum vc_row_key key)
{
	return json_p_mem(p, vc_row_keys[key].text, vc_row_keys[key].len);
}

/* Room for a run of time keys and their values (vc_row_derived()). */
#define VC_ROW_TIMES_MAX	256

/*
 * The keys after the counts, the same in thread and per-VM rows: ipc,
 * cache_miss_rate, time_enabled/running, multiplexed, read_window_ns.
 */
static void vc_row_derived(struct json_writer *w, const struct vc_ratios *r,
			   const struct vc_row *row, __u64 read_window_ns)
{
	char *p;

	vc_put_key(w, VC_ROW_IPC);
	vc_ratio(w, r->i_insns, r->i_cycles, row);
	vc_put_key(w, VC_ROW_MISS_RATE);
	vc_ratio(w, r->i_misses, r->i_refs, row);
	p = json_cursor(w, VC_ROW_TIMES_MAX);
	p = vc_p_key(p, VC_ROW_ENABLED);
	p = json_p_opt_u64(p, row->counted, row->enabled_ns);
	p = vc_p_key(p, VC_ROW_RUNNING);
	p = json_p_opt_u64(p, row->counted, row->running_ns);
	p = vc_p_key(p, VC_ROW_MULTIPLEXED);
	p = json_p_bool(p, row->multiplexed);
	p = vc_p_key(p, VC_ROW_READ_WINDOW);
	p = json_fmt_u64(p, read_window_ns);
	json_cursor_end(w, p);
}

static void vc_raw(struct json_writer *w,
		   const struct vcpuperf_event_desc *ev, __u32 nr, __u32 mask,
		   const struct vcpuperf_count *counts)
{
	__u32 i;

	vc_put_key(w, VC_ROW_RAW);
	json_put_char(w, '{');
	for (i = 0; i < nr; i++) {
		const struct vcpuperf_count *c = &counts[i];

		if (i)
			json_put_char(w, ',');
		json_strn(w, ev[i].name, VCPUPERF_NAME_LEN);
		json_put_char(w, ':');
		if (!(mask & (1U << i))) {
			json_null(w);
			continue;
		}
		json_put_lit(w, "{\"value\":");
		json_u64(w, c->value);
		json_put_lit(w, ",\"enabled\":");
		json_u64(w, c->enabled);
		json_put_lit(w, ",\"running\":");
		json_u64(w, c->running);
		json_put_char(w, '}');
	}
	json_put_char(w, '}');
}

/* A process's VM name or UUID, made a JSON value once; null if none. */
static void vc_proc_json(struct json_writer *w, const char *value)
{
	if (value)
		json_put(w, value, strlen(value));
	else
		json_null(w);
}

/* role, vm and uuid of a thread's row (null for what is not known). */
static void vc_row_identity(struct json_writer *w, const struct vc_tid *t)
{
	vc_put_key(w, VC_ROW_ROLE);
	if (t->vcpu != VCPUPERF_NO_VCPU)
		json_put_lit(w, "\"vcpu\"");
	else if (t->kind == VCPUPERF_TARGET_QEMU)
		json_put_lit(w, "\"emulator\"");
	else
		json_null(w);
	vc_put_key(w, VC_ROW_VM);
	vc_proc_json(w, t->proc ? t->proc->vm_json : NULL);
	vc_put_key(w, VC_ROW_UUID);
	vc_proc_json(w, t->proc ? t->proc->uuid_json : NULL);
}

/* "source" to "interval_s": the same in every row of one interval. */
static void vc_row_origin(struct json_writer *w, __u64 interval_ns)
{
	vc_put_key(w, VC_ROW_SOURCE);
	json_put_lit(w, "\"vcpuperf\"");
	vc_put_key(w, VC_ROW_AVAILABLE);
	json_bool(w, false);
	vc_put_key(w, VC_ROW_INTERVAL);
	json_fixed(w, interval_ns, VC_NS_DIGITS_S);
}

/* A row's opening and its two times, at a cursor (VC_ROW_TIMES_MAX). */
static inline char *vc_p_row_open(char *p, const struct vc_jsonl *out,
				  const struct vcpuperf_rec *rec)
{
	*p++ = '{';
	/* the first key of the line, without its comma */
	p = json_p_mem(p, vc_row_keys[VC_ROW_T_MONO].text + 1,
		       vc_row_keys[VC_ROW_T_MONO].len - 1);
	p = json_p_s64(p, (long long)(rec->t_mono_ns - out->mono_origin));
	p = vc_p_key(p, VC_ROW_T_WALL);
	return json_fmt_u64(p, rec->t_wall_ns);
}

/* A writer into a thread's segment: never flushed (a segment fits). */
static void vc_seg_writer(struct json_writer *w, char *buf, size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->buf = buf;
	w->cap = cap;
}

/* The segment from "source" to the key of "dt_ns", for @interval_ns. */
static void vc_make_iv_seg(struct vc_row_keys *k, __u64 interval_ns)
{
	struct json_writer w;

	vc_seg_writer(&w, k->iv_seg, sizeof(k->iv_seg));
	vc_row_origin(&w, interval_ns);
	vc_put_key(&w, VC_ROW_DT);
	k->iv_len = w.len;
	k->iv_ns = interval_ns;
}

/* What a thread's identity segment is made from, now. */
static void vc_id_now(struct vc_id_of *id, const struct vc_tid *t,
		      const struct vcpuperf_sample *s)
{
	id->pid = s->id.pid;
	id->tid = s->rec.tid;
	id->vcpu = s->id.vcpu;
	id->role_vcpu = t->vcpu;
	id->kind = t->kind;
	id->proc = t->proc;
	id->gen = t->proc ? t->proc->gen : 0;
}

/* Was the identity segment made from this? */
static bool vc_id_same(const struct vc_id_of *a, const struct vc_id_of *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->vcpu == b->vcpu &&
	       a->role_vcpu == b->role_vcpu && a->kind == b->kind &&
	       a->proc == b->proc && a->gen == b->gen;
}

/* The segment from the key of "pid" to that of "ran", for @id. */
static void vc_make_id_seg(struct vc_row_keys *k, const struct vc_tid *t,
			   const struct vc_id_of *id)
{
	struct json_writer w;

	vc_seg_writer(&w, k->id_seg, sizeof(k->id_seg));
	vc_put_key(&w, VC_ROW_PID);
	json_u64(&w, id->pid);
	vc_put_key(&w, VC_ROW_TID);
	json_u64(&w, id->tid);
	vc_put_key(&w, VC_ROW_VCPU);
	if (id->vcpu == (__s32)VCPUPERF_NO_VCPU)
		json_null(&w);
	else
		json_s64(&w, id->vcpu);
	vc_row_identity(&w, t);
	vc_put_key(&w, VC_ROW_RAN);
	k->id_len = w.len;
	k->id_of = *id;
}

/*
 * A row from its opening to its seq, at a cursor: the two times, the
 * interval's segment (made again for another interval), dt and seq.
 */
static inline __attribute__((always_inline))
char *vc_p_row_start(char *p, const struct vc_jsonl *out,
		     struct vc_row_keys *k, const struct vcpuperf_rec *rec,
		     __u64 interval_ns, const struct vc_row *row)
{
	if (!k->iv_len || k->iv_ns != interval_ns)
		vc_make_iv_seg(k, interval_ns);
	p = vc_p_row_open(p, out, rec);
	p = json_p_mem(p, k->iv_seg, k->iv_len);
	if (row->have_dt)
		p = json_p_s64(p, row->dt_ns);
	else
		p = json_p_lit(p, "null");
	p = vc_p_key(p, VC_ROW_SEQ);
	return json_fmt_u64(p, rec->seq);
}

/*
 * Room for what vc_row_head() writes at its cursor: the opening, the two
 * segments, and dt_ns, seq and ran between and after them.
 */
#define VC_ROW_HEAD_MAX	(VC_ROW_TIMES_MAX + VC_IV_SEG_LEN + VC_ID_SEG_LEN + \
			 VC_ROW_TIMES_MAX)
/* Room for an event's key and value (vc_write_row()). */
#define VC_ROW_EVENT_MAX	(VC_KEY_LEN + VC_KEY_COPY + VC_JSON_INT_MAX)

/*
 * Time, origin and identity: the keys before the events'.  What does not
 * change from one row of a thread to the next is copied from its
 * segments, made again when what they were made from changed.
 */
static void vc_row_head(struct json_writer *w, const struct vc_jsonl *out,
			const struct vc_tid *t, struct vc_row_keys *k,
			const struct vc_row *row)
{
	const struct vcpuperf_sample *s = row->s;
	struct vc_id_of id;
	char *p;

	vc_id_now(&id, t, s);
	if (!k->id_len || !vc_id_same(&id, &k->id_of))
		vc_make_id_seg(k, t, &id);
	p = vc_p_row_start(json_cursor(w, VC_ROW_HEAD_MAX), out, k, &s->rec,
			   s->interval_ns, row);
	p = json_p_mem(p, k->id_seg, k->id_len);
	if (row->counted)
		p = json_p_bool(p, row->ran);
	else
		p = json_p_lit(p, "null");
	json_cursor_end(w, p);
}

/*
 * An event's key and value at a cursor: a short key is copied with a
 * constant size (VC_KEY_COPY: the bytes past it are written over next).
 */
static inline char *vc_p_event(char *p, const struct vc_row_keys *k,
			       __u32 i, bool have, __u64 v)
{
	if (k->len[i] > VC_KEY_COPY)
		p = json_p_mem(p, k->key[i], k->len[i]);
	else
		p = json_p_mem(p, k->key[i], VC_KEY_COPY) -
		    (VC_KEY_COPY - k->len[i]);
	return json_p_opt_u64(p, have, v);
}

/* Room for the scheduler figures' keys and values. */
#define VC_ROW_SCHED_MAX	(7 * (VC_KEY_LEN + VC_JSON_INT_MAX))

/*
 * The interval's scheduler figures (vc_sched_delta()): wait and
 * timeslices null where the kernel keeps none (no CONFIG_SCHED_INFO),
 * every one null in a per-VM row that could not sum them; the CPU with
 * @cpu (a thread's row: a process runs on many).
 */
static void vc_row_sched(struct json_writer *w, const struct vcpuperf_sched *d,
			 bool cpu)
{
	bool info = d->valid & VCPUPERF_SCHED_INFO;
	bool run = d->valid & VCPUPERF_SCHED_RUN;
	char *p = json_cursor(w, VC_ROW_SCHED_MAX);

	p = vc_p_key(p, VC_ROW_SCHED_RUN);
	p = json_p_opt_u64(p, run, d->run_ns);
	p = vc_p_key(p, VC_ROW_SCHED_WAIT);
	p = json_p_opt_u64(p, info, d->wait_ns);
	p = vc_p_key(p, VC_ROW_SCHED_SLICES);
	p = json_p_opt_u64(p, info, d->timeslices);
	p = vc_p_key(p, VC_ROW_SCHED_VOLUNTARY);
	p = json_p_opt_u64(p, run, d->voluntary);
	p = vc_p_key(p, VC_ROW_SCHED_INVOLUNTARY);
	p = json_p_opt_u64(p, run, d->involuntary);
	p = vc_p_key(p, VC_ROW_SCHED_MIGRATIONS);
	p = json_p_opt_u64(p, run, d->migrations);
	if (cpu) {
		p = vc_p_key(p, VC_ROW_CPU);
		p = json_p_opt_u64(p, run, d->cpu);
	}
	json_cursor_end(w, p);
}

/* ,"sched_wait_vms": */
#define VC_WHO_VMS_KEY_LEN	(sizeof(",\"sched_wait_vms\":") - 1)

/* The other VMs' names in sched_wait_vms: NULL for "qemu-PID". */
static const char *(*vc_vm_namer)(__u32 pid);

/**
 * vc_rows_set_vm_namer() - how sched_wait_vms names the other VMs
 * @namer:	the VM name of a process id, or NULL when it has none (a
 *		VM without -name, a process gone); NULL for none at all
 *		(a stream decoded away from its host)
 *
 * A VM is named as its episode file is: its -name, else qemu-PID.
 */
void vc_rows_set_vm_namer(const char *(*namer)(__u32 pid))
{
	vc_vm_namer = namer;
}

/*
 * The keys of who took the CPU, made once from the kinds' names (lib/):
 * ,"sched_wait_KIND_ns": for each kind, ,"sched_preempted_KIND": for each
 * but idle (the idle task takes no CPU from a runnable thread).
 */
static struct {
	char text[VC_WHO_KEY_MAX];
	size_t len;
} vc_who_keys[2 * VCPUPERF_WHO_NR];
static bool vc_who_keys_made;

static void vc_who_make_keys(void)
{
	__u32 i;
	int n;

	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		n = snprintf(vc_who_keys[i].text, VC_WHO_KEY_MAX,
			     ",\"sched_wait_%s_ns\":", vp_who_kind_name(i));
		vc_who_keys[i].len = (size_t)n;
		n = snprintf(vc_who_keys[VCPUPERF_WHO_NR + i].text,
			     VC_WHO_KEY_MAX, ",\"sched_preempted_%s\":",
			     vp_who_kind_name(i));
		vc_who_keys[VCPUPERF_WHO_NR + i].len = (size_t)n;
	}
	vc_who_keys_made = true;
}

/* Room for the figures of who took the CPU but the other VMs'. */
#define VC_ROW_WHO_MAX	(2 * VCPUPERF_WHO_NR * (VC_WHO_KEY_MAX + \
						VC_JSON_INT_MAX) + VC_KEY_LEN)

/*
 * Who took the thread's CPU in the interval (vc_who_delta()): its wait
 * and its involuntary switches by what ran instead, and the other VMs'
 * part of the wait by name (those with some in the interval); every one
 * null when the module could not keep them.
 */
static void vc_row_who(struct json_writer *w, const struct vcpuperf_who *d)
{
	bool valid = d->valid, first = true;
	char name[VCPUPERF_VM_NAME_LEN];
	__u32 i;
	char *p;

	if (!vc_who_keys_made)
		vc_who_make_keys();
	p = json_cursor(w, VC_ROW_WHO_MAX);
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		p = json_p_mem(p, vc_who_keys[i].text, vc_who_keys[i].len);
		p = json_p_opt_u64(p, valid, d->wait_ns[i]);
	}
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		if (i == VCPUPERF_WHO_IDLE)
			continue;
		p = json_p_mem(p, vc_who_keys[VCPUPERF_WHO_NR + i].text,
			       vc_who_keys[VCPUPERF_WHO_NR + i].len);
		p = json_p_opt_u64(p, valid, d->preempted[i]);
	}
	p = json_p_mem(p, ",\"sched_wait_vms\":", VC_WHO_VMS_KEY_LEN);
	json_cursor_end(w, p);
	if (!valid) {
		json_null(w);
		return;
	}
	json_put_char(w, '{');
	for (i = 0; i < VCPUPERF_WHO_VMS; i++) {
		const char *vm;

		if (!d->vms[i].pid || !d->vms[i].wait_ns)
			continue;
		vm = vc_vm_namer ? vc_vm_namer(d->vms[i].pid) : NULL;
		if (!vm) {
			snprintf(name, sizeof(name), "qemu-%u",
				 d->vms[i].pid);
			vm = name;
		}
		if (!first)
			json_put_char(w, ',');
		first = false;
		json_str(w, vm);
		json_put_char(w, ':');
		json_u64(w, d->vms[i].wait_ns);
	}
	json_put_char(w, '}');
}

/**
 * vc_write_row() - write the JSONL row of one sample
 * @sink:	the JSONL sink (its rows writer and options)
 * @t:		the sampled thread
 * @row:	the sample, interpreted (see vc_thread_sample())
 */
void vc_write_row(struct vc_sink *sink, const struct vc_tid *t,
		  const struct vc_row *row)
{
	const struct vc_jsonl *out = container_of(sink, struct vc_jsonl, sink);
	struct vc_row_keys *k = t->sink_data;
	struct json_writer *w = out->rows;
	__u32 i;
	char *p;

	vc_row_head(w, out, t, k, row);
	for (i = 0; i < row->s->nr_events; i++) {
		p = json_cursor(w, VC_ROW_EVENT_MAX);
		p = vc_p_event(p, k, i, row->have[i], row->value[i]);
		json_cursor_end(w, p);
	}
	vc_row_derived(w, &t->ratios, row, row->s->read_window_ns);
	/* How late the read was after its grid point; null off the grid. */
	p = json_cursor(w, VC_ROW_TIMES_MAX);
	p = vc_p_key(p, VC_ROW_LATE);
	p = json_p_opt_u64(p, row->s->grid_ns && row->s->rec.t_mono_ns >=
			   row->s->grid_ns,
			   row->s->rec.t_mono_ns - row->s->grid_ns);
	json_cursor_end(w, p);
	if (row->sched)
		vc_row_sched(w, row->sched, true);
	if (row->who)
		vc_row_who(w, row->who);
	if (t->not_applied)
		vc_not_applied(w, t, k);
	if (out->raw)
		vc_raw(w, t->ev, row->s->nr_events, row->s->counting_mask,
		       row->s->counts);
	json_put_lit(w, "}\n");
	/* Said once, after the thread's first row. */
	if (row->sched && !(row->sched->valid & VCPUPERF_SCHED_INFO) &&
	    t->rows == 1)
		vc_write_sched_partial(out, t, row->s);
	if (row->who && !row->who->valid && t->rows == 1)
		vc_write_who_partial(out, t, row->s, row->who->cause);
}

/*
 * The event keys of the Python perf-stat collector's rows, which a
 * per-VM row always has (null for an event not configured): the default
 * event set, matched by type and config.
 */
#define VC_VM_KEY(name, t, c)	{ ",\"" name "\":", sizeof(name) + 3, t, c }

static const struct {
	const char *text;
	size_t len;
	__u32 type;
	__u64 config;
} vc_vm_keys[] = {
	VC_VM_KEY("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES),
	VC_VM_KEY("instructions", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_INSTRUCTIONS),
	VC_VM_KEY("cache_references", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_CACHE_REFERENCES),
	VC_VM_KEY("cache_misses", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_CACHE_MISSES),
	VC_VM_KEY("branches", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_BRANCH_INSTRUCTIONS),
	VC_VM_KEY("branch_misses", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_BRANCH_MISSES),
	VC_VM_KEY("page_faults", PERF_TYPE_SOFTWARE,
		  PERF_COUNT_SW_PAGE_FAULTS),
	VC_VM_KEY("context_switches", PERF_TYPE_SOFTWARE,
		  PERF_COUNT_SW_CONTEXT_SWITCHES),
};

/*
 * The event of @p that fills collector key @k: the first with its type
 * and config whose thread-row key is that key too (no modifier suffix:
 * cycles, or cycles with the guest_only keyword), so that a key means
 * the same in the thread and the per-VM rows (instructions:G is
 * instructions_guest in both); -1 if none.
 */
static int vc_vm_event(const struct vc_proc *p, size_t k)
{
	int i;

	for (i = 0; i < (int)p->nr_events; i++)
		if (p->ev[i].type == vc_vm_keys[k].type &&
		    p->ev[i].config == vc_vm_keys[k].config &&
		    !vc_mod_suffix(&p->ev[i],
				   strnlen(p->ev[i].name, VCPUPERF_NAME_LEN)))
			return i;
	return -1;
}

/**
 * struct vc_vm_row_keys - what one process's per-VM rows repeat, made at
 * its process record
 * @k:		its events' keys, made as a thread's; its interval segment;
 *		its identity segment, here ,"tid":null,"vcpu":null,
 *		"role":"vm","vm":...,"uuid":... (made once: id_of unused)
 * @fixed:	per collector key (vc_vm_keys[]), the event that fills it,
 *		-1 for none
 * @used:	per event, whether it fills a collector key (then it has no
 *		key of its own in the row)
 */
struct vc_vm_row_keys {
	struct vc_row_keys k;
	int fixed[ARRAY_SIZE(vc_vm_keys)];
	bool used[VCPUPERF_MAX_EVENTS];
};

/**
 * vc_row_process_start() - the per-VM row keys of a process record
 * @sink:	the JSONL sink
 * @p:		the process, with its events and identity
 * @data:	its keys from an earlier process record, or NULL
 *
 * Made once here instead of for every row: matching the collector keys
 * to events and escaping the events' names were most of a per-VM row.
 *
 * Return: the keys (@data reused), or NULL when out of memory.
 */
void *vc_row_process_start(struct vc_sink *sink, const struct vc_proc *p,
			   void *data)
{
	struct vc_vm_row_keys *vk = data;
	struct json_writer w;
	size_t n;
	__u32 i;

	(void)sink;
	if (!vk)
		vk = malloc(sizeof(*vk));
	if (!vk)
		return NULL;
	memset(vk, 0, sizeof(*vk));
	for (n = 0; n < ARRAY_SIZE(vc_vm_keys); n++) {
		vk->fixed[n] = vc_vm_event(p, n);
		if (vk->fixed[n] >= 0)
			vk->used[vk->fixed[n]] = true;
	}
	for (i = 0; i < p->nr_events; i++)
		vc_make_key(&vk->k, p->ev, i);
	vc_seg_writer(&w, vk->k.id_seg, sizeof(vk->k.id_seg));
	vc_put_key(&w, VC_ROW_TID);
	json_null(&w);
	vc_put_key(&w, VC_ROW_VCPU);
	json_null(&w);
	vc_put_key(&w, VC_ROW_ROLE);
	json_put_lit(&w, "\"vm\"");
	vc_put_key(&w, VC_ROW_VM);
	vc_proc_json(&w, p->vm_json);
	vc_put_key(&w, VC_ROW_UUID);
	vc_proc_json(&w, p->uuid_json);
	vk->k.id_len = w.len;
	return vk;
}

/**
 * vc_row_process_free() - release what vc_row_process_start() returned
 * @sink:	the JSONL sink
 * @data:	the keys, or NULL
 */
void vc_row_process_free(struct vc_sink *sink, void *data)
{
	(void)sink;
	free(data);
}

/* The per-VM row's keys before the events'. */
static void vc_vm_row_head(struct json_writer *w, const struct vc_jsonl *out,
			   struct vc_vm_row_keys *vk, const struct vc_row *row)
{
	const struct vcpuperf_process_sample *s = row->ps;
	char *p;

	p = vc_p_row_start(json_cursor(w, VC_ROW_HEAD_MAX), out, &vk->k,
			   &s->rec, s->interval_ns, row);
	p = vc_p_key(p, VC_ROW_PID);
	p = json_fmt_u64(p, s->pid);
	p = json_p_mem(p, vk->k.id_seg, vk->k.id_len);
	p = json_p_lit(p, ",\"threads\":");
	p = json_fmt_u64(p, s->threads);
	p = json_p_lit(p, ",\"threads_exited\":");
	p = json_fmt_u64(p, s->exited);
	json_cursor_end(w, p);
}

/**
 * vc_write_vm_row() - write the per-VM row of one process sample
 * @sink:	the JSONL sink
 * @p:		the process
 * @row:	the process sample, interpreted
 *
 * The schema of the Python perf-stat collector (its eight event keys
 * always, null when not configured), with tid and vcpu null and role
 * "vm"; other events follow under their own keys.  The final one is
 * followed by the process's perf_finished; that alone is written for a
 * process attached without process totals (whose only process sample is
 * its end).
 */
void vc_write_vm_row(struct vc_sink *sink, const struct vc_proc *p,
		     const struct vc_row *row)
{
	const struct vc_jsonl *out = container_of(sink, struct vc_jsonl, sink);
	struct vc_vm_row_keys *vk = p->sink_data;
	struct json_writer *w = out->rows;
	size_t n;
	__u32 i;
	char *c;
	int e;

	/* Without process totals only the end comes, counting nothing. */
	if (!(p->flags & VCPUPERF_ATTACH_PROCESS_TOTALS)) {
		if (row->ps->flags & VCPUPERF_SAMPLE_FINAL)
			vc_write_vm_finished(out, p, row->ps);
		return;
	}
	vc_vm_row_head(w, out, vk, row);
	for (n = 0; n < ARRAY_SIZE(vc_vm_keys); n++) {
		e = vk->fixed[n];
		c = json_cursor(w, VC_ROW_EVENT_MAX);
		c = json_p_mem(c, vc_vm_keys[n].text, vc_vm_keys[n].len);
		c = json_p_opt_u64(c, e >= 0 && row->have[e],
				   e >= 0 ? row->value[e] : 0);
		json_cursor_end(w, c);
	}
	for (i = 0; i < p->nr_events; i++) {
		if (vk->used[i])
			continue;
		c = json_cursor(w, VC_ROW_EVENT_MAX);
		c = vc_p_event(c, &vk->k, i, row->have[i], row->value[i]);
		json_cursor_end(w, c);
	}
	vc_row_derived(w, &p->ratios, row, row->ps->read_window_ns);
	if (row->sched)
		vc_row_sched(w, row->sched, false);
	if (out->raw)
		vc_raw(w, p->ev, row->ps->nr_events, row->ps->counting_mask,
		       row->ps->counts);
	json_put_lit(w, "}\n");
	if (row->sched && !row->sched->valid)
		vc_write_vm_sched_stale(out, p, row->ps);
	if (row->ps->flags & VCPUPERF_SAMPLE_FINAL)
		vc_write_vm_finished(out, p, row->ps);
}
