// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching and detaching: threads by tid, processes by pid and QEMU
 * processes by their vCPU threads, picking up threads that appear later in
 * an attached process, and detaching one, a process, or everything.
 */
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "access.h"
#include "attach.h"
#include "counter.h"
#include "process.h"
#include "record.h"
#include "sample.h"
#include "target.h"
#include "vcpuperf.h"

static void vp_group_free(struct vp_coll *c, struct vp_group *g)
{
	list_del(&g->node);
	c->nr_groups--;
	vp_proc_free(g);
	put_pid(g->pid);
	put_pid_ns(g->ns);
	kfree(g);
}

static void vp_group_end(struct vp_coll *c, struct vp_group *g, u32 reason)
{
	struct vp_target *t, *tmp;

	list_for_each_entry_safe(t, tmp, &c->targets, node)
		if (t->group == g)
			vp_target_end(c, t, reason);
	vp_proc_sample(c, g, VCPUPERF_SAMPLE_FINAL);
	vp_group_free(c, g);
}

/*
 * End the targets whose thread has exited but that the sampler has not
 * reached yet, with the records the sampler would queue, in its order:
 * the sample of the pass the thread was asked to read itself in, if any,
 * then the final sample and task_exited, finished, detached (exited).
 * Done before a command looks threads up, so that a thread id reused
 * after an exit names the new thread and never the old target.
 */
static void vp_end_exited(struct vp_coll *c)
{
	struct vp_target *t, *tmp;

	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		if (!READ_ONCE(t->task->exit_state))
			continue;
		if ((t->self_pass && vp_sample_deferred(c, t)) ||
		    vp_sample_target(c, t, 0))
			vp_target_end(c, t, VCPUPERF_DETACH_EXITED);
	}
}

/* Does the process of @leader have a thread that is not exiting? */
static bool vp_has_live_thread(struct task_struct *leader)
{
	struct task_struct *t;
	bool live = false;

	rcu_read_lock();
	for_each_thread(leader, t) {
		if (!(t->flags & PF_EXITING)) {
			live = true;
			break;
		}
	}
	rcu_read_unlock();
	return live;
}

/**
 * vp_forget_all() - drop every thread and process, without records
 * @c:		the collection, lock held
 *
 * For a collection nobody reads any more (its file was closed): every
 * counter is released, nothing is queued.
 */
void vp_forget_all(struct vp_coll *c)
{
	struct vp_target *t, *tmp;
	struct vp_group *g, *gtmp;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		vp_target_free(c, t);
		cond_resched();
	}
	list_for_each_entry_safe(g, gtmp, &c->groups, node)
		vp_group_free(c, g);
}

/**
 * vp_detach_all() - end every thread and process being sampled
 * @c:		the collection, lock held
 * @reason:	enum vcpuperf_detach_reason
 */
void vp_detach_all(struct vp_coll *c, u32 reason)
{
	struct vp_target *t, *tmp;
	struct vp_group *g, *gtmp;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(t, tmp, &c->targets, node) {
		vp_target_end(c, t, reason);
		cond_resched();
	}
	list_for_each_entry_safe(g, gtmp, &c->groups, node) {
		vp_proc_sample(c, g, VCPUPERF_SAMPLE_FINAL);
		vp_group_free(c, g);
	}
}

static bool vp_wanted(enum vcpuperf_target_kind kind, u32 flags,
		      struct task_struct *t)
{
	char comm[TASK_COMM_LEN];

	if (kind != VCPUPERF_TARGET_QEMU ||
	    (flags & VCPUPERF_ATTACH_ALL_THREADS))
		return true;
	get_task_comm(comm, t);
	return vp_parse_vcpu(comm) >= 0;
}

/*
 * Collect referenced threads of @leader's process that are not sampled yet
 * (and, for QEMU without all_threads in @flags, are vCPU threads).  With
 * @strict, an already sampled thread is an error (-EEXIST) and more than
 * @max threads is -ENOSPC; else they are skipped and the rest left for a
 * later scan.
 */
static int vp_collect(struct vp_coll *c, struct task_struct *leader,
		      enum vcpuperf_target_kind kind, u32 flags, bool strict,
		      struct task_struct **tasks, u32 max, u32 *nr)
{
	struct task_struct *t;
	int ret = 0;
	u32 n = 0;

	rcu_read_lock();
	for_each_thread(leader, t) {
		if (t->flags & PF_EXITING)
			continue;
		/* Sampled threads first: this runs on every sampling pass. */
		if (xa_load(&c->by_tid, task_pid_nr(t))) {
			if (strict && vp_wanted(kind, flags, t)) {
				ret = -EEXIST;
				break;
			}
			continue;
		}
		if (!vp_wanted(kind, flags, t))
			continue;
		if (n == max) {
			if (strict)
				ret = -ENOSPC;
			break;
		}
		get_task_struct(t);
		tasks[n++] = t;
	}
	rcu_read_unlock();
	*nr = n;
	return ret;
}

static void vp_put_tasks(struct task_struct **tasks, u32 nr)
{
	while (nr--)
		put_task_struct(tasks[nr]);
}

static struct vp_group *vp_find_group(struct vp_coll *c, struct pid *pid)
{
	struct vp_group *g;

	list_for_each_entry(g, &c->groups, node)
		if (g->pid == pid)
			return g;
	return NULL;
}

/*
 * Start targets for @tasks (references consumed); an error stops early.  A
 * thread that exited since it was collected is left out.
 */
static int vp_start_tasks(struct vp_coll *c, struct task_struct **tasks,
			  u32 nr, struct pid_namespace *ns,
			  enum vcpuperf_target_kind kind, struct vp_group *g,
			  const struct vcpuperf_event_desc *descs,
			  u32 nr_events, bool announce)
{
	struct vp_target *t;
	int ret = 0;
	u32 i;

	for (i = 0; i < nr; i++) {
		t = ret ? ERR_PTR(ret) : vp_target_new(c, tasks[i], ns, kind,
						       g, descs, nr_events);
		put_task_struct(tasks[i]);
		if (IS_ERR(t)) {
			if (PTR_ERR(t) != -ESRCH)
				ret = PTR_ERR(t);
			continue;
		}
		vp_target_start(c, t);
		if (g)
			vp_proc_own_start(g, t);
		if (announce && t->id.vcpu != VCPUPERF_NO_VCPU)
			vp_emit_vcpu_added(c, t);
		cond_resched();	/* hundreds of counters are created here */
	}
	return ret;
}

static int vp_attach_tids(struct vp_coll *c, const struct file *file,
			  struct vp_cmd *cmd, struct pid_namespace *ns,
			  char *err, size_t errlen)
{
	struct vcpuperf_event_desc *descs;
	struct task_struct **tasks;
	u32 i, n = 0;
	int ret;

	if (c->nr_targets + cmd->nr_ids > c->mod->max_targets) {
		snprintf(err, errlen,
			 "target table full: %u attached, limit %u (max_targets)",
			 c->nr_targets, c->mod->max_targets);
		return -ENOSPC;
	}
	tasks = kcalloc(cmd->nr_ids, sizeof(*tasks), GFP_KERNEL);
	descs = kcalloc(cmd->nr_events, sizeof(*descs), GFP_KERNEL);
	if (!tasks || !descs) {
		ret = -ENOMEM;
		goto err_put;
	}
	for (i = 0; i < cmd->nr_events; i++)
		descs[i] = cmd->events[i].desc;
	for (i = 0; i < cmd->nr_ids; i++) {
		struct task_struct *task;
		struct pid *pid;

		pid = find_get_pid(cmd->ids[i]);
		task = get_pid_task(pid, PIDTYPE_PID);
		put_pid(pid);
		if (!task) {
			snprintf(err, errlen, "no thread %u", cmd->ids[i]);
			ret = -ESRCH;
			goto err_put;
		}
		if (task->flags & PF_EXITING) {
			put_task_struct(task);
			snprintf(err, errlen,
				 "thread %u has exited (a zombie or exiting)",
				 cmd->ids[i]);
			ret = -ESRCH;
			goto err_put;
		}
		tasks[n++] = task;
		ret = vp_may_count(file, task, cmd->ids[i], err, errlen);
		if (ret)
			goto err_put;
		if (xa_load(&c->by_tid, task_pid_nr(task))) {
			snprintf(err, errlen, "thread %u already attached",
				 cmd->ids[i]);
			ret = -EEXIST;
			goto err_put;
		}
	}
	ret = vp_start_tasks(c, tasks, n, ns, VCPUPERF_TARGET_TID, NULL,
			     descs, cmd->nr_events, false);
	kfree(descs);
	kfree(tasks);
	return ret;

err_put:
	vp_put_tasks(tasks, n);
	kfree(descs);
	kfree(tasks);
	return ret;
}

/*
 * Collect the threads of @task's process for a new group, with the reason
 * in @err when there are none to take or too many.
 */
static int vp_collect_new(struct vp_coll *c, struct vp_cmd *cmd,
			  struct task_struct *task, struct task_struct **tasks,
			  u32 room, u32 *n, char *err, size_t errlen)
{
	int ret;

	ret = vp_collect(c, task, cmd->kind, cmd->flags, true, tasks, room, n);
	if (ret == -EEXIST) {
		snprintf(err, errlen,
			 "a thread of process %u is attached already (detach it first)",
			 cmd->ids[0]);
	} else if (ret == -ENOSPC) {
		snprintf(err, errlen,
			 "target table full: %u attached, limit %u (max_targets)",
			 c->nr_targets, c->mod->max_targets);
	} else if (!*n && !vp_has_live_thread(task)) {
		snprintf(err, errlen,
			 "process %u has exited (a zombie or exiting)",
			 cmd->ids[0]);
		ret = -ESRCH;
	} else if (!*n && cmd->kind == VCPUPERF_TARGET_QEMU) {
		snprintf(err, errlen,
			 "process %u has no 'CPU <n>/KVM' or 'CPU <n>/TCG' thread (start QEMU with -name NAME,debug-threads=on)",
			 cmd->ids[0]);
		ret = -ESRCH;
	}
	return ret;
}

/* Fill in and list a new group for @task's process. */
static void vp_group_add(struct vp_coll *c, struct vp_group *g,
			 const struct vp_cmd *cmd, struct task_struct *task,
			 struct pid_namespace *ns)
{
	u32 i;

	g->kind = cmd->kind;
	g->pid = get_pid(task_tgid(task));
	g->ns = get_pid_ns(ns);
	g->nr = cmd->ids[0];
	g->nr_events = cmd->nr_events;
	g->flags = cmd->flags;
	for (i = 0; i < cmd->nr_events; i++)
		g->events[i] = cmd->events[i].desc;
	list_add_tail(&g->node, &c->groups);
	c->nr_groups++;
}

/* The process named by an attach or detach command, referenced, or NULL. */
static struct task_struct *vp_cmd_process(const struct vp_cmd *cmd)
{
	struct task_struct *task;
	struct pid *pid;

	pid = find_get_pid(cmd->ids[0]);
	task = get_pid_task(pid, PIDTYPE_TGID);
	put_pid(pid);
	return task;
}

static int vp_attach_process(struct vp_coll *c, const struct file *file,
			     struct vp_cmd *cmd, struct pid_namespace *ns,
			     char *err, size_t errlen)
{
	u32 room = c->mod->max_targets - c->nr_targets;
	struct task_struct **tasks, *task;
	struct vp_group *g;
	u32 n = 0;
	int ret;

	if (c->nr_groups >= VCPUPERF_MAX_GROUPS) {
		snprintf(err, errlen, "%d processes attached already",
			 VCPUPERF_MAX_GROUPS);
		return -ENOSPC;
	}
	task = vp_cmd_process(cmd);
	if (!task) {
		snprintf(err, errlen, "no process %u", cmd->ids[0]);
		return -ESRCH;
	}
	if (vp_find_group(c, task_tgid(task))) {
		snprintf(err, errlen, "process %u already attached",
			 cmd->ids[0]);
		ret = -EEXIST;
		goto err_task;
	}
	ret = vp_may_count(file, task, cmd->ids[0], err, errlen);
	if (ret)
		goto err_task;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	tasks = kvcalloc(room, sizeof(*tasks), GFP_KERNEL);
	if (!g || !tasks) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = vp_collect_new(c, cmd, task, tasks, room, &n, err, errlen);
	if (ret)
		goto err_tasks;
	vp_group_add(c, g, cmd, task, ns);
	ret = vp_proc_start(c, g, task);
	if (ret) {
		vp_group_free(c, g);
		g = NULL;
		goto err_tasks;
	}
	ret = vp_start_tasks(c, tasks, n, ns, cmd->kind, g, g->events,
			     g->nr_events, false);
	kvfree(tasks);
	put_task_struct(task);
	vp_totals_begin(c);
	return ret;

err_tasks:
	vp_put_tasks(tasks, n);
err_free:
	kvfree(tasks);
	kfree(g);
err_task:
	put_task_struct(task);
	return ret;
}

/**
 * vp_attach() - carry out an attach command
 * @c:		the collection, lock held
 * @file:	the file the command was written to (NULL: the module's own)
 * @cmd:	the parsed command
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * Every check (events, threads, limits) is done before anything changes,
 * so a rejected command leaves the collection as it was (only targets
 * whose thread has already exited are ended first, as the next sampling
 * pass would).  Counters that cannot be created do not fail the command:
 * each is reported by an unavailable record.
 *
 * Ids are resolved in the PID namespace of the writer, and the records
 * of the targets carry them as that namespace numbers them.  A thread
 * that has exited (a zombie included) is -ESRCH, as is a process with no
 * thread left that has not exited.
 *
 * Each thread (for pid= and qemu=, the process) is checked against the
 * authority of the file's opener first (access.c).
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vp_attach(struct vp_coll *c, const struct file *file, struct vp_cmd *cmd,
	      char *err, size_t errlen)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	int ret;

	lockdep_assert_held(&c->lock);
	ret = vp_resolve_events(cmd->events, cmd->nr_events, err, errlen);
	if (ret)
		return ret;
	vp_end_exited(c);
	if (cmd->kind == VCPUPERF_TARGET_TID)
		return vp_attach_tids(c, file, cmd, ns, err, errlen);
	return vp_attach_process(c, file, cmd, ns, err, errlen);
}

/**
 * vp_detach() - carry out a detach command naming threads or a process
 * @c:		the collection, lock held
 * @cmd:	the parsed command
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * Return: 0, or -ESRCH when a named thread or process is not attached
 * (then nothing was detached).
 */
int vp_detach(struct vp_coll *c, const struct vp_cmd *cmd, char *err,
	      size_t errlen)
{
	struct vp_target **targets;
	struct task_struct *task;
	struct vp_group *g;
	struct pid *pid;
	u32 i;
	int ret = 0;

	lockdep_assert_held(&c->lock);
	vp_end_exited(c);
	if (cmd->kind != VCPUPERF_TARGET_TID) {
		task = vp_cmd_process(cmd);
		g = task ? vp_find_group(c, task_tgid(task)) : NULL;
		if (task)
			put_task_struct(task);
		if (!g) {
			snprintf(err, errlen, "process %u not attached",
				 cmd->ids[0]);
			return -ESRCH;
		}
		vp_group_end(c, g, VCPUPERF_DETACH_COMMAND);
		return 0;
	}
	targets = kcalloc(cmd->nr_ids, sizeof(*targets), GFP_KERNEL);
	if (!targets)
		return -ENOMEM;
	for (i = 0; i < cmd->nr_ids; i++) {
		pid = find_get_pid(cmd->ids[i]);
		task = get_pid_task(pid, PIDTYPE_PID);
		put_pid(pid);
		targets[i] = task ? xa_load(&c->by_tid, task_pid_nr(task)) :
			     NULL;
		if (task)
			put_task_struct(task);
		if (!targets[i]) {
			snprintf(err, errlen, "thread %u not attached",
				 cmd->ids[i]);
			ret = -ESRCH;
			goto out;
		}
	}
	for (i = 0; i < cmd->nr_ids; i++)
		vp_target_end(c, targets[i], VCPUPERF_DETACH_COMMAND);
out:
	kfree(targets);
	return ret;
}

/* Threads collected in one scan of one process. */
#define VP_SCAN_BATCH	64

/**
 * vp_scan_groups() - pick up threads that appeared in attached processes
 * @c:		the collection, lock held
 *
 * Called by the sampler before each pass: a vCPU hot-plugged into an
 * attached QEMU (or any new thread of a process attached by pid=) is
 * sampled from the next pass on.  A process that is gone and has no
 * thread left to sample is forgotten.
 */
void vp_scan_groups(struct vp_coll *c)
{
	struct task_struct *tasks[VP_SCAN_BATCH];
	struct vp_group *g, *gtmp;
	struct task_struct *leader;
	struct vp_target *t;
	u32 room, n;
	bool busy;

	lockdep_assert_held(&c->lock);
	list_for_each_entry_safe(g, gtmp, &c->groups, node) {
		leader = get_pid_task(g->pid, PIDTYPE_TGID);
		if (!leader) {
			busy = false;
			list_for_each_entry(t, &c->targets, node)
				busy |= t->group == g;
			if (!busy) {
				vp_proc_sample(c, g, VCPUPERF_SAMPLE_FINAL);
				vp_group_free(c, g);
			}
			continue;
		}
		room = min_t(u32, VP_SCAN_BATCH,
			     c->mod->max_targets - c->nr_targets);
		vp_collect(c, leader, g->kind, g->flags, false, tasks, room,
			   &n);
		put_task_struct(leader);
		if (n)
			vp_start_tasks(c, tasks, n, g->ns, g->kind, g,
				       g->events, g->nr_events, true);
	}
}
