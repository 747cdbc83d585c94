// SPDX-License-Identifier: GPL-2.0
/*
 * Stream decoding: reassembly of records split across read() calls,
 * validation of each record against the uapi layouts, the sequence-number
 * check (gaps are explained only by a dropped record), and the per-thread
 * state that samples are interpreted against.
 */
#include <errno.h>
#include <stdlib.h>

#include "vcpuperf-cat.h"

#define VC_DEC_BUFSZ	(4U << 20)	/* > the largest record (64 KiB) */
#define VC_TAB_MIN	64
#define VC_MAX_WARN	10		/* warnings of one kind printed */

static const char *const vc_fixed_keys[] = {
	"t_mono_ns", "t_wall_ns", "source", "available_in_deployment",
	"interval_s", "dt_ns", "seq", "pid", "tid", "vcpu", "ran", "ipc",
	"cache_miss_rate", "time_enabled_ns", "time_running_ns",
	"multiplexed", "read_window_ns", "raw", "modifiers_not_applied",
};

/**
 * vc_dec_init() - set up a decoder
 * @d:		the decoder
 * @rows:	writer for sample rows
 * @events:	writer for lifecycle lines (may equal @rows)
 * @mono_origin: subtracted from every t_mono_ns written
 * @raw:	add cumulative raw values to each row
 *
 * Return: 0 or -ENOMEM.
 */
int vc_dec_init(struct vc_decoder *d, struct jw *rows, struct jw *events,
		__u64 mono_origin, bool raw)
{
	memset(d, 0, sizeof(*d));
	d->rows = rows;
	d->events = events;
	d->mono_origin = mono_origin;
	d->raw = raw;
	d->cap = VC_DEC_BUFSZ;
	d->buf = malloc(d->cap);
	d->tab_size = VC_TAB_MIN;
	d->tab = calloc(d->tab_size, sizeof(*d->tab));
	if (!d->buf || !d->tab) {
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
	size_t i;

	if (d->tab)
		for (i = 0; i < d->tab_size; i++)
			free(d->tab[i]);
	free(d->tab);
	free(d->buf);
	d->tab = NULL;
	d->buf = NULL;
}

static size_t vc_slot(const struct vc_decoder *d, __u32 tid)
{
	return (size_t)(tid * 2654435761U) & (d->tab_size - 1);
}

/**
 * vc_tid_find() - the state of a thread, if any
 * @d:		the decoder
 * @tid:	thread id
 *
 * Return: the state or NULL.
 */
struct vc_tid *vc_tid_find(struct vc_decoder *d, __u32 tid)
{
	size_t i = vc_slot(d, tid);

	while (d->tab[i]) {
		if (d->tab[i]->tid == tid)
			return d->tab[i];
		i = (i + 1) & (d->tab_size - 1);
	}
	return NULL;
}

static int vc_tab_grow(struct vc_decoder *d)
{
	struct vc_tid **old = d->tab;
	size_t old_size = d->tab_size, i;

	d->tab = calloc(old_size * 2, sizeof(*d->tab));
	if (!d->tab) {
		d->tab = old;
		return -ENOMEM;
	}
	d->tab_size = old_size * 2;
	for (i = 0; i < old_size; i++) {
		size_t j;

		if (!old[i])
			continue;
		j = vc_slot(d, old[i]->tid);
		while (d->tab[j])
			j = (j + 1) & (d->tab_size - 1);
		d->tab[j] = old[i];
	}
	free(old);
	return 0;
}

/**
 * vc_tid_get() - the state of a thread, created (blank) if new
 * @d:		the decoder
 * @tid:	thread id
 *
 * Return: the state, or NULL when out of memory.
 */
struct vc_tid *vc_tid_get(struct vc_decoder *d, __u32 tid)
{
	struct vc_tid *t = vc_tid_find(d, tid);
	size_t i;

	if (t)
		return t;
	if ((d->tab_used + 1) * 2 > d->tab_size && vc_tab_grow(d))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tid = tid;
	t->vcpu = VCPUPERF_NO_VCPU;
	t->i_cycles = -1;
	t->i_insns = -1;
	t->i_refs = -1;
	t->i_misses = -1;
	i = vc_slot(d, tid);
	while (d->tab[i])
		i = (i + 1) & (d->tab_size - 1);
	d->tab[i] = t;
	d->tab_used++;
	return t;
}

/* Is the key (without quotes) already used by a fixed key or event < n? */
static bool vc_key_taken(const struct vc_tid *t, __u32 n, const char *key,
			 size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vc_fixed_keys); i++)
		if (strlen(vc_fixed_keys[i]) == len &&
		    !memcmp(vc_fixed_keys[i], key, len))
			return true;
	for (i = 0; i < n; i++)
		if (t->key_len[i] == len + 4 &&
		    !memcmp(t->key[i] + 2, key, len))
			return true;
	return false;
}

/**
 * vc_mod_letters() - perf's suffix letters of a set of modifiers
 * @buf:	output, NUL terminated
 * @len:	size of @buf (at least 6)
 * @mods:	VCPUPERF_MOD_* bits
 *
 * Return: the number of letters.
 */
size_t vc_mod_letters(char *buf, size_t len, __u32 mods)
{
	size_t n = 0;
	__u32 bit;

	for (bit = 1; bit <= VCPUPERF_MOD_ALL && n + 1 < len; bit <<= 1)
		if (mods & bit)
			buf[n++] = vp_mod_letter(bit);
	buf[n] = '\0';
	return n;
}

/*
 * The length of the name without a modifier suffix (":uG"): letters that
 * are all modifiers of the event; 0 if the name has no such suffix.
 */
static size_t vc_mod_suffix(const struct vcpuperf_event_desc *ev,
			    size_t len)
{
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
		const char *m = strchr("ukGHD", ev->name[i]);

		if (!m || !(ev->mods & (1U << (m - "ukGHD"))))
			return 0;
	}
	return colon - ev->name;
}

/*
 * ,"name": with - and : made _, escaped, unique within the row.  The
 * guest and host modifiers are spelled out: cycles:G is "cycles_guest",
 * cycles:uH "cycles_u_host" (a key that differs from another by the
 * case of one letter is easy to misread).
 */
static void vc_make_key(struct vc_tid *t, __u32 n)
{
	char name[VCPUPERF_NAME_LEN + 16];
	char esc[VC_KEY_LEN];
	size_t len, base, i, suffix;
	int dup = 1;

	len = strnlen(t->ev[n].name, VCPUPERF_NAME_LEN);
	memcpy(name, t->ev[n].name, len);
	suffix = vc_mod_suffix(&t->ev[n], len);
	if (suffix) {
		const char *mods = t->ev[n].name + suffix + 1;
		size_t nmods = len - suffix - 1, o = suffix;
		bool guest = memchr(mods, 'G', nmods);
		bool host = memchr(mods, 'H', nmods);

		if (nmods > (size_t)(guest + host)) {
			name[o++] = '_';
			for (i = 0; i < nmods; i++)
				if (mods[i] != 'G' && mods[i] != 'H')
					name[o++] = mods[i];
		}
		if (guest) {
			memcpy(name + o, "_guest", 6);
			o += 6;
		}
		if (host) {
			memcpy(name + o, "_host", 5);
			o += 5;
		}
		len = o;
	}
	for (i = 0; i < len; i++)
		if (name[i] == '-' || name[i] == ':')
			name[i] = '_';
	if (!len)
		name[len++] = '_';
	base = len;
	for (;;) {
		len = jw_escape(esc, sizeof(esc) - 8, name, base);
		if (dup > 1)
			len += (size_t)snprintf(esc + len, sizeof(esc) - len,
						"_%d", dup);
		if (!vc_key_taken(t, n, esc, len))
			break;
		dup++;
	}
	t->key[n][0] = ',';
	t->key[n][1] = '"';
	memcpy(t->key[n] + 2, esc, len);
	t->key[n][len + 2] = '"';
	t->key[n][len + 3] = ':';
	t->key_len[n] = (unsigned short)(len + 4);
}

/*
 * Find a pair of events (A, B) by canonical hardware config, for a
 * ratio: both without modifiers if there is such a pair, else the first
 * pair counting the same thing (same u/k/G/H modifiers; pinning does not
 * matter).
 */
static void vc_pick_pair(struct vc_tid *t, __u64 cfg_a, __u64 cfg_b,
			 int *ia, int *ib)
{
	const __u32 ign = VCPUPERF_MOD_PINNED;
	int pass, i, j;

	*ia = *ib = -1;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < (int)t->nr_events; i++) {
			const struct vcpuperf_event_desc *a = &t->ev[i];

			if (a->type != PERF_TYPE_HARDWARE || a->config != cfg_a)
				continue;
			if (pass == 0 && (a->mods & ~ign))
				continue;
			for (j = 0; j < (int)t->nr_events; j++) {
				const struct vcpuperf_event_desc *b = &t->ev[j];

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
 * vc_tid_start() - (re)initialise a thread from its started record
 * @t:		the thread's state
 * @s:		the validated started record
 *
 * Thread ids are reused, so everything from an earlier incarnation is
 * forgotten: the counters are new and count from zero.
 */
void vc_tid_start(struct vc_tid *t, const struct vcpuperf_started *s)
{
	__u32 i;

	t->started = true;
	t->pid = s->id.pid;
	t->vcpu = s->id.vcpu;
	t->kind = s->kind;
	t->nr_events = s->nr_events;
	t->exist_mask = s->nr_events >= 32 ? ~0U : (1U << s->nr_events) - 1;
	memcpy(t->comm, s->comm, VCPUPERF_COMM_LEN);
	t->comm[VCPUPERF_COMM_LEN] = '\0';
	memset(t->prev, 0, sizeof(t->prev));
	t->have_prev_t = false;
	t->prev_t_mono = 0;
	t->rows = 0;
	t->not_applied = 0;
	for (i = 0; i < s->nr_events; i++) {
		t->ev[i] = s->events[i];
		t->ev[i].name[VCPUPERF_NAME_LEN - 1] = '\0';
		vc_make_key(t, i);
		if (t->ev[i].mods >> VCPUPERF_MOD_NOT_APPLIED_SHIFT)
			t->not_applied |= 1U << i;
	}
	vc_pick_pair(t, PERF_COUNT_HW_INSTRUCTIONS, PERF_COUNT_HW_CPU_CYCLES,
		     &t->i_insns, &t->i_cycles);
	vc_pick_pair(t, PERF_COUNT_HW_CACHE_MISSES,
		     PERF_COUNT_HW_CACHE_REFERENCES, &t->i_misses, &t->i_refs);
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
	default:
		return 0;
	}
}

/* Does the record fit its type's layout?  NULL if so, else why not. */
static const char *vc_check(const struct vcpuperf_rec *rec)
{
	size_t fixed = vc_fixed_size(rec->type), need = fixed;
	__u32 nr = 0;

	if (rec->size < fixed)
		return "shorter than its type's layout";
	switch (rec->type) {
	case VCPUPERF_REC_SAMPLE:
		nr = ((const struct vcpuperf_sample *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_count);
		break;
	case VCPUPERF_REC_TASK_EXITED:
		nr = ((const struct vcpuperf_task_exited *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_count);
		break;
	case VCPUPERF_REC_STARTED:
		nr = ((const struct vcpuperf_started *)rec)->nr_events;
		need += (size_t)nr * sizeof(struct vcpuperf_event_desc);
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
	vc_seq_gap(d, rec, d->next_seq, explained);
	d->next_seq = rec->seq + 1;
}

static void vc_sample(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const struct vcpuperf_sample *s = (const void *)rec;
	struct vc_tid *t = vc_tid_find(d, rec->tid);

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
	vc_write_row(d, t, s);
}

static int vc_record(struct vc_decoder *d, const struct vcpuperf_rec *rec)
{
	const char *why;
	struct vc_tid *t;

	d->stats.records++;
	if (!d->have_header || rec->type == VCPUPERF_REC_HEADER)
		return vc_header(d, rec);
	vc_check_seq(d, rec);
	if (!vc_fixed_size(rec->type)) {
		d->stats.unknown++;
		return 0;
	}
	why = vc_check(rec);
	if (why) {
		vc_warn(d, &d->stats.bad, rec, why);
		return 0;
	}
	switch (rec->type) {
	case VCPUPERF_REC_SAMPLE:
		vc_sample(d, rec);
		return 0;
	case VCPUPERF_REC_STARTED:
		t = vc_tid_get(d, rec->tid);
		if (!t)
			return -ENOMEM;
		vc_tid_start(t, (const void *)rec);
		break;
	case VCPUPERF_REC_FINISHED:
		if (!rec->tid)
			d->finished = true;
		break;
	}
	vc_lifecycle(d, rec);
	return 0;
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

		if (rec->size < sizeof(*rec) || rec->size % 8) {
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
		ret = vc_record(d, rec);
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
