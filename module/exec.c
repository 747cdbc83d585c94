// SPDX-License-Identifier: GPL-2.0
/*
 * Threads that exec.
 *
 * An exec keeps the thread, but
 *  - from a thread that is not the leader, de_thread() gives it the
 *    leader's pid (and releases the old leader): its target keeps a tid
 *    that no longer names it, and a scan of its process would find it
 *    again under the new one;
 *  - when it changes the credentials (a setuid or setgid program, file
 *    capabilities), begin_new_exec() ends every perf counter on the thread
 *    (perf_event_exit_task(), perf's own guard at that boundary): its
 *    counters hold their final values, as at an exit, while the thread
 *    lives on.
 * Either way its target ends with reason exec (its last sample, finished,
 * detached) and the thread is attached again as a new target, as the
 * collection's opener would attach it: under its new tid, on the
 * authority the target had (access.c), which the new credentials may no
 * longer grant (its counters are then unavailable, cause access).  A
 * thread of an attached process is attached again only if its process is
 * still attached and still wants it (after an exec a QEMU's program has
 * no vCPU threads, say).  Counters that survived the exec (no credential
 * change) are shared (shared.c): the new target takes them over with a
 * baseline of its own, so nothing is lost or counted twice.
 *
 * A target's end is found in the middle of a pass, which walks the
 * targets: the new one is made afterwards (vp_restarts_run()), at the
 * end of the pass, by a scan or before a command.
 */
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "attach.h"
#include "exec.h"
#include "sample.h"
#include "target.h"
#include "vcpuperf.h"

/**
 * struct vp_restart - a thread to attach again after its exec
 * @node:	in vp_coll.restarts
 * @task:	the thread, referenced
 * @group:	its group (still listed: a group that goes drops its
 *		restarts), NULL for tid=
 * @ns:		pid namespace its ids are given in, referenced
 * @cred:	the authority it is counted with, referenced
 * @kind:	how it was attached
 * @flags:	VCPUPERF_ATTACH_* it was attached with
 * @nr_events:	events in @events
 * @events:	what it counts
 */
struct vp_restart {
	struct list_head node;
	struct task_struct *task;
	struct vp_group *group;
	struct pid_namespace *ns;
	const struct cred *cred;
	enum vcpuperf_target_kind kind;
	u32 flags;
	u32 nr_events;
	struct vcpuperf_event_desc events[VCPUPERF_MAX_EVENTS];
};

static void vp_restart_free(struct vp_restart *r)
{
	list_del(&r->node);
	put_task_struct(r->task);
	put_pid_ns(r->ns);
	put_cred(r->cred);
	kfree(r);
}

/*
 * End @t with reason exec and queue its thread to be attached again.  A
 * thread that cannot be queued (no memory) is left to its group's scan;
 * one attached by tid= stays detached.
 */
static void vp_target_exec(struct vp_coll *c, struct vp_target *t)
{
	struct vp_restart *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (r) {
		get_task_struct(t->task);
		r->task = t->task;
		r->group = t->group;
		r->ns = get_pid_ns(t->ns);
		r->cred = get_cred(t->cred);
		r->kind = t->kind;
		r->flags = t->flags;
		r->nr_events = t->nr_events;
		memcpy(r->events, t->events,
		       t->nr_events * sizeof(r->events[0]));
		list_add_tail(&r->node, &c->restarts);
	}
	vp_target_end(c, t, VCPUPERF_DETACH_EXEC);
}

/**
 * vp_target_gone() - every counter of a target saw its thread's end
 * @c:		the collection, lock held
 * @t:		the target, after the sample that said so; freed here
 *
 * The thread exited (reason exited), or, alive and not exiting, exec'd a
 * program with other credentials: see the top of this file.
 */
void vp_target_gone(struct vp_coll *c, struct vp_target *t)
{
	lockdep_assert_held(&c->lock);
	if (vp_task_exiting(t->task))
		vp_target_end(c, t, VCPUPERF_DETACH_EXITED);
	else
		vp_target_exec(c, t);
}

/* Has @t's thread taken another tid (an exec from a non-leader thread)? */
static bool vp_tid_changed(struct vp_target *t)
{
	return !vp_task_exiting(t->task) && task_pid_nr(t->task) != t->gtid;
}

/**
 * vp_targets_exec() - end the targets whose thread exec'd into another tid
 * @c:		the collection, lock held
 *
 * And attach their threads again under the new tid (vp_restarts_run()).
 * Called by the sampler before each pass and before a command.
 */
void vp_targets_exec(struct vp_coll *c)
{
	struct vp_target *t, *tmp;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(t, tmp, &c->targets, node)
		if (vp_tid_changed(t))
			vp_target_exec(c, t);
	vp_restarts_run(c);
}

/*
 * End a target whose thread has exited, with the records the sampler would
 * queue, in its order: the sample of the pass the thread was asked to read
 * itself in, if any, then the final sample and task_exited, finished,
 * detached (exited).
 */
static void vp_target_end_exited(struct vp_coll *c, struct vp_target *t)
{
	if ((t->self_pass && vp_sample_deferred(c, t)) ||
	    vp_sample_target(c, t, 0))
		vp_target_end(c, t, VCPUPERF_DETACH_EXITED);
}

/**
 * vp_targets_exited_or_exec() - bring the targets up to date for a command
 * @c:		the collection, lock held
 *
 * Ends the targets whose thread has exited but that the sampler has not
 * reached yet, then those whose thread exec'd into another tid (which
 * may be the tid an exited one had), attaching those again.  Done before
 * a command looks threads up, so that a thread id names the thread it
 * names now, never an old target.
 */
void vp_targets_exited_or_exec(struct vp_coll *c)
{
	struct vp_target *t, *tmp;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(t, tmp, &c->targets, node)
		if (READ_ONCE(t->task->exit_state))
			vp_target_end_exited(c, t);
	vp_targets_exec(c);
}

/**
 * vp_restarts_run() - attach again the threads whose targets ended at exec
 * @c:		the collection, lock held
 *
 * A target still listed under the thread's new tid belongs to the old
 * leader de_thread() released: it is ended first, as exited (or, should
 * its counters not say so yet, the thread waits for the next pass).  If
 * making the new target fails (no memory), a thread of an attached
 * process is left to the process's next scan.
 */
void vp_restarts_run(struct vp_coll *c)
{
	struct vp_restart *r, *tmp;
	struct task_struct *task;
	struct vp_target *old;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(r, tmp, &c->restarts, node) {
		task = r->task;
		if (vp_task_exiting(task) ||
		    (r->group && !vp_group_wants(r->group, task))) {
			vp_restart_free(r);
			continue;
		}
		old = xa_load(&c->by_tid, task_pid_nr(task));
		if (old && old->task != task &&
		    READ_ONCE(old->task->exit_state))
			vp_target_end_exited(c, old);
		old = xa_load(&c->by_tid, task_pid_nr(task));
		/* The old leader's counters not final yet: the next pass. */
		if (old && old->task != task && vp_task_exiting(old->task))
			continue;
		if (!old) {
			get_task_struct(task);	/* consumed */
			vp_start_tasks(c, &task, 1, r->ns, r->kind, r->flags,
				       r->group, r->events, r->nr_events,
				       r->cred, false);
		}
		vp_restart_free(r);
	}
}

/**
 * vp_restarts_drop() - forget the threads queued to be attached again
 * @c:		the collection, lock held
 * @g:		only those of this group; NULL for all
 *
 * For a group that goes, and for a collection that detaches everything.
 */
void vp_restarts_drop(struct vp_coll *c, const struct vp_group *g)
{
	struct vp_restart *r, *tmp;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(r, tmp, &c->restarts, node)
		if (!g || r->group == g)
			vp_restart_free(r);
}
