// SPDX-License-Identifier: GPL-2.0
/*
 * A running thread reads its own counters.
 *
 * perf_event_read_value() on a counter whose thread runs on another CPU
 * is one synchronous cross-CPU call per counter (and on a KVM host one VM
 * exit each).  Kernel counters cannot be grouped, and the local read
 * (perf_event_read_local()) is not exported.  task_work_add() is: the
 * sampler queues one work on the thread, the thread runs it on its next
 * return to user mode or before its next guest entry (KVM runs pending
 * task work in its run loop), and there its counters are local: one read
 * each, no IPI.  The sampler waits for the values up to a deadline, then
 * falls back to the cross-CPU read.
 *
 * Two ways to make the thread look at its work:
 *  - kick (TWA_RESUME): one reschedule IPI now;
 *  - lazy (TWA_NONE, then TIF_NOTIFY_RESUME set without kick_process()):
 *    no IPI; a running thread goes through its return path by itself at
 *    the latest at the host's next timer tick.  The kick is sent only if
 *    the work has not run by then.
 * Never TWA_SIGNAL: KVM_RUN would return -EINTR to QEMU.
 *
 * There is no exported task_work cancel, so a queued work outlives
 * whatever happens to its target: its memory (struct vp_selfread) is
 * reference counted, the target marks it dead before releasing the
 * counters (and waits for a read in progress), and module exit waits for
 * every queued work to have run (vp_selfread_drain()).  The work never
 * takes a lock the sampler holds across a pass: it hands its values over
 * under the structure's own spinlock.
 *
 * A thread that stays in the kernel keeps its work queued: a thread
 * blocked in a long system call, or a user worker (vhost) that never
 * returns to user mode, which pass.c never asks.  So a work still queued
 * VP_SELFREAD_STUCK_NS after it was queued (a later pass finds it, or
 * its target ends), far more than a timer tick, holds a reference on the
 * module:
 * rmmod then fails at once ("in use") instead of waiting for the thread,
 * and the status file and the kernel log name the threads.  The work
 * drops the reference as its last action; module exit's RCU-tasks grace
 * period covers its last instructions.  Works are bounded per thread
 * (VP_SELFREAD_PER_TASK over all targets, ended ones included), so
 * attaching and detaching a thread that stays in the kernel does not
 * pile them up.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/task_work.h>
#include <linux/timekeeping.h>
#include <linux/wait_bit.h>

#include "counter.h"
#include "sched.h"
#include "selfread.h"
#include "shared.h"

/* Works queued on threads and not yet run, module-wide: unload waits. */
static atomic_t vp_selfread_queued = ATOMIC_INIT(0);

/* Works one thread may have queued at once, over every target. */
#define VP_SELFREAD_PER_TASK	4
/* A work queued this long: its thread stays in the kernel (stuck). */
#define VP_SELFREAD_STUCK_NS	(100 * NSEC_PER_MSEC)
/* Threads named in the unload warning. */
#define VP_SELFREAD_NAMED	8
/* Buckets of the queued works' table (2^bits). */
#define VP_SELFREAD_HASH_BITS	8
/* Unload names the threads it still waits for this often, seconds. */
#define VP_DRAIN_WARN_SECS	10

/* The queued works by thread, for the bound and the names (vp_sr_lock). */
static DEFINE_SPINLOCK(vp_sr_lock);
static DEFINE_HASHTABLE(vp_sr_tasks, VP_SELFREAD_HASH_BITS);

/**
 * struct vp_selfread - a target's counters, read by its own thread
 * @work:	queued on the thread with task_work_add()
 * @ref:	the target's reference, and one while @work is queued
 * @lock:	protects every field below
 * @dead:	the target is ending: the counters must not be touched
 *		(unless @release)
 * @release:	the target ended while the thread was reading: the thread
 *		releases the counters when done
 * @queued:	@work is queued and has not run yet
 * @reading:	the thread is reading the counters now
 * @want:	pass the queued work is for
 * @done:	pass whose values are in @vals, 0 for none
 * @nr:		entries in @events
 * @events:	the target's counters, NULL where there is none
 * @shared:	the target's references on them, released by the thread
 *		when the target ended while it read (shared.c)
 * @read:	the values read, for pass @done
 * @run_ns:	time the reads took in works that were not switched out
 *		meanwhile, for the module's CPU accounting
 * @runs:	works that ran (read) and were not switched out
 * @runs_switched: works that read and were switched out meanwhile (their
 *		wall time is not CPU time: they count at the mean of @runs)
 * @holds_module: the queued work holds a module reference (it is stuck):
 *		dropped when it runs
 * @queued_ns:	when the work was queued
 * @task:	the thread it is queued on, referenced (vp_sr_lock)
 * @hnode:	in vp_sr_tasks while queued (vp_sr_lock)
 */
struct vp_selfread {
	struct callback_head work;
	refcount_t ref;
	spinlock_t lock;	/* see @lock above */
	bool dead;
	bool release;
	bool queued;
	bool reading;
	u64 want;
	u64 done;
	u32 nr;
	struct perf_event *events[VCPUPERF_MAX_EVENTS];
	struct vp_shared *shared[VCPUPERF_MAX_EVENTS];
	struct vp_reading read;
	u64 run_ns;
	u64 runs;
	u64 runs_switched;
	bool holds_module;
	u64 queued_ns;
	struct task_struct *task;
	struct hlist_node hnode;
};

/*
 * List @sr as queued on @task, unless the thread has VP_SELFREAD_PER_TASK
 * works queued already.  Return: true when listed (the table holds a
 * reference on @task).
 */
static bool vp_sr_enlist(struct vp_selfread *sr, struct task_struct *task)
{
	struct vp_selfread *other;
	u32 n = 0;

	spin_lock(&vp_sr_lock);
	hash_for_each_possible(vp_sr_tasks, other, hnode, (unsigned long)task)
		if (other->task == task)
			n++;
	if (n >= VP_SELFREAD_PER_TASK) {
		spin_unlock(&vp_sr_lock);
		return false;
	}
	get_task_struct(task);
	sr->task = task;
	hash_add(vp_sr_tasks, &sr->hnode, (unsigned long)task);
	spin_unlock(&vp_sr_lock);
	return true;
}

/* The work of @sr is no longer queued. */
static void vp_sr_delist(struct vp_selfread *sr)
{
	struct task_struct *task;

	spin_lock(&vp_sr_lock);
	hash_del(&sr->hnode);
	task = sr->task;
	sr->task = NULL;
	spin_unlock(&vp_sr_lock);
	put_task_struct(task);
}

/*
 * The queued work of @sr is stuck: it keeps the module until it runs
 * (see the top of this file).  Under sr->lock, with sr->queued set.
 */
static void vp_sr_hold_module(struct vp_selfread *sr)
{
	if (!sr->holds_module && try_module_get(THIS_MODULE))
		sr->holds_module = true;
}

static void vp_selfread_put(struct vp_selfread *sr)
{
	if (refcount_dec_and_test(&sr->ref))
		kfree(sr);
}

/* The task work: runs on the target's own thread, in process context. */
static void vp_selfread_fn(struct callback_head *cb)
{
	struct vp_selfread *sr = container_of(cb, struct vp_selfread, work);
	struct vp_reading r;
	u64 t1 = 0;
	unsigned long csw = 0;
	u32 i, nr = 0;
	bool read, release, held;

	spin_lock(&sr->lock);
	read = !sr->dead;
	sr->reading = read;
	if (read)
		nr = sr->nr;
	spin_unlock(&sr->lock);

	if (read) {
		/* The counters stay: a target that ends hands them over. */
		csw = current->nvcsw + current->nivcsw;
		r.exited = 0;
		r.runtime = READ_ONCE(current->se.sum_exec_runtime);
		vp_sched_read(current, &r.sched);
		r.t_mono = ktime_get_ns();
		r.t_wall = ktime_get_real_ns();
		for (i = 0; i < nr; i++) {
			if (!sr->events[i])
				continue;
			vp_event_read(sr->events[i], &r.vals[i]);
			if (vp_event_exited(sr->events[i]))
				r.exited |= BIT(i);
		}
		t1 = ktime_get_ns();
		r.window = t1 - r.t_mono;
	}

	/*
	 * Off the table while still queued: once queued is clear below, the
	 * sampler may queue @sr again and list it anew.
	 */
	vp_sr_delist(sr);
	spin_lock(&sr->lock);
	if (read) {
		sr->read = r;
		if (csw == current->nvcsw + current->nivcsw) {
			sr->run_ns += r.window;
			sr->runs++;
		} else {
			sr->runs_switched++;
		}
		sr->done = sr->want;
	}
	sr->reading = false;
	sr->queued = false;
	release = sr->release;
	held = sr->holds_module;
	sr->holds_module = false;
	spin_unlock(&sr->lock);

	/* The target ended while this read: its counters are ours to go. */
	if (release)
		for (i = 0; i < nr; i++)
			vp_shared_put(sr->shared[i]);
	vp_selfread_put(sr);
	/*
	 * Last: unload may go on once this reaches zero (or the module
	 * reference is dropped); it then waits for an RCU-tasks grace
	 * period, so no thread is left in this text.
	 */
	if (atomic_dec_and_test(&vp_selfread_queued))
		wake_up_var(&vp_selfread_queued);	/* a full barrier */
	if (held)
		module_put(THIS_MODULE);
}

/**
 * vp_selfread_new() - the self-read state of a new target
 *
 * Return: it, with the target's reference, or NULL.
 */
struct vp_selfread *vp_selfread_new(void)
{
	struct vp_selfread *sr;

	sr = kzalloc(sizeof(*sr), GFP_KERNEL);
	if (!sr)
		return NULL;
	refcount_set(&sr->ref, 1);
	spin_lock_init(&sr->lock);
	init_task_work(&sr->work, vp_selfread_fn);
	return sr;
}

/**
 * vp_selfread_set_events() - tell the self-read which counters to read
 * @sr:		the target's self-read state, not queued yet
 * @counters:	the target's counters
 * @nr:		how many
 */
void vp_selfread_set_events(struct vp_selfread *sr,
			    const struct vp_counter *counters, u32 nr)
{
	u32 i;

	spin_lock(&sr->lock);
	sr->nr = nr;
	for (i = 0; i < nr; i++) {
		sr->events[i] = counters[i].event;
		sr->shared[i] = counters[i].sh;
	}
	spin_unlock(&sr->lock);
}

/**
 * vp_selfread_kill() - the target ends: its counters are about to go
 * @sr:		the target's self-read state; the target's reference is
 *		dropped here
 *
 * A work still queued will find it dead and touch nothing.  A work that is
 * reading the counters right now keeps them: it releases them itself when
 * it is done (a thread switched out in the middle of its read may take a
 * while, and a detach of hundreds of threads must not wait for each).
 * Never waits.
 *
 * Return: true when the counters were handed to the thread (the caller
 * must not release them); false when the caller releases them.
 */
bool vp_selfread_kill(struct vp_selfread *sr)
{
	bool handed;

	spin_lock(&sr->lock);
	sr->dead = true;
	/* Reading now: the thread releases the counters when done. */
	handed = sr->reading;
	sr->release = handed;
	/* Its work outlives it; one queued for long keeps the module. */
	if (sr->queued && ktime_get_ns() - sr->queued_ns > VP_SELFREAD_STUCK_NS)
		vp_sr_hold_module(sr);
	spin_unlock(&sr->lock);
	vp_selfread_put(sr);
	return handed;
}

/**
 * vp_selfread_queue() - ask a running thread to read its own counters
 * @sr:		its self-read state
 * @task:	the thread
 * @pass:	the pass the values are for
 * @lazy:	queue without an interrupt (see the top of this file)
 *
 * A previous work still queued after VP_SELFREAD_STUCK_NS (the thread
 * has been in the kernel all along) now holds the module (see the top of
 * this file).
 *
 * Return: 0; -EBUSY when the previous work has not run yet, or the thread
 * has VP_SELFREAD_PER_TASK works queued already (of other targets);
 * -ESRCH when the thread is exiting (past running task work).
 */
int vp_selfread_queue(struct vp_selfread *sr, struct task_struct *task,
		      u64 pass, bool lazy)
{
	int ret;

	spin_lock(&sr->lock);
	if (sr->queued) {
		if (ktime_get_ns() - sr->queued_ns > VP_SELFREAD_STUCK_NS)
			vp_sr_hold_module(sr);
		spin_unlock(&sr->lock);
		return -EBUSY;
	}
	sr->queued = true;
	sr->want = pass;
	sr->queued_ns = ktime_get_ns();
	spin_unlock(&sr->lock);

	if (!vp_sr_enlist(sr, task)) {
		spin_lock(&sr->lock);
		sr->queued = false;
		spin_unlock(&sr->lock);
		return -EBUSY;
	}
	refcount_inc(&sr->ref);
	atomic_inc(&vp_selfread_queued);
	ret = task_work_add(task, &sr->work, lazy ? TWA_NONE : TWA_RESUME);
	if (ret) {
		vp_sr_delist(sr);
		spin_lock(&sr->lock);
		sr->queued = false;
		spin_unlock(&sr->lock);
		refcount_dec(&sr->ref);	/* the target still holds one */
		if (atomic_dec_and_test(&vp_selfread_queued))
			wake_up_var(&vp_selfread_queued);
		return ret;
	}
	if (lazy)
		/*
		 * set_notify_resume() without its kick_process(): the thread
		 * runs the work on its next return to user or guest mode.
		 */
		set_tsk_thread_flag(task, TIF_NOTIFY_RESUME);
	return 0;
}

/**
 * vp_selfread_done() - have the values of a pass arrived?
 * @sr:		the self-read state
 * @pass:	the pass
 *
 * Return: true when the work for @pass has run (or the thread was dead).
 */
bool vp_selfread_done(struct vp_selfread *sr, u64 pass)
{
	bool done;

	spin_lock(&sr->lock);
	done = sr->done == pass || !sr->queued;
	spin_unlock(&sr->lock);
	return done;
}

/**
 * vp_selfread_take() - copy out the values of a pass
 * @sr:		the self-read state
 * @pass:	the pass
 * @r:		the read, filled in
 *
 * Return: true when the values are of @pass; false (nothing copied) when
 * the work did not run for it.
 */
bool vp_selfread_take(struct vp_selfread *sr, u64 pass, struct vp_reading *r)
{
	bool ok;

	spin_lock(&sr->lock);
	ok = sr->done == pass;
	if (ok)
		*r = sr->read;
	spin_unlock(&sr->lock);
	return ok;
}

/**
 * vp_selfread_cpu_ns() - CPU time the thread spent in its reads so far
 * @sr:		the self-read state
 *
 * Wall time of the reads, which is CPU time when the thread was not
 * switched out meanwhile; reads it was switched out in count at the mean
 * of the others.
 *
 * Return: ns.
 */
u64 vp_selfread_cpu_ns(struct vp_selfread *sr)
{
	u64 ns;

	spin_lock(&sr->lock);
	ns = sr->run_ns;
	if (sr->runs_switched && sr->runs)
		ns += div64_u64(sr->run_ns * sr->runs_switched, sr->runs);
	spin_unlock(&sr->lock);
	return ns;
}

/**
 * vp_selfread_show() - the threads with a read of this module queued
 * @m:		the status file, or NULL for the kernel log
 * @max:	how many to name (0: all)
 *
 * One line: how many works are queued, how many of them hold the module
 * (stuck), then "tid comm (age ms)" for up to @max of them.
 */
void vp_selfread_show(struct seq_file *m, u32 max)
{
	char line[VP_SELFREAD_NAMED * (TASK_COMM_LEN + 32) + 96];
	char comm[TASK_COMM_LEN];
	struct vp_selfread *sr;
	u32 n = 0, held = 0, named = 0, bkt;
	size_t len = 0;
	u64 now = ktime_get_ns();

	spin_lock(&vp_sr_lock);
	hash_for_each(vp_sr_tasks, bkt, sr, hnode) {
		n++;
		held += READ_ONCE(sr->holds_module);
		if ((max && named >= max) || named >= VP_SELFREAD_NAMED)
			continue;
		get_task_comm(comm, sr->task);
		len += scnprintf(line + len, sizeof(line) - len, " %d %s (%llu ms)",
				 task_pid_nr(sr->task), comm,
				 div_u64(now - READ_ONCE(sr->queued_ns),
					 NSEC_PER_MSEC));
		named++;
	}
	spin_unlock(&vp_sr_lock);
	if (m)
		seq_printf(m, "reads queued on threads: %u, %u holding the module%s%s\n",
			   n, held, n ? ":" : "", n ? line : "");
	else if (n)
		pr_warn("unload waits for %u thread(s) to run their counter read (in the kernel since):%s\n",
			n, line);
}

/**
 * vp_selfread_drain() - wait until no work of this module is queued
 *
 * Module exit, once no collection queues new works: every queued work
 * runs when its thread returns to user or guest mode (or exits).  Works
 * stuck for long hold the module, so unload does not start while they
 * wait; one that got stuck just before delays unload until its thread
 * comes back, and the kernel log names the threads every
 * VP_DRAIN_WARN_SECS seconds.  Then an RCU-tasks grace period: no thread
 * is still in the last instructions of a work.
 */
void vp_selfread_drain(void)
{
	while (!wait_var_event_timeout(&vp_selfread_queued,
				       !atomic_read(&vp_selfread_queued),
				       VP_DRAIN_WARN_SECS * HZ))
		vp_selfread_show(NULL, VP_SELFREAD_NAMED);
	synchronize_rcu_tasks();
}
