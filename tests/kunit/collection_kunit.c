// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite vcpuperf_collection: a collection's life on a private module
 * state: vp_control_apply() end to end, the lifecycle state machine fed
 * made-up values, the stream's one reader,
 * collections independent, limited, ended and destroyed, and a ring that
 * changes size with records queued.
 */
#include <kunit/test.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/xarray.h>

#include "../../module/collection.h"
#include "../../module/control.h"
#include "../../module/access.h"
#include "../../module/record.h"
#include "../../module/ring.h"
#include "../../module/sample.h"
#include "../../module/shared.h"
#include "../../module/stream.h"
#include "../../module/vcpuperf.h"
#include "vpk.h"

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
 * The lifecycle state machine (lifecycle.c), fed values no PMU-less VM
 * can produce: first_row, multiplexed once, no_counters after exactly
 * VP_NO_COUNTERS_INTERVALS intervals in which the thread ran, never for
 * a thread that did not run, not hidden by a software event that counts,
 * and task_exited with final counts (a thread that exited: not for
 * counters an exec ended).
 */
static void vpk_lifecycle(struct kunit *test)
{
	struct vp_coll *vp = vpk_coll_new(test, false);
	struct vpk_worker *w = vpk_worker_new(test, 0, 0, 0, false);
	const struct vcpuperf_rec *r[VPK_MAX_RECS];
	const struct vcpuperf_multiplexed *mx;
	const struct vcpuperf_first_row *fr;
	const struct vcpuperf_task_exited *te;
	const struct vcpuperf_no_counters *nc;
	const struct vcpuperf_sample *smp;
	struct vp_target *t, *t2, *t3, *t4, *t5;
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

	/*
	 * Both counters saw their thread's end while it lives on: an exec
	 * that changed its credentials (exec.c ends the target): a final
	 * sample and no task_exited.
	 */
	t5 = vpk_fake_target(test, 46, 1);
	v[0] = 9;
	v[1] = 90;
	v[2] = 90;
	KUNIT_EXPECT_TRUE(test, vpk_feed(vp, t5, v, 0x1, 0x1));
	n = vpk_drain(test, vp, buf, 64 * 1024, r);
	KUNIT_ASSERT_EQ(test, n, 2);
	smp = (const void *)r[0];
	KUNIT_EXPECT_TRUE(test, smp->flags & VCPUPERF_SAMPLE_FINAL);
	KUNIT_EXPECT_EQ(test, r[1]->type, VCPUPERF_REC_FIRST_ROW);

	/* Both counters saw the exit: final sample, then task_exited. */
	vpk_worker_stop(w);
	t->task = w->task;
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
	for (i = 1; i <= VP_NO_COUNTERS_INTERVALS + 1; i++) {
		v[0] = 0;
		v[1] = 1000ULL * i;
		v[2] = 0;
		KUNIT_EXPECT_FALSE(test, vpk_feed(vp, t2, v, 0x1, 0));
		n = vpk_drain(test, vp, buf, 64 * 1024, r);
		if (i == 1) {
			KUNIT_ASSERT_EQ(test, n, 2);
			fr = (const void *)r[1];
			KUNIT_EXPECT_EQ(test, fr->counters_populated, 0U);
		} else if (i == VP_NO_COUNTERS_INTERVALS) {
			KUNIT_ASSERT_EQ(test, n, 2);
			KUNIT_EXPECT_EQ(test, r[1]->type,
					VCPUPERF_REC_NO_COUNTERS);
			nc = (const void *)r[1];
			KUNIT_EXPECT_EQ(test, nc->intervals_ran,
					(u64)VP_NO_COUNTERS_INTERVALS);
			KUNIT_EXPECT_EQ(test, nc->cause,
					(u32)VCPUPERF_CAUSE_NEVER_COUNTED);
		} else {
			KUNIT_EXPECT_EQ(test, n, 1);
		}
	}
	KUNIT_EXPECT_EQ(test, t2->intervals_with_values, 0ULL);

	/* A thread that never runs (an idle vCPU) never gets no_counters. */
	t3 = vpk_fake_target(test, 44, 1);
	for (i = 1; i <= 2 * VP_NO_COUNTERS_INTERVALS; i++) {
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
	for (i = 1; i <= VP_NO_COUNTERS_INTERVALS; i++) {
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
		} else if (i == VP_NO_COUNTERS_INTERVALS) {
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
			(u64)VP_NO_COUNTERS_INTERVALS);
	mutex_unlock(&vp->lock);
}

/* ------------------------------------------------------------------ */
/* Open files: one stream reader                                       */

static void vpk_files_and_reader(struct kunit *test)
{
	struct vp_coll *vp = vpk_coll_new(test, false);
	struct vp_reader *r, *r2;

	/* The KUnit thread is root: CAP_SYS_ADMIN. */
	KUNIT_EXPECT_EQ(test, vp_may_open(), 0);

	r = vp_reader_open(vp);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	r2 = vp_reader_open(vp);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(r2), -EBUSY);
	vp_reader_close(r);
	KUNIT_EXPECT_EQ(test, atomic_read(&vp->reader_open), 0);
	r = vp_reader_open(vp);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	vp_reader_close(r);
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

	/*
	 * One thread in two collections: one shared kernel counter per
	 * event, each collection its own reference and baseline.
	 */
	KUNIT_ASSERT_EQ(test, vpk_attach_worker(a, w), 0);
	KUNIT_ASSERT_EQ(test, vpk_attach_worker(b, w), 0);
	ta = xa_load(&a->by_tid, task_pid_nr(w->task));
	tb = xa_load(&b->by_tid, task_pid_nr(w->task));
	KUNIT_ASSERT_NOT_NULL(test, ta);
	KUNIT_ASSERT_NOT_NULL(test, tb);
	KUNIT_EXPECT_NOT_NULL(test, ta->counters[0].event);
	KUNIT_EXPECT_PTR_EQ(test, ta->counters[0].event, tb->counters[0].event);
	KUNIT_EXPECT_PTR_EQ(test, ta->counters[0].sh, tb->counters[0].sh);
	KUNIT_EXPECT_EQ(test, vp_shared_users(ta->counters[0].sh), 2U);

	/* A command on one collection changes nothing of the other. */
	KUNIT_EXPECT_EQ(test, vp_control_apply(a, NULL, "interval 7ms", 12), 0);
	KUNIT_EXPECT_EQ(test, b->interval_ns, VP_INTERVAL_DEFAULT_NS);
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
	/* b's references went with it: a's counters have one user. */
	ta = xa_load(&a->by_tid, task_pid_nr(w->task));
	KUNIT_ASSERT_NOT_NULL(test, ta);
	KUNIT_EXPECT_EQ(test, vp_shared_users(ta->counters[0].sh), 1U);
}

/*
 * Collection ids: never 0 (the default collection's), unique among the
 * collections that exist, and a closed one's not given again at once.
 */
static void vpk_collection_ids(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_coll *a, *b, *c;
	u32 gone;

	vpk_coll_new(test, false);
	a = vp_coll_create(&ctx->mod, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, a);
	b = vp_coll_create(&ctx->mod, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, b);
	KUNIT_EXPECT_NE(test, a->id, 0U);
	KUNIT_EXPECT_NE(test, b->id, 0U);
	KUNIT_EXPECT_NE(test, a->id, b->id);
	KUNIT_EXPECT_NE(test, a->id, ctx->vp->id);
	gone = a->id;
	vp_coll_destroy(a);
	c = vp_coll_create(&ctx->mod, false);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, c);
	KUNIT_EXPECT_NE(test, c->id, gone);
	KUNIT_EXPECT_NE(test, c->id, b->id);
	KUNIT_EXPECT_NE(test, c->id, 0U);
	vp_coll_destroy(b);
	vp_coll_destroy(c);
}

/*
 * The authority of an attach is the opener's credentials, kept and
 * checked for every thread: without CAP_SYS_ADMIN nothing (-EPERM);
 * another uid without CAP_SYS_PTRACE may not count root's thread
 * (-EACCES), and its attach changes nothing; root's may.
 */
static void vpk_authority(struct kunit *test)
{
	struct vp_coll *vp = vpk_coll_new(test, false);
	struct vpk_worker *w = vpk_worker_new(test, 0, 0, 0, true);
	const struct cred *old;
	struct cred *noadmin, *other;
	char cmd[64];
	int n, ret;

	noadmin = prepare_creds();
	other = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, noadmin);
	KUNIT_ASSERT_NOT_NULL(test, other);
	cap_lower(noadmin->cap_effective, CAP_SYS_ADMIN);
	other->uid = KUIDT_INIT(1000);
	other->euid = KUIDT_INIT(1000);
	other->suid = KUIDT_INIT(1000);
	other->fsuid = KUIDT_INIT(1000);
	cap_lower(other->cap_effective, CAP_SYS_PTRACE);

	KUNIT_EXPECT_EQ(test, vp_may_count(noadmin, w->task, 0, NULL, 0),
			-EPERM);
	KUNIT_EXPECT_EQ(test, vp_may_count(other, w->task, 0, NULL, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vp_may_count(current_cred(), w->task, 0, NULL,
					   0), 0);

	n = scnprintf(cmd, sizeof(cmd), "attach tid=%d events=task-clock",
		      task_pid_nr(w->task));
	old = override_creds(other);
	ret = vp_control_apply(vp, NULL, cmd, n);
	revert_creds(old);
	KUNIT_EXPECT_EQ(test, ret, -EACCES);
	KUNIT_EXPECT_EQ(test, vp->nr_targets, 0U);
	KUNIT_EXPECT_EQ(test, vp_control_apply(vp, NULL, cmd, n), 0);
	KUNIT_EXPECT_EQ(test, vp->nr_targets, 1U);
	put_cred(noadmin);
	put_cred(other);
}

#define VPK_REC_SIZE	1024
#define VPK_POP_SIZE	4096

/* Queue records of VPK_REC_SIZE bytes while @bytes are not reached. */
static u64 vpk_queue(struct kunit *test, struct vp_ring *ring, size_t bytes)
{
	struct vcpuperf_rec *r = kunit_kzalloc(test, VPK_REC_SIZE, GFP_KERNEL);
	u64 seq = 0;

	KUNIT_ASSERT_NOT_NULL(test, r);
	while (ring->wr - ring->rd + VPK_REC_SIZE <= bytes) {
		memset(r, 0, VPK_REC_SIZE);
		r->type = VCPUPERF_REC_SAMPLE;
		r->size = VPK_REC_SIZE;
		KUNIT_ASSERT_EQ(test, vp_ring_put(ring, r, VP_REC_SAMPLE), 0);
		seq = r->seq;
	}
	kunit_kfree(test, r);
	return seq;
}

/* Pop every record: each seq must follow the last; returns how many. */
static u64 vpk_drain_in_order(struct kunit *test, struct vp_ring *ring,
			      u64 *next_seq)
{
	u8 *buf = kunit_kzalloc(test, VPK_POP_SIZE, GFP_KERNEL);
	size_t got, off;
	u64 n = 0;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	while ((got = vp_ring_pop(ring, buf, VPK_POP_SIZE)) > 0) {
		for (off = 0; off < got;) {
			struct vcpuperf_rec *r = (void *)(buf + off);

			KUNIT_EXPECT_EQ(test, r->seq, *next_seq);
			*next_seq = r->seq + 1;
			off += r->size;
			n++;
		}
	}
	kunit_kfree(test, buf);
	return n;
}

/*
 * The ring command: its memory is got before the collection's lock is
 * taken and given back after, the records queued move along in order, a
 * shrink they would not fit in changes nothing, and a change that meets
 * another one on the same collection still gets its memory.
 */
static void vpk_ring_changes(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_coll *c = vpk_coll_new(test, false);
	struct vp_module *mod = &ctx->mod;
	struct vp_ring_change rc = {};
	u64 base = mod->ring_kb_used - VPK_RING_KB, last, next = 1, queued;

	last = vpk_queue(test, &c->ring, 30 * SZ_1K);
	queued = c->ring.records;
	KUNIT_EXPECT_EQ(test, vp_control_apply(c, NULL, "ring 128K", 9), 0);
	KUNIT_EXPECT_EQ(test, c->ring_kb, 128U);
	KUNIT_EXPECT_EQ(test, c->ring.size, (size_t)128 * SZ_1K);
	KUNIT_EXPECT_EQ(test, c->ring.records, queued);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, base + 128);
	KUNIT_EXPECT_EQ(test, vpk_drain_in_order(test, &c->ring, &next), queued);
	KUNIT_EXPECT_EQ(test, next, last + 1);

	/* 70 KiB queued do not fit in 64 KiB: refused, nothing changed. */
	vpk_queue(test, &c->ring, 70 * SZ_1K);
	queued = c->ring.records;
	KUNIT_EXPECT_EQ(test, vp_control_apply(c, NULL, "ring 64K", 8), -EBUSY);
	KUNIT_EXPECT_EQ(test, c->last_errno, -EBUSY);
	KUNIT_EXPECT_EQ(test, c->ring_kb, 128U);
	KUNIT_EXPECT_EQ(test, c->ring.size, (size_t)128 * SZ_1K);
	KUNIT_EXPECT_EQ(test, c->ring.records, queued);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, base + 128);
	KUNIT_EXPECT_EQ(test, vpk_drain_in_order(test, &c->ring, &next), queued);

	/* The size it asks is the size now: nothing is allocated... */
	KUNIT_EXPECT_EQ(test, vp_coll_ring_prepare(c, &rc, 128, ctx->err,
						   ERRLEN), 0);
	KUNIT_EXPECT_NULL(test, rc.buf);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, base + 128);
	/* ...but another command changes it before the lock is taken. */
	KUNIT_EXPECT_EQ(test, vp_control_apply(c, NULL, "ring 64K", 8), 0);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, base + 64);
	vpk_queue(test, &c->ring, 10 * SZ_1K);
	queued = c->ring.records;
	mutex_lock(&c->lock);
	KUNIT_EXPECT_EQ(test, vp_coll_set_ring(c, &rc, ctx->err, ERRLEN), 0);
	mutex_unlock(&c->lock);
	/* Until the old ring is given back, both count. */
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, base + 64 + 128);
	vp_coll_ring_finish(c, &rc);
	KUNIT_EXPECT_NULL(test, rc.buf);
	KUNIT_EXPECT_EQ(test, c->ring_kb, 128U);
	KUNIT_EXPECT_EQ(test, c->ring.size, (size_t)128 * SZ_1K);
	KUNIT_EXPECT_EQ(test, mod->ring_kb_used, base + 128);
	KUNIT_EXPECT_EQ(test, vpk_drain_in_order(test, &c->ring, &next), queued);
}

static struct kunit_case vpk_collection_cases[] = {
	KUNIT_CASE(vpk_control_attach_detach),
	KUNIT_CASE(vpk_lifecycle),
	KUNIT_CASE(vpk_files_and_reader),
	KUNIT_CASE(vpk_collections),
	KUNIT_CASE(vpk_collection_ids),
	KUNIT_CASE(vpk_authority),
	KUNIT_CASE(vpk_ring_changes),
	{}
};

static struct kunit_suite vpk_collection_suite = {
	.name = "vcpuperf_collection",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_collection_cases,
};

kunit_test_suite(vpk_collection_suite);
