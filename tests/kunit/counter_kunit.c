// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite vcpuperf_counter: counter arithmetic (128-bit multiply-divide,
 * scaling by time enabled and running, deltas and restarts) and real kernel
 * counters (module/counter.c) on threads the test controls: software
 * events, a counter recreated, a hardware event without a PMU, a thread
 * that exits, release, a user process's page faults.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/umh.h>

#include "../../module/counter.h"
#include "../../module/vcpuperf.h"
#include "vpk.h"

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

/*
 * A hardware event in a VM without a PMU: ENOENT, cause no_pmu_event; a
 * named KVM event without its tracepoint: ENOENT, cause no_tracepoint.
 */
static void vpk_counter_no_pmu(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vcpuperf_event_desc desc;
	struct vp_counter *c = &ctx->counters[0];
	struct vpk_worker *w;

	w = vpk_worker_new(test, 0, 0, 0, true);
	/* A named KVM event without its tracepoint: never made, says why. */
	memset(&desc, 0, sizeof(desc));
	strscpy(desc.name, "kvm-exits", sizeof(desc.name));
	desc.type = PERF_TYPE_TRACEPOINT;
	desc.config = VCPUPERF_CONFIG_ABSENT;
	vp_counter_create(&ctx->counters[2], &desc, w->task);
	KUNIT_EXPECT_NULL(test, ctx->counters[2].event);
	KUNIT_EXPECT_EQ(test, ctx->counters[2].error, ENOENT);
	KUNIT_EXPECT_EQ(test, vp_counter_cause(&ctx->counters[2], &desc),
			VCPUPERF_CAUSE_NO_TRACEPOINT);

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

static struct kunit_case vpk_counter_cases[] = {
	KUNIT_CASE(vpk_mul_div),
	KUNIT_CASE(vpk_scale),
	KUNIT_CASE(vpk_count_delta),
	KUNIT_CASE(vpk_counter_software),
	KUNIT_CASE(vpk_counter_restart),
	KUNIT_CASE(vpk_counter_no_pmu),
	KUNIT_CASE(vpk_counter_exit),
	KUNIT_CASE(vpk_counter_release),
	KUNIT_CASE(vpk_counter_user_faults),
	{}
};

static struct kunit_suite vpk_counter_suite = {
	.name = "vcpuperf_counter",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_counter_cases,
};

kunit_test_suite(vpk_counter_suite);
