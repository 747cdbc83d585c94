// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for vcpuperf, run inside a debug kernel (KASAN, lockdep,
 * kmemleak, DEBUG_ATOMIC_SLEEP) by scripts/kunit.sh.
 *
 * It is linked with the very objects vcpuperf.ko is made of (the lib and
 * module sources except module/main.c, see Kbuild here), so it tests the
 * real code:
 * the control-command parser, event-name resolution, perf_event_attr
 * construction, counter arithmetic, the record ring, kernel counters on
 * kthreads the test controls, and vp_control_apply() on a private module
 * state.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/umh.h>
#include <linux/vmalloc.h>

#include "../../module/collection.h"
#include "../../module/control.h"
#include "../../module/counter.h"
#include "../../module/files.h"
#include "../../module/pass.h"
#include "../../module/record.h"
#include "../../module/ring.h"
#include "../../module/sample.h"
#include "../../module/sampler.h"
#include "../../module/selfread.h"
#include "../../module/stream.h"
#include "../../module/vcpuperf.h"

#define ERRLEN	VP_ERR_LEN

/* ------------------------------------------------------------------ */
/* Per-test context, torn down by vpk_exit() whatever the test did.    */

#define VPK_MAX_WORKERS	2
#define VPK_MAX_COUNTERS 8

struct vpk_worker {
	struct task_struct *task;
	struct completion go;
	struct completion done;
	unsigned int sleeps;		/* sleep a jiffy this many times */
	u64 busy_ns;			/* then spin for this much CPU time */
	bool hold;			/* then wait for kthread_stop() */
	bool started;
	bool stopped;
};

struct vpk_ctx {
	struct vp_ring ring;
	struct vp_module mod;
	bool mod_ready;
	struct vp_coll *vp;
	struct vpk_worker workers[VPK_MAX_WORKERS];
	struct vp_counter counters[VPK_MAX_COUNTERS];
	struct vp_counter umh_counter;
	struct vcpuperf_event_desc umh_desc;
	int umh_create_error;
	char err[ERRLEN];
};

static int vpk_worker_fn(void *data)
{
	struct vpk_worker *w = data;
	unsigned int i;

	wait_for_completion(&w->go);
	/* each sleep is one context switch at least */
	for (i = 0; i < w->sleeps; i++)
		schedule_timeout_uninterruptible(1);
	if (w->busy_ns) {
		u64 start = current->se.sum_exec_runtime;
		u64 deadline = ktime_get_ns() + 10 * NSEC_PER_SEC;

		while (current->se.sum_exec_runtime - start < w->busy_ns &&
		       ktime_get_ns() < deadline)
			cpu_relax();
	}
	complete(&w->done);
	if (!w->hold)
		return 0;
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/* A worker thread, created but not yet running. */
static struct vpk_worker *vpk_worker_new(struct kunit *test, unsigned int idx,
					 unsigned int sleeps, u64 busy_ns,
					 bool hold)
{
	struct vpk_ctx *ctx = test->priv;
	struct vpk_worker *w = &ctx->workers[idx];
	struct task_struct *t;

	init_completion(&w->go);
	init_completion(&w->done);
	w->sleeps = sleeps;
	w->busy_ns = busy_ns;
	w->hold = hold;
	t = kthread_create(vpk_worker_fn, w, "vpk-worker%u", idx);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(t), "kthread_create: %ld",
			       PTR_ERR(t));
	get_task_struct(t);
	w->task = t;
	return w;
}

static void vpk_worker_go(struct vpk_worker *w)
{
	w->started = true;
	wake_up_process(w->task);
	complete(&w->go);
}

/* Wait for the worker's work to be done (it may still hold). */
static bool vpk_worker_wait(struct vpk_worker *w)
{
	return wait_for_completion_timeout(&w->done, 30 * HZ) != 0;
}

static void vpk_worker_stop(struct vpk_worker *w)
{
	if (!w->task || w->stopped)
		return;
	if (!w->started)
		vpk_worker_go(w);
	kthread_stop(w->task);
	w->stopped = true;
}

static void vpk_worker_put(struct vpk_worker *w)
{
	if (!w->task)
		return;
	vpk_worker_stop(w);
	put_task_struct(w->task);
	w->task = NULL;
}

/* The module object of the tests: small rings, a few collections. */
#define VPK_RING_KB		64
#define VPK_MAX_COLLECTIONS	4
#define VPK_RING_TOTAL_KB	(VPK_MAX_COLLECTIONS * VPK_RING_KB)

static void vpk_module_setup(struct vpk_ctx *ctx)
{
	if (ctx->mod_ready)
		return;
	vp_module_setup(&ctx->mod, VPK_MAX_COLLECTIONS, VPK_RING_TOTAL_KB,
			VCPUPERF_MAX_TARGETS, VPK_RING_KB);
	ctx->mod_ready = true;
}

/*
 * A collection as an open of /dev/vcpuperf makes it; without @sampler its
 * sampling kthread is stopped, so that only the test drives passes.
 */
static struct vp_coll *vpk_coll_new(struct kunit *test, bool sampler)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_coll *vp;

	vpk_module_setup(ctx);
	vp = vp_coll_create(&ctx->mod, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, vp);
	ctx->vp = vp;
	if (!sampler)
		vp_sampler_stop(vp);
	return vp;
}

static int vpk_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct vpk_ctx), GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

static void vpk_exit(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < VPK_MAX_COUNTERS; i++)
		vp_counter_release(&ctx->counters[i]);
	vp_counter_release(&ctx->umh_counter);
	if (ctx->vp)
		vp_coll_destroy(ctx->vp);
	for (i = 0; i < VPK_MAX_WORKERS; i++)
		vpk_worker_put(&ctx->workers[i]);
	if (ctx->ring.buf)
		vp_ring_free(&ctx->ring);
}

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
			    (u64)VCPUPERF_INTERVAL_DEFAULT_NS, "%s", what);
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
}

/* vp_resolve_events(): real tracepoints resolve, G/H leave sw events. */
static void vpk_resolve_events(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_event_spec *evs;
	static const char list[] =
		"sched:sched_switch,task-clock:GD,cycles:G,sched:sched_wakeup:H";
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
	KUNIT_EXPECT_STREQ(test, vp_errno_name(-ENOENT), "ENOENT");
	KUNIT_EXPECT_STREQ(test, vp_errno_name(E2BIG), "E2BIG");
}

/* ------------------------------------------------------------------ */
/* Arithmetic                                                          */

static void vpk_mul_div(struct kunit *test)
{
	static const struct {
		u64 a, b, c, q;
	} ok[] = {
		{ U64_MAX, U64_MAX, U64_MAX, U64_MAX },
		{ U64_MAX, 3, 4, 0xbfffffffffffffffULL },
		{ 10, 3, 4, 7 },
		{ 1ULL << 32, 1ULL << 32, 2, 1ULL << 63 },
		{ U64_MAX, U64_MAX - 1, U64_MAX, U64_MAX - 1 },
		{ U64_MAX - 1, U64_MAX, U64_MAX, U64_MAX - 1 },
		{ 12345678901234567ULL, 1000000007, 999999937,
		  0x2bdc5490ede750ULL },
		{ (1ULL << 63) + 12345, (1ULL << 40) + 7, (1ULL << 41) + 3,
		  0x400000000160181cULL },
		{ U64_MAX, 2, 3, 0xaaaaaaaaaaaaaaaaULL },
		{ 1, 1, U64_MAX, 0 },
		{ 0, U64_MAX, 1, 0 },
	};
	static const struct {
		u64 a, b, c;
	} over[] = {
		{ U64_MAX, 2, 1 },
		{ 1ULL << 32, 1ULL << 32, 1 },
		{ U64_MAX, U64_MAX, U64_MAX - 1 },
		{ 1ULL << 63, 4, 2 },
	};
	bool overflow;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ok); i++) {
		overflow = true;
		KUNIT_EXPECT_EQ_MSG(test, vp_mul_div(ok[i].a, ok[i].b, ok[i].c,
						     &overflow), ok[i].q,
				    "case %zu", i);
		KUNIT_EXPECT_FALSE_MSG(test, overflow, "case %zu", i);
	}
	for (i = 0; i < ARRAY_SIZE(over); i++) {
		overflow = false;
		KUNIT_EXPECT_EQ_MSG(test, vp_mul_div(over[i].a, over[i].b,
						     over[i].c, &overflow),
				    U64_MAX, "overflow case %zu", i);
		KUNIT_EXPECT_TRUE_MSG(test, overflow, "overflow case %zu", i);
	}
}

static void vpk_scale(struct kunit *test)
{
	u64 s;

	/* not enabled at all: exact */
	s = 1;
	KUNIT_EXPECT_TRUE(test, vp_scale(0, 0, 0, &s));
	KUNIT_EXPECT_EQ(test, s, 0ULL);
	KUNIT_EXPECT_TRUE(test, vp_scale(5, 0, 0, &s));
	KUNIT_EXPECT_EQ(test, s, 5ULL);
	/* enabled but never running: no estimate */
	KUNIT_EXPECT_FALSE(test, vp_scale(0, 100, 0, &s));
	KUNIT_EXPECT_FALSE(test, vp_scale(U64_MAX, U64_MAX, 0, &s));
	/* running == enabled (and > enabled): unscaled */
	KUNIT_EXPECT_TRUE(test, vp_scale(1234, 1000, 1000, &s));
	KUNIT_EXPECT_EQ(test, s, 1234ULL);
	KUNIT_EXPECT_TRUE(test, vp_scale(U64_MAX, U64_MAX, U64_MAX, &s));
	KUNIT_EXPECT_EQ(test, s, U64_MAX);
	KUNIT_EXPECT_TRUE(test, vp_scale(77, 1000, 1001, &s));
	KUNIT_EXPECT_EQ(test, s, 77ULL);
	/* multiplexed */
	KUNIT_EXPECT_TRUE(test, vp_scale(100, 200, 100, &s));
	KUNIT_EXPECT_EQ(test, s, 200ULL);
	KUNIT_EXPECT_TRUE(test, vp_scale(1000, 3, 2, &s));
	KUNIT_EXPECT_EQ(test, s, 1500ULL);
	/* near 2^64 */
	KUNIT_EXPECT_TRUE(test, vp_scale(U64_MAX / 2, 2, 1, &s));
	KUNIT_EXPECT_EQ(test, s, U64_MAX - 1);
	KUNIT_EXPECT_FALSE(test, vp_scale(U64_MAX / 2 + 1, 2, 1, &s));
	KUNIT_EXPECT_FALSE(test, vp_scale(U64_MAX, U64_MAX, U64_MAX - 1, &s));
	KUNIT_EXPECT_TRUE(test, vp_scale(U64_MAX - 1, U64_MAX, U64_MAX - 1,
					 &s));
	KUNIT_EXPECT_EQ(test, s, U64_MAX);
	KUNIT_EXPECT_TRUE(test, vp_scale(1ULL << 40, U64_MAX, U64_MAX / 2,
					 &s));
	KUNIT_EXPECT_EQ(test, s, 1ULL << 41);
}

static void vpk_count_delta(struct kunit *test)
{
	struct vcpuperf_count zero = {}, a = { 100, 1000, 500 };
	struct vcpuperf_count b = { 150, 2000, 900 }, c;
	struct vp_delta d;

	vp_count_delta(&zero, &a, &d);
	KUNIT_EXPECT_FALSE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value, 100ULL);
	KUNIT_EXPECT_EQ(test, d.enabled, 1000ULL);
	KUNIT_EXPECT_EQ(test, d.running, 500ULL);

	vp_count_delta(&a, &b, &d);
	KUNIT_EXPECT_FALSE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value, 50ULL);
	KUNIT_EXPECT_EQ(test, d.enabled, 1000ULL);
	KUNIT_EXPECT_EQ(test, d.running, 400ULL);

	vp_count_delta(&b, &b, &d);
	KUNIT_EXPECT_FALSE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value + d.enabled + d.running, 0ULL);

	/* The counter restarted: the delta runs from zero. */
	c = (struct vcpuperf_count){ 5, 10, 10 };
	vp_count_delta(&b, &c, &d);
	KUNIT_EXPECT_TRUE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value, 5ULL);
	KUNIT_EXPECT_EQ(test, d.enabled, 10ULL);
	KUNIT_EXPECT_EQ(test, d.running, 10ULL);

	/* Any one field going backwards is a restart. */
	c = (struct vcpuperf_count){ 200, 3000, 800 };
	vp_count_delta(&b, &c, &d);
	KUNIT_EXPECT_TRUE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.running, 800ULL);
	c = (struct vcpuperf_count){ 149, 3000, 1000 };
	vp_count_delta(&b, &c, &d);
	KUNIT_EXPECT_TRUE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value, 149ULL);

	/* Large cumulative values near 2^64. */
	a = (struct vcpuperf_count){ U64_MAX - 10, U64_MAX - 100, U64_MAX - 200 };
	b = (struct vcpuperf_count){ U64_MAX, U64_MAX, U64_MAX };
	vp_count_delta(&a, &b, &d);
	KUNIT_EXPECT_FALSE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value, 10ULL);
	KUNIT_EXPECT_EQ(test, d.enabled, 100ULL);
	KUNIT_EXPECT_EQ(test, d.running, 200ULL);
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

/* ------------------------------------------------------------------ */
/* The ring                                                            */

#define VPK_RING	4096

/* A record of @size bytes whose payload encodes @tag. */
static void vpk_rec_fill(u8 *buf, u16 size, u32 tag)
{
	struct vcpuperf_rec *r = (struct vcpuperf_rec *)buf;
	u16 i;

	memset(buf, 0, size);
	r->type = VCPUPERF_REC_SAMPLE;
	r->size = size;
	r->tid = tag;
	for (i = sizeof(*r); i < size; i++)
		buf[i] = (u8)(tag * 7 + i);
}

static bool vpk_rec_check(const u8 *buf, u16 size, u32 tag)
{
	const struct vcpuperf_rec *r = (const struct vcpuperf_rec *)buf;
	u16 i;

	if (r->type != VCPUPERF_REC_SAMPLE || r->size != size || r->tid != tag)
		return false;
	for (i = sizeof(*r); i < size; i++)
		if (buf[i] != (u8)(tag * 7 + i))
			return false;
	return true;
}

static void vpk_ring_basic(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	u8 rec[64], out[256];
	u32 i;

	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	KUNIT_EXPECT_TRUE(test, vp_ring_empty(ring));
	KUNIT_EXPECT_FALSE(test, vp_ring_eof(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 1ULL);
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, sizeof(out)), (size_t)0);

	for (i = 0; i < 3; i++) {
		vpk_rec_fill(rec, sizeof(rec), i);
		KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec,
						  VP_REC_SAMPLE), 0);
		/* the caller's record carries its sequence number */
		KUNIT_EXPECT_EQ(test, ((struct vcpuperf_rec *)rec)->seq,
				(u64)i + 1);
	}
	KUNIT_EXPECT_FALSE(test, vp_ring_empty(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 1ULL);

	/* Only whole records: too small a buffer takes nothing. */
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, 63), (size_t)0);
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, 100), (size_t)64);
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out, 64, 0));
	KUNIT_EXPECT_EQ(test, ((struct vcpuperf_rec *)out)->seq, 1ULL);
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 2ULL);
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, sizeof(out)), (size_t)128);
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out, 64, 1));
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out + 64, 64, 2));
	KUNIT_EXPECT_EQ(test, ((struct vcpuperf_rec *)(out + 64))->seq, 3ULL);
	KUNIT_EXPECT_TRUE(test, vp_ring_empty(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 4ULL);

	vp_ring_set_ended(ring, true);
	KUNIT_EXPECT_TRUE(test, vp_ring_eof(ring));
	vp_ring_set_ended(ring, false);
	KUNIT_EXPECT_FALSE(test, vp_ring_eof(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 0ULL);
}

#define DROP_SZ		sizeof(struct vcpuperf_dropped)
/* module/ring.c: room kept for the end of the session */
#define VPK_FINAL_RESERVE \
	(2 * (sizeof(struct vcpuperf_finished) + DROP_SZ))

/*
 * Exact fill: samples up to size - reserve, lifecycle records up to the
 * room kept for the session's end, which the session's finished record
 * (with the dropped record before it) always finds.
 */
static void vpk_ring_exact_fill(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	struct vcpuperf_dropped *drop;
	u8 rec[128];
	u8 *out;
	u32 i, n_life, n_samples = (VPK_RING - VPK_RING / 8) / 64;
	struct vcpuperf_finished fin;
	struct vcpuperf_rec *last;
	size_t got, used;

	out = kunit_kzalloc(test, VPK_RING, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	for (i = 0; i < n_samples; i++) {
		vpk_rec_fill(rec, 64, i);
		KUNIT_EXPECT_EQ_MSG(test,
				    vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
				    0, "sample %u", i);
	}
	/* Samples fill the ring up to the lifecycle reserve exactly. */
	KUNIT_EXPECT_EQ(test, ring->wr - ring->rd, (u64)(VPK_RING - VPK_RING / 8));
	vpk_rec_fill(rec, 64, 999);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 1ULL);
	/* Pop one sample: now the pending drop record must fit too. */
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, 64), (size_t)64);
	used = VPK_RING - VPK_RING / 8 - 64;
	/*
	 * Lifecycle records fill the ring up to the room kept for the end of
	 * the session (its finished record and a dropped record, twice).
	 */
	n_life = (VPK_RING - VPK_FINAL_RESERVE - used - DROP_SZ) / 64;
	for (i = 0; i < n_life; i++) {
		vpk_rec_fill(rec, 64, n_samples + i);
		KUNIT_EXPECT_EQ_MSG(test,
				    vp_ring_put(ring, (void *)rec, VP_REC_LIFECYCLE),
				    0, "lifecycle %u", i);
	}
	used += DROP_SZ + 64 * n_life;
	KUNIT_EXPECT_EQ(test, ring->wr - ring->rd, (u64)used);
	/* One more lifecycle record does not fit: dropped and counted. */
	vpk_rec_fill(rec, 64, 1000);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_LIFECYCLE),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 2ULL);
	/* The session's finished record and its dropped record always fit. */
	memset(&fin, 0, sizeof(fin));
	fin.rec.type = VCPUPERF_REC_FINISHED;
	fin.rec.size = sizeof(fin);
	fin.rec.tid = 0;
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, &fin.rec, VP_REC_SESSION_END),
			0);
	used += DROP_SZ + sizeof(fin);
	KUNIT_EXPECT_EQ(test, ring->wr - ring->rd, (u64)used);
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_EXPECT_EQ(test, got, used);
	KUNIT_EXPECT_TRUE(test, vp_ring_empty(ring));
	/* Popped in order: samples, dropped, lifecycle records, dropped, end. */
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out, 64, 1));
	drop = (struct vcpuperf_dropped *)(out + (n_samples - 1) * 64);
	KUNIT_EXPECT_EQ(test, drop->rec.type, (u16)VCPUPERF_REC_DROPPED);
	KUNIT_EXPECT_EQ(test, drop->count, 1ULL);
	KUNIT_EXPECT_EQ(test, drop->first_seq, (u64)n_samples + 1);
	drop = (struct vcpuperf_dropped *)(out + used - sizeof(fin) - DROP_SZ);
	KUNIT_EXPECT_EQ(test, drop->rec.type, (u16)VCPUPERF_REC_DROPPED);
	KUNIT_EXPECT_EQ(test, drop->count, 1ULL);
	KUNIT_EXPECT_EQ(test, drop->total, 2ULL);
	last = (struct vcpuperf_rec *)(out + used - sizeof(fin));
	KUNIT_EXPECT_EQ(test, last->type, (u16)VCPUPERF_REC_FINISHED);
	KUNIT_EXPECT_EQ(test, last->tid, 0U);
}

/* Overflow: drops are counted and reported by a dropped record. */
static void vpk_ring_overflow(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	struct vcpuperf_dropped *drop;
	struct vcpuperf_rec *r;
	u8 rec[64];
	u8 *out;
	u32 i, n_samples = (VPK_RING - VPK_RING / 8) / 64;
	u64 last_seq = 0, seq;
	size_t got, off;

	out = kunit_kzalloc(test, VPK_RING, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	for (i = 0; i < n_samples + 5; i++) {
		vpk_rec_fill(rec, sizeof(rec), i);
		KUNIT_EXPECT_EQ_MSG(test,
				    vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
				    i < n_samples ? 0 : -ENOSPC, "put %u", i);
	}
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 5ULL);
	KUNIT_EXPECT_EQ(test, ring->drops_pending, 5ULL);
	KUNIT_EXPECT_EQ(test, ring->drop_first_seq, (u64)n_samples + 1);

	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_EXPECT_EQ(test, got, (size_t)n_samples * 64);
	for (off = 0, i = 0; off < got; off += 64, i++) {
		r = (struct vcpuperf_rec *)(out + off);
		KUNIT_EXPECT_TRUE(test, vpk_rec_check(out + off, 64, i));
		KUNIT_EXPECT_EQ(test, r->seq, (u64)i + 1);
		last_seq = r->seq;
	}
	/* Nothing queued but drops pending: a new reader starts at the gap. */
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), (u64)n_samples + 1);

	vpk_rec_fill(rec, sizeof(rec), 4242);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
			0);
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_ASSERT_EQ(test, got, sizeof(*drop) + 64);
	drop = (struct vcpuperf_dropped *)out;
	KUNIT_EXPECT_EQ(test, drop->rec.type, (u16)VCPUPERF_REC_DROPPED);
	KUNIT_EXPECT_EQ(test, drop->rec.size, (u16)sizeof(*drop));
	KUNIT_EXPECT_EQ(test, drop->rec.tid, 0U);
	KUNIT_EXPECT_EQ(test, drop->count, 5ULL);
	KUNIT_EXPECT_EQ(test, drop->first_seq, last_seq + 1);
	KUNIT_EXPECT_EQ(test, drop->total, 5ULL);
	/* count equals the sequence numbers skipped before the dropped rec */
	KUNIT_EXPECT_EQ(test, drop->rec.seq - last_seq - 1, drop->count);
	KUNIT_EXPECT_NE(test, drop->rec.t_mono_ns, 0ULL);
	r = (struct vcpuperf_rec *)(out + sizeof(*drop));
	KUNIT_EXPECT_TRUE(test, vpk_rec_check((u8 *)r, 64, 4242));
	KUNIT_EXPECT_EQ(test, r->seq, drop->rec.seq + 1);
	KUNIT_EXPECT_EQ(test, ring->drops_pending, 0ULL);

	/* A second burst: total accumulates, count is per gap. */
	seq = r->seq;
	for (i = 0; i < n_samples + 2; i++) {
		vpk_rec_fill(rec, sizeof(rec), i);
		vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE);
	}
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_EXPECT_EQ(test, got, (size_t)n_samples * 64);
	last_seq = ((struct vcpuperf_rec *)(out + got - 64))->seq;
	KUNIT_EXPECT_EQ(test, last_seq, seq + n_samples);
	vpk_rec_fill(rec, 64, 7);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_LIFECYCLE),
			0);
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_ASSERT_EQ(test, got, sizeof(*drop) + 64);
	KUNIT_EXPECT_EQ(test, drop->count, 2ULL);
	KUNIT_EXPECT_EQ(test, drop->total, 7ULL);
	KUNIT_EXPECT_EQ(test, drop->rec.seq - last_seq - 1, drop->count);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 7ULL);
	KUNIT_EXPECT_EQ(test, ring->produced, (u64)2 * n_samples + 4);
}

/* Records straddling the end of the buffer come out intact and in order. */
static void vpk_ring_wrap(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	u8 rec[136], out[512];
	u64 expect_seq = 1;
	u32 i, tag = 0, popped = 0;
	size_t got, off;

	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	/* Sizes that do not divide the ring, three in flight at a time. */
	for (i = 0; i < 400; i++) {
		u16 size = sizeof(struct vcpuperf_rec) + 8 * (i % 14);

		vpk_rec_fill(rec, size, tag++);
		KUNIT_ASSERT_EQ_MSG(test, vp_ring_put(ring, (void *)rec,
						      VP_REC_SAMPLE),
				    0, "put %u", i);
		if (i % 3 != 2)
			continue;
		got = vp_ring_pop(ring, out, sizeof(out));
		KUNIT_ASSERT_GT(test, got, (size_t)0);
		for (off = 0; off < got; ) {
			struct vcpuperf_rec *r = (void *)(out + off);

			KUNIT_EXPECT_EQ(test, r->seq, expect_seq);
			KUNIT_EXPECT_TRUE_MSG(test,
					      vpk_rec_check(out + off, r->size,
							    popped),
					      "record %u", popped);
			expect_seq++;
			popped++;
			off += r->size;
		}
		KUNIT_EXPECT_EQ(test, off, got);
	}
	KUNIT_EXPECT_EQ(test, popped, 399U);
	KUNIT_EXPECT_GT(test, ring->wr, (u64)5 * VPK_RING);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 0ULL);
}

/* ------------------------------------------------------------------ */
/* Real counters on threads the test controls                          */

static int vpk_desc(struct kunit *test, const char *name,
		    struct vcpuperf_event_desc *desc)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_event_spec ev;
	int ret;

	ret = vp_parse_event(name, strlen(name), &ev, ctx->err, ERRLEN);
	if (!ret)
		ret = vp_resolve_events(&ev, 1, ctx->err, ERRLEN);
	if (!ret)
		*desc = ev.desc;
	return ret;
}

static void vpk_read(struct vp_counter *c, struct vcpuperf_count *v)
{
	v->value = perf_event_read_value(c->event, &v->enabled, &v->running);
}

/* Software counters rise with the work the thread does. */
static void vpk_counter_software(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	static const char *const names[] = {
		"task-clock", "context-switches", "page-faults",
		"sched:sched_switch", "cpu-migrations",
	};
	struct vcpuperf_event_desc desc;
	struct vcpuperf_count v[ARRAY_SIZE(names)];
	const unsigned int sleeps = 20;
	struct vpk_worker *w;
	size_t i;

	w = vpk_worker_new(test, 0, sleeps, 20 * NSEC_PER_MSEC, true);
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		KUNIT_ASSERT_EQ_MSG(test, vpk_desc(test, names[i], &desc), 0,
				    "%s: %s", names[i], ctx->err);
		vp_counter_create(&ctx->counters[i], &desc, w->task);
		KUNIT_ASSERT_EQ_MSG(test, ctx->counters[i].error, 0,
				    "creating %s", names[i]);
		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ctx->counters[i].event);
		KUNIT_EXPECT_FALSE(test, vp_counter_exited(&ctx->counters[i]));
	}
	/* Before the thread ever ran: nothing counted. */
	vpk_read(&ctx->counters[0], &v[0]);
	KUNIT_EXPECT_EQ(test, v[0].value, 0ULL);
	KUNIT_EXPECT_EQ(test, v[0].running, 0ULL);

	vpk_worker_go(w);
	KUNIT_ASSERT_TRUE(test, vpk_worker_wait(w));
	for (i = 0; i < ARRAY_SIZE(names); i++)
		vpk_read(&ctx->counters[i], &v[i]);

	/* task-clock: ns of CPU time, at least the 20 ms it spun */
	KUNIT_EXPECT_GE(test, v[0].value, 20 * NSEC_PER_MSEC);
	KUNIT_EXPECT_GT(test, v[0].enabled, 0ULL);
	/* software counters are never multiplexed */
	for (i = 0; i < ARRAY_SIZE(names); i++)
		KUNIT_EXPECT_EQ_MSG(test, v[i].running, v[i].enabled, "%s",
				    names[i]);
	/* one context switch per sleep at least, seen by both counters */
	KUNIT_EXPECT_GE(test, v[1].value, (u64)sleeps);
	KUNIT_EXPECT_GE(test, v[3].value, (u64)sleeps);
	/* a kthread has no user memory: no page faults */
	KUNIT_EXPECT_EQ(test, v[2].value, 0ULL);
	KUNIT_EXPECT_STREQ(test, vp_counter_state(&ctx->counters[0]),
			   "inactive");

	/* Counters keep rising while the thread is alive. */
	{
		struct vcpuperf_count later;

		msleep(20);
		vpk_read(&ctx->counters[0], &later);
		KUNIT_EXPECT_GE(test, later.value, v[0].value);
		KUNIT_EXPECT_GE(test, later.enabled, v[0].enabled);
	}
}

/*
 * A counter recreated on the same thread starts from zero again: the
 * delta across the restart is flagged and taken from zero.
 */
static void vpk_counter_restart(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vcpuperf_event_desc desc;
	struct vcpuperf_count before, after;
	struct vp_counter *c = &ctx->counters[0];
	struct vp_delta d;
	struct vpk_worker *w;

	w = vpk_worker_new(test, 0, 30, 0, true);
	KUNIT_ASSERT_EQ(test, vpk_desc(test, "cs", &desc), 0);
	vp_counter_create(c, &desc, w->task);
	KUNIT_ASSERT_EQ(test, c->error, 0);
	vpk_worker_go(w);
	KUNIT_ASSERT_TRUE(test, vpk_worker_wait(w));
	vpk_read(c, &before);
	KUNIT_EXPECT_GE(test, before.value, 30ULL);

	vp_counter_release(c);
	KUNIT_EXPECT_NULL(test, c->event);
	vp_counter_create(c, &desc, w->task);
	KUNIT_ASSERT_EQ(test, c->error, 0);
	vpk_read(c, &after);
	KUNIT_EXPECT_LT(test, after.value, before.value);

	vp_count_delta(&before, &after, &d);
	KUNIT_EXPECT_TRUE(test, d.restarted);
	KUNIT_EXPECT_EQ(test, d.value, after.value);
	KUNIT_EXPECT_EQ(test, d.enabled, after.enabled);
}

/* A hardware event in a VM without a PMU: ENOENT, cause no_pmu_event. */
static void vpk_counter_no_pmu(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vcpuperf_event_desc desc;
	struct vp_counter *c = &ctx->counters[0];
	struct vpk_worker *w;

	w = vpk_worker_new(test, 0, 0, 0, true);
	KUNIT_ASSERT_EQ(test, vpk_desc(test, "cycles", &desc), 0);
	vp_counter_create(c, &desc, w->task);
	if (c->event)
		kunit_skip(test, "this machine has a PMU: cycles counted");
	KUNIT_EXPECT_EQ(test, c->error, ENOENT);
	KUNIT_EXPECT_EQ(test, vp_cause_from_errno(c->error, desc.type,
						  desc.mods),
			VCPUPERF_CAUSE_NO_PMU);
	KUNIT_EXPECT_STREQ(test, vp_cause_name(VCPUPERF_CAUSE_NO_PMU),
			   "no_pmu_event");
	KUNIT_EXPECT_STREQ(test, vp_counter_state(c), "unavailable");
	KUNIT_EXPECT_FALSE(test, vp_counter_exited(c));
	/* Releasing a counter that does not exist is harmless. */
	vp_counter_release(c);
	KUNIT_EXPECT_NULL(test, c->event);

	/* A hardware-cache event and a raw one fail the same way. */
	KUNIT_ASSERT_EQ(test, vpk_desc(test, "L1-dcache-load-misses", &desc),
			0);
	vp_counter_create(&ctx->counters[1], &desc, w->task);
	KUNIT_EXPECT_NULL(test, ctx->counters[1].event);
	KUNIT_EXPECT_EQ(test, ctx->counters[1].error, ENOENT);
}

/* A thread that exits: exited state, final count, then clean release. */
static void vpk_counter_exit(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vcpuperf_event_desc desc;
	struct vp_counter *cs = &ctx->counters[0], *tc = &ctx->counters[1];
	struct vcpuperf_count v1, v2;
	const unsigned int sleeps = 10;
	struct vpk_worker *w;
	int i;

	w = vpk_worker_new(test, 0, sleeps, 5 * NSEC_PER_MSEC, false);
	KUNIT_ASSERT_EQ(test, vpk_desc(test, "context-switches", &desc), 0);
	vp_counter_create(cs, &desc, w->task);
	KUNIT_ASSERT_EQ(test, cs->error, 0);
	KUNIT_ASSERT_EQ(test, vpk_desc(test, "task-clock", &desc), 0);
	vp_counter_create(tc, &desc, w->task);
	KUNIT_ASSERT_EQ(test, tc->error, 0);
	KUNIT_EXPECT_FALSE(test, vp_counter_exited(cs));

	vpk_worker_go(w);
	KUNIT_ASSERT_TRUE(test, vpk_worker_wait(w));
	vpk_worker_stop(w);	/* returns once the thread has exited */
	/* perf detaches its counters a little later in do_exit() */
	for (i = 0; i < 500 && !(vp_counter_exited(cs) &&
				 vp_counter_exited(tc)); i++)
		msleep(20);
	KUNIT_ASSERT_TRUE(test, vp_counter_exited(cs));
	KUNIT_ASSERT_TRUE(test, vp_counter_exited(tc));
	KUNIT_EXPECT_STREQ(test, vp_counter_state(cs), "exited");

	vpk_read(cs, &v1);
	KUNIT_EXPECT_GE(test, v1.value, (u64)sleeps);
	vpk_read(tc, &v2);
	KUNIT_EXPECT_GE(test, v2.value, 5 * NSEC_PER_MSEC);
	/* The value is final. */
	msleep(20);
	{
		struct vcpuperf_count again;

		vpk_read(cs, &again);
		KUNIT_EXPECT_EQ(test, again.value, v1.value);
		KUNIT_EXPECT_EQ(test, again.enabled, v1.enabled);
		vpk_read(tc, &again);
		KUNIT_EXPECT_EQ(test, again.value, v2.value);
	}

	vp_counter_release(cs);
	vp_counter_release(tc);
	KUNIT_EXPECT_NULL(test, cs->event);
	KUNIT_EXPECT_NULL(test, tc->event);
	KUNIT_EXPECT_FALSE(test, vp_counter_exited(cs));
	KUNIT_EXPECT_STREQ(test, vp_counter_state(cs), "unavailable");
}

/* Released counters leave nothing on a live thread. */
static void vpk_counter_release(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	static const char *const names[] = {
		"task-clock", "cs", "faults", "sched:sched_switch",
	};
	struct vcpuperf_event_desc desc;
	struct perf_event_context *pctx;
	struct vpk_worker *w;
	int nr_before = 0, nr_during = -1, nr_after = -1;
	size_t i;

	w = vpk_worker_new(test, 0, 5, 0, true);
	vpk_worker_go(w);
	KUNIT_ASSERT_TRUE(test, vpk_worker_wait(w));
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		KUNIT_ASSERT_EQ(test, vpk_desc(test, names[i], &desc), 0);
		vp_counter_create(&ctx->counters[i], &desc, w->task);
		KUNIT_ASSERT_EQ(test, ctx->counters[i].error, 0);
	}
	rcu_read_lock();
	pctx = rcu_dereference(w->task->perf_event_ctxp[perf_sw_context]);
	if (pctx)
		nr_during = pctx->nr_events;
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, nr_during, (int)ARRAY_SIZE(names) + nr_before);

	for (i = 0; i < ARRAY_SIZE(names); i++) {
		vp_counter_release(&ctx->counters[i]);
		KUNIT_EXPECT_NULL(test, ctx->counters[i].event);
		/* a second release is a no-op */
		vp_counter_release(&ctx->counters[i]);
	}
	rcu_read_lock();
	pctx = rcu_dereference(w->task->perf_event_ctxp[perf_sw_context]);
	nr_after = pctx ? pctx->nr_events : 0;
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, nr_after, 0);
}

/* A user process (exec'd by a usermode helper) takes page faults. */
static int vpk_umh_init(struct subprocess_info *info, struct cred *new)
{
	struct vpk_ctx *ctx = info->data;

	/* In the new process, before exec: count on ourselves. */
	vp_counter_create(&ctx->umh_counter, &ctx->umh_desc, current);
	ctx->umh_create_error = ctx->umh_counter.error;
	return 0;
}

static void vpk_counter_user_faults(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	char *argv[2], *envp[2];
	struct subprocess_info *info;
	struct vcpuperf_count v;
	int ret;

	argv[0] = "/bin/true";
	argv[1] = NULL;
	envp[0] = "PATH=/bin:/usr/bin";
	envp[1] = NULL;
	KUNIT_ASSERT_EQ(test, vpk_desc(test, "page-faults", &ctx->umh_desc), 0);
	ctx->umh_create_error = -1;
	info = call_usermodehelper_setup(argv[0], argv, envp, GFP_KERNEL,
					 vpk_umh_init, NULL, ctx);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, info);
	ret = call_usermodehelper_exec(info, UMH_WAIT_PROC);
	if (ctx->umh_create_error == -1 || ret) {
		vp_counter_release(&ctx->umh_counter);
		kunit_skip(test, "cannot run %s as a usermode helper: %d",
			   argv[0], ret);
	}
	KUNIT_ASSERT_EQ(test, ctx->umh_create_error, 0);
	/* The process was reaped: its counter saw it exit. */
	KUNIT_EXPECT_TRUE(test, vp_counter_exited(&ctx->umh_counter));
	vpk_read(&ctx->umh_counter, &v);
	KUNIT_EXPECT_GT(test, v.value, 0ULL);
	KUNIT_EXPECT_GT(test, v.enabled, 0ULL);
	vp_counter_release(&ctx->umh_counter);
	KUNIT_EXPECT_NULL(test, ctx->umh_counter.event);
}

/* ------------------------------------------------------------------ */
/* vp_control_apply() end to end on a private module state            */

static void vpk_control_attach_detach(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_coll *vp = vpk_coll_new(test, true);
	struct vpk_worker *w = vpk_worker_new(test, 0, 0, 0, true);
	bool saw_started = false, saw_unavail = false, saw_detached = false;
	u64 seq = 0;
	char cmd[96];
	u8 *out;
	size_t got, off;
	int n;

	vpk_worker_go(w);
	out = kunit_kzalloc(test, 64 * 1024, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);

	n = scnprintf(cmd, sizeof(cmd),
		      "attach tid=%d events=task-clock,cs,cycles guest_only",
		      task_pid_nr(w->task));
	KUNIT_ASSERT_EQ_MSG(test, vp_control_apply(vp, NULL, cmd, n), 0, "%s",
			    vp->last_error);
	KUNIT_EXPECT_EQ(test, vp->nr_targets, 1U);
	KUNIT_EXPECT_NOT_NULL(test, xa_load(&vp->by_tid, task_pid_nr(w->task)));
	/* The same thread again: -EEXIST, nothing changes. */
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, cmd, n), -EEXIST);
	KUNIT_EXPECT_EQ(test, vp->nr_targets, 1U);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "interval 5ms", 12), 0);
	KUNIT_EXPECT_EQ(test, vp->interval_ns, 5 * NSEC_PER_MSEC);
	msleep(50);	/* let the sampler take a few samples */

	n = scnprintf(cmd, sizeof(cmd), "detach tid=%d\n",
		      task_pid_nr(w->task));
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, cmd, n), 0);
	KUNIT_EXPECT_EQ(test, vp->nr_targets, 0U);
	KUNIT_EXPECT_TRUE(test, xa_empty(&vp->by_tid));
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, cmd, n), -ESRCH);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "stop", 4), 0);
	KUNIT_EXPECT_TRUE(test, vp->ring.ended);

	got = vp_ring_pop(&vp->ring, out, 64 * 1024);
	KUNIT_EXPECT_GT(test, got, (size_t)0);
	for (off = 0; off + sizeof(struct vcpuperf_rec) <= got; ) {
		struct vcpuperf_rec *r = (void *)(out + off);

		KUNIT_ASSERT_GE(test, r->size, (u16)sizeof(*r));
		KUNIT_EXPECT_EQ(test, r->size % 8, 0);
		if (seq)
			KUNIT_EXPECT_EQ(test, r->seq, seq + 1);
		seq = r->seq;
		if (r->type == VCPUPERF_REC_STARTED) {
			struct vcpuperf_started *s = (void *)r;

			saw_started = true;
			KUNIT_EXPECT_EQ(test, s->nr_events, 3U);
			KUNIT_EXPECT_EQ(test, s->kind,
					(u32)VCPUPERF_TARGET_TID);
			/* G left out of the software events only */
			KUNIT_EXPECT_EQ(test, s->events[0].mods,
					VCPUPERF_MOD_GUEST <<
					VCPUPERF_MOD_NOT_APPLIED_SHIFT);
			KUNIT_EXPECT_EQ(test, s->events[2].mods,
					VCPUPERF_MOD_GUEST);
		} else if (r->type == VCPUPERF_REC_UNAVAILABLE) {
			struct vcpuperf_unavailable *u = (void *)r;

			saw_unavail = true;
			KUNIT_EXPECT_EQ(test, u->event, 2U);
			if (u->error == ENOENT)
				KUNIT_EXPECT_EQ(test, u->cause,
						(u32)VCPUPERF_CAUSE_NO_PMU);
		} else if (r->type == VCPUPERF_REC_DETACHED) {
			struct vcpuperf_detached *dt = (void *)r;

			saw_detached = true;
			KUNIT_EXPECT_EQ(test, dt->reason,
					(u32)VCPUPERF_DETACH_COMMAND);
		}
		off += r->size;
	}
	KUNIT_EXPECT_EQ(test, off, got);
	KUNIT_EXPECT_TRUE(test, saw_started);
	KUNIT_EXPECT_TRUE(test, saw_detached);
	/* cycles (guest_only) is unavailable unless the machine has a PMU */
	if (!saw_unavail)
		kunit_info(test, "cycles counted: the machine has a PMU");
	KUNIT_EXPECT_TRUE(test, vp_ring_eof(&vp->ring));
	(void)ctx;
}

/* Feed one interval of made-up cumulative values to the state machine. */
static bool vpk_feed(struct vp_coll *vp, struct vp_target *t,
		     const u64 *v, u32 counting, u32 exited)
{
	struct vcpuperf_sample *s;
	u32 i;

	s = vp_rec_begin(vp, VCPUPERF_REC_SAMPLE,
			 struct_size(s, counts, t->nr_events), t->tid);
	for (i = 0; i < t->nr_events; i++) {
		s->counts[i].value = v[3 * i];
		s->counts[i].enabled = v[3 * i + 1];
		s->counts[i].running = v[3 * i + 2];
	}
	return vp_sample_account(vp, t, s, counting, exited, 0, 0);
}

#define VPK_MAX_RECS	8

/* Pop the ring; the record types in @types, the records in @buf. */
static int vpk_drain(struct kunit *test, struct vp_coll *vp, u8 *buf,
		     size_t len, const struct vcpuperf_rec **recs)
{
	size_t got = vp_ring_pop(&vp->ring, buf, len), off = 0;
	int n = 0;

	while (off < got && n < VPK_MAX_RECS) {
		recs[n] = (const struct vcpuperf_rec *)(buf + off);
		off += recs[n]->size;
		n++;
	}
	KUNIT_EXPECT_EQ(test, off, got);
	return n;
}

static struct vp_target *vpk_fake_target(struct kunit *test, u32 tid,
					 u32 nr_events)
{
	struct vp_target *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t);
	t->task = current;
	t->tid = tid;
	t->id.pid = tid;
	t->id.vcpu = 0;
	t->nr_events = nr_events;
	return t;
}

/*
 * The lifecycle state machine, fed values no PMU-less VM can produce:
 * first_row, multiplexed once, no_counters after exactly
 * VCPUPERF_NO_COUNTERS_INTERVALS intervals in which the thread ran,
 * never for a thread that did not run, not hidden by a software event
 * that counts, and task_exited with final counts.
 */
static void vpk_lifecycle(struct kunit *test)
{
	struct vp_coll *vp = vpk_coll_new(test, false);
	const struct vcpuperf_rec *r[VPK_MAX_RECS];
	const struct vcpuperf_multiplexed *mx;
	const struct vcpuperf_first_row *fr;
	const struct vcpuperf_task_exited *te;
	const struct vcpuperf_no_counters *nc;
	const struct vcpuperf_sample *smp;
	struct vp_target *t, *t2, *t3, *t4;
	u64 v[6];
	u8 *buf;
	int n, i;

	buf = kunit_kzalloc(test, 64 * 1024, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	t = vpk_fake_target(test, 42, 2);
	mutex_lock(&vp->lock);

	/* Interval 1: both counters on the PMU the whole time. */
	v[0] = 100;
	v[1] = 1000;
	v[2] = 1000;
	v[3] = 5;
	v[4] = 1000;
	v[5] = 1000;
	KUNIT_EXPECT_FALSE(test, vpk_feed(vp, t, v, 0x3, 0));
	n = vpk_drain(test, vp, buf, 64 * 1024, r);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, r[0]->type, VCPUPERF_REC_SAMPLE);
	smp = (const void *)r[0];
	KUNIT_EXPECT_TRUE(test, smp->flags & VCPUPERF_SAMPLE_FIRST);
	KUNIT_EXPECT_EQ(test, r[1]->type, VCPUPERF_REC_FIRST_ROW);
	fr = (const void *)r[1];
	KUNIT_EXPECT_EQ(test, fr->counters_populated, 1U);
	KUNIT_EXPECT_EQ(test, fr->populated_mask, 0x3U);

	/* Interval 2: counter 1 on the PMU half of its enabled time. */
	v[0] = 200;
	v[1] = 2000;
	v[2] = 2000;
	v[3] = 10;
	v[4] = 2000;
	v[5] = 1500;
	KUNIT_EXPECT_FALSE(test, vpk_feed(vp, t, v, 0x3, 0));
	n = vpk_drain(test, vp, buf, 64 * 1024, r);
	KUNIT_ASSERT_EQ(test, n, 2);
	KUNIT_EXPECT_EQ(test, r[1]->type, VCPUPERF_REC_MULTIPLEXED);
	mx = (const void *)r[1];
	KUNIT_EXPECT_EQ(test, mx->mask, 0x2U);
	KUNIT_EXPECT_EQ(test, mx->min_ratio_ppm, 500000U);

	/* Interval 3: multiplexed again, but it is reported only once. */
	v[0] = 300;
	v[1] = 3000;
	v[2] = 3000;
	v[3] = 15;
	v[4] = 3000;
	v[5] = 2000;
	KUNIT_EXPECT_FALSE(test, vpk_feed(vp, t, v, 0x3, 0));
	n = vpk_drain(test, vp, buf, 64 * 1024, r);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, r[0]->type, VCPUPERF_REC_SAMPLE);

	/* Both counters saw the exit: final sample, then task_exited. */
	v[0] = 310;
	v[1] = 3100;
	v[2] = 3100;
	v[3] = 16;
	v[4] = 3100;
	v[5] = 2100;
	KUNIT_EXPECT_TRUE(test, vpk_feed(vp, t, v, 0x3, 0x3));
	n = vpk_drain(test, vp, buf, 64 * 1024, r);
	KUNIT_ASSERT_EQ(test, n, 2);
	smp = (const void *)r[0];
	KUNIT_EXPECT_TRUE(test, smp->flags & VCPUPERF_SAMPLE_FINAL);
	KUNIT_EXPECT_EQ(test, r[1]->type, VCPUPERF_REC_TASK_EXITED);
	te = (const void *)r[1];
	KUNIT_EXPECT_EQ(test, te->exited_mask, 0x3U);
	KUNIT_EXPECT_EQ(test, te->counts[0].value, 310ULL);
	KUNIT_EXPECT_EQ(test, te->counts[1].value, 16ULL);
	KUNIT_EXPECT_EQ(test, t->intervals_seen, 4ULL);
	KUNIT_EXPECT_EQ(test, t->intervals_with_values, 4ULL);

	/* A thread that runs while its counter never gets onto the PMU. */
	t2 = vpk_fake_target(test, 43, 1);
	for (i = 1; i <= VCPUPERF_NO_COUNTERS_INTERVALS + 1; i++) {
		v[0] = 0;
		v[1] = 1000ULL * i;
		v[2] = 0;
		KUNIT_EXPECT_FALSE(test, vpk_feed(vp, t2, v, 0x1, 0));
		n = vpk_drain(test, vp, buf, 64 * 1024, r);
		if (i == 1) {
			KUNIT_ASSERT_EQ(test, n, 2);
			fr = (const void *)r[1];
			KUNIT_EXPECT_EQ(test, fr->counters_populated, 0U);
		} else if (i == VCPUPERF_NO_COUNTERS_INTERVALS) {
			KUNIT_ASSERT_EQ(test, n, 2);
			KUNIT_EXPECT_EQ(test, r[1]->type,
					VCPUPERF_REC_NO_COUNTERS);
			nc = (const void *)r[1];
			KUNIT_EXPECT_EQ(test, nc->intervals_ran,
					(u64)VCPUPERF_NO_COUNTERS_INTERVALS);
			KUNIT_EXPECT_EQ(test, nc->cause,
					(u32)VCPUPERF_CAUSE_NEVER_COUNTED);
		} else {
			KUNIT_EXPECT_EQ(test, n, 1);
		}
	}
	KUNIT_EXPECT_EQ(test, t2->intervals_with_values, 0ULL);

	/* A thread that never runs (an idle vCPU) never gets no_counters. */
	t3 = vpk_fake_target(test, 44, 1);
	for (i = 1; i <= 2 * VCPUPERF_NO_COUNTERS_INTERVALS; i++) {
		v[0] = 0;
		v[1] = 0;
		v[2] = 0;
		vpk_feed(vp, t3, v, 0x1, 0);
		n = vpk_drain(test, vp, buf, 64 * 1024, r);
		KUNIT_EXPECT_EQ(test, n, i == 1 ? 2 : 1);
	}
	KUNIT_EXPECT_EQ(test, t3->intervals_ran, 0ULL);

	/*
	 * A PMU counter that never gets on while a software event of the
	 * same thread counts: the software event does not hide it.
	 */
	t4 = vpk_fake_target(test, 45, 2);
	t4->events[0].type = PERF_TYPE_HARDWARE;
	t4->events[1].type = PERF_TYPE_SOFTWARE;
	for (i = 1; i <= VCPUPERF_NO_COUNTERS_INTERVALS; i++) {
		v[0] = 0;
		v[1] = 1000ULL * i;
		v[2] = 0;
		v[3] = 7ULL * i;
		v[4] = 1000ULL * i;
		v[5] = 1000ULL * i;
		vpk_feed(vp, t4, v, 0x3, 0);
		n = vpk_drain(test, vp, buf, 64 * 1024, r);
		if (i == 1) {
			KUNIT_ASSERT_EQ(test, n, 2);
			fr = (const void *)r[1];
			KUNIT_EXPECT_EQ(test, fr->counters_populated, 0U);
			KUNIT_EXPECT_EQ(test, fr->populated_mask, 0U);
			KUNIT_EXPECT_EQ(test, fr->counting_mask, 0x1U);
		} else if (i == VCPUPERF_NO_COUNTERS_INTERVALS) {
			KUNIT_ASSERT_EQ(test, n, 2);
			KUNIT_EXPECT_EQ(test, r[1]->type,
					VCPUPERF_REC_NO_COUNTERS);
			nc = (const void *)r[1];
			KUNIT_EXPECT_EQ(test, nc->counting_mask, 0x1U);
		} else {
			KUNIT_EXPECT_EQ(test, n, 1);
		}
	}
	KUNIT_EXPECT_EQ(test, t4->intervals_with_values,
			(u64)VCPUPERF_NO_COUNTERS_INTERVALS);
	mutex_unlock(&vp->lock);
}

/* ------------------------------------------------------------------ */
/* Open files: one stream reader, unload refuses opens and waits       */

static void vpk_files_and_reader(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_coll *vp = vpk_coll_new(test, false);
	struct vp_module *mod = &ctx->mod;
	struct vp_reader *r, *r2;

	/* The KUnit thread is root: perfmon_capable(). */
	KUNIT_ASSERT_EQ(test, vp_file_get(mod), 0);
	KUNIT_ASSERT_EQ(test, vp_file_get(mod), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&mod->files_open), 2);

	r = vp_reader_open(vp);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	r2 = vp_reader_open(vp);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(r2), -EBUSY);
	vp_reader_close(r);
	KUNIT_EXPECT_EQ(test, atomic_read(&vp->reader_open), 0);
	r = vp_reader_open(vp);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	vp_reader_close(r);

	/* Unload begun: opens are refused and leave the count alone. */
	smp_store_mb(mod->unloading, true);
	KUNIT_EXPECT_EQ(test, vp_file_get(mod), -ENODEV);
	KUNIT_EXPECT_EQ(test, atomic_read(&mod->files_open), 2);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "interval 5ms", 12),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(vp_coll_create(mod, false)),
			-ENODEV);
	vp_file_put(mod);
	vp_file_put(mod);
	KUNIT_EXPECT_EQ(test, atomic_read(&mod->files_open), 0);
	vp_files_wait(mod);	/* returns at once: nothing open */
	WRITE_ONCE(mod->unloading, false);
}

/* ------------------------------------------------------------------ */
/* Collections: independent, limited, ended, destroyed                 */

/* Attach the worker's thread to @vp with task-clock and context switches. */
static int vpk_attach_worker(struct vp_coll *vp, struct vpk_worker *w)
{
	char cmd[64];
	int n;

	n = scnprintf(cmd, sizeof(cmd), "attach tid=%d events=task-clock,cs",
		      task_pid_nr(w->task));
	return vp_control_apply(vp, NULL, cmd, n);
}

static void vpk_collections(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_coll *a = vpk_coll_new(test, false);
	struct vpk_worker *w = vpk_worker_new(test, 0, 0, 0, true);
	struct vp_module *mod = &ctx->mod;
	struct vp_coll *b, *more[VPK_MAX_COLLECTIONS];
	struct vp_target *ta, *tb;
	u32 i, n = 0;

	vpk_worker_go(w);
	b = vp_coll_create(mod, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	KUNIT_EXPECT_NE(test, a->id, b->id);
	KUNIT_EXPECT_EQ(test, b->owner_pid, task_tgid_vnr(current));

	/* One thread in two collections: each has its own counters. */
	KUNIT_ASSERT_EQ(test, vpk_attach_worker(a, w), 0);
	KUNIT_ASSERT_EQ(test, vpk_attach_worker(b, w), 0);
	ta = xa_load(&a->by_tid, task_pid_nr(w->task));
	tb = xa_load(&b->by_tid, task_pid_nr(w->task));
	KUNIT_ASSERT_NOT_NULL(test, ta);
	KUNIT_ASSERT_NOT_NULL(test, tb);
	KUNIT_EXPECT_PTR_NE(test, ta->counters[0].event, tb->counters[0].event);
	KUNIT_EXPECT_NOT_NULL(test, ta->counters[0].event);

	/* A command on one collection changes nothing of the other. */
	KUNIT_EXPECT_EQ(test, vp_control_apply(a, NULL, "interval 7ms", 12), 0);
	KUNIT_EXPECT_EQ(test, b->interval_ns, VCPUPERF_INTERVAL_DEFAULT_NS);
	KUNIT_EXPECT_EQ(test, vp_control_apply(a, NULL, "bogus", 5), -EINVAL);
	KUNIT_EXPECT_EQ(test, a->last_errno, -EINVAL);
	KUNIT_EXPECT_EQ(test, b->last_errno, 0);
	KUNIT_EXPECT_EQ(test, vp_control_apply(a, NULL, "stop", 4), 0);
	KUNIT_EXPECT_TRUE(test, a->ring.ended);
	KUNIT_EXPECT_FALSE(test, b->ring.ended);
	KUNIT_EXPECT_EQ(test, b->nr_targets, 1U);

	/* max_collections: the limit counts the open ones. */
	while (n < ARRAY_SIZE(more)) {
		more[n] = vp_coll_create(mod, false);
		if (IS_ERR(more[n]))
			break;
		n++;
	}
	KUNIT_EXPECT_EQ(test, n + 2, (u32)VPK_MAX_COLLECTIONS);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(more[n]), -EUSERS);

	/* Ring memory: every ring is in use, a bigger one does not fit. */
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, (u64)VPK_RING_TOTAL_KB);
	KUNIT_EXPECT_EQ(test, vp_control_apply(b, NULL, "ring 128K", 9), -ENOSPC);
	KUNIT_EXPECT_EQ(test, b->ring_kb, VPK_RING_KB);
	for (i = 0; i < n; i++)
		vp_coll_destroy(more[i]);
	KUNIT_EXPECT_EQ(test, mod->nr_open, 2U);
	/* Now it fits, and the records queued move to the new ring. */
	KUNIT_EXPECT_EQ(test, vp_control_apply(b, NULL, "ring 128K", 9), 0);
	KUNIT_EXPECT_EQ(test, b->ring.size, (size_t)128 * SZ_1K);
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(&b->ring), 1ULL);
	KUNIT_EXPECT_GT(test, b->ring.records, 0ULL);
	KUNIT_EXPECT_EQ(test, vp_control_apply(b, NULL, "ring 64K", 8), 0);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, 2ULL * VPK_RING_KB);

	/* max_targets, per collection. */
	mod->max_targets = 1;
	KUNIT_EXPECT_EQ(test, vp_control_apply(b, NULL, "attach tid=1", 12), -ENOSPC);
	mod->max_targets = VCPUPERF_MAX_TARGETS;

	/* Closed with a thread attached: everything goes, the rest stays. */
	vp_coll_destroy(b);
	KUNIT_EXPECT_EQ(test, mod->nr_open, 1U);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, (u64)VPK_RING_KB);
	KUNIT_EXPECT_EQ(test, vpk_attach_worker(a, w), 0);
	KUNIT_EXPECT_EQ(test, a->nr_targets, 1U);
	KUNIT_EXPECT_FALSE(test, a->ring.ended);

	/* Ended (unload): final records and end of file, commands refused. */
	vp_coll_end(a, VCPUPERF_DETACH_UNLOAD);
	KUNIT_EXPECT_TRUE(test, a->ring.ended);
	KUNIT_EXPECT_EQ(test, a->nr_targets, 0U);
	KUNIT_EXPECT_EQ(test, vp_control_apply(a, NULL, "interval 5ms", 12), -ENODEV);
}

/* ------------------------------------------------------------------ */
/* Reading running threads: modes, the kernel-thread fallback          */

static void vpk_read_modes(struct kunit *test)
{
	struct vp_coll *vp = vpk_coll_new(test, false);

	KUNIT_EXPECT_EQ(test, vp->read_mode, (u32)VCPUPERF_READ_AUTO);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "interval 10ms", 13), 0);
	KUNIT_EXPECT_EQ(test, vp_read_mode(vp), (u32)VCPUPERF_READ_KICK);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "interval 50ms", 13), 0);
	KUNIT_EXPECT_EQ(test, vp_read_mode(vp), (u32)VCPUPERF_READ_LAZY);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "read direct", 11), 0);
	KUNIT_EXPECT_EQ(test, vp_read_mode(vp), (u32)VCPUPERF_READ_DIRECT);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "read kick", 9), 0);
	KUNIT_EXPECT_EQ(test, vp_read_mode(vp), (u32)VCPUPERF_READ_KICK);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "read lazy", 9), 0);
	KUNIT_EXPECT_EQ(test, vp_read_mode(vp), (u32)VCPUPERF_READ_LAZY);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "read often", 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "read", 4), -EINVAL);
	KUNIT_EXPECT_EQ(test, vp_read_mode(vp), (u32)VCPUPERF_READ_LAZY);
}

/*
 * A kernel thread spinning on another CPU is on a CPU when the pass looks:
 * it is read directly (kernel threads never run task work), counted, and
 * never asked.  A thread that is not on a CPU is read directly too.
 */
static void vpk_read_kthread(struct kunit *test)
{
	u64 deadline = ktime_get_ns() + 3 * NSEC_PER_SEC;
	struct vpk_worker *w;
	struct vp_coll *vp;
	char cmd[64];
	u64 pass = 0;
	int n;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs a second CPU for the thread to run on");
	vp = vpk_coll_new(test, false);
	w = vpk_worker_new(test, 0, 0, 2 * NSEC_PER_SEC, true);
	n = scnprintf(cmd, sizeof(cmd), "attach tid=%d events=task-clock",
		      task_pid_nr(w->task));
	KUNIT_ASSERT_EQ(test, vp_control_apply(vp, NULL, cmd, n), 0);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, "read kick", 9), 0);
	vpk_worker_go(w);
	while (!vp->reads.fb_kthread && ktime_get_ns() < deadline) {
		mutex_lock(&vp->lock);
		vp_read_pass(vp, ++pass);
		mutex_unlock(&vp->lock);
		usleep_range(1000, 2000);
	}
	KUNIT_EXPECT_GT(test, vp->reads.fb_kthread, 0ULL);
	KUNIT_EXPECT_EQ(test, vp->reads.self, 0ULL);
	KUNIT_EXPECT_EQ(test, vp->reads.kicks, 0ULL);
	KUNIT_EXPECT_TRUE(test, vpk_worker_wait(w));
	/* Done spinning, waiting: off its CPU, read directly. */
	msleep(20);
	mutex_lock(&vp->lock);
	vp_read_pass(vp, ++pass);
	mutex_unlock(&vp->lock);
	KUNIT_EXPECT_GT(test, vp->reads.direct, 0ULL);
}

/* A self-read state that never queued anything goes with its target. */
static void vpk_selfread_alone(struct kunit *test)
{
	struct vp_selfread *sr = vp_selfread_new();
	struct vcpuperf_count vals[1];
	u64 a, b, c2;
	u32 ex;

	KUNIT_ASSERT_NOT_NULL(test, sr);
	KUNIT_EXPECT_TRUE(test, vp_selfread_done(sr, 1));
	KUNIT_EXPECT_FALSE(test, vp_selfread_take(sr, 1, vals, &ex, &a, &b,
						  &c2));
	KUNIT_EXPECT_EQ(test, vp_selfread_cpu_ns(sr), 0ULL);
	vp_selfread_kill(sr);	/* freed: kmemleak would say otherwise */
}

static struct kunit_case vpk_cases[] = {
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
	KUNIT_CASE(vpk_mul_div),
	KUNIT_CASE(vpk_scale),
	KUNIT_CASE(vpk_count_delta),
	KUNIT_CASE(vpk_durations),
	KUNIT_CASE(vpk_ring_basic),
	KUNIT_CASE(vpk_ring_exact_fill),
	KUNIT_CASE(vpk_ring_overflow),
	KUNIT_CASE(vpk_ring_wrap),
	KUNIT_CASE(vpk_counter_software),
	KUNIT_CASE(vpk_counter_restart),
	KUNIT_CASE(vpk_counter_no_pmu),
	KUNIT_CASE(vpk_counter_exit),
	KUNIT_CASE(vpk_counter_release),
	KUNIT_CASE(vpk_counter_user_faults),
	KUNIT_CASE(vpk_control_attach_detach),
	KUNIT_CASE(vpk_lifecycle),
	KUNIT_CASE(vpk_files_and_reader),
	KUNIT_CASE(vpk_collections),
	KUNIT_CASE(vpk_read_modes),
	KUNIT_CASE(vpk_read_kthread),
	KUNIT_CASE(vpk_selfread_alone),
	{}
};

static struct kunit_suite vpk_suite = {
	.name = "vcpuperf",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_cases,
};

kunit_test_suite(vpk_suite);

MODULE_DESCRIPTION("KUnit tests for vcpuperf");
MODULE_LICENSE("GPL");
