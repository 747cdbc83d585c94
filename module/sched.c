// SPDX-License-Identifier: GPL-2.0
/*
 * What the scheduler keeps of a thread, read from its task_struct at the
 * moment of its sample: no PMU counter, no software event.  CPU time is
 * se.sum_exec_runtime as of the thread's last scheduler update (a switch
 * or a tick: the kernel's task_sched_runtime(), which adds a running
 * thread's current slice, is not exported); the time waiting for a CPU is
 * sched_info.run_delay, which the scheduler adds to when a wait ends, so
 * a wait in progress (sched_info.last_queued set) is added up to now by
 * the CPU's scheduler clock.  A sample's figures are since the thread's
 * attach, and never go back: a read between the two stores that end a
 * wait (last_queued cleared, then run_delay grown) would.  A process's
 * figures (its process samples) are its threads' summed: see below.
 */
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "compat.h"
#include "sched.h"
#include "vcpuperf.h"
#include "who.h"

/**
 * vp_sched_read() - a thread's scheduler figures now, since it began
 * @task:	the thread
 * @out:	filled; @out->valid says which fields the kernel keeps
 */
void vp_sched_read(struct task_struct *task, struct vcpuperf_sched *out)
{
	memset(out, 0, sizeof(*out));
	out->run_ns = READ_ONCE(task->se.sum_exec_runtime);
	out->voluntary = READ_ONCE(task->nvcsw);
	out->involuntary = READ_ONCE(task->nivcsw);
	out->migrations = READ_ONCE(task->se.nr_migrations);
	out->cpu = task_cpu(task);
	out->valid = VCPUPERF_SCHED_RUN;
#ifdef CONFIG_SCHED_INFO
	{
		u64 queued = READ_ONCE(task->sched_info.last_queued);
		u64 now;

		out->wait_ns = READ_ONCE(task->sched_info.run_delay);
		out->timeslices = READ_ONCE(task->sched_info.pcount);
		if (queued) {
			now = vp_sched_clock_cpu(out->cpu);
			if (now > queued)
				out->wait_ns += now - queued;
		}
		out->valid |= VCPUPERF_SCHED_INFO;
	}
#endif
}

/**
 * vp_sched_start() - take a thread's figures as the base of its samples
 * @t:		the target, at its attach
 *
 * For a target attached who, also begins to keep who takes its CPU (the
 * module's probes on the scheduler, who.c); when that cannot be done its
 * samples say why (vcpuperf_who.cause).
 */
void vp_sched_start(struct vp_target *t)
{
	struct vp_who *w;

	vp_sched_read(t->task, &t->sched_base);
	t->sched_last = t->sched_base;
	if (!vp_target_who(t))
		return;
	w = vp_who_get(t->task);
	if (IS_ERR(w)) {
		t->who_err = PTR_ERR(w);
		return;
	}
	t->who = w;
	vp_who_read(w, &t->who_base);
	t->who_last = t->who_base;
}

/**
 * vp_sched_end() - stop keeping who takes a target's CPU
 * @t:		the target, when it is freed
 */
void vp_sched_end(struct vp_target *t)
{
	if (t->who)
		vp_who_put(t->who);
	t->who = NULL;
}

/* @now - @base, never below @last - @base: each field is cumulative. */
static u64 vp_sched_field(u64 now, u64 base, u64 *last)
{
	if (now < *last)
		now = *last;
	*last = now;
	return now - base;
}

/* @now - @base in @out, no field below @last - @base (@last updated). */
static void vp_sched_since(const struct vcpuperf_sched *now,
			   const struct vcpuperf_sched *b,
			   struct vcpuperf_sched *l, struct vcpuperf_sched *out)
{
	out->run_ns = vp_sched_field(now->run_ns, b->run_ns, &l->run_ns);
	out->wait_ns = vp_sched_field(now->wait_ns, b->wait_ns, &l->wait_ns);
	out->timeslices = vp_sched_field(now->timeslices, b->timeslices,
					 &l->timeslices);
	out->voluntary = vp_sched_field(now->voluntary, b->voluntary,
					&l->voluntary);
	out->involuntary = vp_sched_field(now->involuntary, b->involuntary,
					  &l->involuntary);
	out->migrations = vp_sched_field(now->migrations, b->migrations,
					 &l->migrations);
	out->cpu = now->cpu;
	out->valid = now->valid;
}

/**
 * vp_sched_who_snap() - keep a target's who figures for its self-read
 * @t:		the target, asked to read itself now
 *
 * The thread reads its scheduler figures itself, a moment later; its
 * sample takes these figures beside them (vp_sched_sample()), not those
 * of when the sample is made, up to an interval later.
 */
void vp_sched_who_snap(struct vp_target *t)
{
	if (t->who)
		vp_who_read(t->who, &t->who_snap);
}

/*
 * @t's who figures since its attach in @out, none below the last: those
 * of now, or @snap's (vp_sched_who_snap()).
 */
static u32 vp_who_sample(struct vp_target *t, struct vcpuperf_who *out,
			 bool snap)
{
	struct vcpuperf_who now;
	u32 i;

	if (!t->who) {
		memset(out, 0, sizeof(*out));
		out->cause = vp_who_cause(t->who_err);
		return VCPUPERF_SAMPLE_WHO;
	}
	if (snap)
		now = t->who_snap;
	else
		vp_who_read(t->who, &now);
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		out->wait_ns[i] = vp_sched_field(now.wait_ns[i],
						 t->who_base.wait_ns[i],
						 &t->who_last.wait_ns[i]);
		out->preempted[i] = vp_sched_field(now.preempted[i],
						   t->who_base.preempted[i],
						   &t->who_last.preempted[i]);
	}
	for (i = 0; i < VCPUPERF_WHO_VMS; i++) {
		out->vms[i].pid = now.vms[i].pid;
		out->vms[i].reserved = 0;
		out->vms[i].wait_ns = vp_sched_field(now.vms[i].wait_ns,
						     t->who_base.vms[i].wait_ns,
						     &t->who_last.vms[i].wait_ns);
	}
	out->valid = 1;
	out->cause = 0;
	return VCPUPERF_SAMPLE_WHO;
}

/**
 * vp_sched_sample() - put a thread's figures since its attach in its sample
 * @t:		the target, its collection's lock held
 * @now:	vp_sched_read() of its thread (by the thread itself), NULL
 *		to read them here
 * @s:		its sample, sized by vp_target_sample_size()
 *
 * And who took its CPU, for a target attached who (with @now, as it was
 * when the thread was asked to read itself).
 *
 * Return: VCPUPERF_SAMPLE_SCHED to set in the sample's flags, 0 for a
 * target attached no_sched (no scheduler figure is read or written
 * then); with VCPUPERF_SAMPLE_WHO for a target attached who.
 */
u32 vp_sched_sample(struct vp_target *t, const struct vcpuperf_sched *now,
		    struct vcpuperf_sample *s)
{
	struct vcpuperf_sched here;
	u32 flags = 0;

	if (vp_target_who(t))
		flags = vp_who_sample(t, vp_sample_who(s, t), !!now);
	if (!vp_target_sched(t))
		return flags;
	if (!now) {
		vp_sched_read(t->task, &here);
		now = &here;
	}
	vp_sched_since(now, &t->sched_base, &t->sched_last,
		       vp_sample_sched(s, t->nr_events));
	return flags | VCPUPERF_SAMPLE_SCHED;
}

/*
 * A process's figures are its threads' summed.  The kernel keeps the
 * runtime and the switches of the threads that have exited in the
 * signal_struct (as getrusage() and /proc/PID/stat read them), not their
 * wait, timeslices or migrations: those are kept here as each thread was
 * last seen.  Each sum is read under the signal_struct's stats_lock, whose
 * writer moves an exiting thread's runtime and switches there and unlists
 * it at once: a thread is counted listed or exited, never both.
 */

/**
 * struct vp_sched_seen - a thread as the last sum of its process saw it
 * @task:	the thread (not referenced: only compared)
 * @start:	its start_time, which tells a reused task_struct apart
 * @tid:	its pid then
 * @wait_ns:	its figures then
 * @timeslices:	likewise
 * @migrations:	likewise
 */
struct vp_sched_seen {
	const struct task_struct *task;
	u64 start;
	pid_t tid;
	u64 wait_ns;
	u64 timeslices;
	u64 migrations;
};

/**
 * struct vp_sched_proc - the scheduler figures of a process, summed
 * @task:	its leader at attach, referenced: its signal_struct holds what
 *		the threads that exited left, after the process is gone too
 * @nr:		entries in @seen
 * @cap:	entries allocated in @seen and in @next
 * @seen:	its threads at the last sum, by @task
 * @next:	the threads of the sum being made
 * @gone:	wait, timeslices and migrations of the threads no longer
 *		seen, as they were last seen
 * @base:	the sum at the attach
 * @last:	the last sum: the least the next may give
 */
struct vp_sched_proc {
	struct task_struct *task;
	u32 nr;
	u32 cap;
	struct vp_sched_seen *seen;
	struct vp_sched_seen *next;
	struct vcpuperf_sched gone;
	struct vcpuperf_sched base;
	struct vcpuperf_sched last;
};

/* Room for @need threads in @sp->seen and @sp->next.  Return: 0, -ENOMEM. */
static int vp_sched_proc_room(struct vp_sched_proc *sp, u32 need)
{
	struct vp_sched_seen *seen, *next;
	u32 cap = max(need, 2 * sp->cap);

	seen = kvcalloc(cap, sizeof(*seen), GFP_KERNEL);
	next = kvcalloc(cap, sizeof(*next), GFP_KERNEL);
	if (!seen || !next) {
		kvfree(seen);
		kvfree(next);
		return -ENOMEM;
	}
	if (sp->nr)
		memcpy(seen, sp->seen, sp->nr * sizeof(*seen));
	kvfree(sp->seen);
	kvfree(sp->next);
	sp->seen = seen;
	sp->next = next;
	sp->cap = cap;
	return 0;
}

/*
 * Sum the threads of @leader's process now into @out (the runtime and
 * switches of those that exited included), each listed in @sp->next.
 * Return: their number, -ENOSPC when they are more than @sp->cap (their
 * number then in @need).
 */
static int vp_sched_walk(struct vp_sched_proc *sp, struct task_struct *leader,
			 struct vcpuperf_sched *out, u32 *need)
{
	struct signal_struct *sig = leader->signal;
	struct vcpuperf_sched f;
	struct task_struct *t;
	unsigned long irqs;
	u32 n = 0;

	/* As its writer in __exit_signal(): no thread exits meanwhile. */
	rcu_read_lock();
	read_seqlock_excl_irqsave(&sig->stats_lock, irqs);
	out->run_ns = sig->sum_sched_runtime;
	out->voluntary = sig->nvcsw;
	out->involuntary = sig->nivcsw;
	for_each_thread(leader, t) {
		struct vp_sched_seen *e;

		if (n++ >= sp->cap)
			continue;
		e = &sp->next[n - 1];
		vp_sched_read(t, &f);
		out->run_ns += f.run_ns;
		out->voluntary += f.voluntary;
		out->involuntary += f.involuntary;
		e->task = t;
		e->start = t->start_time;
		e->tid = task_pid_nr(t);
		e->wait_ns = f.wait_ns;
		e->timeslices = f.timeslices;
		e->migrations = f.migrations;
	}
	read_sequnlock_excl_irqrestore(&sig->stats_lock, irqs);
	rcu_read_unlock();
	if (n > sp->cap) {
		*need = n;
		return -ENOSPC;
	}
	return n;
}

static int vp_sched_seen_cmp(const void *a, const void *b)
{
	const struct vp_sched_seen *x = a, *y = b;

	if (x->task == y->task)
		return 0;
	return x->task < y->task ? -1 : 1;
}

/*
 * Is @now the thread @then was?  The same task_struct with the same start
 * time; or one that was another thread and is now the leader: an exec
 * from that thread gave it the old leader's pid and start time.
 */
static bool vp_sched_same(const struct vp_sched_seen *then,
			  const struct vp_sched_seen *now, pid_t tgid)
{
	if (then->task != now->task)
		return false;
	return then->start == now->start ||
	       (now->tid == tgid && then->tid != tgid);
}

static void vp_sched_gone_add(struct vp_sched_proc *sp,
			      const struct vp_sched_seen *e)
{
	sp->gone.wait_ns += e->wait_ns;
	sp->gone.timeslices += e->timeslices;
	sp->gone.migrations += e->migrations;
}

/*
 * The threads of @sp->seen missing from the @n of @sp->next (sorted here)
 * go to @sp->gone; @sp->next becomes @sp->seen.
 */
static void vp_sched_merge(struct vp_sched_proc *sp, u32 n, pid_t tgid)
{
	struct vp_sched_seen *tmp;
	u32 i = 0, j = 0;

	sort(sp->next, n, sizeof(*sp->next), vp_sched_seen_cmp, NULL);
	while (i < sp->nr) {
		if (j < n && sp->next[j].task < sp->seen[i].task) {
			j++;
			continue;
		}
		if (j == n || !vp_sched_same(&sp->seen[i], &sp->next[j], tgid))
			vp_sched_gone_add(sp, &sp->seen[i]);
		i++;
	}
	tmp = sp->seen;
	sp->seen = sp->next;
	sp->next = tmp;
	sp->nr = n;
}

/* What the kernel keeps, as vp_sched_read() says it. */
static u32 vp_sched_kept(void)
{
	return VCPUPERF_SCHED_RUN |
	       (IS_ENABLED(CONFIG_SCHED_INFO) ? VCPUPERF_SCHED_INFO : 0);
}

/*
 * @sp's process now, summed over its threads since they began, in @out.
 * Once the process is gone: what its threads left.  Return: 0 or -ENOMEM.
 */
static int vp_sched_proc_now(struct vp_sched_proc *sp, struct pid *pid,
			     struct vcpuperf_sched *out)
{
	struct task_struct *leader = get_pid_task(pid, PIDTYPE_TGID);
	u32 i, need = 0;
	int n = -ESRCH;

	memset(out, 0, sizeof(*out));
	while (leader) {
		n = vp_sched_walk(sp, leader, out, &need);
		if (n != -ENOSPC)
			break;
		if (vp_sched_proc_room(sp, need)) {
			put_task_struct(leader);
			return -ENOMEM;
		}
	}
	if (n >= 0) {
		vp_sched_merge(sp, n, task_tgid_nr(leader));
	} else {
		/* Every thread has left its runtime and switches. */
		out->run_ns = READ_ONCE(sp->task->signal->sum_sched_runtime);
		out->voluntary = READ_ONCE(sp->task->signal->nvcsw);
		out->involuntary = READ_ONCE(sp->task->signal->nivcsw);
		for (i = 0; i < sp->nr; i++)
			vp_sched_gone_add(sp, &sp->seen[i]);
		sp->nr = 0;
	}
	if (leader)
		put_task_struct(leader);
	out->wait_ns = sp->gone.wait_ns;
	out->timeslices = sp->gone.timeslices;
	out->migrations = sp->gone.migrations;
	for (i = 0; i < sp->nr; i++) {
		out->wait_ns += sp->seen[i].wait_ns;
		out->timeslices += sp->seen[i].timeslices;
		out->migrations += sp->seen[i].migrations;
	}
	out->valid = vp_sched_kept();
	return 0;
}

/**
 * vp_sched_proc_new() - begin summing a process's figures
 * @leader:	its leader
 *
 * Return: the sum, its base taken now, or NULL when out of memory.
 */
struct vp_sched_proc *vp_sched_proc_new(struct task_struct *leader)
{
	struct vp_sched_proc *sp;

	sp = kzalloc(sizeof(*sp), GFP_KERNEL);
	if (!sp)
		return NULL;
	get_task_struct(leader);
	sp->task = leader;
	if (vp_sched_proc_room(sp, READ_ONCE(leader->signal->nr_threads)) ||
	    vp_sched_proc_now(sp, task_pid(leader), &sp->base)) {
		vp_sched_proc_free(sp);
		return NULL;
	}
	sp->last = sp->base;
	return sp;
}

/**
 * vp_sched_proc_free() - end a process's sum
 * @sp:		from vp_sched_proc_new(), or NULL
 */
void vp_sched_proc_free(struct vp_sched_proc *sp)
{
	if (!sp)
		return;
	put_task_struct(sp->task);
	kvfree(sp->seen);
	kvfree(sp->next);
	kfree(sp);
}

/**
 * vp_sched_proc_sample() - a process's figures since its attach
 * @sp:		its sum
 * @pid:	the process
 * @out:	the figures, none below the last ones; @out->cpu zero
 *
 * Return: 0, or -ENOMEM (@out then repeats the last figures).
 */
int vp_sched_proc_sample(struct vp_sched_proc *sp, struct pid *pid,
			 struct vcpuperf_sched *out)
{
	struct vcpuperf_sched now;
	int ret;

	ret = vp_sched_proc_now(sp, pid, &now);
	if (ret)
		now = sp->last;
	vp_sched_since(&now, &sp->base, &sp->last, out);
	out->cpu = 0;
	return ret;
}
