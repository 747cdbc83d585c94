// SPDX-License-Identifier: GPL-2.0
/*
 * The control-command parser, shared by vcpuperf.ko and vcpuperf-cat.
 * The grammar is documented in include/uapi/vcpuperf.h.  The parser only
 * reads its input and fills a struct vp_cmd: applying the command is the
 * module's business, so a rejected command cannot have changed anything.
 */
#include "vcpuperf_lib.h"

#define VP_SIZE_DIGITS_MAX	10	/* no more than 2^32 KiB, far above the max */

/* A decimal id is a pid_t: positive, at most 2^31 - 1 (ten digits). */
#define VP_ID_MAX		0x7fffffffULL
#define VP_ID_MAX_DIGITS	10

/* Digits of a duration read at most: the value cannot overflow. */
#define VP_DURATION_MAX_DIGITS	12

/* How much of a rejected word an error message quotes. */
#define VP_QUOTE_ID		16
#define VP_QUOTE_ARG		32
#define VP_QUOTE_INTERVAL	24
#define VP_QUOTE_CMD		16

struct vp_token {
	const char *s;
	size_t len;
};

/* The length to quote of a token, as a "%.*s" precision. */
static int vp_quote_len(const struct vp_token *tok, size_t max)
{
	return (int)(tok->len > max ? max : tok->len);
}

static bool vp_space(char c)
{
	return c == ' ' || c == '\t';
}

/* Next blank-separated token at or after *@pos; false at the end. */
static bool vp_next_token(const char *buf, size_t len, size_t *pos,
			  struct vp_token *tok)
{
	size_t p = *pos;

	while (p < len && vp_space(buf[p]))
		p++;
	if (p == len)
		return false;
	tok->s = buf + p;
	while (p < len && !vp_space(buf[p]))
		p++;
	tok->len = buf + p - tok->s;
	*pos = p;
	return true;
}

static bool vp_tok_is(const struct vp_token *tok, const char *word)
{
	return tok->len == strlen(word) && !memcmp(tok->s, word, tok->len);
}

/* "key=VALUE": true with the (possibly empty) value in @val. */
static bool vp_tok_key(const struct vp_token *tok, const char *key,
		       struct vp_token *val)
{
	size_t n = strlen(key);

	if (tok->len <= n || memcmp(tok->s, key, n) || tok->s[n] != '=')
		return false;
	val->s = tok->s + n + 1;
	val->len = tok->len - n - 1;
	return true;
}

/* A positive decimal id that fits in 31 bits (pid_t), no sign, no 0x. */
static int vp_parse_id(const char *s, size_t len, __u32 *id)
{
	__u64 v = 0;
	size_t i;

	if (!len || len > VP_ID_MAX_DIGITS || s[0] == '0')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (__u64)(s[i] - '0');
	}
	if (v > VP_ID_MAX)
		return -EINVAL;
	*id = (__u32)v;
	return 0;
}

static int vp_parse_ids(const struct vp_token *val, struct vp_cmd *cmd,
			bool list, char *err, size_t errlen)
{
	size_t pos = 0;

	cmd->nr_ids = 0;
	for (;;) {
		size_t start = pos;
		__u32 id, i;

		while (pos < val->len && val->s[pos] != ',')
			pos++;
		if (cmd->nr_ids == VCPUPERF_MAX_TARGETS) {
			snprintf(err, errlen, "more than %d ids",
				 VCPUPERF_MAX_TARGETS);
			return -E2BIG;
		}
		if (vp_parse_id(val->s + start, pos - start, &id)) {
			struct vp_token bad = { val->s + start, pos - start };

			snprintf(err, errlen,
				 "bad id '%.*s': want a positive decimal",
				 vp_quote_len(&bad, VP_QUOTE_ID), bad.s);
			return -EINVAL;
		}
		for (i = 0; i < cmd->nr_ids; i++) {
			if (cmd->ids[i] == id) {
				snprintf(err, errlen, "id %u given twice", id);
				return -EINVAL;
			}
		}
		cmd->ids[cmd->nr_ids++] = id;
		if (pos == val->len)
			break;
		if (!list) {
			snprintf(err, errlen, "pid= and qemu= take one id");
			return -EINVAL;
		}
		pos++;
	}
	return 0;
}

/* tid=, pid= or qemu=; returns 1 when @tok is no target, else 0/-errno. */
static int vp_parse_target(const struct vp_token *tok, struct vp_cmd *cmd,
			   char *err, size_t errlen)
{
	static const struct {
		const char *key;
		enum vcpuperf_target_kind kind;
	} keys[] = {
		{ "tid", VCPUPERF_TARGET_TID },
		{ "pid", VCPUPERF_TARGET_PID },
		{ "qemu", VCPUPERF_TARGET_QEMU },
	};
	struct vp_token val;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		if (!vp_tok_key(tok, keys[i].key, &val))
			continue;
		if (cmd->kind) {
			snprintf(err, errlen, "more than one target");
			return -EINVAL;
		}
		cmd->kind = keys[i].kind;
		return vp_parse_ids(&val, cmd, keys[i].kind ==
				    VCPUPERF_TARGET_TID, err, errlen);
	}
	return 1;
}

/*
 * The modifiers an attach command takes as words, in the order
 * vp_build_attach() writes them.
 */
static const struct {
	const char *word;
	__u32 mod;
} vp_mod_words[] = {
	{ "guest_only", VCPUPERF_MOD_GUEST },
	{ "host_only", VCPUPERF_MOD_HOST },
	{ "user_only", VCPUPERF_MOD_USER },
	{ "kernel_only", VCPUPERF_MOD_KERNEL },
	{ "pinned", VCPUPERF_MOD_PINNED },
};

/* The modifier a word stands for, 0 if it is none. */
static __u32 vp_mod_from_word(const struct vp_token *tok)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_mod_words); i++)
		if (vp_tok_is(tok, vp_mod_words[i].word))
			return vp_mod_words[i].mod;
	return 0;
}

/* The word of one modifier, "?" for none. */
static const char *vp_mod_word(__u32 mod)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_mod_words); i++)
		if (vp_mod_words[i].mod == mod)
			return vp_mod_words[i].word;
	return "?";
}

/* The attach words that are not event modifiers, in build order. */
static const struct {
	const char *word;
	__u32 flag;
} vp_flag_words[] = {
	{ "process_totals", VCPUPERF_ATTACH_PROCESS_TOTALS },
	{ "all_threads", VCPUPERF_ATTACH_ALL_THREADS },
	{ "no_sched", VCPUPERF_ATTACH_NO_SCHED },
	{ "who", VCPUPERF_ATTACH_WHO },
};

/**
 * vp_attach_flag_word() - the attach word of one VCPUPERF_ATTACH_* flag
 * @flag:	one flag
 *
 * Return: the word, or "?" for none.
 */
const char *vp_attach_flag_word(__u32 flag)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_flag_words); i++)
		if (vp_flag_words[i].flag == flag)
			return vp_flag_words[i].word;
	return "?";
}

/* An attach flag word: at most once; 1 when @tok is none. */
static int vp_parse_flag_word(const struct vp_token *tok, struct vp_cmd *cmd,
			      char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vp_flag_words); i++) {
		if (!vp_tok_is(tok, vp_flag_words[i].word))
			continue;
		if (cmd->flags & vp_flag_words[i].flag) {
			snprintf(err, errlen, "%s given twice",
				 vp_flag_words[i].word);
			return -EINVAL;
		}
		cmd->flags |= vp_flag_words[i].flag;
		return 0;
	}
	return 1;
}

/* Flags that the target kind does not take. */
static int vp_check_flags(const struct vp_cmd *cmd, char *err, size_t errlen)
{
	if ((cmd->flags & VCPUPERF_ATTACH_PROCESS_TOTALS) &&
	    cmd->kind == VCPUPERF_TARGET_TID) {
		snprintf(err, errlen, "process_totals needs pid= or qemu=");
		return -EINVAL;
	}
	if ((cmd->flags & VCPUPERF_ATTACH_ALL_THREADS) &&
	    cmd->kind != VCPUPERF_TARGET_QEMU) {
		snprintf(err, errlen, "all_threads needs qemu=");
		return -EINVAL;
	}
	return 0;
}

/* events=LIST: at most once per command. */
static int vp_parse_events_arg(const struct vp_token *val, struct vp_cmd *cmd,
			       char *err, size_t errlen)
{
	if (cmd->events_given) {
		snprintf(err, errlen, "events= given twice");
		return -EINVAL;
	}
	cmd->events_given = true;
	return vp_parse_event_list(val->s, val->len, cmd->events,
				   &cmd->nr_events, err, errlen);
}

/* A modifier word: at most once per command. */
static int vp_parse_mod_word(const struct vp_token *tok, struct vp_cmd *cmd,
			     char *err, size_t errlen)
{
	__u32 mod = vp_mod_from_word(tok);

	if (!mod) {
		snprintf(err, errlen, "unknown attach argument '%.*s'",
			 vp_quote_len(tok, VP_QUOTE_ARG), tok->s);
		return -EINVAL;
	}
	if (cmd->mods & mod) {
		snprintf(err, errlen, "%s given twice", vp_mod_word(mod));
		return -EINVAL;
	}
	cmd->mods |= mod;
	return 0;
}

/* One argument of attach: a target, events= or a modifier word. */
static int vp_parse_attach_arg(const struct vp_token *tok, struct vp_cmd *cmd,
			       char *err, size_t errlen)
{
	struct vp_token val;
	int ret;

	ret = vp_parse_target(tok, cmd, err, errlen);
	if (ret <= 0)
		return ret;
	if (vp_tok_key(tok, "events", &val))
		return vp_parse_events_arg(&val, cmd, err, errlen);
	ret = vp_parse_flag_word(tok, cmd, err, errlen);
	if (ret <= 0)
		return ret;
	return vp_parse_mod_word(tok, cmd, err, errlen);
}

/* Without events=, the default set. */
static int vp_default_event_set(struct vp_cmd *cmd, char *err, size_t errlen)
{
	__u32 i;
	int ret;

	for (i = 0; i < VP_NR_DEFAULT_EVENTS; i++) {
		ret = vp_parse_event(vp_default_events[i],
				     strlen(vp_default_events[i]),
				     &cmd->events[i], err, errlen);
		if (ret)
			return ret;
	}
	cmd->nr_events = VP_NR_DEFAULT_EVENTS;
	return 0;
}

/*
 * Keyword modifiers apply to every event, on top of its suffix.  A suffix
 * the kernel would ignore for its event is refused; a keyword it would
 * ignore is left out for that event and said so in the started record
 * (VCPUPERF_MOD_NOT_APPLIED_SHIFT).
 */
static int vp_apply_cmd_mods(struct vp_cmd *cmd, char *err, size_t errlen)
{
	__u32 i;

	for (i = 0; i < cmd->nr_events; i++) {
		struct vcpuperf_event_desc *d = &cmd->events[i].desc;
		__u32 ign = vp_ignored_mods(d->type, d->config);
		__u32 mods;

		if (d->mods & ign) {
			__u32 bad = d->mods & ign & (0U - (d->mods & ign));

			snprintf(err, errlen,
				 "event '%s': modifier %c refused: %s",
				 d->name, vp_mod_letter(bad),
				 vp_ignored_why(d->type, d->config, bad));
			return -EINVAL;
		}
		mods = d->mods | (cmd->mods & ~ign);

		if (vp_mods_conflict(mods)) {
			snprintf(err, errlen,
				 "modifiers of event '%s' conflict with the command's",
				 d->name);
			return -EINVAL;
		}
		d->mods = mods | ((cmd->mods & ign) <<
				  VCPUPERF_MOD_NOT_APPLIED_SHIFT);
	}
	return 0;
}

static int vp_parse_attach(const char *buf, size_t len, size_t pos,
			   struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct vp_token tok;
	__u32 clash;
	int ret;

	while (vp_next_token(buf, len, &pos, &tok)) {
		ret = vp_parse_attach_arg(&tok, cmd, err, errlen);
		if (ret)
			return ret;
	}
	if (!cmd->kind) {
		snprintf(err, errlen, "attach needs tid=, pid= or qemu=");
		return -EINVAL;
	}
	ret = vp_check_flags(cmd, err, errlen);
	if (ret)
		return ret;
	clash = vp_mods_conflict(cmd->mods);
	if (clash) {
		__u32 second = clash & (clash - 1);

		snprintf(err, errlen, "%s and %s exclude each other",
			 vp_mod_word(clash ^ second), vp_mod_word(second));
		return -EINVAL;
	}
	if (!cmd->events_given) {
		ret = vp_default_event_set(cmd, err, errlen);
		if (ret)
			return ret;
	}
	return vp_apply_cmd_mods(cmd, err, errlen);
}

static int vp_parse_detach(const char *buf, size_t len, size_t pos,
			   struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct vp_token tok;
	int ret;

	if (!vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "detach needs tid=, pid=, qemu= or all");
		return -EINVAL;
	}
	if (vp_tok_is(&tok, "all")) {
		cmd->op = VP_OP_DETACH_ALL;
	} else {
		ret = vp_parse_target(&tok, cmd, err, errlen);
		if (ret) {
			if (ret > 0)
				snprintf(err, errlen,
					 "detach needs tid=, pid=, qemu= or all");
			return ret > 0 ? -EINVAL : ret;
		}
	}
	if (vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "detach takes one argument");
		return -EINVAL;
	}
	return 0;
}

/**
 * vp_parse_duration() - parse N[us|ms|s] (no unit: ms) into ns
 * @s:		text, not NUL terminated
 * @len:	its length
 * @ns:		result
 *
 * Return: 0, or -EINVAL when malformed or outside
 * [VCPUPERF_INTERVAL_MIN_NS, VCPUPERF_INTERVAL_MAX_NS].
 */
int vp_parse_duration(const char *s, size_t len, __u64 *ns)
{
	__u64 v = 0, unit = VP_NS_PER_MS;
	size_t i, digits = 0;

	while (digits < len && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	if (!digits || digits > VP_DURATION_MAX_DIGITS)
		return -EINVAL;
	for (i = 0; i < digits; i++)
		v = v * 10 + (__u64)(s[i] - '0');
	s += digits;
	len -= digits;
	if (len == 2 && !memcmp(s, "us", 2))
		unit = VP_NS_PER_US;
	else if (len == 2 && !memcmp(s, "ms", 2))
		unit = VP_NS_PER_MS;
	else if (len == 1 && s[0] == 's')
		unit = VP_NS_PER_S;
	else if (len)
		return -EINVAL;
	if (v > VCPUPERF_INTERVAL_MAX_NS / unit)
		return -EINVAL;
	v *= unit;
	if (v < VCPUPERF_INTERVAL_MIN_NS || v > VCPUPERF_INTERVAL_MAX_NS)
		return -EINVAL;
	*ns = v;
	return 0;
}

/**
 * vp_parse_ring_size() - parse a ring size, N[K|M|G], no unit meaning KiB
 * @s:		the text, not NUL terminated
 * @len:	its length
 * @kb:		the size in KiB
 *
 * Return: 0, or -EINVAL when malformed or outside
 * [VCPUPERF_RING_MIN_KB, VCPUPERF_RING_MAX_KB].
 */
int vp_parse_ring_size(const char *s, size_t len, __u32 *kb)
{
	__u64 v = 0, unit = 1;
	size_t i, digits = 0;

	while (digits < len && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	if (!digits || digits > VP_SIZE_DIGITS_MAX)
		return -EINVAL;
	for (i = 0; i < digits; i++)
		v = v * 10 + (__u64)(s[i] - '0');
	if (len == digits + 1) {
		switch (s[digits]) {
		case 'K':
		case 'k':
			break;
		case 'M':
		case 'm':
			unit = VP_KB_PER_MB;
			break;
		case 'G':
		case 'g':
			unit = VP_KB_PER_MB * VP_KB_PER_MB;
			break;
		default:
			return -EINVAL;
		}
	} else if (len != digits) {
		return -EINVAL;
	}
	v *= unit;
	if (v < VCPUPERF_RING_MIN_KB || v > VCPUPERF_RING_MAX_KB)
		return -EINVAL;
	*kb = (__u32)v;
	return 0;
}

/**
 * vp_format_duration() - print an interval in the unit it is a whole of
 * @buf:	output
 * @len:	size of @buf
 * @ns:		interval
 *
 * Return: as snprintf().
 */
int vp_format_duration(char *buf, size_t len, __u64 ns)
{
	if (ns % VP_NS_PER_S == 0)
		return snprintf(buf, len, "%llus",
				(unsigned long long)(ns / VP_NS_PER_S));
	if (ns % VP_NS_PER_MS == 0)
		return snprintf(buf, len, "%llums",
				(unsigned long long)(ns / VP_NS_PER_MS));
	return snprintf(buf, len, "%lluus",
			(unsigned long long)(ns / VP_NS_PER_US));
}

/* Printable ASCII and tabs only, and no second line. */
static int vp_check_bytes(const char *buf, size_t len, char *err,
			  size_t errlen)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = buf[i];

		if (c == '\n') {
			snprintf(err, errlen, "one command per write");
			return -EINVAL;
		}
		if (c < ' ' && c != '\t') {
			snprintf(err, errlen, "control character 0x%02x", c);
			return -EINVAL;
		}
		if (c >= 0x7f) {
			snprintf(err, errlen, "non-ASCII byte 0x%02x", c);
			return -EINVAL;
		}
	}
	return 0;
}

static int vp_parse_interval(const char *buf, size_t len, size_t pos,
			     struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct vp_token tok;

	if (!vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "interval needs a duration");
		return -EINVAL;
	}
	if (vp_parse_duration(tok.s, tok.len, &cmd->interval_ns)) {
		snprintf(err, errlen,
			 "bad interval '%.*s': want 1ms..60s as N[us|ms|s]",
			 vp_quote_len(&tok, VP_QUOTE_INTERVAL), tok.s);
		return -EINVAL;
	}
	if (vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "interval takes one argument");
		return -EINVAL;
	}
	return 0;
}

static int vp_parse_ring(const char *buf, size_t len, size_t pos,
			 struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct vp_token tok;

	if (!vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "ring needs a size");
		return -EINVAL;
	}
	if (vp_parse_ring_size(tok.s, tok.len, &cmd->ring_kb)) {
		snprintf(err, errlen,
			 "bad ring size '%.*s': want %uK..%uM as N[K|M|G]",
			 vp_quote_len(&tok, VP_QUOTE_INTERVAL), tok.s,
			 VCPUPERF_RING_MIN_KB,
			 VCPUPERF_RING_MAX_KB / VP_KB_PER_MB);
		return -EINVAL;
	}
	if (vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "ring takes one argument");
		return -EINVAL;
	}
	return 0;
}

static int vp_parse_read(const char *buf, size_t len, size_t pos,
			 struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct vp_token tok;
	__u32 m;

	if (!vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "read needs a mode: auto, direct, kick or lazy");
		return -EINVAL;
	}
	for (m = VCPUPERF_READ_AUTO; m <= VCPUPERF_READ_LAZY; m++)
		if (vp_tok_is(&tok, vp_read_mode_name(m)))
			break;
	if (m > VCPUPERF_READ_LAZY) {
		snprintf(err, errlen,
			 "bad read mode '%.*s': want auto, direct, kick or lazy",
			 vp_quote_len(&tok, VP_QUOTE_ARG), tok.s);
		return -EINVAL;
	}
	cmd->read_mode = m;
	if (vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "read takes one argument");
		return -EINVAL;
	}
	return 0;
}

/**
 * vp_parse_cmd() - parse one control command
 * @buf:	the bytes written, not NUL terminated
 * @len:	their number
 * @cmd:	filled in on success (zeroed first in any case)
 * @err:	why the command was rejected
 * @errlen:	size of @err
 *
 * One command per call; a single trailing newline is allowed.
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vp_parse_cmd(const char *buf, size_t len, struct vp_cmd *cmd,
		 char *err, size_t errlen)
{
	struct vp_token tok;
	size_t pos = 0;
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	err[0] = '\0';
	if (len > VCPUPERF_CMD_MAX) {
		snprintf(err, errlen, "command longer than %d bytes",
			 VCPUPERF_CMD_MAX);
		return -E2BIG;
	}
	if (len && buf[len - 1] == '\n')
		len--;
	ret = vp_check_bytes(buf, len, err, errlen);
	if (ret)
		return ret;
	if (!vp_next_token(buf, len, &pos, &tok)) {
		snprintf(err, errlen, "empty command");
		return -EINVAL;
	}
	if (vp_tok_is(&tok, "attach")) {
		cmd->op = VP_OP_ATTACH;
		return vp_parse_attach(buf, len, pos, cmd, err, errlen);
	}
	if (vp_tok_is(&tok, "detach")) {
		cmd->op = VP_OP_DETACH;
		return vp_parse_detach(buf, len, pos, cmd, err, errlen);
	}
	if (vp_tok_is(&tok, "interval")) {
		cmd->op = VP_OP_INTERVAL;
		return vp_parse_interval(buf, len, pos, cmd, err, errlen);
	}
	if (vp_tok_is(&tok, "ring")) {
		cmd->op = VP_OP_RING;
		return vp_parse_ring(buf, len, pos, cmd, err, errlen);
	}
	if (vp_tok_is(&tok, "read")) {
		cmd->op = VP_OP_READ;
		return vp_parse_read(buf, len, pos, cmd, err, errlen);
	}
	if (vp_tok_is(&tok, "stop")) {
		cmd->op = VP_OP_STOP;
		if (vp_next_token(buf, len, &pos, &tok)) {
			snprintf(err, errlen, "stop takes no argument");
			return -EINVAL;
		}
		return 0;
	}
	snprintf(err, errlen, "unknown command '%.*s'",
		 vp_quote_len(&tok, VP_QUOTE_CMD), tok.s);
	return -EINVAL;
}

/**
 * vp_build_attach() - write an attach command
 * @buf:	output, NUL terminated
 * @len:	size of @buf (VCPUPERF_CMD_MAX + 1 holds any valid command)
 * @kind:	VCPUPERF_TARGET_TID, _PID or _QEMU
 * @ids:	the target's ids as the command takes them ("4242", "1,2,3")
 * @events:	the events= list, or NULL for the default set
 * @mods:	VCPUPERF_MOD_* to give as words (guest_only ...)
 *
 * The text is "attach KIND=IDS[ events=EVENTS][ WORD...]"; nothing is
 * checked here: vp_parse_cmd() judges the result.
 *
 * Return: the length of the command, or -E2BIG when it does not fit.
 */
int vp_build_attach(char *buf, size_t len, enum vcpuperf_target_kind kind,
		    const char *ids, const char *events, __u32 mods)
{
	size_t n, i;

	n = (size_t)snprintf(buf, len, "attach %s=%s", vp_kind_name(kind), ids);
	if (events && n < len)
		n += (size_t)snprintf(buf + n, len - n, " events=%s", events);
	for (i = 0; i < ARRAY_SIZE(vp_mod_words); i++)
		if ((mods & vp_mod_words[i].mod) && n < len)
			n += (size_t)snprintf(buf + n, len - n, " %s",
					      vp_mod_words[i].word);
	return n < len ? (int)n : -E2BIG;
}

/**
 * vp_build_attach_flags() - append attach flag words to an attach command
 * @buf:	the command vp_build_attach() wrote, NUL terminated
 * @len:	size of @buf
 * @n:		its length, as vp_build_attach() returned it
 * @flags:	VCPUPERF_ATTACH_* to append as words (process_totals ...)
 *
 * Return: the new length, or -E2BIG when it does not fit.
 */
int vp_build_attach_flags(char *buf, size_t len, int n, __u32 flags)
{
	size_t m, i;

	if (n < 0)
		return n;
	m = (size_t)n;
	for (i = 0; i < ARRAY_SIZE(vp_flag_words); i++)
		if ((flags & vp_flag_words[i].flag) && m < len)
			m += (size_t)snprintf(buf + m, len - m, " %s",
					      vp_flag_words[i].word);
	return m < len ? (int)m : -E2BIG;
}
