// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz vcpuperf-cat's stream decoder and JSONL writers (libvpcat.a, as
 * tools/util/lib.mk defines it: decode.c, rows.c, lifecycle.c, jsonl.c and
 * the lib/ code they call) on arbitrary bytes.
 *
 * The decoder is driven through the same API the tool's read loop uses
 * (vc_dec_space / vc_dec_commit / vc_dec_end), writing JSONL into
 * open_memstream() buffers.  Each input is decoded twice: in one piece,
 * and in small pieces of varying size, as reads from the stream file
 * would deliver it.  Checked:
 *  - no crash, leak or UB (ASan, LSan, UBSan);
 *  - reassembly does not matter: both runs give the same result, the
 *    same statistics and byte-identical output;
 *  - every output line is one valid JSON object in printable ASCII.
 *
 * Options follow the input size so that every option is exercised
 * without spending input bytes (records are multiples of 8 bytes, so
 * the low bits would be 0 for every well-formed stream): bit 3 of the
 * size turns on --raw, bit 4 sends the lifecycle lines to a writer of
 * their own (--events-out).
 */
#include <ctype.h>
#include <sanitizer/asan_interface.h>

#include "decode.h"
#include "jsonl.h"
#include "output.h"
#include "fuzz_common.h"

/* ---- a strict JSON syntax check (RFC 8259) -------------------------- */

struct js {
	const char *p;
	const char *end;
	int depth;
};

static bool js_value(struct js *j);

static void js_ws(struct js *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\r'))
		j->p++;
}

static bool js_lit(struct js *j, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return false;
	j->p += n;
	return true;
}

static bool js_string(struct js *j)
{
	if (j->p == j->end || *j->p != '"')
		return false;
	j->p++;
	while (j->p < j->end) {
		unsigned char c = (unsigned char)*j->p++;
		int i;

		if (c == '"')
			return true;
		if (c < 0x20)
			return false;
		if (c != '\\')
			continue;
		if (j->p == j->end)
			return false;
		c = (unsigned char)*j->p++;
		if (c == 'u') {
			for (i = 0; i < 4; i++)
				if (j->p == j->end || !isxdigit((unsigned char)*j->p++))
					return false;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return false;
		}
	}
	return false;
}

static bool js_digits(struct js *j)
{
	const char *s = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > s;
}

static bool js_number(struct js *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (!js_digits(j))
		return false;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!js_digits(j))
			return false;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!js_digits(j))
			return false;
	}
	return true;
}

static bool js_container(struct js *j, char close, bool object)
{
	j->p++;
	if (++j->depth > 64)
		return false;
	js_ws(j);
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		js_ws(j);
		if (object) {
			if (!js_string(j))
				return false;
			js_ws(j);
			if (j->p == j->end || *j->p++ != ':')
				return false;
		}
		if (!js_value(j))
			return false;
		js_ws(j);
		if (j->p == j->end)
			return false;
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p++ != close)
			return false;
		j->depth--;
		return true;
	}
}

static bool js_value(struct js *j)
{
	js_ws(j);
	if (j->p == j->end)
		return false;
	switch (*j->p) {
	case '{':
		return js_container(j, '}', true);
	case '[':
		return js_container(j, ']', false);
	case '"':
		return js_string(j);
	case 't':
		return js_lit(j, "true");
	case 'f':
		return js_lit(j, "false");
	case 'n':
		return js_lit(j, "null");
	default:
		return js_number(j);
	}
}

/* Every line a JSON object, printable ASCII only, newline terminated. */
static void check_jsonl(const char *buf, size_t len)
{
	const char *line = buf, *end = buf + len;
	size_t i;

	for (i = 0; i < len; i++)
		FZ_CHECK(buf[i] == '\n' || (buf[i] >= 0x20 && buf[i] < 0x7f),
			 "byte %#x at %zu of the output", (unsigned char)buf[i],
			 i);
	FZ_CHECK(!len || buf[len - 1] == '\n', "output ends mid-line");
	while (line < end) {
		const char *nl = memchr(line, '\n', end - line);
		struct js j = { line, nl, 0 };

		FZ_CHECK(*line == '{' && js_value(&j) && j.p == nl,
			 "not a JSON object: %.*s", (int)(nl - line), line);
		line = nl + 1;
	}
}

/* ---- the decoder ------------------------------------------------------ */

/*
 * vc_dec_init() and json_init() allocate the tool's production buffers
 * (4 MiB and 1 MiB).  Under ASan each fresh mapping of that size costs
 * far more than decoding a short input (shadow poisoning, page faults:
 * some 60 inputs/s), so:
 *
 * 1. The fuzz_decode link wraps malloc and free (-Wl,--wrap, see the
 *    Makefile): a block of FZ_CACHE_MIN bytes or more is kept when freed
 *    and handed out again for the next request of the same size.  While
 *    it is free, the block is poisoned, so a use after free is still
 *    reported; a block still handed out when the input is done is a leak
 *    and fails the run as LeakSanitizer would.
 *
 * 2. The harness then swaps in smaller buffers, sized to the exact byte
 *    so that ASan's redzone follows them: a reassembly buffer just above
 *    the largest record (64 KiB), and writers of FZ_JSON_BUFSZ bytes, far
 *    below VC_JSON_SLACK but above anything a caller reserves with
 *    json_need() (at most a row's head with its cached segments, under
 *    2 KiB).  The writers thus flush constantly, and any write past what
 *    json_need() reserved runs into the redzone instead of into a
 *    megabyte of slack.
 */
#define FZ_CACHE_MIN	(256U * 1024U)
#define FZ_CACHE_SLOTS	8
#define FZ_DEC_BUFSZ	(64U * 1024U + 8U)
#define FZ_JSON_BUFSZ	4096U

void *__real_malloc(size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void __wrap_free(void *p);

static struct {
	void *p;
	size_t size;
	bool used;
} fz_cache[FZ_CACHE_SLOTS];

void *__wrap_malloc(size_t n)
{
	int i;

	if (n < FZ_CACHE_MIN)
		return __real_malloc(n);
	for (i = 0; i < FZ_CACHE_SLOTS; i++) {
		if (fz_cache[i].p && !fz_cache[i].used &&
		    fz_cache[i].size == n) {
			fz_cache[i].used = true;
			ASAN_UNPOISON_MEMORY_REGION(fz_cache[i].p, n);
			return fz_cache[i].p;
		}
	}
	for (i = 0; i < FZ_CACHE_SLOTS; i++) {
		if (!fz_cache[i].p) {
			fz_cache[i].p = __real_malloc(n);
			if (!fz_cache[i].p)
				return NULL;
			fz_cache[i].size = n;
			fz_cache[i].used = true;
			return fz_cache[i].p;
		}
	}
	return __real_malloc(n);
}

void __wrap_free(void *p)
{
	int i;

	for (i = 0; p && i < FZ_CACHE_SLOTS; i++) {
		if (fz_cache[i].p == p) {
			FZ_CHECK(fz_cache[i].used, "double free of %p", p);
			fz_cache[i].used = false;
			ASAN_POISON_MEMORY_REGION(p, fz_cache[i].size);
			return;
		}
	}
	__real_free(p);
}

static void fz_cache_check(void)
{
	int i;

	for (i = 0; i < FZ_CACHE_SLOTS; i++)
		FZ_CHECK(!fz_cache[i].used, "leak: %zu-byte block not freed",
			 fz_cache[i].size);
}

static void fz_small_writer(struct json_writer *w)
{
	free(w->buf);
	w->cap = FZ_JSON_BUFSZ;
	w->buf = malloc(w->cap);
	FZ_CHECK(w->buf, "malloc");
}

static void fz_small_dec(struct vc_decoder *d)
{
	free(d->buf);
	d->cap = FZ_DEC_BUFSZ;
	d->buf = malloc(d->cap);
	FZ_CHECK(d->buf, "malloc");
}

struct run {
	int ret;		/* first non-zero commit, else vc_dec_end() */
	struct vc_stats stats;
	bool finished;
	char *rows;
	size_t rows_len;
	char *events;
	size_t events_len;
};

/* Chunk sizes for the split run: a fixed pseudo-random walk, 1..~300. */
static size_t next_chunk(uint32_t *state)
{
	*state = *state * 1103515245U + 12345U;
	switch ((*state >> 16) & 3) {
	case 0:
		return 1 + ((*state >> 8) & 7);
	case 1:
		return sizeof(struct vcpuperf_rec) + ((*state >> 8) & 15);
	default:
		return 1 + ((*state >> 8) & 255);
	}
}

static void decode(const uint8_t *data, size_t size, bool split,
		   struct run *r)
{
	FILE *rows_fp, *ev_fp = NULL;
	struct json_writer rows, events_w, *events = &rows;
	struct vc_decoder d;
	struct vc_jsonl jsonl;
	uint32_t state = (uint32_t)size;
	size_t off = 0;
	bool raw = (size >> 3) & 1, sep = (size >> 4) & 1;

	memset(r, 0, sizeof(*r));
	rows_fp = open_memstream(&r->rows, &r->rows_len);
	FZ_CHECK(rows_fp, "open_memstream");
	FZ_CHECK(!json_init(&rows, rows_fp, "rows"), "json_init");
	fz_small_writer(&rows);
	if (sep) {
		ev_fp = open_memstream(&r->events, &r->events_len);
		FZ_CHECK(ev_fp, "open_memstream");
		FZ_CHECK(!json_init(&events_w, ev_fp, "events"), "json_init");
		fz_small_writer(&events_w);
		events = &events_w;
	}
	vc_jsonl_init(&jsonl, &rows, events, 0, raw);
	FZ_CHECK(!vc_dec_init(&d, &jsonl.sink), "vc_dec_init");
	fz_small_dec(&d);

	for (;;) {
		size_t room, n;
		void *buf = vc_dec_space(&d, &room);

		if (off == size) {
			r->ret = vc_dec_end(&d);
			break;
		}
		FZ_CHECK(room > 0, "decoder buffer full");
		n = split ? next_chunk(&state) : size - off;
		if (n > size - off)
			n = size - off;
		if (n > room)
			n = room;
		memcpy(buf, data + off, n);
		off += n;
		r->ret = vc_dec_commit(&d, n);
		if (r->ret)
			break;
		FZ_CHECK(!rows.err && !events->err, "write error");
	}
	FZ_CHECK(r->ret == 0 || r->ret == -EPROTO || r->ret == -ENOMEM,
		 "decoder returned %d", r->ret);
	r->stats = d.stats;
	r->finished = d.finished;

	FZ_CHECK(!json_flush(&rows), "flush");
	if (sep)
		FZ_CHECK(!json_flush(&events_w), "flush");
	vc_dec_free(&d);
	json_free(&rows);
	fclose(rows_fp);
	if (sep) {
		json_free(&events_w);
		fclose(ev_fp);
	}
}

static void run_free(struct run *r)
{
	free(r->rows);
	free(r->events);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a, b;

	decode(data, size, false, &a);
	check_jsonl(a.rows, a.rows_len);
	if (a.events)
		check_jsonl(a.events, a.events_len);

	decode(data, size, true, &b);
	FZ_CHECK(a.ret == b.ret, "whole: %d, in pieces: %d", a.ret, b.ret);
	FZ_CHECK(!memcmp(&a.stats, &b.stats, sizeof(a.stats)) &&
		 a.finished == b.finished, "statistics differ when split");
	FZ_CHECK(a.rows_len == b.rows_len &&
		 !memcmp(a.rows, b.rows, a.rows_len),
		 "output differs when split");
	FZ_CHECK(a.events_len == b.events_len &&
		 (!a.events_len || !memcmp(a.events, b.events, a.events_len)),
		 "events output differs when split");
	run_free(&a);
	run_free(&b);
	fz_cache_check();
	return 0;
}
