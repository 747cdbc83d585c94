// SPDX-License-Identifier: GPL-2.0
/*
 * The fixtures every vcpuperf KUnit suite shares (vpk.h): worker kthreads,
 * the private module state and its collections, and the per-test context
 * torn down by vpk_exit() whatever the test did.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/task.h>

#include "../../module/collection.h"
#include "../../module/counter.h"
#include "../../module/ring.h"
#include "../../module/sampler.h"
#include "../../module/vcpuperf.h"
#include "vpk.h"

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

/**
 * vpk_worker_new() - a worker thread, created but not yet running
 * @test:	the test, whose context holds the worker
 * @idx:	which of the context's workers
 * @sleeps:	sleep a jiffy this many times
 * @busy_ns:	then spin for this much CPU time
 * @hold:	then wait for kthread_stop()
 *
 * Return: the worker, its task referenced (vpk_exit() stops and puts it).
 */
struct vpk_worker *vpk_worker_new(struct kunit *test, unsigned int idx,
				  unsigned int sleeps, u64 busy_ns, bool hold)
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

/**
 * vpk_worker_go() - let a worker run its work
 * @w:		the worker
 */
void vpk_worker_go(struct vpk_worker *w)
{
	w->started = true;
	wake_up_process(w->task);
	complete(&w->go);
}

/**
 * vpk_worker_wait() - wait for the worker's work to be done
 * @w:		the worker (it may still hold)
 *
 * Return: false when it was not done within 30 s.
 */
bool vpk_worker_wait(struct vpk_worker *w)
{
	return wait_for_completion_timeout(&w->done, 30 * HZ) != 0;
}

/**
 * vpk_worker_stop() - stop a worker; returns once its thread has exited
 * @w:		the worker, started or not
 */
void vpk_worker_stop(struct vpk_worker *w)
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

static void vpk_module_setup(struct vpk_ctx *ctx)
{
	if (ctx->mod_ready)
		return;
	vp_module_setup(&ctx->mod, VPK_MAX_COLLECTIONS, VPK_RING_TOTAL_KB,
			VCPUPERF_MAX_TARGETS, VPK_RING_KB);
	ctx->mod_ready = true;
}

/**
 * vpk_coll_new() - a collection as an open of /dev/vcpuperf makes it
 * @test:	the test, whose context's private module state it joins
 * @sampler:	keep its sampling kthread; without, the kthread is stopped,
 *		so that only the test drives passes
 *
 * Return: the collection (vpk_exit() destroys it).
 */
struct vp_coll *vpk_coll_new(struct kunit *test, bool sampler)
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

/**
 * vpk_init() - every suite's init: a zeroed per-test context
 * @test:	the test
 *
 * Return: 0, or -ENOMEM.
 */
int vpk_init(struct kunit *test)
{
	test->priv = kunit_kzalloc(test, sizeof(struct vpk_ctx), GFP_KERNEL);
	return test->priv ? 0 : -ENOMEM;
}

/**
 * vpk_exit() - every suite's exit: tear down whatever the test left
 * @test:	the test
 *
 * Counters released, the collection destroyed, workers stopped and put,
 * the ring freed.
 */
void vpk_exit(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	int i;

	for (i = 0; i < VPK_MAX_COUNTERS; i++)
		vp_counter_release(&ctx->counters[i]);
	vp_counter_release(&ctx->umh_counter);
	if (ctx->vp)
		vp_coll_destroy(ctx->vp);
	if (ctx->mod_ready)
		vp_module_teardown(&ctx->mod);
	for (i = 0; i < VPK_MAX_WORKERS; i++)
		vpk_worker_put(&ctx->workers[i]);
	if (ctx->ring.buf)
		vp_ring_free(&ctx->ring);
}

MODULE_DESCRIPTION("KUnit tests for vcpuperf");
MODULE_LICENSE("GPL");
