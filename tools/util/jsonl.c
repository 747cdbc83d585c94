// SPDX-License-Identifier: GPL-2.0
/*
 * A small, fast JSON lines writer: everything goes into one large buffer
 * with hand-rolled integer formatting and leaves with one fwrite() per
 * megabyte, so that a row costs no printf at all.
 */
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>

#include "jsonl.h"

#define VC_JSON_DOUBLE_MAX	40	/* room for json_double(), %.6g too */

static const char json_digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/**
 * json_init() - set up a writer
 * @w:		the writer
 * @fp:		where lines go
 * @path:	name of the output, for messages
 *
 * Return: 0 or -ENOMEM.
 */
int json_init(struct json_writer *w, FILE *fp, const char *path)
{
	return json_init_size(w, fp, path, VC_JSON_BUFSZ);
}

/**
 * json_init_size() - set up a writer with a buffer of a given size
 * @w:		the writer
 * @fp:		where it writes
 * @path:	its name, for messages
 * @cap:	the buffer's size, at least twice VC_JSON_SLACK
 *
 * Return: 0, or -ENOMEM.
 */
int json_init_size(struct json_writer *w, FILE *fp, const char *path,
		   size_t cap)
{
	memset(w, 0, sizeof(*w));
	w->fp = fp;
	w->path = path;
	w->cap = cap < 2 * VC_JSON_SLACK ? 2 * VC_JSON_SLACK : cap;
	w->buf = malloc(w->cap);
	if (!w->buf)
		return -ENOMEM;
	w->first[0] = true;
	return 0;
}

/**
 * json_free() - release the buffer (flush first)
 * @w:		the writer
 */
void json_free(struct json_writer *w)
{
	free(w->buf);
	w->buf = NULL;
}

/**
 * json_flush() - write out everything pending and fflush the stream
 * @w:		the writer
 *
 * Return: 0, or the negative errno of the first failed write (later
 * output is discarded after a failure).
 */
int json_flush(struct json_writer *w)
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
 * json_make_room() - flush so that @n more bytes fit
 * @w:		the writer
 * @n:		bytes needed, at most VC_JSON_SLACK
 */
void json_make_room(struct json_writer *w, size_t n)
{
	if (w->len && !w->err) {
		if (fwrite(w->buf, 1, w->len, w->fp) != w->len)
			w->err = errno ? errno : EIO;
	}
	w->len = 0;
	if (n > w->cap)	/* never for our callers; do not overrun */
		abort();
}

/* 10^8: a 64-bit number is formatted in 32-bit chunks of 8 digits. */
#define VC_JSON_CHUNK		100000000U
#define VC_JSON_CHUNK_DIGITS	8
#define VC_JSON_HALF_CHUNK	10000U	/* 10^(VC_JSON_CHUNK_DIGITS / 2) */

/* Two digits of @v (below 100) at @p. */
static inline void json_pair(char *p, __u32 v)
{
	memcpy(p, json_digit_pairs + 2 * v, 2);
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
/*
 * The eight digits of a chunk at once, in the lanes of one 64-bit word
 * (SWAR): its two halves of four digits in 32-bit lanes, each split by
 * 100 into 16-bit lanes, each of those by 10 into bytes.  A lane's
 * division by a constant is a multiplication and a shift, exact for
 * every value a lane holds (below 10^4, below 100).  The first digit is
 * the lowest byte: the order of the bytes in memory.
 */
#define VC_SWAR_DIV100_MUL	10486ULL	/* n / 100 = n * M >> 20 */
#define VC_SWAR_DIV100_SHIFT	20
#define VC_SWAR_DIV100_MASK	0x0000007f0000007fULL
#define VC_SWAR_DIV10_MUL	103ULL		/* n / 10 = n * M >> 10 */
#define VC_SWAR_DIV10_SHIFT	10
#define VC_SWAR_DIV10_MASK	0x000f000f000f000fULL
#define VC_SWAR_ASCII_ZEROS	0x3030303030303030ULL
#define VC_SWAR_LANE		32	/* bits between the halves */
#define VC_SWAR_PAIR		16	/* between a pair's lanes */
#define VC_SWAR_DIGIT		8	/* between a byte's digits */

/* @v (below 10^8) as eight digit values 0-9, the first in the low byte. */
static inline __u64 json_swar8(__u32 v)
{
	__u64 x = v / VC_JSON_HALF_CHUNK |
		  (__u64)(v % VC_JSON_HALF_CHUNK) << VC_SWAR_LANE;
	__u64 q = (x * VC_SWAR_DIV100_MUL) >> VC_SWAR_DIV100_SHIFT &
		  VC_SWAR_DIV100_MASK;
	__u64 w = q | (x - q * 100) << VC_SWAR_PAIR;
	__u64 t = (w * VC_SWAR_DIV10_MUL) >> VC_SWAR_DIV10_SHIFT &
		  VC_SWAR_DIV10_MASK;

	return t | (w - t * 10) << VC_SWAR_DIGIT;
}

/* Exactly VC_JSON_CHUNK_DIGITS digits of @v (below 10^8) at @p. */
static inline void json_chunk(char *p, __u32 v)
{
	__u64 d = json_swar8(v) + VC_SWAR_ASCII_ZEROS;

	memcpy(p, &d, sizeof(d));
}

/*
 * @v (10 to below 10^8) at @p without leading zeros: those are the low
 * bytes of its digits that are zero; the eight bytes are stored at once
 * (the ones past the digits are written over next).
 */
static inline char *json_fmt_short(char *p, __u32 v)
{
	__u64 d = json_swar8(v);
	unsigned int zeros = (unsigned int)__builtin_ctzll(d) / VC_SWAR_DIGIT;

	d = (d + VC_SWAR_ASCII_ZEROS) >> (zeros * VC_SWAR_DIGIT);
	memcpy(p, &d, sizeof(d));
	return p + VC_JSON_CHUNK_DIGITS - zeros;
}
#else
/* Exactly VC_JSON_CHUNK_DIGITS digits of @v (below 10^8) at @p. */
static void json_chunk(char *p, __u32 v)
{
	__u32 hi = v / VC_JSON_HALF_CHUNK, lo = v - hi * VC_JSON_HALF_CHUNK;

	json_pair(p, hi / 100);
	json_pair(p + 2, hi % 100);
	json_pair(p + 4, lo / 100);
	json_pair(p + 6, lo % 100);
}

/* @v (10 to below 10^8) at @p without leading zeros, pairs from the end. */
static char *json_fmt_short(char *p, __u32 v)
{
	unsigned int n = v < 10000 ? (v < 100 ? 2 : v < 1000 ? 3 : 4) :
			 v < 1000000 ? (v < 100000 ? 5 : 6) :
			 v < 10000000 ? 7 : 8;
	char *end = p + n, *q = end;

	for (; v >= 100; v /= 100) {
		q -= 2;
		json_pair(q, v % 100);
	}
	if (v >= 10)
		json_pair(q - 2, v);
	else
		q[-1] = (char)('0' + v);
	return end;
}
#endif

/* @v at @p with no leading zeros (inlined: a call a number is a tenth). */
static inline __attribute__((always_inline))
char *json_fmt_u32(char *p, __u32 v)
{
	__u32 top;

	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < VC_JSON_CHUNK)
		return json_fmt_short(p, v);
	top = v / VC_JSON_CHUNK;	/* 1 to 42 */
	if (top >= 10) {
		json_pair(p, top);
		p += 2;
	} else {
		*p++ = (char)('0' + top);
	}
	json_chunk(p, v - top * VC_JSON_CHUNK);
	return p + VC_JSON_CHUNK_DIGITS;
}

/**
 * json_fmt_u64() - format an unsigned decimal in place
 * @p:		where it goes: room for VC_JSON_INT_MAX bytes
 * @v:		the number
 *
 * Straight into place, with 32-bit arithmetic only (a 64-bit number is
 * at most three chunks of 10^8): the hot path of every row.
 *
 * Return: the byte after the last digit.
 */
char *json_fmt_u64(char *p, __u64 v)
{
	__u64 hi;
	__u32 lo;

	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v <= UINT32_MAX)
		return json_fmt_u32(p, (__u32)v);
	hi = v / VC_JSON_CHUNK;
	lo = (__u32)(v - hi * VC_JSON_CHUNK);
	if (hi <= UINT32_MAX) {
		p = json_fmt_u32(p, (__u32)hi);
	} else {
		__u64 top = hi / VC_JSON_CHUNK;

		p = json_fmt_u32(p, (__u32)top);
		json_chunk(p, (__u32)(hi - top * VC_JSON_CHUNK));
		p += VC_JSON_CHUNK_DIGITS;
	}
	json_chunk(p, lo);
	return p + VC_JSON_CHUNK_DIGITS;
}

/**
 * json_s64() - append a signed decimal
 * @w:		the writer
 * @v:		the number
 */
void json_s64(struct json_writer *w, long long v)
{
	json_cursor_end(w, json_p_s64(json_cursor(w, VC_JSON_INT_MAX), v));
}

/**
 * json_fixed() - append @v / 10^@scale_digits as a short exact decimal
 * @w:		the writer
 * @v:		the number in units of 10^-@scale_digits
 * @scale_digits: decimals in @v, at most 18
 *
 * Trailing zeros of the fraction are dropped: 100000000 with 9 digits
 * is "0.1", 2000000000 is "2" (a JSON number either way).
 */
void json_fixed(struct json_writer *w, __u64 v, unsigned int scale_digits)
{
	char frac[20];
	__u64 div = 1;
	unsigned int i, n;

	for (i = 0; i < scale_digits; i++)
		div *= 10;
	json_u64(w, v / div);
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
	json_need(w, n + 1);
	json_putc(w, '.');
	json_mem(w, frac, n);
}

/* Significant digits of json_double(), as %.6g's. */
#define VC_JSON_SIG_DIGITS	6
/* %g writes 10^-4 and above without an exponent (below its precision). */
#define VC_JSON_EXP_LOW		4

/*
 * @m (VC_JSON_SIG_DIGITS digits, the first not 0) times 10^(@e - 5) at
 * @p, @e in [-4, 5], as %g writes it: no trailing zeros in a fraction,
 * no point without one.
 */
static char *json_p_sig(char *p, __u32 m, int e)
{
	char d[VC_JSON_SIG_DIGITS];
	int n = VC_JSON_SIG_DIGITS, i;

	json_pair(d, m / 10000);
	json_pair(d + 2, m / 100 % 100);
	json_pair(d + 4, m % 100);
	while (n > 1 && d[n - 1] == '0')
		n--;
	if (e < 0) {
		*p++ = '0';
		*p++ = '.';
		for (i = -1; i > e; i--)
			*p++ = '0';
		return json_p_mem(p, d, (size_t)n);
	}
	p = json_p_mem(p, d, (size_t)e + 1);
	if (n > e + 1) {
		*p++ = '.';
		p = json_p_mem(p, d + e + 1, (size_t)(n - e - 1));
	}
	return p;
}

/**
 * json_double() - append a ratio with 6 significant digits (like %.6g)
 * @w:		a writer
 * @v:		a finite number
 *
 * The common range is formatted without printf, the same bytes as
 * printf's; tiny, huge and non-finite values fall back to snprintf
 * (non-finite as null), as does a value so near a tie of its last digit
 * that only printf can round it exactly.
 */
void json_double(struct json_writer *w, double v)
{
	/* 10^e at [e + VC_JSON_EXP_LOW], e from -VC_JSON_EXP_LOW to 9 */
	static const double p10[] = {
		0.0001, 0.001, 0.01, 0.1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6,
		1e7, 1e8, 1e9,
	};
	const double *pow10 = p10 + VC_JSON_EXP_LOW;
	double a = v < 0 ? -v : v;
	double x;
	char *p;
	int e, n;
	__u64 m;

	p = json_cursor(w, VC_JSON_DOUBLE_MAX);
	if (!isfinite(v)) {
		json_cursor_end(w, json_p_lit(p, "null"));
		return;
	}
	if (a == 0) {
		*p++ = '0';
		json_cursor_end(w, p);
		return;
	}
	if (a >= 0.0001 && a < 1e6) {
		/* exponent e with 10^e <= a < 10^(e+1), e in [-4, 5] */
		e = 0;
		if (a >= 1) {
			while (e < VC_JSON_SIG_DIGITS - 1 && a >= pow10[e + 1])
				e++;
		} else {
			e = -1;
			while (e > -VC_JSON_EXP_LOW && a < pow10[e])
				e--;
		}
		/* 6 significant digits; near a tie, printf decides exactly */
		x = a * pow10[VC_JSON_SIG_DIGITS - 1 - e];
		if (fabs(x - floor(x) - 0.5) < 0.000001)
			goto slow;
		m = (__u64)nearbyint(x);
		if (m >= 1000000) {	/* rounding carried: 9.999996 -> 10 */
			m /= 10;
			e++;
		}
		if (e <= 5) {
			if (v < 0)
				*p++ = '-';
			json_cursor_end(w, json_p_sig(p, (__u32)m, e));
			return;
		}
	}
slow:
	n = snprintf(p, VC_JSON_DOUBLE_MAX, "%.6g", v);
	json_cursor_end(w, p + n);
}

/**
 * json_escape() - JSON-escape bytes into a buffer (without quotes)
 * @out:	destination, NUL terminated on return
 * @outlen:	its size, at least VC_JSON_ESC_MAX * @n + 1 for no
 *		truncation
 * @s:		bytes, any values
 * @n:		their number (stops early at a NUL)
 *
 * Quotes and backslashes get a backslash; control bytes, DEL and every
 * byte >= 0x80 become \u00XX, so the result is ASCII and valid JSON
 * whatever the input.
 *
 * Return: length written.
 */
size_t json_escape(char *out, size_t outlen, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	for (i = 0; i < n && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (o + VC_JSON_ESC_MAX + 1 > outlen)
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
 * json_strn() - append a quoted, escaped string of at most @n bytes
 * @w:		the writer
 * @s:		the bytes (stops at a NUL)
 * @n:		at most this many; keep it below
 *		VC_JSON_SLACK / VC_JSON_ESC_MAX
 */
void json_strn(struct json_writer *w, const char *s, size_t n)
{
	json_need(w, n * VC_JSON_ESC_MAX + 3);	/* "", and escape's NUL */
	json_putc(w, '"');
	w->len += json_escape(w->buf + w->len, n * VC_JSON_ESC_MAX + 1, s,
			      n);
	json_putc(w, '"');
}

/**
 * json_str() - append a quoted, escaped NUL-terminated string
 * @w:		the writer
 * @s:		the string (truncated to VC_JSON_STR_MAX bytes)
 */
void json_str(struct json_writer *w, const char *s)
{
	json_strn(w, s, strnlen(s, VC_JSON_STR_MAX));
}

/**
 * json_begin() - open an object or array
 * @w:		the writer
 * @open:	'{' or '['
 *
 * As a value after json_key(), or at the start of a line; an array item
 * needs json_sep() first.
 */
void json_begin(struct json_writer *w, char open)
{
	json_need(w, 1);
	json_putc(w, open);
	if (w->depth < VC_JSON_DEPTH - 1)
		w->depth++;
	w->first[w->depth] = true;
}

/**
 * json_end() - close an object or array
 * @w:		the writer
 * @close:	'}' or ']'
 */
void json_end(struct json_writer *w, char close)
{
	json_need(w, 1);
	json_putc(w, close);
	if (w->depth > 0)
		w->depth--;
	w->first[w->depth] = false;
}

/**
 * json_sep() - write a comma unless this is the first item of its level
 * @w:		the writer
 */
void json_sep(struct json_writer *w)
{
	if (!w->first[w->depth]) {
		json_need(w, 1);
		json_putc(w, ',');
	}
	w->first[w->depth] = false;
}

/**
 * json_key() - write an object key (a plain ASCII literal) and its colon
 * @w:		the writer
 * @key:	the key; not escaped
 */
void json_key(struct json_writer *w, const char *key)
{
	size_t n = strlen(key);

	json_sep(w);
	json_need(w, n + 3);
	json_putc(w, '"');
	json_mem(w, key, n);
	json_putc(w, '"');
	json_putc(w, ':');
	/* the value that follows is not an item of its own */
	w->first[w->depth] = false;
}

/**
 * json_line_end() - finish a line at the top level
 * @w:		the writer
 */
void json_line_end(struct json_writer *w)
{
	json_need(w, 1);
	json_putc(w, '\n');
	w->depth = 0;
	w->first[0] = true;
}

/**
 * json_key_u64() - "key":unsigned
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void json_key_u64(struct json_writer *w, const char *key, __u64 v)
{
	json_key(w, key);
	json_u64(w, v);
}

/**
 * json_key_s64() - "key":signed
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void json_key_s64(struct json_writer *w, const char *key, long long v)
{
	json_key(w, key);
	json_s64(w, v);
}

/**
 * json_key_str() - "key":"escaped string"
 * @w:		the writer
 * @key:	plain key
 * @s:		NUL-terminated value
 */
void json_key_str(struct json_writer *w, const char *key, const char *s)
{
	json_key(w, key);
	json_str(w, s);
}

/**
 * json_key_strn() - "key":"escaped string" of at most @n bytes
 * @w:		the writer
 * @key:	plain key
 * @s:		value, NUL terminated or @n bytes long
 * @n:		maximum length
 */
void json_key_strn(struct json_writer *w, const char *key, const char *s,
		   size_t n)
{
	json_key(w, key);
	json_strn(w, s, n);
}

/**
 * json_key_bool() - "key":true|false
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void json_key_bool(struct json_writer *w, const char *key, bool v)
{
	json_key(w, key);
	json_bool(w, v);
}

/**
 * json_key_null() - "key":null
 * @w:		the writer
 * @key:	plain key
 */
void json_key_null(struct json_writer *w, const char *key)
{
	json_key(w, key);
	json_null(w);
}

/**
 * json_key_double() - "key":number with 6 significant digits
 * @w:		the writer
 * @key:	plain key
 * @v:		value
 */
void json_key_double(struct json_writer *w, const char *key, double v)
{
	json_key(w, key);
	json_double(w, v);
}
