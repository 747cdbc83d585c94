// SPDX-License-Identifier: GPL-2.0
/*
 * The control-command parser, shared by vcpuperf.ko and vcpuperf-cat.
 * The grammar is documented in include/uapi/vcpuperf.h.  The parser only
 * reads its input and fills a struct vp_cmd: applying the command is the
 * module's business, so a rejected command cannot have changed anything.
 */
#include "vcpuperf_lib.h"

#define VP_NS_PER_US	1000ULL
#define VP_NS_PER_MS	1000000ULL
#define VP_NS_PER_S	1000000000ULL

struct vp_token {
	const char *s;
	size_t len;
};

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

	if (!len || len > 10 || s[0] == '0')
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (__u64)(s[i] - '0');
	}
	if (v > 0x7fffffffULL)
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
			snprintf(err, errlen,
				 "bad id '%.*s': want a positive decimal",
				 (int)(pos - start > 16 ? 16 : pos - start),
				 val->s + start);
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

static int vp_parse_attach(const char *buf, size_t len, size_t pos,
			   struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct vp_token tok, val;
	__u32 i;
	int ret;

	while (vp_next_token(buf, len, &pos, &tok)) {
		size_t m;

		ret = vp_parse_target(&tok, cmd, err, errlen);
		if (ret <= 0) {
			if (ret)
				return ret;
			continue;
		}
		if (vp_tok_key(&tok, "events", &val)) {
			if (cmd->events_given) {
				snprintf(err, errlen, "events= given twice");
				return -EINVAL;
			}
			cmd->events_given = true;
			ret = vp_parse_event_list(val.s, val.len, cmd->events,
						  &cmd->nr_events, err,
						  errlen);
			if (ret)
				return ret;
			continue;
		}
		for (m = 0; m < ARRAY_SIZE(vp_mod_words); m++)
			if (vp_tok_is(&tok, vp_mod_words[m].word))
				break;
		if (m == ARRAY_SIZE(vp_mod_words)) {
			snprintf(err, errlen, "unknown attach argument '%.*s'",
				 (int)(tok.len > 32 ? 32 : tok.len), tok.s);
			return -EINVAL;
		}
		if (cmd->mods & vp_mod_words[m].mod) {
			snprintf(err, errlen, "%s given twice",
				 vp_mod_words[m].word);
			return -EINVAL;
		}
		cmd->mods |= vp_mod_words[m].mod;
	}
	if (!cmd->kind) {
		snprintf(err, errlen, "attach needs tid=, pid= or qemu=");
		return -EINVAL;
	}
	if ((cmd->mods & VCPUPERF_MOD_USER) &&
	    (cmd->mods & VCPUPERF_MOD_KERNEL)) {
		snprintf(err, errlen, "user_only and kernel_only exclude each other");
		return -EINVAL;
	}
	if ((cmd->mods & VCPUPERF_MOD_GUEST) &&
	    (cmd->mods & VCPUPERF_MOD_HOST)) {
		snprintf(err, errlen, "guest_only and host_only exclude each other");
		return -EINVAL;
	}
	if (!cmd->events_given) {
		for (i = 0; i < VP_NR_DEFAULT_EVENTS; i++) {
			ret = vp_parse_event(vp_default_events[i],
					     strlen(vp_default_events[i]),
					     &cmd->events[i], err, errlen);
			if (ret)
				return ret;
		}
		cmd->nr_events = VP_NR_DEFAULT_EVENTS;
	}
	/*
	 * Keyword modifiers apply to every event, on top of its suffix.  A
	 * suffix the kernel would ignore for its event is refused; a keyword
	 * it would ignore is left out for that event and said so in the
	 * started record (VCPUPERF_MOD_NOT_APPLIED_SHIFT).
	 */
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

		if (((mods & VCPUPERF_MOD_USER) && (mods & VCPUPERF_MOD_KERNEL)) ||
		    ((mods & VCPUPERF_MOD_GUEST) && (mods & VCPUPERF_MOD_HOST))) {
			snprintf(err, errlen,
				 "modifiers of event '%s' conflict with the command's",
				 cmd->events[i].desc.name);
			return -EINVAL;
		}
		d->mods = mods | ((cmd->mods & ign) <<
				  VCPUPERF_MOD_NOT_APPLIED_SHIFT);
	}
	return 0;
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
	if (!digits || digits > 12)
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
	size_t pos = 0, i;

	memset(cmd, 0, sizeof(*cmd));
	err[0] = '\0';
	if (len > VCPUPERF_CMD_MAX) {
		snprintf(err, errlen, "command longer than %d bytes",
			 VCPUPERF_CMD_MAX);
		return -E2BIG;
	}
	if (len && buf[len - 1] == '\n')
		len--;
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
		if (!vp_next_token(buf, len, &pos, &tok)) {
			snprintf(err, errlen, "interval needs a duration");
			return -EINVAL;
		}
		if (vp_parse_duration(tok.s, tok.len, &cmd->interval_ns)) {
			snprintf(err, errlen,
				 "bad interval '%.*s': want 1ms..60s as N[us|ms|s]",
				 (int)(tok.len > 24 ? 24 : tok.len), tok.s);
			return -EINVAL;
		}
		if (vp_next_token(buf, len, &pos, &tok)) {
			snprintf(err, errlen, "interval takes one argument");
			return -EINVAL;
		}
		return 0;
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
		 (int)(tok.len > 16 ? 16 : tok.len), tok.s);
	return -EINVAL;
}
