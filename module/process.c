// SPDX-License-Identifier: GPL-2.0
/*
 * Processes as a whole: the process record of an attached process (with
 * the VM identity of a QEMU, read once from its command line) and, with
 * process_totals, counting every thread of the process, short-lived ones
 * included, with inherited counters.
 *
 * perf_event_create_kernel_counter() takes attr.inherit: a counter with
 * inherit on thread T gets a child counter in every thread T creates
 * afterwards (and their children, linked flat to T's counter); with
 * attr.inherit_thread (Linux 5.13) only in threads (clone with
 * CLONE_THREAD), not in child processes fork() makes nor what they exec,
 * so that the totals are the process's own, as /proc/PID/stat's.  A
 * child's count folds into the parent's child_count when it exits, and
 * perf_event_read_value() returns count + child_count + the live
 * children.  One such counter per event on every thread present at
 * attach therefore covers every thread created later, since each is
 * created by a thread of the process.  A thread created while the
 * counters are being made, by a thread that has none yet, is caught by a
 * rescan: it gets counters of its own unless it already inherited ours.
 *
 * vCPU threads get no such counter: every one of them is a target of the
 * same attach, and a second counter per event would double its demand on
 * the PMU (a vCPU thread recorded with 4 hardware events would ask for 8).
 * Their own counters count for the process instead (vp_proc_own_start();
 * a vCPU thread created later by a thread with process counters inherits
 * one and is left to it); a thread a vCPU thread creates is not counted
 * (QEMU's create none).  The counters are shared with other collections
 * (shared.c), each with its own baseline.
 */
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "counter.h"
#include "process.h"
#include "record.h"
#include "ring.h"
#include "shared.h"
#include "target.h"
#include "vcpuperf.h"

/* Bytes of a command line read for the VM identity; the rest is cut. */
#define VP_CMDLINE_MAX		(16 * 1024)
/*
 * Scans at attach: the first takes every thread; each later one only
 * threads created during the previous one by a thread without counters
 * yet, so two or three suffice unless the process floods clone().
 */
#define VP_PROC_SCANS		8

/* Is @t one of the threads given counters at attach? */
static bool vp_proc_has(const struct vp_proc *p, struct task_struct *t)
{
	u32 k;

	for (k = 0; k < p->nr; k++)
		if (p->threads[k].task == t)
			return true;
	return false;
}

/*
 * Does @t already hold one of the process counters, having inherited it
 * from the thread that created it?  The counters of a thread live in its
 * perf context; perf may swap a cloned context between a parent and a
 * child thread at a context switch, so both the counter itself and its
 * children are looked at.
 */
static bool vp_proc_inherited(const struct vp_proc *p, u32 nr_events,
			      struct task_struct *t)
{
	struct perf_event *parent, *child;
	bool found = false;
	u32 k, i;

	for (k = 0; k < p->nr && !found; k++) {
		for (i = 0; i < nr_events && !found; i++) {
			parent = p->threads[k].event[i];
			if (!parent)
				continue;
			mutex_lock(&parent->child_mutex);
			found = READ_ONCE(parent->ctx->task) == t;
			list_for_each_entry(child, &parent->child_list,
					    child_list) {
				if (found)
					break;
				found = READ_ONCE(child->ctx->task) == t;
			}
			mutex_unlock(&parent->child_mutex);
		}
	}
	return found;
}

/*
 * Threads of @leader's process without process counters, referenced (in
 * @vcpus the vCPU threads, which get none).
 */
static u32 vp_proc_collect(const struct vp_proc *p, struct task_struct *leader,
			   struct task_struct **tasks, u32 max, u32 *vcpus)
{
	struct task_struct *t;
	u32 n = 0;

	*vcpus = 0;
	rcu_read_lock();
	for_each_thread(leader, t) {
		if (n == max)
			break;
		if (t->flags & PF_EXITING)
			continue;
		if (vp_parse_vcpu(t->comm) >= 0) {
			(*vcpus)++;
			continue;
		}
		if (vp_proc_has(p, t))
			continue;
		get_task_struct(t);
		tasks[n++] = t;
	}
	rcu_read_unlock();
	return n;
}

/*
 * Room in @p for @more threads, up to @limit in all: the array starts at
 * the size of the process and grows as rescans find threads.  Return: 0
 * or -ENOMEM.
 */
static int vp_proc_room(struct vp_proc *p, u32 more, u32 limit)
{
	struct vp_pthread *threads;
	u32 cap;

	if (p->nr + more <= p->cap)
		return 0;
	cap = min(max(p->nr + more, 2 * p->cap), limit);
	threads = kvcalloc(cap, sizeof(*threads), GFP_KERNEL);
	if (!threads)
		return -ENOMEM;
	if (p->nr)
		memcpy(threads, p->threads, p->nr * sizeof(*threads));
	kvfree(p->threads);
	p->threads = threads;
	p->cap = cap;
	return 0;
}

/*
 * Inherited counters for every event of @g on @t, added to @p (room
 * made), shared with other collections' process totals of the same events
 * (shared.c), counted from now.
 */
static void vp_proc_add(struct vp_proc *p, const struct vp_group *g,
			struct task_struct *t)
{
	struct vp_pthread *pt = &p->threads[p->nr++];
	struct perf_event *ev;
	u32 i;

	pt->task = t;
	for (i = 0; i < g->nr_events; i++) {
		ev = vp_shared_get(&g->events[i], t, true, &pt->sh[i]);
		if (IS_ERR(ev)) {
			pt->sh[i] = NULL;
			pt->event[i] = NULL;
			continue;
		}
		pt->event[i] = ev;
		vp_event_read(ev, &pt->base[i]);
	}
}

/*
 * Give process counters to every thread of @leader's process that has
 * none, own or inherited, scanning again until a scan finds none (or
 * VP_PROC_SCANS scans, or @limit threads).  Return: 0 or -ENOMEM.
 */
static int vp_proc_cover(struct vp_group *g, struct task_struct *leader,
			 u32 limit)
{
	struct vp_proc *p = g->proc;
	struct task_struct **tasks;
	u32 scan, n, k, fresh, vcpus;
	int ret = 0;

	tasks = kvcalloc(limit, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return -ENOMEM;
	for (scan = 0; scan < VP_PROC_SCANS && p->nr < limit; scan++) {
		fresh = 0;
		n = vp_proc_collect(p, leader, tasks, limit - p->nr, &vcpus);
		if (!scan)
			p->vcpus = vcpus;
		ret = vp_proc_room(p, n, limit);
		if (ret) {
			while (n)
				put_task_struct(tasks[--n]);
			break;
		}
		for (k = 0; k < n; k++) {
			/* the first scan ran before any counter existed */
			if (scan && vp_proc_inherited(p, g->nr_events,
						      tasks[k])) {
				put_task_struct(tasks[k]);
				continue;
			}
			vp_proc_add(p, g, tasks[k]);
			fresh++;
			cond_resched();	/* threads x events counters */
		}
		if (!fresh)
			break;
	}
	kvfree(tasks);
	return ret;
}

/**
 * vp_proc_free() - release a group's process counters, if any
 * @g:		the group
 *
 * Releasing a counter releases the children perf inherited from it.
 */
void vp_proc_free(struct vp_group *g)
{
	struct vp_proc *p = g->proc;
	u32 k, i;

	if (!p)
		return;
	for (k = 0; k < p->nr; k++) {
		for (i = 0; i < g->nr_events; i++)
			vp_shared_put(p->threads[k].sh[i]);
		put_task_struct(p->threads[k].task);
	}
	kvfree(p->threads);
	kfree(p);
	g->proc = NULL;
}

/* The command line of @task, up to @len bytes; 0 when there is none. */
static int vp_read_cmdline(struct task_struct *task, char *buf, int len)
{
	struct mm_struct *mm = get_task_mm(task);
	unsigned long start, end;
	int n;

	if (!mm)
		return 0;
	spin_lock(&mm->arg_lock);
	start = mm->arg_start;
	end = mm->arg_end;
	spin_unlock(&mm->arg_lock);
	n = end > start ? (int)min_t(unsigned long, end - start, len) : 0;
	if (n)
		n = access_process_vm(task, start, buf, n, FOLL_FORCE);
	mmput(mm);
	return n > 0 ? n : 0;
}

/* Queue the process record of @g, with the VM identity of a QEMU. */
static void vp_emit_process(struct vp_coll *c, struct vp_group *g,
			    struct task_struct *leader)
{
	char vm[VCPUPERF_VM_NAME_LEN] = "", uuid[VCPUPERF_UUID_LEN] = "";
	char comm[TASK_COMM_LEN];
	struct vcpuperf_process *r;
	char *args;
	int n;

	if (g->kind == VCPUPERF_TARGET_QEMU) {
		args = kvmalloc(VP_CMDLINE_MAX, GFP_KERNEL);
		if (args) {
			n = vp_read_cmdline(leader, args, VP_CMDLINE_MAX);
			vp_qemu_identity(args, n, vm, sizeof(vm), uuid,
					 sizeof(uuid));
			kvfree(args);
		}
	}
	get_task_comm(comm, leader);
	r = vp_rec_begin(c, VCPUPERF_REC_PROCESS,
			 struct_size(r, events, g->nr_events), 0);
	r->pid = g->nr;
	r->kind = g->kind;
	r->flags = g->flags;
	r->nr_events = g->nr_events;
	r->threads = g->proc ? g->proc->nr + g->proc->vcpus : 0;
	r->interval_ns = READ_ONCE(c->interval_ns);
	strscpy(r->comm, comm, sizeof(r->comm));
	memcpy(r->vm, vm, sizeof(r->vm));
	memcpy(r->uuid, uuid, sizeof(r->uuid));
	memcpy(r->events, g->events, g->nr_events * sizeof(r->events[0]));
	vp_rec_emit(c, r, VP_REC_LIFECYCLE);
}

/**
 * vp_proc_start() - begin a newly listed group as a process
 * @c:		the collection, lock held
 * @g:		the group, listed, before its threads are started
 * @leader:	a thread of the process
 *
 * With process_totals, creates the process counters (see the top of
 * this file); then queues the process record.
 *
 * Return: 0, or -ENOMEM (nothing is queued then and the caller frees
 * the group).
 */
int vp_proc_start(struct vp_coll *c, struct vp_group *g,
		  struct task_struct *leader)
{
	struct vp_proc *p;

	lockdep_assert_held(&c->lock);
	if (g->flags & VCPUPERF_ATTACH_PROCESS_TOTALS) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		g->proc = p;
		if (vp_proc_cover(g, leader, c->mod->max_targets)) {
			vp_proc_free(g);
			return -ENOMEM;
		}
	}
	vp_emit_process(c, g, leader);
	return 0;
}

/* Add @v to @sum. */
static void vp_count_add(struct vcpuperf_count *sum,
			 const struct vcpuperf_count *v)
{
	sum->value += v->value;
	sum->enabled += v->enabled;
	sum->running += v->running;
}

/**
 * vp_proc_own_start() - a target's own counters count for its process
 * @g:		its group
 * @t:		the target, its counters made, before its first sample
 *
 * For a vCPU thread of a process_totals group that holds no inherited
 * process counter: not one present at attach (vp_proc_cover() leaves
 * them out), nor one created since by a thread that holds one.
 */
void vp_proc_own_start(struct vp_group *g, struct vp_target *t)
{
	struct vp_proc *p = g->proc;

	if (!p || t->id.vcpu == VCPUPERF_NO_VCPU ||
	    vp_proc_inherited(p, g->nr_events, t->task))
		return;
	t->proc_own = true;
	p->own++;
}

/**
 * vp_proc_own_end() - a target counting for its process ends
 * @g:		its group
 * @t:		the target, with its last values
 *
 * Its counts stay in the process's totals.
 */
void vp_proc_own_end(struct vp_group *g, struct vp_target *t)
{
	struct vp_proc *p = g->proc;
	u32 i;

	if (!p || !t->proc_own)
		return;
	for (i = 0; i < t->nr_events; i++) {
		if (!t->counters[i].event)
			continue;
		vp_count_add(&p->gone[i], &t->counters[i].last);
		p->gone_mask |= BIT(i);
	}
	p->own--;
	p->own_gone++;
	t->proc_own = false;
}

/**
 * vp_proc_sample() - read a process's totals and queue them
 * @c:		the collection, lock held
 * @g:		the group; nothing happens without process counters
 * @flags:	VCPUPERF_SAMPLE_FINAL for the last one
 *
 * Sums value, time_enabled and time_running of each event over the
 * threads that hold process counters, exited ones included (their
 * counters hold the counts of the threads they created), each from its
 * baseline, and over the vCPU threads that count with their own counters
 * (their values of this pass, or, for one whose thread read itself, of
 * the pass before), ended ones included.
 */
void vp_proc_sample(struct vp_coll *c, struct vp_group *g, u32 flags)
{
	struct vp_proc *p = g->proc;
	struct vcpuperf_process_sample *s;
	u32 k, i, counting = 0, exited = 0;
	struct vcpuperf_count v;
	struct vp_target *t;

	lockdep_assert_held(&c->lock);
	if (!p)
		return;
	s = vp_rec_begin(c, VCPUPERF_REC_PROCESS_SAMPLE,
			 struct_size(s, counts, g->nr_events), 0);
	for (k = 0; k < p->nr; k++) {
		struct vp_pthread *pt = &p->threads[k];

		if (READ_ONCE(pt->task->exit_state))
			exited++;
		for (i = 0; i < g->nr_events; i++) {
			if (!pt->event[i])
				continue;
			counting |= BIT(i);
			vp_event_read(pt->event[i], &v);
			s->counts[i].value += v.value - pt->base[i].value;
			s->counts[i].enabled += v.enabled - pt->base[i].enabled;
			s->counts[i].running += v.running - pt->base[i].running;
		}
	}
	list_for_each_entry(t, &c->targets, node) {
		if (t->group != g || !t->proc_own)
			continue;
		for (i = 0; i < g->nr_events; i++) {
			if (!t->counters[i].event)
				continue;
			counting |= BIT(i);
			vp_count_add(&s->counts[i], &t->counters[i].last);
		}
	}
	for (i = 0; i < g->nr_events; i++)
		vp_count_add(&s->counts[i], &p->gone[i]);
	counting |= p->gone_mask;
	s->pid = g->nr;
	s->nr_events = g->nr_events;
	s->counting_mask = counting;
	s->flags = flags;
	s->threads = p->nr + p->own + p->own_gone;
	s->exited = exited + p->own_gone;
	s->interval_ns = READ_ONCE(c->interval_ns);
	s->read_window_ns = ktime_get_ns() - s->rec.t_mono_ns;
	vp_rec_emit(c, s, flags & VCPUPERF_SAMPLE_FINAL ? VP_REC_LIFECYCLE :
		    VP_REC_SAMPLE);
}

/**
 * vp_proc_sample_all() - the process totals of every attached process
 * @c:		the collection, lock held
 *
 * Called by the sampler at the end of each pass.
 */
void vp_proc_sample_all(struct vp_coll *c)
{
	struct vp_group *g;

	lockdep_assert_held(&c->lock);
	list_for_each_entry(g, &c->groups, node) {
		vp_proc_sample(c, g, 0);
		cond_resched();
	}
}
