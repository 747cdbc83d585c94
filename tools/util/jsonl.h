/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jsonl.c: the JSON lines writer every output of vcpuperf-cat goes
 * through (rows, lifecycle lines): one large buffer, its own number
 * formatting, fwrite() in big chunks.
 */
#ifndef _VC_JSONL_H
#define _VC_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

/* Decimals of a fixed-point number of nanoseconds or parts per million. */
#define VC_NS_DIGITS_S	9	/* ns as seconds */
#define VC_NS_DIGITS_MS	6	/* ns as milliseconds */
#define VC_PPM_DIGITS	6	/* ppm as a ratio */

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
int json_init_size(struct json_writer *w, FILE *fp, const char *path,
		   size_t cap);
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

char *json_fmt_u64(char *p, __u64 v);

/*
 * Writing at a cursor: json_cursor() makes room for a whole run of
 * writes at once and returns where they go; the json_p_* helpers write
 * at the cursor and return the new one (no room check, no store to the
 * writer: the hot path of a row); json_cursor_end() makes it the end of
 * the output.
 */
static inline char *json_cursor(struct json_writer *w, size_t room)
{
	json_need(w, room);
	return w->buf + w->len;
}

static inline void json_cursor_end(struct json_writer *w, char *p)
{
	w->len = (size_t)(p - w->buf);
}

static inline char *json_p_mem(char *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define json_p_lit(p, s)	json_p_mem((p), (s), sizeof(s) - 1)

static inline char *json_p_s64(char *p, long long v)
{
	if (v < 0) {
		*p++ = '-';
		return json_fmt_u64(p, 0ULL - (__u64)v);
	}
	return json_fmt_u64(p, (__u64)v);
}

static inline char *json_p_bool(char *p, bool v)
{
	return v ? json_p_lit(p, "true") : json_p_lit(p, "false");
}

/* A number, or null when it is not known (!@have). */
static inline char *json_p_opt_u64(char *p, bool have, __u64 v)
{
	return have ? json_fmt_u64(p, v) : json_p_lit(p, "null");
}

/* Append an unsigned decimal. */
static inline void json_u64(struct json_writer *w, __u64 v)
{
	json_cursor_end(w, json_fmt_u64(json_cursor(w, VC_JSON_INT_MAX), v));
}

static inline void json_bool(struct json_writer *w, bool v)
{
	if (v)
		json_put_lit(w, "true");
	else
		json_put_lit(w, "false");
}

static inline void json_null(struct json_writer *w)
{
	json_put_lit(w, "null");
}

/* Append a number, or null when it is not known (!@have). */
static inline void json_opt_u64(struct json_writer *w, bool have, __u64 v)
{
	if (have)
		json_u64(w, v);
	else
		json_null(w);
}

void json_s64(struct json_writer *w, long long v);
void json_fixed(struct json_writer *w, __u64 v, unsigned int scale_digits);
void json_double(struct json_writer *w, double v);
void json_strn(struct json_writer *w, const char *s, size_t n);
void json_str(struct json_writer *w, const char *s);
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

#endif /* _VC_JSONL_H */
