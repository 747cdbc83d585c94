// SPDX-License-Identifier: GPL-2.0
/*
 * Processes as a whole: the VM identity of a QEMU (read from its command
 * line by the writer of the attach, before any lock is taken: the read
 * faults the target's memory in and waits for its mmap lock, and what
 * the target holds is no business of the collection's sampler, its
 * status readers or the other collections), the process record, and,
 * with process_totals,
 * counting every thread of the process, short-lived ones included, with
 * inherited counters.
 *
 * perf_event_create_kernel_counter() takes attr.inherit: a counter with
 * inherit on thread T gets a child counter in every thread T creates
 * afterwards (and their children, linked flat to T's counter); with
 * attr.inherit_thread (Linux 5.13) only in threads (clone with
 * CLONE_THREAD), not in child processes fork() makes nor what they exec,
 * so that the totals are the process's own, as /proc/PID/stat's.  A
 * child's count folds into the parent's child_count when it exits, and
 * perf_event_read_value() returns count + child_count + the live
 * children.  One such counter per event on every thread that has none
 * therefore covers every thread created later, since each is created by a
 * thread of the process.
 *
 * A thread may hold one already: a child of a counter given to the thread
 * that created it, by this attach or by an earlier one of another
 * collection (the counters are shared: shared.c, each user with its own
 * baseline).  The threads are taken in the order the process made them,
 * so a creator comes before the threads it made, and each thread gets
 * counters only for the events it does not hold yet: a second recording
 * of the same process counts each thread once and adds nothing to the
 * PMU.  A thread created while the counters are being made, by a thread
 * that has none yet, is caught by a rescan.
 *
 * vCPU threads get no such counter: every one of them is a target of the
 * same attach, and a second counter per event would double its demand on
 * the PMU.  Their own counters count for the process instead
 * (vp_proc_own_start()).  A vCPU thread created after the attach (a
 * hot-plugged vCPU, or every vCPU of a QEMU attached before it made them)
 * is created by a thread that holds process counters and inherits them:
 * perf gives it a child of each, which no exported interface can remove
 * or read apart from its parent.  That vCPU thread then counts each event
 * twice, its own counter for its row and the inherited one for the
 * process: its process totals are right (its own counters are left out of
 * them), its PMU demand is doubled, and its records say so (the load they
 * carry counts the inherited counters: shared.c).  A thread a vCPU thread
 * creates is not counted (QEMU's create none).
 *
 * Every thread is given counters on the authority the group was attached
 * with (access.c), under its exec_update_lock.  An exec that changes the
 * credentials ends every counter of the exec'ing thread (perf's own guard)
 * and leaves it the process's only thread: the next scan sees the exec
 * (vp_proc_exec()) and gives it counters again, if that authority still
 * reaches it; a counter that cannot be made, for that or any reason, is
 * reported by an unavailable record naming the thread.
 */
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "access.h"
#include "counter.h"
#include "process.h"
#include "record.h"
#include "ring.h"
#include "sched.h"
#include "shared.h"
#include "vcpuperf.h"

/* Bytes of a command line read for the VM identity; the rest is cut. */
#define VP_CMDLINE_MAX		(16 * 1024)
/*
 * Scans at attach: the first takes every thread; each later one only
 * threads created during the previous one by a thread without counters
 * yet, so two or three suffice unless the process floods clone().
 */
#define VP_PROC_SCANS		8

/*
 * Has @t been given process counters since its last exec?  (An exec that
 * changed its credentials ended them: it is given new ones.)
 */
static bool vp_proc_has(const struct vp_proc *p, struct task_struct *t)
{
	u64 exec_id = READ_ONCE(t->self_exec_id);
	u32 k;

	for (k = 0; k < p->nr; k++)
		if (p->threads[k].task == t &&
		    p->threads[k].exec_id == exec_id)
			return true;
	return false;
}

/**
 * vp_proc_inherited() - the process counters a thread already holds
 * @p:		the process counters
 * @nr_events:	events of the group
 * @t:		the thread
 *
 * The counters live in @t's perf context: given to it, or inherited from
 * the thread that created it.
 *
 * Return: the events (bit i for event i) of which @t holds a live process
 * counter.
 */
u32 vp_proc_inherited(const struct vp_proc *p, u32 nr_events,
		      struct task_struct *t)
{
	u32 mask = 0, all = 0, k, i;

	for (i = 0; i < nr_events; i++)
		all |= BIT(i);
	for (k = 0; k < p->nr && mask != all; k++) {
		for (i = 0; i < nr_events; i++) {
			struct perf_event *ev = p->threads[k].event[i];

			if (ev && !(mask & BIT(i)) && vp_event_on(ev, t))
				mask |= BIT(i);
		}
	}
	return mask;
}

/*
 * Threads of @leader's process without process counters, referenced, in
 * the order the process made them (in @vcpus the vCPU threads, which get
 * none).
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
 * Inherited counters on @t (room made in @p) for every event of @g it does
 * not hold yet, shared with other collections' process totals of the same
 * events (shared.c), counted from now; on the authority of @g, checked
 * under @t's exec_update_lock until the counters exist.  Return: whether
 * @t was given an entry (it holds every event already: not).
 */
static bool vp_proc_add(struct vp_proc *p, const struct vp_group *g,
			struct task_struct *t)
{
	struct vp_pthread *pt = &p->threads[p->nr];
	struct perf_event *ev;
	u32 held, i;
	int ret;

	held = vp_proc_inherited(p, g->nr_events, t);
	if (held == GENMASK(g->nr_events - 1, 0))
		return false;
	memset(pt, 0, sizeof(*pt));
	down_read(&t->signal->exec_update_lock);
	pt->exec_id = READ_ONCE(t->self_exec_id);
	ret = vp_may_count(g->cred, t, task_pid_nr(t), NULL, 0);
	for (i = 0; i < g->nr_events; i++) {
		if (held & BIT(i))
			continue;
		if (ret) {
			pt->error[i] = -ret;
			continue;
		}
		ev = vp_shared_get(&g->events[i], t, true, &pt->sh[i]);
		if (IS_ERR(ev)) {
			pt->sh[i] = NULL;
			pt->error[i] = -PTR_ERR(ev);
			continue;
		}
		pt->event[i] = ev;
		vp_event_read(ev, &pt->base[i]);
	}
	up_read(&t->signal->exec_update_lock);
	get_task_struct(t);
	pt->task = t;
	p->nr++;
	return true;
}

/*
 * Give process counters to every thread of @leader's process that lacks
 * some, own or inherited, scanning again until a scan finds none (or
 * VP_PROC_SCANS scans, or @limit threads).  The vCPU threads the first
 * scan finds are counted in p->vcpus when @first.  Return: 0 or -ENOMEM.
 */
static int vp_proc_cover(struct vp_group *g, struct task_struct *leader,
			 u32 limit, bool first)
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
		if (!scan && first)
			p->vcpus = vcpus;
		ret = vp_proc_room(p, n, limit);
		if (ret) {
			while (n)
				put_task_struct(tasks[--n]);
			break;
		}
		for (k = 0; k < n; k++) {
			/* Creators first: their threads then hold theirs. */
			if (vp_proc_add(p, g, tasks[k]))
				fresh++;
			put_task_struct(tasks[k]);
			cond_resched();	/* threads x events counters */
		}
		if (!fresh)
			break;
	}
	kvfree(tasks);
	return ret;
}

/*
 * Queue an unavailable record for every process counter of the threads
 * from @from on that could not be made.
 */
static void vp_proc_report(struct vp_coll *c, struct vp_group *g, u32 from)
{
	struct vp_proc *p = g->proc;
	const struct vcpuperf_event_desc *d;
	struct vcpuperf_target_id id;
	struct vp_pthread *pt;
	u32 k, i, cause;
	pid_t tid;

	for (k = from; k < p->nr; k++) {
		pt = &p->threads[k];
		tid = task_pid_nr_ns(pt->task, g->ns);
		id.pid = task_tgid_nr_ns(pt->task, g->ns);
		id.vcpu = VCPUPERF_NO_VCPU;
		for (i = 0; i < g->nr_events; i++) {
			if (!pt->error[i])
				continue;
			d = &g->events[i];
			cause = vp_cause_from_errno(pt->error[i], d->type,
						    d->mods);
			vp_emit_unavailable_as(c, tid, &id, i, d, pt->error[i],
					       cause,
					       VCPUPERF_UNAVAILABLE_PROCESS);
		}
	}
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
	vp_sched_proc_free(p->sched);
	kvfree(p->threads);
	kfree(p);
	g->proc = NULL;
}

/*
 * The command line of @task, up to @len bytes; 0 when there is none.  As
 * /proc/PID/cmdline reads it: from anonymous memory only (FOLL_ANON), so
 * that a file mapped over it (a FUSE file whose server never answers) is
 * not faulted in; the read stops there.  A userfaultfd over it stops it
 * too (a fault from another process's access cannot wait for it).
 */
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
		n = access_process_vm(task, start, buf, n,
				      FOLL_FORCE | FOLL_ANON);
	mmput(mm);
	return n > 0 ? n : 0;
}

/**
 * vp_proc_identity() - the VM identity of a QEMU, from its command line
 * @leader:	a thread of the process
 * @vm:		its VM name, "" when there is none
 * @vmlen:	size of @vm
 * @uuid:	its UUID, "" when there is none
 * @uuidlen:	size of @uuid
 *
 * Reads the process's memory, which may fault it in (anonymous memory
 * only: see vp_read_cmdline()), and waits for its mmap lock: called with
 * no lock held, by the writer of the attach, which alone waits then.
 * Sleeps.
 */
void vp_proc_identity(struct task_struct *leader, char *vm, size_t vmlen,
		      char *uuid, size_t uuidlen)
{
	char *args;
	int n;

	might_sleep();
	*vm = '\0';
	*uuid = '\0';
	args = kvmalloc(VP_CMDLINE_MAX, GFP_KERNEL);
	if (!args)
		return;
	n = vp_read_cmdline(leader, args, VP_CMDLINE_MAX);
	vp_qemu_identity(args, n, vm, vmlen, uuid, uuidlen);
	kvfree(args);
}

/* Queue the process record of @g, with the VM identity of a QEMU. */
static void vp_emit_process(struct vp_coll *c, struct vp_group *g,
			    struct task_struct *leader)
{
	char comm[TASK_COMM_LEN];
	struct vcpuperf_process *r;

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
	memcpy(r->vm, g->vm, sizeof(r->vm));
	memcpy(r->uuid, g->uuid, sizeof(r->uuid));
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
	g->exec_id = READ_ONCE(leader->self_exec_id);
	if (g->flags & VCPUPERF_ATTACH_PROCESS_TOTALS) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		g->proc = p;
		if (!(g->flags & VCPUPERF_ATTACH_NO_SCHED)) {
			p->sched = vp_sched_proc_new(leader);
			if (!p->sched) {
				vp_proc_free(g);
				return -ENOMEM;
			}
		}
		if (vp_proc_cover(g, leader, c->mod->max_targets, true)) {
			vp_proc_free(g);
			return -ENOMEM;
		}
	}
	vp_emit_process(c, g, leader);
	if (g->proc)
		vp_proc_report(c, g, 0);
	return 0;
}

/**
 * vp_proc_exec() - a thread of an attached process has exec'd
 * @c:		the collection, lock held
 * @g:		the group, whose leader's self_exec_id moved on
 * @leader:	its leader now (the thread that exec'd)
 *
 * An exec leaves one thread in the process.  If it changed the thread's
 * credentials perf ended its counters, process counters included: it is
 * given new ones (see the top of this file), each that cannot be made
 * reported.  Without process_totals nothing is done here.
 *
 * Return: 0 or -ENOMEM (tried again at the next scan).
 */
int vp_proc_exec(struct vp_coll *c, struct vp_group *g,
		 struct task_struct *leader)
{
	u32 from;
	int ret;

	lockdep_assert_held(&c->lock);
	if (!g->proc) {
		g->exec_id = READ_ONCE(leader->self_exec_id);
		return 0;
	}
	from = g->proc->nr;
	ret = vp_proc_cover(g, leader, c->mod->max_targets, false);
	vp_proc_report(c, g, from);
	if (!ret)
		g->exec_id = READ_ONCE(leader->self_exec_id);
	return ret;
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
 * For a vCPU thread of a process_totals group, the events of which it
 * holds no inherited process counter: none for a vCPU thread present at
 * attach (vp_proc_cover() leaves them out), every one for a vCPU thread
 * created since by a thread that holds them.
 */
void vp_proc_own_start(struct vp_group *g, struct vp_target *t)
{
	struct vp_proc *p = g->proc;
	u32 held, i;

	if (!p || t->id.vcpu == VCPUPERF_NO_VCPU)
		return;
	held = vp_proc_inherited(p, g->nr_events, t->task);
	for (i = 0; i < t->nr_events; i++)
		if (t->counters[i].event && !(held & BIT(i)))
			t->proc_own |= BIT(i);
	if (t->proc_own)
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
		if (!(t->proc_own & BIT(i)))
			continue;
		vp_count_add(&p->gone[i], &t->counters[i].last);
		p->gone_mask |= BIT(i);
	}
	p->own--;
	p->own_gone++;
	t->proc_own = 0;
}

/*
 * The end of a process attached without process_totals: a final process
 * sample that counts nothing (counting_mask 0), so that its readers know
 * the process has ended (a host-wide recorder closes its episode).
 */
static void vp_proc_end(struct vp_coll *c, struct vp_group *g)
{
	struct vcpuperf_process_sample *s;

	s = vp_rec_begin(c, VCPUPERF_REC_PROCESS_SAMPLE,
			 struct_size(s, counts, g->nr_events), 0);
	s->pid = g->nr;
	s->nr_events = g->nr_events;
	s->flags = VCPUPERF_SAMPLE_FINAL;
	s->interval_ns = READ_ONCE(c->interval_ns);
	vp_rec_emit(c, s, VP_REC_LIFECYCLE);
}

/**
 * vp_proc_sample() - read a process's totals and queue them
 * @c:		the collection, lock held
 * @g:		the group; without process counters only its final sample
 *		is queued, counting nothing (vp_proc_end())
 * @flags:	VCPUPERF_SAMPLE_FINAL for the last one
 *
 * Sums value, time_enabled and time_running of each event over the
 * threads that hold process counters, exited ones included (their
 * counters hold the counts of the threads they created), each from its
 * baseline, and over the vCPU threads that count with their own counters
 * (their values of this pass, or, for one whose thread read itself, of
 * the pass before), ended ones included; and, unless attached no_sched,
 * the scheduler figures of every thread of the process (sched.c).
 */
void vp_proc_sample(struct vp_coll *c, struct vp_group *g, u32 flags)
{
	struct vp_proc *p = g->proc;
	struct vcpuperf_process_sample *s;
	u32 k, i, counting = 0, exited = 0;
	struct vcpuperf_count v;
	struct vp_target *t;

	lockdep_assert_held(&c->lock);
	if (!p) {
		if (flags & VCPUPERF_SAMPLE_FINAL)
			vp_proc_end(c, g);
		return;
	}
	s = vp_rec_begin(c, VCPUPERF_REC_PROCESS_SAMPLE,
			 struct_size(s, counts, g->nr_events) +
			 (p->sched ? sizeof(struct vcpuperf_sched) : 0), 0);
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
			if (!(t->proc_own & BIT(i)))
				continue;
			counting |= BIT(i);
			vp_count_add(&s->counts[i], &t->counters[i].last);
		}
	}
	for (i = 0; i < g->nr_events; i++)
		vp_count_add(&s->counts[i], &p->gone[i]);
	counting |= p->gone_mask;
	if (p->sched) {
		/* Out of memory: the last figures again, and said so. */
		if (vp_sched_proc_sample(p->sched, g->pid,
					 (struct vcpuperf_sched *)
					 &s->counts[g->nr_events]))
			flags |= VCPUPERF_SAMPLE_SCHED_STALE;
		flags |= VCPUPERF_SAMPLE_SCHED;
	}
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
