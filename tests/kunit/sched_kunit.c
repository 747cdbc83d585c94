// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite vcpuperf_sched: the scheduler's figures (module/sched.c).  A
 * thread's never go back (a read between the two stores that end a wait
 * would), no_sched writes none; a process's sum, on a thread the test
 * controls, holds what the thread did after it has exited and its task is
 * gone from the process: the runtime and switches the kernel moved into
 * the signal_struct at its release, exactly.  Who took a thread's CPU
 * (module/who.c): the kind of what ran, the other VMs' slots, and the
 * probes on the scheduler on two kernel threads sharing a CPU, against
 * the waiting one's sched_info.run_delay.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

#include "../../module/sched.h"
#include "../../module/vcpuperf.h"
#include "../../module/who.h"
#include "vpk.h"

/* CPU time the worker spins for: far above a tick's worth of error. */
#define VPK_SCHED_BUSY_NS	(20 * NSEC_PER_MSEC)
#define VPK_SCHED_SLEEPS	5
/* How long the kernel may take to release an exited kthread: 20 ms x. */
#define VPK_SCHED_REAP_TRIES	250
/* How long two kernel threads share one CPU in the who test. */
#define VPK_WHO_SPIN_NS		(200 * NSEC_PER_MSEC)
/* What a scheduler's pass may add to a wait the probes measure. */
#define VPK_WHO_PASS_NS		(200 * NSEC_PER_USEC)
#define VPK_WHO_VM_A		101
#define VPK_WHO_VM_B		202

/* A target of @task with no event, its figures' base taken now. */
static struct vp_target *vpk_sched_target(struct kunit *test,
					  struct task_struct *task, u32 flags)
{
	struct vp_target *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->task = task;
	t->flags = flags;
	vp_sched_start(t);
	return t;
}

static void vpk_sched_never_back(struct kunit *test)
{
	struct vp_target *t = vpk_sched_target(test, current, 0);
	struct vcpuperf_sample *s;
	struct vcpuperf_sched now, *out;

	s = kunit_kzalloc(test, vp_target_sample_size(t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	out = vp_sample_sched(s, 0);
	now = t->sched_base;
	now.wait_ns += 5000;
	now.run_ns += 7000;
	KUNIT_EXPECT_EQ(test, vp_sched_sample(t, &now, s),
			(u32)VCPUPERF_SAMPLE_SCHED);
	KUNIT_EXPECT_EQ(test, out->wait_ns, 5000ULL);
	KUNIT_EXPECT_EQ(test, out->run_ns, 7000ULL);
	/* The wait ended, read before run_delay grew: no step back. */
	now.wait_ns -= 3000;
	now.run_ns += 1000;
	vp_sched_sample(t, &now, s);
	KUNIT_EXPECT_EQ(test, out->wait_ns, 5000ULL);
	KUNIT_EXPECT_EQ(test, out->run_ns, 8000ULL);
	now.wait_ns += 4000;
	vp_sched_sample(t, &now, s);
	KUNIT_EXPECT_EQ(test, out->wait_ns, 6000ULL);
}

static void vpk_sched_no_sched(struct kunit *test)
{
	struct vp_target *t = vpk_sched_target(test, current,
					       VCPUPERF_ATTACH_NO_SCHED);
	struct vcpuperf_sample *s;

	KUNIT_EXPECT_EQ(test, vp_target_sample_size(t),
			sizeof(struct vcpuperf_sample));
	s = kunit_kzalloc(test, vp_target_sample_size(t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_EXPECT_EQ(test, vp_sched_sample(t, NULL, s), 0U);
}

static void vpk_sched_process_keeps_exited(struct kunit *test)
{
	struct vpk_worker *w = vpk_worker_new(test, 0, VPK_SCHED_SLEEPS,
					      VPK_SCHED_BUSY_NS, false);
	struct vcpuperf_sched base, ran, gone;
	struct signal_struct *sig;
	struct vp_sched_proc *sp;
	struct pid *pid;
	int i;

	vp_sched_read(w->task, &base);
	sp = vp_sched_proc_new(w->task);
	KUNIT_ASSERT_NOT_NULL(test, sp);
	pid = get_task_pid(w->task, PIDTYPE_TGID);
	vpk_worker_go(w);
	KUNIT_ASSERT_TRUE(test, vpk_worker_wait(w));
	KUNIT_EXPECT_EQ(test, vp_sched_proc_sample(sp, pid, &ran), 0);
	KUNIT_EXPECT_GE(test, ran.run_ns, VPK_SCHED_BUSY_NS);
	KUNIT_EXPECT_GE(test, ran.voluntary, VPK_SCHED_SLEEPS);
	KUNIT_EXPECT_EQ(test, ran.cpu, 0U);
	/* Exited, and released (a kthread is reaped at once): final figures. */
	vpk_worker_stop(w);
	for (i = 0; i < VPK_SCHED_REAP_TRIES && pid_has_task(pid, PIDTYPE_TGID);
	     i++)
		msleep(20);
	KUNIT_ASSERT_FALSE(test, pid_has_task(pid, PIDTYPE_TGID));
	KUNIT_EXPECT_EQ(test, vp_sched_proc_sample(sp, pid, &gone), 0);
	/*
	 * What the kernel kept at the release, as getrusage() has it; the
	 * last steps of the exit (its final switch among them) come after.
	 */
	sig = w->task->signal;
	KUNIT_EXPECT_EQ(test, gone.run_ns,
			sig->sum_sched_runtime - base.run_ns);
	KUNIT_EXPECT_EQ(test, gone.voluntary, sig->nvcsw - base.voluntary);
	KUNIT_EXPECT_EQ(test, gone.involuntary,
			sig->nivcsw - base.involuntary);
	KUNIT_EXPECT_GE(test, gone.run_ns, ran.run_ns);
	KUNIT_EXPECT_LE(test, gone.run_ns,
			w->task->se.sum_exec_runtime - base.run_ns);
	KUNIT_EXPECT_GE(test, gone.wait_ns, ran.wait_ns);
	KUNIT_EXPECT_GE(test, gone.timeslices, ran.timeslices);
	KUNIT_EXPECT_EQ(test, gone.valid, ran.valid);
	put_pid(pid);
	vp_sched_proc_free(sp);
}

static void vpk_who_kinds(struct kunit *test)
{
	struct vcpuperf_who acc = {};
	u32 i;

	KUNIT_EXPECT_EQ(test, vp_who_kind_of(1, true, true, 1, true),
			VCPUPERF_WHO_IDLE);
	KUNIT_EXPECT_EQ(test, vp_who_kind_of(1, false, true, 1, false),
			VCPUPERF_WHO_KERNEL);
	KUNIT_EXPECT_EQ(test, vp_who_kind_of(1, false, false, 1, true),
			VCPUPERF_WHO_SAME_VM);
	KUNIT_EXPECT_EQ(test, vp_who_kind_of(1, false, false, 2, true),
			VCPUPERF_WHO_OTHER_VM);
	KUNIT_EXPECT_EQ(test, vp_who_kind_of(1, false, false, 2, false),
			VCPUPERF_WHO_HOST);
	/* Slots in the order the VMs come; one past them is left out. */
	vp_who_add_vm(&acc, VPK_WHO_VM_A, 10);
	vp_who_add_vm(&acc, VPK_WHO_VM_B, 20);
	vp_who_add_vm(&acc, VPK_WHO_VM_A, 5);
	for (i = 2; i < VCPUPERF_WHO_VMS + 1; i++)
		vp_who_add_vm(&acc, VPK_WHO_VM_B + i, 1);
	KUNIT_EXPECT_EQ(test, acc.vms[0].pid, (u32)VPK_WHO_VM_A);
	KUNIT_EXPECT_EQ(test, acc.vms[0].wait_ns, 15ULL);
	KUNIT_EXPECT_EQ(test, acc.vms[1].pid, (u32)VPK_WHO_VM_B);
	KUNIT_EXPECT_EQ(test, acc.vms[1].wait_ns, 20ULL);
	for (i = 2; i < VCPUPERF_WHO_VMS; i++)
		KUNIT_EXPECT_EQ(test, acc.vms[i].pid, (u32)(VPK_WHO_VM_B + i));
}

/* A kernel thread that spins (yielding where the scheduler asks) a while. */
struct vpk_spin {
	u64 ns;
	struct completion done;
};

static int vpk_spin_fn(void *data)
{
	struct vpk_spin *sp = data;
	u64 end = local_clock() + sp->ns;

	while (local_clock() < end)
		cond_resched();
	complete(&sp->done);
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static void vpk_who_shares_a_cpu(struct kunit *test)
{
	struct vpk_spin sv = { .ns = VPK_WHO_SPIN_NS };
	struct vpk_spin sh = { .ns = VPK_WHO_SPIN_NS };
	struct task_struct *victim, *hog;
	struct vcpuperf_who out;
	struct vp_who *w, *w2;
	u64 total = 0;
	u32 i;

	init_completion(&sv.done);
	init_completion(&sh.done);
	victim = kthread_create(vpk_spin_fn, &sv, "vpk_victim");
	KUNIT_ASSERT_FALSE(test, IS_ERR(victim));
	hog = kthread_create(vpk_spin_fn, &sh, "vpk_hog");
	KUNIT_ASSERT_FALSE(test, IS_ERR(hog));
	kthread_bind(victim, 0);
	kthread_bind(hog, 0);
	w = vp_who_get(victim);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	/* A second user shares the entry. */
	w2 = vp_who_get(victim);
	KUNIT_EXPECT_PTR_EQ(test, w, w2);
	vp_who_put(w2);
	wake_up_process(hog);
	wake_up_process(victim);
	wait_for_completion(&sv.done);
	wait_for_completion(&sh.done);
	vp_who_read(w, &out);
	for (i = 0; i < VCPUPERF_WHO_NR; i++)
		total += out.wait_ns[i];
	kunit_info(test, "victim waited %llu ns: kernel %llu, %u slices",
		   total, out.wait_ns[VCPUPERF_WHO_KERNEL],
		   (u32)victim->sched_info.pcount);
	/* The two shared the CPU: each waited for the other. */
	KUNIT_EXPECT_GE(test, total, VPK_WHO_SPIN_NS / 4);
	KUNIT_EXPECT_GE(test, out.wait_ns[VCPUPERF_WHO_KERNEL], total * 8 / 10);
	KUNIT_EXPECT_EQ(test, out.valid, 1U);
#ifdef CONFIG_SCHED_INFO
	/* Against the scheduler's own, since the thread began. */
	KUNIT_EXPECT_LE(test, total,
			victim->sched_info.run_delay * 11 / 10 +
			victim->sched_info.pcount * VPK_WHO_PASS_NS);
	KUNIT_EXPECT_GE(test, total, victim->sched_info.run_delay * 9 / 10);
#endif
	kthread_stop(victim);
	kthread_stop(hog);
	vp_who_put(w);
}

static struct kunit_case vpk_sched_cases[] = {
	KUNIT_CASE(vpk_sched_never_back),
	KUNIT_CASE(vpk_sched_no_sched),
	KUNIT_CASE(vpk_sched_process_keeps_exited),
	KUNIT_CASE(vpk_who_kinds),
	KUNIT_CASE(vpk_who_shares_a_cpu),
	{}
};

static struct kunit_suite vpk_sched_suite = {
	.name = "vcpuperf_sched",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_sched_cases,
};

kunit_test_suite(vpk_sched_suite);
