// SPDX-License-Identifier: GPL-2.0
/*
 * A small, fast JSON lines writer: everything goes into one large buffer
 * with hand-rolled integer formatting and leaves with one fwrite() per
 * megabyte, so that a row costs no printf at all.
 */
#include <stdlib.h>
#include <errno.h>
#include <math.h>

#include "vcpuperf-cat.h"

static const char jw_digits2[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/**
 * jw_init() - set up a writer
 * @w:		the writer
 * @fp:		where lines go
 * @path:	name of the output, for messages
 *
 * Return: 0 or -ENOMEM.
 */
int jw_init(struct jw *w, FILE *fp, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fp = fp;
	w->path = path;
	w->cap = VC_JW_BUFSZ;
	w->buf = malloc(w->cap);
	if (!w->buf)
		return -ENOMEM;
	w->first[0] = true;
	return 0;
}

/**
 * jw_free() - release the buffer (flush first)
 * @w:		the writer
 */
void jw_free(struct jw *w)
{
	free(w->buf);
	w->buf = NULL;
}

/**
 * jw_flush() - write out everything pending and fflush the stream
 * @w:		the writer
 *
 * Return: 0, or the negative errno of the first failed write (later
 * output is discarded after a failure).
 */
int jw_flush(struct jw *w)
{
	if (w->len && !w->err) {
		if (fwrite(w->buf, 1, w->len, w->fp) != w->len)
			w->err = errno ? errno : EIO;
	}
	w->len = 0;
	if (!w->err && fflush(w->fp))
		w->err = errno ? errno : EIO;
	return -w->err;
}

/**
 * jw_make_room() - flush so that @n more bytes fit
 * @w:		the writer
 * @n:		bytes needed, at most VC_JW_SLACK
 */
void jw_make_room(struct jw *w, size_t n)
{
	if (w->len && !w->err) {
		if (fwrite(w->buf, 1, w->len, w->fp) != w->len)
			w->err = errno ? errno : EIO;
	}
	w->len = 0;
	if (n > w->cap)	/* never for our callers; do not overrun */
		abort();
}

/**
 * jw_u64() - append an unsigned decimal
 * @w:		the writer (room for 20 bytes is ensured)
 * @v:		the number
 */
void jw_u64(struct jw *w, __u64 v)
{
	char tmp[24];
	char *p = tmp + sizeof(tmp);

	jw_need(w, 24);
	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		p -= 2;
		p[0] = jw_digits2[r * 2];
		p[1] = jw_digits2[r * 2 + 1];
	}
	if (v >= 10) {
		p -= 2;
		p[0] = jw_digits2[v * 2];
		p[1] = jw_digits2[v * 2 + 1];
	} else {
		*--p = (char)('0' + v);
	}
	jw_mem(w, p, tmp + sizeof(tmp) - p);
}

/**
 * jw_s64() - append a signed decimal
 * @w:		the writer
 * @v:		the number
 */
void jw_s64(struct jw *w, long long v)
{
	jw_need(w, 24);
	if (v < 0) {
		jw_putc(w, '-');
		jw_u64(w, 0ULL - (__u64)v);
		return;
	}
	jw_u64(w, (__u64)v);
}

/**
 * jw_fixed() - append @v / 10^@scale_digits as a short exact decimal
 * @w:		the writer
 * @v:		the number in units of 10^-@scale_digits
 * @scale_digits: decimals in @v, at most 18
 *
 * Trailing zeros of the fraction are dropped: 100000000 with 9 digits
 * is "0.1", 2000000000 is "2" (a JSON number either way).
 */
void jw_fixed(struct jw *w, __u64 v, unsigned int scale_digits)
{
	char frac[20];
	__u64 div = 1;
	unsigned int i, n;

	for (i = 0; i < scale_digits; i++)
		div *= 10;
	jw_u64(w, v / div);
	v %= div;
	if (!v)
		return;
	for (i = scale_digits; i > 0; i--) {
		frac[i - 1] = (char)('0' + v % 10);
		v /= 10;
	}
	n = scale_digits;
	while (n > 0 && frac[n - 1] == '0')
		n--;
	jw_need(w, n + 1);
	jw_putc(w, '.');
	jw_mem(w, frac, n);
}

/**
 * jw_double() - append a ratio with 6 significant digits (like %.6g)
 * @w:		the writer
 * @v:		a finite number
 *
 * The common range is formatted without printf; tiny, huge and
 * non-finite values fall back to snprintf (non-finite as null).
 */
void jw_double(struct jw *w, double v)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	};
	double a = v < 0 ? -v : v;
	double x;
	char tmp[40];
	int e, n;
	__u64 m;

	jw_need(w, 40);
	if (!isfinite(v)) {
		jw_lit(w, "null");
		return;
	}
	if (a == 0) {
		jw_putc(w, '0');
		return;
	}
	if (a >= 0.0001 && a < 1e6) {
		/* exponent e with 10^e <= a < 10^(e+1), e in [-4, 5] */
		for (e = 5; e > -4 && a < (e >= 0 ? p10[e] : 1 / p10[-e]); e--)
			;
		/* 6 significant digits; near a tie, printf decides exactly */
		x = 5 - e >= 0 ? a * p10[5 - e] : a / p10[e - 5];
		if (fabs(x - floor(x) - 0.5) < 0.000001)
			goto slow;
		m = (__u64)nearbyint(x);
		if (m >= 1000000) {	/* rounding carried: 9.999996 -> 10 */
			m /= 10;
			e++;
		}
		if (e <= 5) {
			if (v < 0)
				jw_putc(w, '-');
			jw_fixed(w, m, (unsigned int)(5 - e));
			return;
		}
	}
slow:
	n = snprintf(tmp, sizeof(tmp), "%.6g", v);
	jw_mem(w, tmp, (size_t)n);
}

/**
 * jw_escape() - JSON-escape bytes into a buffer (without quotes)
 * @out:	destination, NUL terminated on return
 * @outlen:	its size, at least 6 * @n + 1 for no truncation
 * @s:		bytes, any values
 * @n:		their number (stops early at a NUL)
 *
 * Quotes and backslashes get a backslash; control bytes, DEL and every
 * byte >= 0x80 become \u00XX, so the result is ASCII and valid JSON
 * whatever the input.
 *
 * Return: length written.
 */
size_t jw_escape(char *out, size_t outlen, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	for (i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (o + 7 > outlen)
			break;
		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			out[o++] = '\\';
			out[o++] = 'u';
			out[o++] = '0';
			out[o++] = '0';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
	}
	if (outlen)
		out[o] = '\0';
	return o;
}

/**
 * jw_strn() - append a quoted, escaped string of at most @n bytes
 * @w:		the writer
 * @s:		the bytes (stops at a NUL)
 * @n:		at most this many; keep it below VC_JW_SLACK / 6
 */
void jw_strn(struct jw *w, const char *s, size_t n)
{
	jw_need(w, n * 6 + 3);
	jw_putc(w, '"');
	w->len += jw_escape(w->buf + w->len, n * 6 + 1, s, n);
	jw_putc(w, '"');
}

/**
 * jw_str() - append a quoted, escaped NUL-terminated string
 * @w:		the writer
 * @s:		the string (truncated to 4096 bytes)
 */
void jw_str(struct jw *w, const char *s)
{
	jw_strn(w, s, strnlen(s, 4096));
}

/**
 * jw_begin() - open an object or array
 * @w:		the writer
 * @open:	'{' or '['
 *
 * As a value after jw_key(), or at the start of a line; an array item
 * needs jw_sep() first.
 */
void jw_begin(struct jw *w, char open)
{
	jw_need(w, 1);
	jw_putc(w, open);
	if (w->depth < VC_JW_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

/**
 * jw_end() - close an object or array
 * @w:		the writer
 * @close:	'}' or ']'
 */
void jw_end(struct jw *w, char close)
{
	jw_need(w, 1);
	jw_putc(w, close);
	if (w->depth > 0)
		w->depth--;
	w->first[w->depth] = false;
}

/**
 * jw_sep() - write a comma unless this is the first item of its level
 * @w:		the writer
 */
void jw_sep(struct jw *w)
{
	if (!w->first[w->depth]) {
		jw_need(w, 1);
		jw_putc(w, ',');
	}
	w->first[w->depth] = false;
}

/**
 * jw_key() - write an object key (a plain ASCII literal) and its colon
 * @w:		the writer
 * @key:	the key; not escaped
 */
void jw_key(struct jw *w, const char *key)
{
	size_t n = strlen(key);

	jw_sep(w);
	jw_need(w, n + 3);
	jw_putc(w, '"');
	jw_mem(w, key, n);
	jw_putc(w, '"');
	jw_putc(w, ':');
	/* the value that follows is not an item of its own */
	w->first[w->depth] = false;
}

/**
 * jw_line_end() - finish a line at the top level
 * @w:		the writer
 */
void jw_line_end(struct jw *w)
{
	jw_need(w, 1);
	jw_putc(w, '\n');
	w->depth = 0;
	w->first[0] = true;
}

/**
 * jw_key_u64() - "key":unsigned
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void jw_key_u64(struct jw *w, const char *key, __u64 v)
{
	jw_key(w, key);
	jw_u64(w, v);
}

/**
 * jw_key_s64() - "key":signed
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void jw_key_s64(struct jw *w, const char *key, long long v)
{
	jw_key(w, key);
	jw_s64(w, v);
}

/**
 * jw_key_str() - "key":"escaped string"
 * @w:		the writer
 * @key:	plain key
 * @s:		NUL-terminated value
 */
void jw_key_str(struct jw *w, const char *key, const char *s)
{
	jw_key(w, key);
	jw_str(w, s);
}

/**
 * jw_key_strn() - "key":"escaped string" of at most @n bytes
 * @w:		the writer
 * @key:	plain key
 * @s:		value, NUL terminated or @n bytes long
 * @n:		maximum length
 */
void jw_key_strn(struct jw *w, const char *key, const char *s, size_t n)
{
	jw_key(w, key);
	jw_strn(w, s, n);
}

/**
 * jw_key_bool() - "key":true|false
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void jw_key_bool(struct jw *w, const char *key, bool v)
{
	jw_key(w, key);
	jw_need(w, 5);
	if (v)
		jw_lit(w, "true");
	else
		jw_lit(w, "false");
}

/**
 * jw_key_null() - "key":null
 * @w:		the writer
 * @key:	plain key
 */
void jw_key_null(struct jw *w, const char *key)
{
	jw_key(w, key);
	jw_need(w, 4);
	jw_lit(w, "null");
}

/**
 * jw_key_double() - "key":number with 6 significant digits
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void jw_key_double(struct jw *w, const char *key, double v)
{
	jw_key(w, key);
	jw_double(w, v);
}
