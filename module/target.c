// SPDX-License-Identifier: GPL-2.0
/*
 * Targets: one sampled thread of a collection, from its creation (its
 * counters, its started and unavailable records) to its end (final
 * sample, finished and detached records, counters released).
 */
#include <linux/cred.h>
#include <linux/perf_event.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>

#include "access.h"
#include "counter.h"
#include "process.h"
#include "record.h"
#include "sample.h"
#include "sched.h"
#include "selfread.h"
#include "target.h"
#include "vcpuperf.h"

/* Free a target and what it references but its counters. */
static void vp_target_put(struct vp_target *t)
{
	if (t->sr)
		vp_selfread_kill(t->sr);
	vp_sched_end(t);
	put_task_struct(t->task);
	put_cred(t->cred);
	put_pid_ns(t->ns);
	kfree(t->idle_rec);
	kfree(t);
}

/**
 * vp_target_new() - a target for a thread, listed by tid but not started
 * @c:		the collection, lock held
 * @task:	the thread (the target takes its own reference)
 * @ns:		pid namespace the ids of its records are given in
 * @kind:	how it is attached
 * @flags:	VCPUPERF_ATTACH_* it is attached with
 * @group:	its process's group, NULL for tid=
 * @descs:	events
 * @nr_events:	how many
 * @cred:	the authority it is counted with (the target takes a
 *		reference)
 *
 * Return: the target, ERR_PTR(-ESRCH) when the thread exited since it was
 * found, ERR_PTR(-EEXIST) when it is a target already, ERR_PTR(-ENOMEM).
 */
struct vp_target *vp_target_new(struct vp_coll *c, struct task_struct *task,
				struct pid_namespace *ns,
				enum vcpuperf_target_kind kind, u32 flags,
				struct vp_group *group,
				const struct vcpuperf_event_desc *descs,
				u32 nr_events, const struct cred *cred)
{
	struct vp_target *t;
	char comm[TASK_COMM_LEN];
	int ret;
	u32 i;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return ERR_PTR(-ENOMEM);
	t->gtid = task_pid_nr(task);
	t->tid = task_pid_nr_ns(task, ns);
	t->id.pid = task_tgid_nr_ns(task, ns);
	/*
	 * Exited since it was collected: its pid is gone and every number
	 * reads 0, which would make its records look like session records.
	 */
	if (!t->gtid || !t->tid || !t->id.pid) {
		kfree(t);
		return ERR_PTR(-ESRCH);
	}
	get_task_struct(task);
	t->task = task;
	t->cred = get_cred(cred);
	t->ns = get_pid_ns(ns);
	t->kind = kind;
	t->flags = flags;
	t->group = group;
	get_task_comm(comm, task);
	strscpy(t->comm, comm, sizeof(t->comm));
	t->id.vcpu = vp_parse_vcpu(comm);
	if (t->id.vcpu < 0)
		t->id.vcpu = VCPUPERF_NO_VCPU;
	t->nr_events = nr_events;
	for (i = 0; i < nr_events; i++)
		t->events[i] = descs[i];
	/* Without it the thread is always read directly: no failure. */
	t->sr = vp_selfread_new();
	/* Without it an idle thread's sample is built anew: no failure. */
	t->idle_rec = kmalloc(ALIGN(vp_target_sample_size(t), sizeof(u64)),
			      GFP_KERNEL);
	vp_sched_start(t);
	ret = xa_insert(&c->by_tid, t->gtid, t, GFP_KERNEL);
	if (ret) {
		vp_target_put(t);
		return ERR_PTR(ret);
	}
	return t;
}

/**
 * vp_target_discard() - free a target vp_target_new() made, not started
 * @c:		the collection, lock held
 * @t:		the target: no counter, no record
 */
void vp_target_discard(struct vp_coll *c, struct vp_target *t)
{
	lockdep_assert_held(&c->lock);
	xa_erase(&c->by_tid, t->gtid);
	vp_target_put(t);
}

/*
 * Make the counters of @t on its authority, checked under the thread's
 * exec_update_lock until they exist (as perf_event_open() does): an exec
 * that would change the thread's credentials waits, or has happened and
 * is seen.  A thread the authority does not reach gets none: each is
 * unavailable with EACCES (or EPERM).
 */
static void vp_target_counters(struct vp_target *t)
{
	struct task_struct *task = t->task;
	int ret;
	u32 i;

	down_read(&task->signal->exec_update_lock);
	ret = vp_may_count(t->cred, task, t->tid, NULL, 0);
	for (i = 0; i < t->nr_events; i++) {
		if (ret)
			t->counters[i].error = -ret;
		else
			vp_counter_create(&t->counters[i], &t->events[i],
					  task);
	}
	up_read(&task->signal->exec_update_lock);
}

/*
 * Whether @ctr can count only while its thread runs, so that a thread
 * that has not run since its last read has that read's values.  Hardware
 * and software counters do.  A tracepoint counter counts the tracepoint
 * in its thread's own context, unless the tracepoint names another task
 * to count for (__perf_task(): the scheduler's wake-up and sched_stat_*
 * tracepoints, which count for the thread woken or waiting): none of
 * KVM's does, and KVM's fire in the vCPU's own thread.  Other tracepoints
 * are read every pass.  A counter that does not exist counts nothing.
 */
static bool vp_counter_idle_able(const struct vp_counter *ctr,
				 const struct vcpuperf_event_desc *desc)
{
	if (!ctr->event)
		return true;
	if (desc->type == PERF_TYPE_TRACEPOINT) {
#ifdef CONFIG_EVENT_TRACING
		const struct trace_event_call *tp = ctr->event->tp_event;

		return tp && tp->class && tp->class->system &&
		       !strcmp(tp->class->system, VP_KVM_TRACE_SYSTEM);
#else
		return false;
#endif
	}
	return vp_is_pmu_event(desc->type) || desc->type == PERF_TYPE_SOFTWARE;
}

/**
 * vp_target_start() - create the counters and begin sampling
 * @c:		the collection, lock held
 * @t:		a target from vp_target_new()
 *
 * Queues started, and unavailable for each counter that could not be
 * created (every one when the target's authority does not reach the
 * thread).
 */
void vp_target_start(struct vp_coll *c, struct vp_target *t)
{
	u32 i;

	lockdep_assert_held(&c->lock);
	vp_target_counters(t);
	t->idle_able = true;
	for (i = 0; i < t->nr_events; i++)
		if (!vp_counter_idle_able(&t->counters[i], &t->events[i]))
			t->idle_able = false;
	t->idle_known = false;
	t->runtime_at_start = READ_ONCE(t->task->se.sum_exec_runtime);
	if (t->sr)
		vp_selfread_set_events(t->sr, t->counters, t->nr_events);
	vp_totals_begin(c);
	vp_emit_started(c, t);
	for (i = 0; i < t->nr_events; i++)
		if (!t->counters[i].event)
			vp_emit_unavailable(c, t, i);
	vp_emit_mux_expected(c, t);
	list_add_tail(&t->node, &c->targets);
	c->nr_targets++;
	c->totals.targets++;
}

/**
 * vp_target_free() - release a target's counters and free it, no records
 * @c:		the collection, lock held
 * @t:		the target
 */
void vp_target_free(struct vp_coll *c, struct vp_target *t)
{
	bool handed = false;
	u32 i;

	lockdep_assert_held(&c->lock);
	if (t->sr) {
		/* A read by the thread itself may still be queued: see there. */
		c->reads.self_ns += vp_selfread_cpu_ns(t->sr);
		handed = vp_selfread_kill(t->sr);
	}
	/* What it counted for its process stays in the process's totals. */
	if (t->group)
		vp_proc_own_end(t->group, t);
	/* Counters the thread is reading right now, it releases itself. */
	for (i = 0; i < t->nr_events; i++)
		if (!handed)
			vp_counter_release(&t->counters[i]);
	xa_erase(&c->by_tid, t->gtid);
	list_del(&t->node);
	c->nr_targets--;
	t->sr = NULL;
	vp_target_put(t);
}

/**
 * vp_target_end() - stop sampling a thread, with its final records
 * @c:		the collection, lock held
 * @t:		the thread; freed here
 * @reason:	enum vcpuperf_detach_reason
 *
 * Queues the sample of the last pass if the thread was asked to read
 * itself, then a last sample (unless the thread's exit was already
 * handled), then finished and detached, and releases the counters.
 */
void vp_target_end(struct vp_coll *c, struct vp_target *t, u32 reason)
{
	bool gone = reason == VCPUPERF_DETACH_EXITED;

	lockdep_assert_held(&c->lock);
	/* The sample of the last pass first, if the thread read it itself. */
	if (t->self_pass && vp_sample_deferred(c, t))
		gone = true;
	if (!gone)
		vp_sample_target(c, t, VCPUPERF_SAMPLE_FINAL);
	vp_emit_finished(c, t);
	vp_emit_detached(c, t, reason);
	vp_target_free(c, t);
}

