// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite vcpuperf_parse: the control-command parser (valid, invalid,
 * limits, over-long; and the same bad commands rejected by the module),
 * event names and tracepoints, their resolution, perf_event_attr and the
 * modifiers, causes and errno names, durations.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/xarray.h>

#include "../../module/control.h"
#include "../../module/counter.h"
#include "../../module/vcpuperf.h"
#include "vpk.h"

/* ------------------------------------------------------------------ */
/* Control-command parser                                              */

struct vpk_valid_cmd {
	const char *s;
	enum vp_op op;
	enum vcpuperf_target_kind kind;
	u32 nr_ids;
	u32 id0, id_last;
	u32 nr_events;
	bool events_given;
	u32 mods;		/* command-level keyword modifiers */
	u32 ev0_mods;		/* effective modifiers of the first event */
	const char *ev0;	/* name of the first event, NULL: don't care */
	u64 interval_ns;
};

static const struct vpk_valid_cmd vpk_valid_cmds[] = {
	{ "attach tid=1", VP_OP_ATTACH, VCPUPERF_TARGET_TID, 1, 1, 1,
	  VP_NR_DEFAULT_EVENTS, false, 0, 0, "cycles" },
	{ "attach tid=1\n", VP_OP_ATTACH, VCPUPERF_TARGET_TID, 1, 1, 1,
	  VP_NR_DEFAULT_EVENTS, false, 0, 0, "cycles" },
	{ "  attach\ttid=7,8,9   ", VP_OP_ATTACH, VCPUPERF_TARGET_TID, 3, 7, 9,
	  VP_NR_DEFAULT_EVENTS, false, 0, 0, "cycles" },
	{ "attach tid=2147483647", VP_OP_ATTACH, VCPUPERF_TARGET_TID, 1,
	  2147483647, 2147483647, VP_NR_DEFAULT_EVENTS, false, 0, 0, NULL },
	{ "attach pid=42 events=cycles,instructions", VP_OP_ATTACH,
	  VCPUPERF_TARGET_PID, 1, 42, 42, 2, true, 0, 0, "cycles" },
	{ "attach qemu=1234 guest_only", VP_OP_ATTACH, VCPUPERF_TARGET_QEMU, 1,
	  1234, 1234, VP_NR_DEFAULT_EVENTS, false, VCPUPERF_MOD_GUEST,
	  VCPUPERF_MOD_GUEST, "cycles" },
	{ "attach events=page-faults:u pinned tid=3", VP_OP_ATTACH,
	  VCPUPERF_TARGET_TID, 1, 3, 3, 1, true, VCPUPERF_MOD_PINNED,
	  VCPUPERF_MOD_USER | VCPUPERF_MOD_PINNED, "page-faults:u" },
	{ "attach tid=5 host_only kernel_only events=r1a8:k", VP_OP_ATTACH,
	  VCPUPERF_TARGET_TID, 1, 5, 5, 1, true,
	  VCPUPERF_MOD_HOST | VCPUPERF_MOD_KERNEL,
	  VCPUPERF_MOD_HOST | VCPUPERF_MOD_KERNEL, "r1a8:k" },
	{ "attach tid=6 user_only guest_only pinned events=sched:sched_switch,4:0x10",
	  VP_OP_ATTACH, VCPUPERF_TARGET_TID, 1, 6, 6, 2, true,
	  VCPUPERF_MOD_USER | VCPUPERF_MOD_GUEST | VCPUPERF_MOD_PINNED,
	  /* a tracepoint ignores G: the keyword is left out, and said so */
	  VCPUPERF_MOD_USER | VCPUPERF_MOD_PINNED |
	  (VCPUPERF_MOD_GUEST << VCPUPERF_MOD_NOT_APPLIED_SHIFT),
	  "sched:sched_switch" },
	{ "attach tid=7 kernel_only events=task-clock,page-faults",
	  VP_OP_ATTACH, VCPUPERF_TARGET_TID, 1, 7, 7, 2, true,
	  VCPUPERF_MOD_KERNEL,
	  VCPUPERF_MOD_KERNEL << VCPUPERF_MOD_NOT_APPLIED_SHIFT,
	  "task-clock" },
	{ "detach tid=4,5", VP_OP_DETACH, VCPUPERF_TARGET_TID, 2, 4, 5 },
	{ "detach pid=3", VP_OP_DETACH, VCPUPERF_TARGET_PID, 1, 3, 3 },
	{ "detach qemu=3\n", VP_OP_DETACH, VCPUPERF_TARGET_QEMU, 1, 3, 3 },
	{ "detach all", VP_OP_DETACH_ALL },
	{ "interval 10", VP_OP_INTERVAL, .interval_ns = 10 * NSEC_PER_MSEC },
	{ "interval 1ms", VP_OP_INTERVAL, .interval_ns = NSEC_PER_MSEC },
	{ "interval 1000us", VP_OP_INTERVAL, .interval_ns = NSEC_PER_MSEC },
	{ "interval 2500us", VP_OP_INTERVAL, .interval_ns = 2500 * NSEC_PER_USEC },
	{ "interval 60s\n", VP_OP_INTERVAL, .interval_ns = 60 * NSEC_PER_SEC },
	{ "interval 60000", VP_OP_INTERVAL, .interval_ns = 60 * NSEC_PER_SEC },
	{ "stop", VP_OP_STOP },
	{ "\tstop\n", VP_OP_STOP },
};

static void vpk_parse_cmd_valid(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_cmd *cmd;
	size_t i;

	cmd = kunit_kzalloc(test, sizeof(*cmd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmd);
	for (i = 0; i < ARRAY_SIZE(vpk_valid_cmds); i++) {
		const struct vpk_valid_cmd *v = &vpk_valid_cmds[i];
		int ret;

		memset(cmd, 0xa5, sizeof(*cmd));
		ret = vp_parse_cmd(v->s, strlen(v->s), cmd, ctx->err, ERRLEN);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "'%s': %s", v->s, ctx->err);
		if (ret)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, cmd->op, v->op, "'%s'", v->s);
		KUNIT_EXPECT_EQ_MSG(test, cmd->kind, v->kind, "'%s'", v->s);
		KUNIT_EXPECT_EQ_MSG(test, cmd->nr_ids, v->nr_ids, "'%s'", v->s);
		if (v->nr_ids) {
			KUNIT_EXPECT_EQ_MSG(test, cmd->ids[0], v->id0, "'%s'",
					    v->s);
			KUNIT_EXPECT_EQ_MSG(test, cmd->ids[v->nr_ids - 1],
					    v->id_last, "'%s'", v->s);
		}
		KUNIT_EXPECT_EQ_MSG(test, cmd->nr_events, v->nr_events, "'%s'",
				    v->s);
		KUNIT_EXPECT_EQ_MSG(test, cmd->events_given, v->events_given,
				    "'%s'", v->s);
		KUNIT_EXPECT_EQ_MSG(test, cmd->mods, v->mods, "'%s'", v->s);
		KUNIT_EXPECT_EQ_MSG(test, cmd->interval_ns, v->interval_ns,
				    "'%s'", v->s);
		if (v->nr_events) {
			u32 e;

			KUNIT_EXPECT_EQ_MSG(test, cmd->events[0].desc.mods,
					    v->ev0_mods, "'%s'", v->s);
			if (v->ev0)
				KUNIT_EXPECT_STREQ_MSG(test,
						       cmd->events[0].desc.name,
						       v->ev0, "'%s'", v->s);
			/*
			 * Keyword modifiers reach every event, but for one
			 * whose kernel code would ignore them: there they
			 * are recorded as left out.
			 */
			for (e = 0; e < cmd->nr_events; e++) {
				const struct vcpuperf_event_desc *d =
					&cmd->events[e].desc;
				u32 ign = vp_ignored_mods(d->type, d->config);

				KUNIT_EXPECT_EQ_MSG(test, d->mods & v->mods &
						    ~ign, v->mods & ~ign,
						    "'%s' event %u", v->s, e);
				KUNIT_EXPECT_EQ_MSG(test, d->mods >>
						    VCPUPERF_MOD_NOT_APPLIED_SHIFT,
						    v->mods & ign,
						    "'%s' event %u", v->s, e);
			}
		}
	}
}

/* The default set is the documented one, in order, all hardware or sw. */
static void vpk_parse_cmd_default_events(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	static const char *const want[] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "page-faults", "context-switches",
	};
	struct vp_cmd *cmd;
	u32 i;

	cmd = kunit_kzalloc(test, sizeof(*cmd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmd);
	KUNIT_ASSERT_EQ(test, vp_parse_cmd("attach tid=1", 12, cmd, ctx->err,
					   ERRLEN), 0);
	KUNIT_ASSERT_EQ(test, cmd->nr_events, (u32)ARRAY_SIZE(want));
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		KUNIT_EXPECT_STREQ(test, cmd->events[i].desc.name, want[i]);
		KUNIT_EXPECT_STREQ(test, vp_default_events[i], want[i]);
		KUNIT_EXPECT_FALSE(test, cmd->events[i].tracepoint);
	}
	KUNIT_EXPECT_EQ(test, cmd->events[0].desc.type, (u32)PERF_TYPE_HARDWARE);
	KUNIT_EXPECT_EQ(test, cmd->events[6].desc.type, (u32)PERF_TYPE_SOFTWARE);
	KUNIT_EXPECT_EQ(test, cmd->events[6].desc.config,
			(u64)PERF_COUNT_SW_PAGE_FAULTS);
	KUNIT_EXPECT_EQ(test, cmd->events[7].desc.config,
			(u64)PERF_COUNT_SW_CONTEXT_SWITCHES);
}

/* Limits: exactly VCPUPERF_MAX_TARGETS ids and VCPUPERF_MAX_EVENTS events. */
static char *vpk_ids_cmd(struct kunit *test, const char *verb, u32 n)
{
	size_t cap = 32 + (size_t)n * 8;
	char *s = kunit_kzalloc(test, cap, GFP_KERNEL);
	size_t len;
	u32 i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	len = scnprintf(s, cap, "%s tid=", verb);
	for (i = 1; i <= n; i++)
		len += scnprintf(s + len, cap - len, "%s%u", i > 1 ? "," : "",
				 i);
	return s;
}

/* VCPUPERF_MAX_EVENTS distinct events, comma separated */
static const char *vpk_sixteen(struct kunit *test)
{
	static const char *const names[VCPUPERF_MAX_EVENTS] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "page-faults", "context-switches",
		"task-clock", "cpu-clock", "cpu-migrations", "minor-faults",
		"major-faults", "alignment-faults", "emulation-faults", "dummy",
	};
	char *s = kunit_kzalloc(test, 512, GFP_KERNEL);
	size_t len = 0, i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		len += scnprintf(s + len, 512 - len, "%s%s", i ? "," : "",
				 names[i]);
	return s;
}

static void vpk_parse_cmd_limits(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_cmd *cmd;
	char *s;

	cmd = kunit_kzalloc(test, sizeof(*cmd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmd);

	s = vpk_ids_cmd(test, "attach", VCPUPERF_MAX_TARGETS);
	KUNIT_EXPECT_EQ(test, vp_parse_cmd(s, strlen(s), cmd, ctx->err, ERRLEN),
			0);
	KUNIT_EXPECT_EQ(test, cmd->nr_ids, (u32)VCPUPERF_MAX_TARGETS);
	KUNIT_EXPECT_EQ(test, cmd->ids[VCPUPERF_MAX_TARGETS - 1],
			(u32)VCPUPERF_MAX_TARGETS);

	s = kunit_kzalloc(test, 512, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	scnprintf(s, 512, "attach tid=1 events=%s", vpk_sixteen(test));
	KUNIT_EXPECT_EQ_MSG(test, vp_parse_cmd(s, strlen(s), cmd, ctx->err,
					       ERRLEN), 0, "%s", ctx->err);
	KUNIT_EXPECT_EQ(test, cmd->nr_events, (u32)VCPUPERF_MAX_EVENTS);
	KUNIT_EXPECT_STREQ(test, cmd->events[15].desc.name, "dummy");
}

struct vpk_bad_cmd {
	const char *s;
	int err;
};

static const struct vpk_bad_cmd vpk_bad_cmds[] = {
	{ "", -EINVAL },
	{ "\n", -EINVAL },
	{ "   \t ", -EINVAL },
	{ "bogus", -EINVAL },
	{ "STOP", -EINVAL },
	{ "attach", -EINVAL },
	{ "attach events=cycles", -EINVAL },
	{ "attach tid=", -EINVAL },
	{ "attach tid=0", -EINVAL },
	{ "attach tid=-1", -EINVAL },
	{ "attach tid=+1", -EINVAL },
	{ "attach tid=01", -EINVAL },
	{ "attach tid=0x10", -EINVAL },
	{ "attach tid=2147483648", -EINVAL },
	{ "attach tid=99999999999", -EINVAL },
	{ "attach tid=1,,2", -EINVAL },
	{ "attach tid=1,", -EINVAL },
	{ "attach tid=1,1", -EINVAL },
	{ "attach pid=1,2", -EINVAL },
	{ "attach qemu=1,2", -EINVAL },
	{ "attach tid=1 pid=2", -EINVAL },
	{ "attach tid=1 tid=2", -EINVAL },
	{ "attach tid=1 events=", -EINVAL },
	{ "attach tid=1 events=cycles,", -EINVAL },
	{ "attach tid=1 events=nosuchevent", -ENOENT },
	{ "attach tid=1 events=cycles,L1-dcache-misses", -ENOENT },
	{ "attach tid=1 events=cycles,cycles", -EINVAL },
	{ "attach tid=1 events=cycles events=instructions", -EINVAL },
	{ "attach tid=1 events=cycles:uk", -EINVAL },
	{ "attach tid=1 events=cycles:GH", -EINVAL },
	{ "attach tid=1 events=cycles:x", -EINVAL },
	{ "attach tid=1 events=cycles:", -EINVAL },
	{ "attach tid=1 events=4:", -EINVAL },
	{ "attach tid=1 events=4:1:q", -EINVAL },
	{ "attach tid=1 events=sched:", -EINVAL },
	{ "attach tid=1 events=sched:sw!tch", -EINVAL },
	{ "attach tid=1 events=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  -EINVAL },
	{ "attach tid=1 user_only kernel_only", -EINVAL },
	{ "attach tid=1 guest_only host_only", -EINVAL },
	{ "attach tid=1 pinned pinned", -EINVAL },
	{ "attach tid=1 events=cycles:u kernel_only", -EINVAL },
	{ "attach tid=1 events=cycles:G host_only", -EINVAL },
	/* modifiers the kernel would ignore (tests/pmu/modprobe_honour) */
	{ "attach tid=1 events=task-clock:u", -EINVAL },
	{ "attach tid=1 events=cpu-clock:k", -EINVAL },
	{ "attach tid=1 events=1:1:u", -EINVAL },
	{ "attach tid=1 events=page-faults:G", -EINVAL },
	{ "attach tid=1 events=cs:H", -EINVAL },
	{ "attach tid=1 events=sched:sched_switch:k", -EINVAL },
	{ "attach tid=1 events=sched:sched_switch:G", -EINVAL },
	{ "attach tid=1 verbose", -EINVAL },
	{ "attach tid=1\nstop", -EINVAL },
	{ "attach tid=1\n\n", -EINVAL },
	{ "attach tid=1\r", -EINVAL },
	{ "attach tid=1 \x01", -EINVAL },
	{ "attach tid=1 events=caf\xc3\xa9", -EINVAL },
	{ "detach", -EINVAL },
	{ "detach foo", -EINVAL },
	{ "detach all tid=1", -EINVAL },
	{ "detach tid=1 tid=2", -EINVAL },
	{ "detach tid=0", -EINVAL },
	{ "detach pid=1,2", -EINVAL },
	{ "interval", -EINVAL },
	{ "interval 0", -EINVAL },
	{ "interval 999us", -EINVAL },
	{ "interval 61s", -EINVAL },
	{ "interval 60001ms", -EINVAL },
	{ "interval 10ns", -EINVAL },
	{ "interval 1m", -EINVAL },
	{ "interval -5", -EINVAL },
	{ "interval ms", -EINVAL },
	{ "interval 1000000000000", -EINVAL },
	{ "interval 1ms 2ms", -EINVAL },
	{ "stop now", -EINVAL },
};

/* The same bad commands rejected by the parser and by the module. */
static void vpk_parse_cmd_invalid(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_cmd *cmd, *fresh;
	size_t i;

	KUNIT_EXPECT_GE(test, ARRAY_SIZE(vpk_bad_cmds), (size_t)30);
	cmd = kunit_kzalloc(test, sizeof(*cmd), GFP_KERNEL);
	fresh = kunit_kzalloc(test, sizeof(*fresh), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmd);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fresh);
	for (i = 0; i < ARRAY_SIZE(vpk_bad_cmds); i++) {
		const struct vpk_bad_cmd *b = &vpk_bad_cmds[i];
		int ret;

		ctx->err[0] = '\0';
		ret = vp_parse_cmd(b->s, strlen(b->s), cmd, ctx->err, ERRLEN);
		KUNIT_EXPECT_EQ_MSG(test, ret, b->err, "'%s' (%s)", b->s,
				    ctx->err);
		KUNIT_EXPECT_NE_MSG(test, ctx->err[0], '\0',
				    "'%s' rejected without a reason", b->s);
	}
	/* A rejected parse leaves nothing behind in a reused struct. */
	KUNIT_ASSERT_EQ(test, vp_parse_cmd("attach tid=1 events=cycles:u", 28,
					   fresh, ctx->err, ERRLEN), 0);
	memset(cmd, 0x5a, sizeof(*cmd));
	KUNIT_EXPECT_NE(test, vp_parse_cmd("attach tid=9 pinned events=bogus!",
					   33, cmd, ctx->err, ERRLEN), 0);
	KUNIT_ASSERT_EQ(test, vp_parse_cmd("attach tid=1 events=cycles:u", 28,
					   cmd, ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_EQ(test, memcmp(cmd, fresh, sizeof(*cmd)), 0);
}

/* Over-long and over-limit commands: -E2BIG. */
static void vpk_parse_cmd_too_big(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_cmd *cmd;
	char *s;

	cmd = kunit_kzalloc(test, sizeof(*cmd), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cmd);

	s = vpk_ids_cmd(test, "attach", VCPUPERF_MAX_TARGETS + 1);
	KUNIT_EXPECT_EQ(test, vp_parse_cmd(s, strlen(s), cmd, ctx->err, ERRLEN),
			-E2BIG);
	s = vpk_ids_cmd(test, "detach", VCPUPERF_MAX_TARGETS + 1);
	KUNIT_EXPECT_EQ(test, vp_parse_cmd(s, strlen(s), cmd, ctx->err, ERRLEN),
			-E2BIG);

	s = kunit_kzalloc(test, 512, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	scnprintf(s, 512, "attach tid=1 events=%s,cs", vpk_sixteen(test));
	KUNIT_EXPECT_EQ(test, vp_parse_cmd(s, strlen(s), cmd, ctx->err, ERRLEN),
			-E2BIG);

	s = kunit_kzalloc(test, VCPUPERF_CMD_MAX + 2, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, s);
	memset(s, ' ', VCPUPERF_CMD_MAX + 1);
	memcpy(s, "stop", 4);
	KUNIT_EXPECT_EQ(test, vp_parse_cmd(s, VCPUPERF_CMD_MAX + 1, cmd,
					   ctx->err, ERRLEN), -E2BIG);
	/* Exactly the limit is fine. */
	KUNIT_EXPECT_EQ(test, vp_parse_cmd(s, VCPUPERF_CMD_MAX, cmd, ctx->err,
					   ERRLEN), 0);
}

/*
 * Through the module: each rejected command returns its errno, records
 * its reason and changes nothing in the module state.
 */
static void vpk_assert_untouched(struct kunit *test, struct vp_coll *vp,
				 const char *what)
{
	KUNIT_EXPECT_EQ_MSG(test, vp->nr_targets, 0U, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, vp->nr_groups, 0U, "%s", what);
	KUNIT_EXPECT_TRUE_MSG(test, list_empty(&vp->targets), "%s", what);
	KUNIT_EXPECT_TRUE_MSG(test, list_empty(&vp->groups), "%s", what);
	KUNIT_EXPECT_TRUE_MSG(test, xa_empty(&vp->by_tid), "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, vp->interval_ns,
			    (u64)VP_INTERVAL_DEFAULT_NS, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, vp->grid_base, 0ULL, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, vp->ring.produced, 0ULL, "%s", what);
	KUNIT_EXPECT_EQ_MSG(test, vp->ring.next_seq, 1ULL, "%s", what);
	KUNIT_EXPECT_FALSE_MSG(test, vp->totals.active, "%s", what);
	KUNIT_EXPECT_FALSE_MSG(test, vp->ring.ended, "%s", what);
}

static void vpk_control_apply_rejects(struct kunit *test)
{
	static const struct vpk_bad_cmd module_bad[] = {
		/* Errors only the module can detect. */
		{ "attach tid=2147483647", -ESRCH },
		{ "attach tid=1,2147483647 events=task-clock", -ESRCH },
		{ "attach pid=2147483647", -ESRCH },
		{ "attach qemu=2147483647", -ESRCH },
		{ "attach tid=1 events=cycles,nosuch:tp", -ENOENT },
		{ "attach tid=1 events=sched:nosuch_event", -ENOENT },
		/* not a TYPE:CONFIG (type > 32 bits): a tracepoint name */
		{ "attach tid=1 events=4294967296:1", -ENOENT },
		{ "detach tid=2147483647", -ESRCH },
		{ "detach tid=1", -ESRCH },
		{ "detach pid=1", -ESRCH },
	};
	struct vp_coll *vp = vpk_coll_new(test, false);
	size_t i;
	char *big;
	int ret;

	for (i = 0; i < ARRAY_SIZE(vpk_bad_cmds); i++) {
		const struct vpk_bad_cmd *b = &vpk_bad_cmds[i];

		ret = vp_control_apply(vp, NULL, b->s, strlen(b->s));
		KUNIT_EXPECT_EQ_MSG(test, ret, b->err, "'%s'", b->s);
		KUNIT_EXPECT_EQ_MSG(test, vp->last_errno, b->err, "'%s'", b->s);
		KUNIT_EXPECT_NE_MSG(test, vp->last_error[0], '\0', "'%s'",
				    b->s);
		vpk_assert_untouched(test, vp, b->s);
	}
	for (i = 0; i < ARRAY_SIZE(module_bad); i++) {
		const struct vpk_bad_cmd *b = &module_bad[i];

		vp->last_error[0] = '\0';
		ret = vp_control_apply(vp, NULL, b->s, strlen(b->s));
		KUNIT_EXPECT_EQ_MSG(test, ret, b->err, "'%s': %s", b->s,
				    vp->last_error);
		KUNIT_EXPECT_EQ_MSG(test, vp->last_errno, b->err, "'%s'", b->s);
		KUNIT_EXPECT_NE_MSG(test, vp->last_error[0], '\0', "'%s'",
				    b->s);
		vpk_assert_untouched(test, vp, b->s);
	}
	big = kunit_kzalloc(test, VCPUPERF_CMD_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, big);
	memset(big, ' ', VCPUPERF_CMD_MAX + 1);
	memcpy(big, "stop", 4);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, big, VCPUPERF_CMD_MAX + 1),
			-E2BIG);
	vpk_assert_untouched(test, vp, "oversized stop");
}

/* ------------------------------------------------------------------ */
/* Event names                                                         */

struct vpk_event {
	const char *name;
	u32 type;
	u64 config;
	u32 mods;
};

#define HW(n, c)	{ n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c }
#define SW(n, c)	{ n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c }
#define CACHE(c, o, r)	((u64)PERF_COUNT_HW_CACHE_##c | \
			 ((u64)PERF_COUNT_HW_CACHE_OP_##o << 8) | \
			 ((u64)PERF_COUNT_HW_CACHE_RESULT_##r << 16))
/* (READ and WRITE are kernel macros: spelled LOAD and STORE here) */
#define PERF_COUNT_HW_CACHE_OP_LOAD	PERF_COUNT_HW_CACHE_OP_READ
#define PERF_COUNT_HW_CACHE_OP_STORE	PERF_COUNT_HW_CACHE_OP_WRITE
#define HC(n, c, o, r)	{ n, PERF_TYPE_HW_CACHE, CACHE(c, o, r) }

static const struct vpk_event vpk_events[] = {
	/* every generic name and alias perf knows */
	HW("cpu-cycles", CPU_CYCLES),
	HW("cycles", CPU_CYCLES),
	HW("instructions", INSTRUCTIONS),
	HW("cache-references", CACHE_REFERENCES),
	HW("cache-misses", CACHE_MISSES),
	HW("branch-instructions", BRANCH_INSTRUCTIONS),
	HW("branches", BRANCH_INSTRUCTIONS),
	HW("branch-misses", BRANCH_MISSES),
	HW("bus-cycles", BUS_CYCLES),
	HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND),
	HW("idle-cycles-frontend", STALLED_CYCLES_FRONTEND),
	HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND),
	HW("idle-cycles-backend", STALLED_CYCLES_BACKEND),
	HW("ref-cycles", REF_CPU_CYCLES),
	SW("cpu-clock", CPU_CLOCK),
	SW("task-clock", TASK_CLOCK),
	SW("page-faults", PAGE_FAULTS),
	SW("faults", PAGE_FAULTS),
	SW("context-switches", CONTEXT_SWITCHES),
	SW("cs", CONTEXT_SWITCHES),
	SW("cpu-migrations", CPU_MIGRATIONS),
	SW("migrations", CPU_MIGRATIONS),
	SW("minor-faults", PAGE_FAULTS_MIN),
	SW("major-faults", PAGE_FAULTS_MAJ),
	SW("alignment-faults", ALIGNMENT_FAULTS),
	SW("emulation-faults", EMULATION_FAULTS),
	SW("dummy", DUMMY),
	/* names are case-insensitive, as in perf */
	HW("CYCLES", CPU_CYCLES),
	SW("Task-Clock", TASK_CLOCK),
	/* hardware-cache CACHE-OP[-RESULT] */
	HC("L1-dcache-loads", L1D, LOAD, ACCESS),
	HC("L1-dcache-load-misses", L1D, LOAD, MISS),
	HC("L1-dcache-stores", L1D, STORE, ACCESS),
	HC("L1-dcache-store-misses", L1D, STORE, MISS),
	HC("L1-dcache-prefetches", L1D, PREFETCH, ACCESS),
	HC("L1-dcache-prefetch-misses", L1D, PREFETCH, MISS),
	HC("L1-icache-loads", L1I, LOAD, ACCESS),
	HC("L1-icache-load-misses", L1I, LOAD, MISS),
	HC("LLC-loads", LL, LOAD, ACCESS),
	HC("LLC-load-misses", LL, LOAD, MISS),
	HC("LLC-stores", LL, STORE, ACCESS),
	HC("LLC-store-misses", LL, STORE, MISS),
	HC("LLC-prefetch-misses", LL, PREFETCH, MISS),
	HC("dTLB-loads", DTLB, LOAD, ACCESS),
	HC("dTLB-load-misses", DTLB, LOAD, MISS),
	HC("dTLB-stores", DTLB, STORE, ACCESS),
	HC("dTLB-store-misses", DTLB, STORE, MISS),
	HC("iTLB-loads", ITLB, LOAD, ACCESS),
	HC("iTLB-load-misses", ITLB, LOAD, MISS),
	HC("branch-loads", BPU, LOAD, ACCESS),
	HC("branch-load-misses", BPU, LOAD, MISS),
	HC("node-loads", NODE, LOAD, ACCESS),
	HC("node-load-misses", NODE, LOAD, MISS),
	HC("node-stores", NODE, STORE, ACCESS),
	HC("node-store-misses", NODE, STORE, MISS),
	/* their aliases */
	HC("l1d-load-miss", L1D, LOAD, MISS),
	HC("L1-data-read-refs", L1D, LOAD, ACCESS),
	HC("l1-d-loads-misses", L1D, LOAD, MISS),
	HC("l1i-read", L1I, LOAD, ACCESS),
	HC("L1-instruction-loads-Reference", L1I, LOAD, ACCESS),
	HC("L2-stores-miss", LL, STORE, MISS),
	HC("llc-speculative-read-misses", LL, PREFETCH, MISS),
	HC("d-tlb-write-ops", DTLB, STORE, ACCESS),
	HC("Data-TLB-loads-misses", DTLB, LOAD, MISS),
	HC("i-tlb-load-access", ITLB, LOAD, ACCESS),
	HC("Instruction-TLB-read-miss", ITLB, LOAD, MISS),
	HC("branches-loads-misses", BPU, LOAD, MISS),
	HC("bpu-load-misses", BPU, LOAD, MISS),
	HC("btb-loads", BPU, LOAD, ACCESS),
	HC("bpc-read-miss", BPU, LOAD, MISS),
	HC("L1-dcache-speculative-load-misses", L1D, PREFETCH, MISS),
	/* raw */
	{ "r1a8", PERF_TYPE_RAW, 0x1a8 },
	{ "rFFFF", PERF_TYPE_RAW, 0xffff },
	{ "r0", PERF_TYPE_RAW, 0 },
	{ "rffffffffffffffff", PERF_TYPE_RAW, ~0ULL },
	/* TYPE:CONFIG, decimal or 0x */
	{ "4:0x1a8", 4, 0x1a8 },
	{ "1:3", PERF_TYPE_SOFTWARE, 3 },
	{ "0:0", PERF_TYPE_HARDWARE, 0 },
	{ "4294967295:18446744073709551615", 0xffffffffU, ~0ULL },
	{ "10:0X10", 10, 0x10 },
	/* with modifiers */
	{ "cycles:u", PERF_TYPE_HARDWARE, 0, VCPUPERF_MOD_USER },
	{ "cycles:k", PERF_TYPE_HARDWARE, 0, VCPUPERF_MOD_KERNEL },
	{ "cycles:G", PERF_TYPE_HARDWARE, 0, VCPUPERF_MOD_GUEST },
	{ "cycles:H", PERF_TYPE_HARDWARE, 0, VCPUPERF_MOD_HOST },
	{ "cycles:D", PERF_TYPE_HARDWARE, 0, VCPUPERF_MOD_PINNED },
	{ "instructions:uGD", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  VCPUPERF_MOD_USER | VCPUPERF_MOD_GUEST | VCPUPERF_MOD_PINNED },
	{ "instructions:kH", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  VCPUPERF_MOD_KERNEL | VCPUPERF_MOD_HOST },
	{ "cycles:uu", PERF_TYPE_HARDWARE, 0, VCPUPERF_MOD_USER },
	{ "LLC-load-misses:G", PERF_TYPE_HW_CACHE, CACHE(LL, LOAD, MISS),
	  VCPUPERF_MOD_GUEST },
	{ "r1a8:u", PERF_TYPE_RAW, 0x1a8, VCPUPERF_MOD_USER },
	{ "4:0x1a8:kD", 4, 0x1a8, VCPUPERF_MOD_KERNEL | VCPUPERF_MOD_PINNED },
	{ "task-clock:G", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  VCPUPERF_MOD_GUEST },
};

static void vpk_parse_event_names(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_event_spec ev;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vpk_events); i++) {
		const struct vpk_event *e = &vpk_events[i];
		int ret;

		ret = vp_parse_event(e->name, strlen(e->name), &ev, ctx->err,
				     ERRLEN);
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "'%s': %s", e->name,
				    ctx->err);
		if (ret)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, ev.desc.type, e->type, "'%s'",
				    e->name);
		KUNIT_EXPECT_EQ_MSG(test, ev.desc.config, e->config,
				    "'%s' config", e->name);
		KUNIT_EXPECT_EQ_MSG(test, ev.desc.mods, e->mods, "'%s' mods",
				    e->name);
		KUNIT_EXPECT_FALSE_MSG(test, ev.tracepoint, "'%s'", e->name);
		KUNIT_EXPECT_STREQ(test, ev.desc.name, e->name);
	}
}

static void vpk_parse_event_tracepoints(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_event_spec ev;

	/* Not NUL terminated: only @len bytes count. */
	KUNIT_ASSERT_EQ(test, vp_parse_event("sched:sched_switch,cycles", 18,
					     &ev, ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_TRUE(test, ev.tracepoint);
	KUNIT_EXPECT_EQ(test, ev.desc.type, (u32)PERF_TYPE_TRACEPOINT);
	KUNIT_EXPECT_STREQ(test, ev.tp_system, "sched");
	KUNIT_EXPECT_STREQ(test, ev.tp_event, "sched_switch");
	KUNIT_EXPECT_STREQ(test, ev.desc.name, "sched:sched_switch");
	KUNIT_EXPECT_EQ(test, ev.desc.mods, 0U);

	KUNIT_ASSERT_EQ(test, vp_parse_event("irq:irq_handler_entry:kD", 24,
					     &ev, ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_TRUE(test, ev.tracepoint);
	KUNIT_EXPECT_STREQ(test, ev.tp_system, "irq");
	KUNIT_EXPECT_STREQ(test, ev.tp_event, "irq_handler_entry");
	KUNIT_EXPECT_EQ(test, ev.desc.mods,
			VCPUPERF_MOD_KERNEL | VCPUPERF_MOD_PINNED);

	/* Unknown plain names are ENOENT, malformed ones EINVAL. */
	KUNIT_EXPECT_EQ(test, vp_parse_event("nosuch", 6, &ev, ctx->err,
					     ERRLEN), -ENOENT);
	KUNIT_EXPECT_EQ(test, vp_parse_event("r", 1, &ev, ctx->err, ERRLEN),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, vp_parse_event("rxyz", 4, &ev, ctx->err, ERRLEN),
			-ENOENT);
	KUNIT_EXPECT_EQ(test, vp_parse_event("r10000000000000000", 18, &ev,
					     ctx->err, ERRLEN), -ENOENT);
	KUNIT_EXPECT_EQ(test, vp_parse_event("L1-dcache-load-bogus", 20, &ev,
					     ctx->err, ERRLEN), -ENOENT);
	KUNIT_EXPECT_EQ(test, vp_parse_event("", 0, &ev, ctx->err, ERRLEN),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vp_parse_event("a:b:c:d", 7, &ev, ctx->err,
					     ERRLEN), -EINVAL);
	KUNIT_EXPECT_EQ(test, vp_parse_event(":x", 2, &ev, ctx->err, ERRLEN),
			-EINVAL);
	/* Numbers out of range are no TYPE:CONFIG: a tracepoint, maybe. */
	KUNIT_EXPECT_EQ(test, vp_parse_event("4:18446744073709551616", 22, &ev,
					     ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_TRUE(test, ev.tracepoint);
	KUNIT_EXPECT_STREQ(test, ev.tp_system, "4");
	KUNIT_EXPECT_EQ(test, vp_parse_event("4294967296:1:u", 14, &ev,
					     ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_TRUE(test, ev.tracepoint);
	KUNIT_EXPECT_EQ(test, ev.desc.mods, VCPUPERF_MOD_USER);

	/* The named KVM events: KVM's tracepoints, optional; any case. */
	KUNIT_ASSERT_EQ(test, vp_parse_event("KVM-Exits:u", 11, &ev, ctx->err,
					     ERRLEN), 0);
	KUNIT_EXPECT_TRUE(test, ev.tracepoint);
	KUNIT_EXPECT_TRUE(test, ev.optional);
	KUNIT_EXPECT_EQ(test, ev.desc.type, (u32)PERF_TYPE_TRACEPOINT);
	KUNIT_EXPECT_STREQ(test, ev.tp_system, "kvm");
	KUNIT_EXPECT_STREQ(test, ev.tp_event, "kvm_exit");
	KUNIT_EXPECT_EQ(test, ev.desc.mods, VCPUPERF_MOD_USER);
	KUNIT_ASSERT_EQ(test, vp_parse_event("kvm-halts", 9, &ev, ctx->err,
					     ERRLEN), 0);
	KUNIT_EXPECT_STREQ(test, ev.tp_event, "kvm_vcpu_wakeup");
	KUNIT_ASSERT_EQ(test, vp_parse_event("kvm-userspace-exits", 19, &ev,
					     ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_STREQ(test, ev.tp_event, "kvm_userspace_exit");
	KUNIT_ASSERT_EQ(test, vp_parse_event("kvm-hypercalls", 14, &ev,
					     ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_STREQ(test, ev.tp_event,
			   IS_ENABLED(CONFIG_ARM64) ? "kvm_hvc_arm64" :
			   IS_ENABLED(CONFIG_X86) ? "kvm_hypercall" : "");
	/* A tracepoint spelled out is not optional. */
	KUNIT_ASSERT_EQ(test, vp_parse_event("kvm:kvm_exit", 12, &ev, ctx->err,
					     ERRLEN), 0);
	KUNIT_EXPECT_FALSE(test, ev.optional);
	KUNIT_EXPECT_EQ(test, vp_parse_event("kvm-exit", 8, &ev, ctx->err,
					     ERRLEN), -ENOENT);
}

/* vp_resolve_events(): real tracepoints resolve, G/H leave sw events. */
static void vpk_resolve_events(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_event_spec *evs;
	static const char list[] =
		"sched:sched_switch,task-clock:GD,cycles:G,sched:sched_wakeup:H";
	struct trace_event_file *file;
	u32 nr = 0;
	int ret;

	evs = kunit_kcalloc(test, VCPUPERF_MAX_EVENTS, sizeof(*evs),
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, evs);
	KUNIT_ASSERT_EQ(test, vp_parse_event_list(list, strlen(list), evs, &nr,
						  ctx->err, ERRLEN), 0);
	KUNIT_ASSERT_EQ(test, nr, 4U);
	ret = vp_resolve_events(evs, nr, ctx->err, ERRLEN);
	if (!IS_ENABLED(CONFIG_TRACING)) {
		KUNIT_EXPECT_EQ(test, ret, -ENOENT);
		kunit_skip(test, "kernel built without CONFIG_TRACING");
	}
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "%s", ctx->err);
	KUNIT_EXPECT_EQ(test, evs[0].desc.type, (u32)PERF_TYPE_TRACEPOINT);
	KUNIT_EXPECT_NE(test, evs[0].desc.config, 0ULL);
	KUNIT_EXPECT_NE(test, evs[3].desc.config, 0ULL);
	KUNIT_EXPECT_NE(test, evs[0].desc.config, evs[3].desc.config);
	KUNIT_EXPECT_EQ(test, evs[1].desc.mods, VCPUPERF_MOD_PINNED);
	KUNIT_EXPECT_EQ(test, evs[2].desc.mods, VCPUPERF_MOD_GUEST);
	KUNIT_EXPECT_EQ(test, evs[3].desc.mods, 0U);

	/* Resolving is stable. */
	{
		u64 id = evs[0].desc.config;

		KUNIT_ASSERT_EQ(test, vp_resolve_events(evs, 1, ctx->err,
							ERRLEN), 0);
		KUNIT_EXPECT_EQ(test, evs[0].desc.config, id);
	}

	KUNIT_ASSERT_EQ(test, vp_parse_event("nosuch:tp", 9, &evs[0], ctx->err,
					     ERRLEN), 0);
	ctx->err[0] = '\0';
	KUNIT_EXPECT_EQ(test, vp_resolve_events(evs, 1, ctx->err, ERRLEN),
			-ENOENT);
	KUNIT_EXPECT_NE(test, ctx->err[0], '\0');
	KUNIT_ASSERT_EQ(test, vp_parse_event("sched:nosuch", 12, &evs[0],
					     ctx->err, ERRLEN), 0);
	KUNIT_EXPECT_EQ(test, vp_resolve_events(evs, 1, ctx->err, ERRLEN),
			-ENOENT);

	/*
	 * A named KVM event whose tracepoint is missing is no error: it
	 * stays, absent, beside the others (kvm-exits resolves or not,
	 * as this kernel has kvm).
	 */
	KUNIT_ASSERT_EQ(test, vp_parse_event_list("kvm-exits,cs,kvm-mmio", 21,
						  evs, &nr, ctx->err, ERRLEN),
			0);
	KUNIT_ASSERT_EQ(test, nr, 3U);
	snprintf(evs[2].tp_event, sizeof(evs[2].tp_event), "kvm_nosuch");
	KUNIT_ASSERT_EQ_MSG(test, vp_resolve_events(evs, nr, ctx->err, ERRLEN),
			    0, "%s", ctx->err);
	KUNIT_EXPECT_EQ(test, evs[2].desc.config, VCPUPERF_CONFIG_ABSENT);
	KUNIT_EXPECT_EQ(test, evs[1].desc.type, (u32)PERF_TYPE_SOFTWARE);
	file = trace_get_event_file(NULL, "kvm", "kvm_exit");
	if (IS_ERR(file)) {
		KUNIT_EXPECT_EQ(test, evs[0].desc.config,
				VCPUPERF_CONFIG_ABSENT);
	} else {
		KUNIT_EXPECT_EQ(test, evs[0].desc.config,
				(u64)file->event_call->event.type);
		trace_put_event_file(file);
	}
}

/* ------------------------------------------------------------------ */
/* perf_event_attr and modifiers                                       */

static void vpk_build_attr(struct kunit *test)
{
	struct vcpuperf_event_desc d = {
		.type = PERF_TYPE_RAW, .config = 0x1a8,
	};
	struct perf_event_attr a;

	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, a.size, (u32)sizeof(a));
	KUNIT_EXPECT_EQ(test, a.type, (u32)PERF_TYPE_RAW);
	KUNIT_EXPECT_EQ(test, a.config, 0x1a8ULL);
	KUNIT_EXPECT_EQ(test, a.read_format,
			(u64)(PERF_FORMAT_TOTAL_TIME_ENABLED |
			      PERF_FORMAT_TOTAL_TIME_RUNNING));
	KUNIT_EXPECT_EQ(test, a.sample_period, 0ULL);
	KUNIT_EXPECT_EQ(test, a.sample_type, 0ULL);
	KUNIT_EXPECT_EQ(test, (int)a.disabled, 0);
	KUNIT_EXPECT_EQ(test, (int)a.inherit, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_kernel, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_hv, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_host, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_guest, 0);
	KUNIT_EXPECT_EQ(test, (int)a.pinned, 0);

	d.mods = VCPUPERF_MOD_GUEST;		/* G */
	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_host, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_guest, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user + a.exclude_kernel +
			a.exclude_hv + a.pinned, 0);

	d.mods = VCPUPERF_MOD_HOST;		/* H */
	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_guest, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_host, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user + a.exclude_kernel +
			a.exclude_hv + a.pinned, 0);

	d.mods = VCPUPERF_MOD_USER;		/* u */
	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_kernel, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_hv, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_host + a.exclude_guest +
			a.pinned, 0);

	d.mods = VCPUPERF_MOD_KERNEL;		/* k */
	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_hv, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_kernel, 0);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_host + a.exclude_guest +
			a.pinned, 0);

	d.mods = VCPUPERF_MOD_PINNED;		/* D */
	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, (int)a.pinned, 1);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user + a.exclude_kernel +
			a.exclude_hv + a.exclude_host + a.exclude_guest, 0);

	d.mods = VCPUPERF_MOD_USER | VCPUPERF_MOD_GUEST | VCPUPERF_MOD_PINNED;
	vp_build_attr(&d, &a);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_kernel + a.exclude_hv +
			a.exclude_host + a.pinned, 4);
	KUNIT_EXPECT_EQ(test, (int)a.exclude_user + a.exclude_guest, 0);
}

static void vpk_effective_mods(struct kunit *test)
{
	const u32 all = VCPUPERF_MOD_ALL;
	const u32 gh = VCPUPERF_MOD_GUEST | VCPUPERF_MOD_HOST;

	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_SOFTWARE, all),
			all & ~gh);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_SOFTWARE,
						VCPUPERF_MOD_GUEST), 0U);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_TRACEPOINT,
						VCPUPERF_MOD_HOST |
						VCPUPERF_MOD_USER),
			VCPUPERF_MOD_USER);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_BREAKPOINT, all),
			all & ~gh);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_HARDWARE, all), all);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_HW_CACHE,
						VCPUPERF_MOD_GUEST),
			VCPUPERF_MOD_GUEST);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_RAW,
						VCPUPERF_MOD_HOST),
			VCPUPERF_MOD_HOST);
	/* dynamic PMU types (e.g. cpu, uncore) are PMU events */
	KUNIT_EXPECT_EQ(test, vp_effective_mods(PERF_TYPE_MAX, all), all);
	KUNIT_EXPECT_EQ(test, vp_effective_mods(42, VCPUPERF_MOD_GUEST),
			VCPUPERF_MOD_GUEST);
	KUNIT_EXPECT_TRUE(test, vp_is_pmu_event(PERF_TYPE_HARDWARE));
	KUNIT_EXPECT_FALSE(test, vp_is_pmu_event(PERF_TYPE_SOFTWARE));
	KUNIT_EXPECT_FALSE(test, vp_is_pmu_event(PERF_TYPE_TRACEPOINT));
}

static void vpk_cause_from_errno(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(ENOENT, PERF_TYPE_HARDWARE, 0),
			VCPUPERF_CAUSE_NO_PMU);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(-ENOENT, PERF_TYPE_HARDWARE,
						  0), VCPUPERF_CAUSE_NO_PMU);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EOPNOTSUPP,
						  PERF_TYPE_HARDWARE, 0),
			VCPUPERF_CAUSE_MEDIATED_PMU);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EOPNOTSUPP,
						  PERF_TYPE_HARDWARE,
						  VCPUPERF_MOD_HOST),
			VCPUPERF_CAUSE_NOT_SUPPORTED);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(ENOTSUPP,
						  PERF_TYPE_SOFTWARE, 0),
			VCPUPERF_CAUSE_NOT_SUPPORTED);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EACCES, 0, 0),
			VCPUPERF_CAUSE_ACCESS);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EPERM, 0, 0),
			VCPUPERF_CAUSE_ACCESS);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EINVAL, 0, 0),
			VCPUPERF_CAUSE_INVALID);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(ESRCH, 0, 0),
			VCPUPERF_CAUSE_GONE);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EBUSY, 0, 0),
			VCPUPERF_CAUSE_BUSY);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(ENOMEM, 0, 0),
			VCPUPERF_CAUSE_NO_MEMORY);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(EIO, 0, 0),
			VCPUPERF_CAUSE_UNKNOWN);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(ENOENT, PERF_TYPE_TRACEPOINT,
						  0),
			VCPUPERF_CAUSE_NO_TRACEPOINT);
	KUNIT_EXPECT_STREQ(test, vp_cause_name(VCPUPERF_CAUSE_NO_TRACEPOINT),
			   "no_tracepoint");
	KUNIT_EXPECT_STREQ(test, vp_errno_name(-ENOENT), "ENOENT");
	KUNIT_EXPECT_STREQ(test, vp_errno_name(E2BIG), "E2BIG");
}

static void vpk_durations(struct kunit *test)
{
	char buf[32];
	u64 ns = 0;

	KUNIT_EXPECT_EQ(test, vp_parse_duration("250", 3, &ns), 0);
	KUNIT_EXPECT_EQ(test, ns, 250 * NSEC_PER_MSEC);
	KUNIT_EXPECT_EQ(test, vp_parse_duration("1500us", 6, &ns), 0);
	KUNIT_EXPECT_EQ(test, ns, 1500 * NSEC_PER_USEC);
	KUNIT_EXPECT_EQ(test, vp_parse_duration("999us", 5, &ns), -EINVAL);
	KUNIT_EXPECT_EQ(test, vp_parse_duration("999999999999s", 13, &ns),
			-EINVAL);
	vp_format_duration(buf, sizeof(buf), 2 * NSEC_PER_SEC);
	KUNIT_EXPECT_STREQ(test, buf, "2s");
	vp_format_duration(buf, sizeof(buf), 100 * NSEC_PER_MSEC);
	KUNIT_EXPECT_STREQ(test, buf, "100ms");
	vp_format_duration(buf, sizeof(buf), 1500 * NSEC_PER_USEC);
	KUNIT_EXPECT_STREQ(test, buf, "1500us");
}

static struct kunit_case vpk_parse_cases[] = {
	KUNIT_CASE(vpk_parse_cmd_valid),
	KUNIT_CASE(vpk_parse_cmd_default_events),
	KUNIT_CASE(vpk_parse_cmd_limits),
	KUNIT_CASE(vpk_parse_cmd_invalid),
	KUNIT_CASE(vpk_parse_cmd_too_big),
	KUNIT_CASE(vpk_control_apply_rejects),
	KUNIT_CASE(vpk_parse_event_names),
	KUNIT_CASE(vpk_parse_event_tracepoints),
	KUNIT_CASE(vpk_resolve_events),
	KUNIT_CASE(vpk_build_attr),
	KUNIT_CASE(vpk_effective_mods),
	KUNIT_CASE(vpk_cause_from_errno),
	KUNIT_CASE(vpk_durations),
	{}
};

static struct kunit_suite vpk_parse_suite = {
	.name = "vcpuperf_parse",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_parse_cases,
};

kunit_test_suite(vpk_parse_suite);
