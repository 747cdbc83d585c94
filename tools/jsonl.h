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

#endif /* _VC_JSONL_H */
