// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz the control-command parser (lib/vcpuperf_cmd.c, with the event
 * resolver it calls) on arbitrary bytes, exactly as a write() to the
 * control file hands them to the module: not NUL terminated, any length.
 *
 * Besides memory safety and UB (ASan/UBSan), check the parser's
 * documented contract:
 *  - the return value is 0, -EINVAL, -ENOENT or -E2BIG;
 *  - on failure the error text is NUL terminated and not empty, also
 *    with a tiny error buffer (then truncated, but the same error);
 *  - on success the command is within the uapi limits: ids nonzero,
 *    31-bit and distinct, at most VCPUPERF_MAX_TARGETS of them, one for
 *    pid=/qemu=; 1..VCPUPERF_MAX_EVENTS events with NUL-terminated,
 *    distinct names and consistent modifiers (keywords applied except
 *    where the kernel would ignore them, then recorded as left out; no
 *    ignored modifier applied); an interval within
 *    [VCPUPERF_INTERVAL_MIN_NS, VCPUPERF_INTERVAL_MAX_NS] that survives
 *    vp_format_duration() and re-parsing;
 *  - one trailing newline changes nothing.
 */
#include "vcpuperf_lib.h"
#include "fuzz_common.h"

static struct vp_cmd cmd, cmd2;

static int fz_u32_cmp(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static void check_event(const struct vp_event_spec *ev, __u32 cmd_mods)
{
	const struct vcpuperf_event_desc *d = &ev->desc;
	__u32 ign = vp_ignored_mods(d->type, d->config);
	__u32 left = d->mods >> VCPUPERF_MOD_NOT_APPLIED_SHIFT;
	__u32 applied = d->mods & VCPUPERF_MOD_ALL;

	FZ_CHECK(fz_terminated(d->name, sizeof(d->name)), "name unterminated");
	FZ_CHECK(d->name[0], "empty event name accepted");
	FZ_CHECK(!(d->mods & ~(VCPUPERF_MOD_ALL |
			       VCPUPERF_MOD_ALL << VCPUPERF_MOD_NOT_APPLIED_SHIFT)),
		 "mods %#x", d->mods);
	FZ_CHECK(!(applied & ign), "'%s': ignored modifier applied (%#x)",
		 d->name, d->mods);
	FZ_CHECK(left == (cmd_mods & ign),
		 "'%s': keywords left out %#x, want %#x", d->name, left,
		 cmd_mods & ign);
	FZ_CHECK((applied & cmd_mods) == (cmd_mods & ~ign),
		 "keyword mods %#x not applied to '%s' (%#x)", cmd_mods,
		 d->name, d->mods);
	FZ_CHECK(!((d->mods & VCPUPERF_MOD_USER) &&
		   (d->mods & VCPUPERF_MOD_KERNEL)), "u+k in '%s'", d->name);
	FZ_CHECK(!((d->mods & VCPUPERF_MOD_GUEST) &&
		   (d->mods & VCPUPERF_MOD_HOST)), "G+H in '%s'", d->name);
	if (ev->tracepoint) {
		FZ_CHECK(d->type == PERF_TYPE_TRACEPOINT, "tp type %u", d->type);
		FZ_CHECK(fz_terminated(ev->tp_system, VP_TP_LEN) &&
			 fz_terminated(ev->tp_event, VP_TP_LEN),
			 "tracepoint names unterminated");
		FZ_CHECK(ev->tp_system[0] && ev->tp_event[0],
			 "empty tracepoint part in '%s'", d->name);
	}
}

static void check_ok(const struct vp_cmd *c)
{
	static __u32 sorted[VCPUPERF_MAX_TARGETS];
	__u32 i, j;

	FZ_CHECK(c->nr_ids <= VCPUPERF_MAX_TARGETS, "nr_ids %u", c->nr_ids);
	FZ_CHECK(c->nr_events <= VCPUPERF_MAX_EVENTS, "nr_events %u",
		 c->nr_events);
	for (i = 0; i < c->nr_ids; i++)
		FZ_CHECK(c->ids[i] && c->ids[i] <= 0x7fffffffU, "id %u",
			 c->ids[i]);
	memcpy(sorted, c->ids, c->nr_ids * sizeof(sorted[0]));
	qsort(sorted, c->nr_ids, sizeof(sorted[0]), fz_u32_cmp);
	for (i = 1; i < c->nr_ids; i++)
		FZ_CHECK(sorted[i] != sorted[i - 1], "id %u twice", sorted[i]);

	switch (c->op) {
	case VP_OP_ATTACH:
	case VP_OP_DETACH:
		FZ_CHECK(c->kind >= VCPUPERF_TARGET_TID &&
			 c->kind <= VCPUPERF_TARGET_QEMU, "kind %u", c->kind);
		FZ_CHECK(c->nr_ids >= 1, "no ids");
		if (c->kind != VCPUPERF_TARGET_TID)
			FZ_CHECK(c->nr_ids == 1, "%u ids for pid/qemu",
				 c->nr_ids);
		break;
	case VP_OP_DETACH_ALL:
	case VP_OP_INTERVAL:
	case VP_OP_STOP:
	case VP_OP_RING:
	case VP_OP_READ:
		FZ_CHECK(!c->kind && !c->nr_ids, "target on op %d", c->op);
		break;
	default:
		FZ_CHECK(0, "op %d", c->op);
	}

	if (c->op == VP_OP_ATTACH) {
		FZ_CHECK(c->nr_events >= 1, "attach without events");
		if (!c->events_given)
			FZ_CHECK(c->nr_events == VP_NR_DEFAULT_EVENTS,
				 "default set has %u events", c->nr_events);
		FZ_CHECK(!(c->mods & ~VCPUPERF_MOD_ALL), "mods %#x", c->mods);
		for (i = 0; i < c->nr_events; i++) {
			check_event(&c->events[i], c->mods);
			for (j = 0; j < i; j++)
				FZ_CHECK(strcmp(c->events[i].desc.name,
						c->events[j].desc.name),
					 "event '%s' twice",
					 c->events[i].desc.name);
		}
	} else {
		FZ_CHECK(!c->nr_events && !c->mods && !c->events_given,
			 "events on op %d", c->op);
	}
	if (c->op == VP_OP_ATTACH)
		FZ_CHECK(!(c->flags & ~VCPUPERF_ATTACH_ALL), "flags %#x",
			 c->flags);
	else
		FZ_CHECK(!c->flags, "flags %#x on op %d", c->flags, c->op);

	if (c->op == VP_OP_RING)
		FZ_CHECK(c->ring_kb >= VCPUPERF_RING_MIN_KB &&
			 c->ring_kb <= VCPUPERF_RING_MAX_KB, "ring %u KiB",
			 c->ring_kb);
	else
		FZ_CHECK(!c->ring_kb, "ring size on op %d", c->op);

	/* VCPUPERF_READ_AUTO is 0: only the range can be checked here. */
	FZ_CHECK(c->read_mode <= VCPUPERF_READ_LAZY, "read mode %u",
		 c->read_mode);
	if (c->op != VP_OP_READ)
		FZ_CHECK(c->read_mode == VCPUPERF_READ_AUTO,
			 "read mode on op %d", c->op);

	if (c->op == VP_OP_INTERVAL) {
		char buf[32];
		__u64 ns = 0;

		FZ_CHECK(c->interval_ns >= VCPUPERF_INTERVAL_MIN_NS &&
			 c->interval_ns <= VCPUPERF_INTERVAL_MAX_NS,
			 "interval %llu", (unsigned long long)c->interval_ns);
		vp_format_duration(buf, sizeof(buf), c->interval_ns);
		FZ_CHECK(!vp_parse_duration(buf, strlen(buf), &ns) &&
			 ns == c->interval_ns, "'%s' does not parse back to %llu",
			 buf, (unsigned long long)c->interval_ns);
	} else {
		FZ_CHECK(!c->interval_ns, "interval on op %d", c->op);
	}
}

static void check_ret(int ret, const char *err, size_t errlen)
{
	FZ_CHECK(ret == 0 || ret == -EINVAL || ret == -ENOENT || ret == -E2BIG,
		 "return %d", ret);
	FZ_CHECK(fz_terminated(err, errlen), "err unterminated (ret %d)", ret);
	if (ret && errlen > 1)
		FZ_CHECK(err[0], "empty err for %d", ret);
}

static bool same_cmd(const struct vp_cmd *a, const struct vp_cmd *b)
{
	__u32 i;

	if (a->op != b->op || a->kind != b->kind || a->nr_ids != b->nr_ids ||
	    a->nr_events != b->nr_events || a->mods != b->mods ||
	    a->events_given != b->events_given ||
	    a->interval_ns != b->interval_ns || a->flags != b->flags ||
	    a->ring_kb != b->ring_kb || a->read_mode != b->read_mode ||
	    memcmp(a->ids, b->ids, a->nr_ids * sizeof(a->ids[0])))
		return false;
	for (i = 0; i < a->nr_events; i++) {
		const struct vp_event_spec *x = &a->events[i], *y = &b->events[i];

		if (strcmp(x->desc.name, y->desc.name) ||
		    x->desc.type != y->desc.type ||
		    x->desc.config != y->desc.config ||
		    x->desc.mods != y->desc.mods ||
		    x->tracepoint != y->tracepoint ||
		    strcmp(x->tp_system, y->tp_system) ||
		    strcmp(x->tp_event, y->tp_event))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	char err[VP_ERR_LEN];
	char *small;
	__u64 ns;
	int ret, ret2;

	/* Garbage in the error buffer: the parser must terminate it. */
	memset(err, 'x', sizeof(err));
	ret = vp_parse_cmd(buf, size, &cmd, err, sizeof(err));
	check_ret(ret, err, sizeof(err));
	if (!ret)
		check_ok(&cmd);

	/* An exactly sized heap buffer, so ASan sees any overrun. */
	small = malloc(8);
	memset(small, 'x', 8);
	ret2 = vp_parse_cmd(buf, size, &cmd2, small, 8);
	check_ret(ret2, small, 8);
	FZ_CHECK(ret2 == ret, "errlen 8 gives %d, %d otherwise", ret2, ret);
	memset(small, 'x', 8);
	ret2 = vp_parse_cmd(buf, size, &cmd2, small, 1);
	FZ_CHECK(ret2 == ret && !small[0], "errlen 1: %d vs %d", ret2, ret);
	free(small);

	/* One trailing newline is allowed and means nothing. */
	if (size < VCPUPERF_CMD_MAX && (!size || buf[size - 1] != '\n')) {
		char *nl = malloc(size + 1);

		memcpy(nl, buf, size);
		nl[size] = '\n';
		ret2 = vp_parse_cmd(nl, size + 1, &cmd2, err, sizeof(err));
		free(nl);
		FZ_CHECK(ret2 == ret, "trailing newline: %d vs %d", ret2, ret);
		if (!ret)
			FZ_CHECK(same_cmd(&cmd, &cmd2),
				 "trailing newline changed the command");
	}

	/* The duration grammar on its own. */
	if (!vp_parse_duration(buf, size, &ns)) {
		char out[32];
		__u64 back = 0;

		FZ_CHECK(ns >= VCPUPERF_INTERVAL_MIN_NS &&
			 ns <= VCPUPERF_INTERVAL_MAX_NS, "duration %llu",
			 (unsigned long long)ns);
		vp_format_duration(out, sizeof(out), ns);
		FZ_CHECK(!vp_parse_duration(out, strlen(out), &back) &&
			 back == ns, "duration '%s' round trip", out);
	}
	return 0;
}
