// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite vcpuperf_read: how a pass reads running threads
 * (module/pass.c, module/selfread.c): the read modes, the kernel-thread
 * fallback, and a self-read state that never queued anything.
 */
#include <kunit/test.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/mutex.h>

#include "../../module/control.h"
#include "../../module/pass.h"
#include "../../module/selfread.h"
#include "../../module/vcpuperf.h"
#include "vpk.h"

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
	struct vp_reading r;

	KUNIT_ASSERT_NOT_NULL(test, sr);
	KUNIT_EXPECT_TRUE(test, vp_selfread_done(sr, 1));
	KUNIT_EXPECT_FALSE(test, vp_selfread_take(sr, 1, &r));
	KUNIT_EXPECT_EQ(test, vp_selfread_cpu_ns(sr), 0ULL);
	vp_selfread_kill(sr);	/* freed: kmemleak would say otherwise */
}

static struct kunit_case vpk_read_cases[] = {
	KUNIT_CASE(vpk_read_modes),
	KUNIT_CASE(vpk_read_kthread),
	KUNIT_CASE(vpk_selfread_alone),
	{}
};

static struct kunit_suite vpk_read_suite = {
	.name = "vcpuperf_read",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_read_cases,
};

kunit_test_suite(vpk_read_suite);
