// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching and detaching: threads by tid, processes by pid and QEMU
 * processes by their vCPU threads, each on the authority of the file's
 * opener (access.c), picking up threads that appear later in an attached
 * process, and detaching one, a process, or everything.
 */
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "access.h"
#include "attach.h"
#include "counter.h"
#include "exec.h"
#include "process.h"
#include "record.h"
#include "sample.h"
#include "target.h"
#include "vcpuperf.h"

static void vp_group_free(struct vp_coll *c, struct vp_group *g)
{
	vp_restarts_drop(c, g);
	list_del(&g->node);
	c->nr_groups--;
	vp_proc_free(g);
	xa_destroy(&g->excluded);
	put_cred(g->cred);
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
	vp_restarts_drop(c, NULL);
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
	vp_restarts_drop(c, NULL);
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

/* A thread's start time as an xarray value: tells it from a later one. */
static unsigned long vp_start_key(struct task_struct *t)
{
	return (unsigned long)t->start_time & LONG_MAX;
}

/* Was @t detached from @g by a detach tid= command?  Under RCU or not. */
static bool vp_excluded(struct vp_group *g, struct task_struct *t)
{
	void *v = xa_load(&g->excluded, task_pid_nr(t));

	return v && xa_to_value(v) == vp_start_key(t);
}

/**
 * vp_group_wants() - would a scan of a group take a thread?
 * @g:		the group
 * @t:		a thread of its process
 *
 * Return: true for a thread of the kind the group samples (for qemu=, a
 * vCPU thread, unless all_threads) that no detach tid= command took out.
 */
bool vp_group_wants(struct vp_group *g, struct task_struct *t)
{
	return vp_wanted(g->kind, g->flags, t) && !vp_excluded(g, t);
}

/*
 * Collect referenced threads of @leader's process that are not sampled yet
 * (and, for QEMU without all_threads in @flags, are vCPU threads), but
 * those a detach tid= command took out of group @g (NULL for a new group).
 * With @strict, an already sampled thread is an error (-EEXIST) and more
 * than @max threads is -ENOSPC; else they are skipped and the rest left
 * for a later scan.
 */
static int vp_collect(struct vp_coll *c, struct task_struct *leader,
		      enum vcpuperf_target_kind kind, u32 flags,
		      struct vp_group *g, bool strict,
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
		if (!vp_wanted(kind, flags, t) || (g && vp_excluded(g, t)))
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
 * Make targets for @tasks (references consumed) into @made, @n of them;
 * a thread that exited since it was collected is left out.  On failure
 * none is left: those made are discarded.  Return: 0, -ENOMEM or -EEXIST.
 */
static int vp_targets_make(struct vp_coll *c, struct task_struct **tasks,
			   u32 nr, struct pid_namespace *ns,
			   enum vcpuperf_target_kind kind, u32 flags,
			   struct vp_group *g,
			   const struct vcpuperf_event_desc *descs,
			   u32 nr_events, const struct cred *cred,
			   struct vp_target **made, u32 *n)
{
	struct vp_target *t;
	int ret = 0;
	u32 i;

	*n = 0;
	for (i = 0; i < nr; i++) {
		t = ret ? ERR_PTR(ret) : vp_target_new(c, tasks[i], ns, kind,
						       flags, g, descs,
						       nr_events, cred);
		put_task_struct(tasks[i]);
		if (IS_ERR(t)) {
			if (PTR_ERR(t) != -ESRCH)
				ret = PTR_ERR(t);
			continue;
		}
		made[(*n)++] = t;
	}
	if (ret)
		while (*n)
			vp_target_discard(c, made[--(*n)]);
	return ret;
}

/* Start the targets vp_targets_make() made: counters, records, sampling. */
static void vp_targets_begin(struct vp_coll *c, struct vp_target **made,
			     u32 n, struct vp_group *g, bool announce)
{
	struct vp_target *t;
	u32 i;

	for (i = 0; i < n; i++) {
		t = made[i];
		vp_target_start(c, t);
		if (g)
			vp_proc_own_start(g, t);
		if (announce && t->id.vcpu != VCPUPERF_NO_VCPU)
			vp_emit_vcpu_added(c, t);
		cond_resched();	/* hundreds of counters are created here */
	}
}

/**
 * vp_start_tasks() - start targets for threads
 * @c:		the collection, lock held
 * @tasks:	the threads, referenced (the references are consumed)
 * @nr:		how many
 * @ns:		pid namespace their ids are given in
 * @kind:	how they are attached
 * @flags:	VCPUPERF_ATTACH_* they are attached with
 * @g:		their group, NULL for tid=
 * @descs:	events
 * @nr_events:	how many
 * @cred:	the authority they are counted with
 * @announce:	queue vcpu_added for each vCPU thread (found by a scan)
 *
 * Every target is made first and started only when all were made, so
 * that a failure leaves nothing behind: a rejected command changes
 * nothing.  A thread that exited since it was collected is left out.  A
 * thread the authority does not reach (a scan's; an attach command checks
 * before) is started with every counter unavailable (access).
 *
 * Return: 0, or -ENOMEM, -EEXIST (nothing started then).
 */
int vp_start_tasks(struct vp_coll *c, struct task_struct **tasks, u32 nr,
		   struct pid_namespace *ns, enum vcpuperf_target_kind kind,
		   u32 flags, struct vp_group *g,
		   const struct vcpuperf_event_desc *descs, u32 nr_events,
		   const struct cred *cred, bool announce)
{
	struct vp_target **made;
	u32 n;
	int ret;

	made = kvcalloc(nr, sizeof(*made), GFP_KERNEL);
	if (!made) {
		vp_put_tasks(tasks, nr);
		return -ENOMEM;
	}
	ret = vp_targets_make(c, tasks, nr, ns, kind, flags, g, descs,
			      nr_events, cred, made, &n);
	if (!ret)
		vp_targets_begin(c, made, n, g, announce);
	kvfree(made);
	return ret;
}

static int vp_attach_tids(struct vp_coll *c, const struct cred *cred,
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
		ret = vp_may_count(cred, task, cmd->ids[i], err, errlen);
		if (ret)
			goto err_put;
		if (xa_load(&c->by_tid, task_pid_nr(task))) {
			snprintf(err, errlen, "thread %u already attached",
				 cmd->ids[i]);
			ret = -EEXIST;
			goto err_put;
		}
	}
	ret = vp_start_tasks(c, tasks, n, ns, VCPUPERF_TARGET_TID, cmd->flags,
			     NULL, descs, cmd->nr_events, cred, false);
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
 * in @err when there are none to take, too many, or one the authority
 * does not reach.
 */
static int vp_collect_new(struct vp_coll *c, const struct cred *cred,
			  struct vp_cmd *cmd, struct task_struct *task,
			  struct task_struct **tasks, u32 room, u32 *n,
			  char *err, size_t errlen)
{
	u32 i;
	int ret;

	ret = vp_collect(c, task, cmd->kind, cmd->flags, NULL, true, tasks,
			 room, n);
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
	/* Every thread, not only the leader: threads may differ in ids. */
	for (i = 0; !ret && i < *n; i++)
		ret = vp_may_count(cred, tasks[i], task_pid_vnr(tasks[i]), err,
				   errlen);
	return ret;
}

/* Fill in and list a new group for @task's process. */
static void vp_group_add(struct vp_coll *c, struct vp_group *g,
			 const struct vp_cmd *cmd,
			 const struct vp_attach_req *req,
			 struct task_struct *task, struct pid_namespace *ns)
{
	u32 i;

	g->kind = cmd->kind;
	g->pid = get_pid(task_tgid(task));
	g->ns = get_pid_ns(ns);
	g->nr = cmd->ids[0];
	g->nr_events = cmd->nr_events;
	g->flags = cmd->flags;
	g->cred = get_cred(req->cred);
	xa_init(&g->excluded);
	/* Read before the lock: of this process, if it is still the one. */
	if (req->vm_pid == g->pid) {
		strscpy(g->vm, req->vm, sizeof(g->vm));
		strscpy(g->uuid, req->uuid, sizeof(g->uuid));
	}
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

static int vp_attach_process(struct vp_coll *c,
			     const struct vp_attach_req *req,
			     struct vp_cmd *cmd, struct pid_namespace *ns,
			     char *err, size_t errlen)
{
	u32 room = c->mod->max_targets - c->nr_targets;
	struct task_struct **tasks, *task;
	struct vp_target **made = NULL;
	struct vp_group *g;
	u32 n = 0, nmade;
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
	ret = vp_may_count(req->cred, task, cmd->ids[0], err, errlen);
	if (ret)
		goto err_task;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	tasks = kvcalloc(room, sizeof(*tasks), GFP_KERNEL);
	if (!g || !tasks) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = vp_collect_new(c, req->cred, cmd, task, tasks, room, &n, err,
			     errlen);
	if (ret)
		goto err_tasks;
	made = kvcalloc(max(n, 1U), sizeof(*made), GFP_KERNEL);
	if (!made) {
		ret = -ENOMEM;
		goto err_tasks;
	}
	vp_group_add(c, g, cmd, req, task, ns);
	/* Every target made before anything is queued: nothing to undo. */
	ret = vp_targets_make(c, tasks, n, ns, cmd->kind, cmd->flags, g,
			      g->events, g->nr_events, req->cred, made,
			      &nmade);
	n = 0;	/* the references are consumed */
	if (!ret) {
		ret = vp_proc_start(c, g, task);
		if (ret)
			while (nmade)
				vp_target_discard(c, made[--nmade]);
	}
	if (ret) {
		vp_group_free(c, g);
		g = NULL;
		goto err_tasks;
	}
	vp_targets_begin(c, made, nmade, g, false);
	kvfree(made);
	kvfree(tasks);
	put_task_struct(task);
	vp_totals_begin(c);
	return 0;

err_tasks:
	vp_put_tasks(tasks, n);
err_free:
	kvfree(made);
	kvfree(tasks);
	kfree(g);
err_task:
	put_task_struct(task);
	return ret;
}

/**
 * vp_attach_prepare() - what an attach needs before the collection's lock
 * @req:	filled in; vp_attach_release() gives it back
 * @cred:	the authority of the attach (the file's opener)
 * @cmd:	the parsed command, of any kind
 *
 * For qemu=, reads the VM identity from the process's command line: that
 * may wait for the process (process.c), and must not while the collection
 * is locked (its sampler, the status file and every open and close of
 * /dev/vcpuperf would wait too).
 */
void vp_attach_prepare(struct vp_attach_req *req, const struct cred *cred,
		       const struct vp_cmd *cmd)
{
	struct task_struct *task;

	memset(req, 0, sizeof(*req));
	req->cred = get_cred(cred);
	if (cmd->op != VP_OP_ATTACH || cmd->kind != VCPUPERF_TARGET_QEMU)
		return;
	task = vp_cmd_process(cmd);
	if (!task)
		return;
	req->vm_pid = get_pid(task_tgid(task));
	vp_proc_identity(task, req->vm, sizeof(req->vm), req->uuid,
			 sizeof(req->uuid));
	put_task_struct(task);
}

/**
 * vp_attach_release() - give back what vp_attach_prepare() took
 * @req:	the request
 */
void vp_attach_release(struct vp_attach_req *req)
{
	put_pid(req->vm_pid);
	put_cred(req->cred);
	req->vm_pid = NULL;
	req->cred = NULL;
}

/**
 * vp_attach() - carry out an attach command
 * @c:		the collection, lock held
 * @req:	its authority and the VM identity, from vp_attach_prepare()
 * @cmd:	the parsed command
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * Every check (events, threads, limits, authority) is done before
 * anything changes, so a rejected command leaves the collection as it was
 * (only targets whose thread has already exited are ended first, as the
 * next sampling pass would).  Counters that cannot be created do not fail
 * the command: each is reported by an unavailable record.
 *
 * Ids are resolved in the PID namespace of the writer, and the records
 * of the targets carry them as that namespace numbers them.  A thread
 * that has exited (a zombie included) is -ESRCH, as is a process with no
 * thread left that has not exited.
 *
 * Each thread (for pid= and qemu=, the process and each of its threads) is
 * checked against the authority in @req (access.c); the targets keep it,
 * and every thread attached later on the same command's behalf (a scan,
 * an exec) is checked against it again.
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vp_attach(struct vp_coll *c, const struct vp_attach_req *req,
	      struct vp_cmd *cmd, char *err, size_t errlen)
{
	struct pid_namespace *ns = task_active_pid_ns(current);
	int ret;

	lockdep_assert_held(&c->lock);
	ret = vp_resolve_events(cmd->events, cmd->nr_events, err, errlen);
	if (ret)
		return ret;
	vp_targets_exited_or_exec(c);
	if (cmd->kind == VCPUPERF_TARGET_TID)
		return vp_attach_tids(c, req->cred, cmd, ns, err, errlen);
	return vp_attach_process(c, req, cmd, ns, err, errlen);
}

/*
 * Keep a thread detached from its group by a detach tid= command out of
 * the group's scans (its start time tells it from a later thread that
 * gets the same tid).  Return: 0 or -ENOMEM.
 */
static int vp_exclude(struct vp_target *t)
{
	void *v = xa_mk_value(vp_start_key(t->task));

	return xa_err(xa_store(&t->group->excluded, t->gtid, v, GFP_KERNEL));
}

/**
 * vp_detach() - carry out a detach command naming threads or a process
 * @c:		the collection, lock held
 * @cmd:	the parsed command
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * A thread of an attached process stays detached: the scans that pick up
 * the process's new threads leave it out.
 *
 * Return: 0, or -ESRCH when a named thread or process is not attached
 * (then nothing was detached), -ENOMEM.
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
	vp_targets_exited_or_exec(c);
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
	for (i = 0; i < cmd->nr_ids && !ret; i++)
		if (targets[i]->group)
			ret = vp_exclude(targets[i]);
	if (ret) {
		/* Nothing detached: nothing stays excluded either. */
		while (i--)
			if (targets[i]->group)
				xa_erase(&targets[i]->group->excluded,
					 targets[i]->gtid);
		goto out;
	}
	for (i = 0; i < cmd->nr_ids; i++)
		vp_target_end(c, targets[i], VCPUPERF_DETACH_COMMAND);
out:
	kfree(targets);
	return ret;
}

/* Threads collected in one scan of one process. */
#define VP_SCAN_BATCH	64

/*
 * A process that is gone and has no thread left to sample is forgotten,
 * with its process totals' final sample.
 */
static void vp_group_gone(struct vp_coll *c, struct vp_group *g)
{
	struct vp_target *t;

	list_for_each_entry(t, &c->targets, node)
		if (t->group == g)
			return;
	vp_proc_sample(c, g, VCPUPERF_SAMPLE_FINAL);
	vp_group_free(c, g);
}

/**
 * vp_scan_groups() - pick up threads that appeared in attached processes
 * @c:		the collection, lock held
 *
 * Called by the sampler before each pass: first the targets whose thread
 * exec'd are attached again (exec.c), then a vCPU hot-plugged into an
 * attached QEMU (or any new thread of a process attached by pid=) is
 * sampled from the next pass on, on the authority the process was
 * attached with; a process whose leader exec'd has its process counters
 * given again.  A process that is gone and has no thread left to sample
 * is forgotten.
 */
void vp_scan_groups(struct vp_coll *c)
{
	struct task_struct *tasks[VP_SCAN_BATCH];
	struct vp_group *g, *gtmp;
	struct task_struct *leader;
	u32 room, n;

	lockdep_assert_held(&c->lock);
	vp_targets_exec(c);
	list_for_each_entry_safe(g, gtmp, &c->groups, node) {
		leader = get_pid_task(g->pid, PIDTYPE_TGID);
		if (!leader) {
			vp_group_gone(c, g);
			continue;
		}
		if (READ_ONCE(leader->self_exec_id) != g->exec_id)
			vp_proc_exec(c, g, leader);
		room = min_t(u32, VP_SCAN_BATCH,
			     c->mod->max_targets - c->nr_targets);
		vp_collect(c, leader, g->kind, g->flags, g, false, tasks, room,
			   &n);
		put_task_struct(leader);
		if (n)
			vp_start_tasks(c, tasks, n, g->ns, g->kind, g->flags,
				       g, g->events, g->nr_events, g->cred,
				       true);
	}
}
