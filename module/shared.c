// SPDX-License-Identifier: GPL-2.0
/*
 * One kernel counter per (thread, event), whoever counts it.
 *
 * A PMU has few counters, and every extra event on a vCPU thread pushes it
 * into multiplexing.  So a counter is shared: by every collection whose
 * targets count the same event on the same thread, and, apart from those,
 * by every collection's whole-process totals of the same process
 * (process.c: inherited counters, which a target's never are).  Each user
 * keeps its own baseline (the counter's value, enabled and running times
 * when it began to use it: vp_counter.base) and reads the counter at its
 * own times, so its records are exactly what a counter of its own would
 * give.  The counter goes when its last user releases it.  Two events
 * share a counter only when every attr bit is the same: type, config, the
 * modifiers that reach the attr, and inherit.
 *
 * The registry is a hash table under a mutex, taken inside a collection's
 * lock (lock order: vcpuperf.h) and alone by the task work that releases a
 * target's counters (selfread.c).  Counters are created under it, so two
 * collections attaching the same thread at once make one counter.  A
 * second table finds the counters on a thread, and the inherited ones of
 * its process, for the load a thread puts on its PMU.
 */
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/refcount.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "counter.h"
#include "pmu.h"
#include "shared.h"

#define VP_SHARED_HASH_BITS	10

/**
 * struct vp_shared - a kernel counter and its users
 * @node:	in vp_shared_table (vp_shared_lock)
 * @tnode:	in vp_shared_where, by its thread (an inherited counter: by
 *		its thread's process, whose threads may hold its children)
 * @ref:	users: targets of any collection, process totals
 * @task:	the thread, referenced
 * @type:	perf_event_attr.type
 * @config:	perf_event_attr.config
 * @mods:	VCPUPERF_MOD_* applied to the attr
 * @inherit:	attr.inherit and attr.inherit_thread (process totals)
 * @event:	the counter
 */
struct vp_shared {
	struct hlist_node node;
	struct hlist_node tnode;
	refcount_t ref;
	struct task_struct *task;
	u32 type;
	u64 config;
	u32 mods;
	bool inherit;
	struct perf_event *event;
};

static DEFINE_MUTEX(vp_shared_lock);
static DEFINE_HASHTABLE(vp_shared_table, VP_SHARED_HASH_BITS);
static DEFINE_HASHTABLE(vp_shared_where, VP_SHARED_HASH_BITS);

/*
 * The key of a counter in vp_shared_where: its thread, or for an inherited
 * counter its thread's process (the signal_struct, which an exec keeps
 * and which lives as long as the thread's task_struct).
 */
static const void *vp_shared_where_key(struct task_struct *task, bool inherit)
{
	return inherit ? (const void *)task->signal : (const void *)task;
}

static u32 vp_shared_hash(struct task_struct *task, u32 type, u64 config)
{
	return jhash_3words((u32)(unsigned long)task, type,
			    (u32)config ^ (u32)(config >> 32), 0);
}

/**
 * vp_shared_get() - the counter of an event on a thread, made if need be
 * @desc:	the event, its effective modifiers applied
 * @task:	the thread
 * @inherit:	an inherited counter (attr.inherit and inherit_thread: the
 *		thread and the threads it creates afterwards)
 * @shp:	the shared counter, the caller's reference, on success
 *
 * Must be called from process context; sleeps.
 *
 * Return: the counter, or an ERR_PTR() of perf's errno when it could not
 * be created (nothing is shared then); -ENOENT for a tracepoint this
 * kernel does not have (VCPUPERF_CONFIG_ABSENT).
 */
struct perf_event *vp_shared_get(const struct vcpuperf_event_desc *desc,
				 struct task_struct *task, bool inherit,
				 struct vp_shared **shp)
{
	u32 key = vp_shared_hash(task, desc->type, desc->config);
	struct perf_event_attr attr;
	struct perf_event *event;
	struct vp_shared *sh;

	might_sleep();
	if (desc->type == PERF_TYPE_TRACEPOINT &&
	    desc->config == VCPUPERF_CONFIG_ABSENT)
		return ERR_PTR(-ENOENT);
	mutex_lock(&vp_shared_lock);
	hash_for_each_possible(vp_shared_table, sh, node, key) {
		if (sh->task == task && sh->type == desc->type &&
		    sh->config == desc->config && sh->mods == desc->mods &&
		    sh->inherit == inherit) {
			refcount_inc(&sh->ref);
			mutex_unlock(&vp_shared_lock);
			*shp = sh;
			return sh->event;
		}
	}
	sh = kzalloc(sizeof(*sh), GFP_KERNEL);
	if (!sh) {
		event = ERR_PTR(-ENOMEM);
		goto out_unlock;
	}
	vp_build_attr(desc, &attr);
	attr.inherit = inherit;
	attr.inherit_thread = inherit;
	event = perf_event_create_kernel_counter(&attr, -1, task, NULL, NULL);
	if (IS_ERR(event)) {
		kfree(sh);
		goto out_unlock;
	}
	refcount_set(&sh->ref, 1);
	get_task_struct(task);
	sh->task = task;
	sh->type = desc->type;
	sh->config = desc->config;
	sh->mods = desc->mods;
	sh->inherit = inherit;
	sh->event = event;
	hash_add(vp_shared_table, &sh->node, key);
	hash_add(vp_shared_where, &sh->tnode,
		 (unsigned long)vp_shared_where_key(task, inherit));
	*shp = sh;
out_unlock:
	mutex_unlock(&vp_shared_lock);
	return event;
}

/**
 * vp_shared_put() - a user is done with a counter
 * @sh:		the shared counter, or NULL
 *
 * The last user releases the counter (and, for an inherited one, the
 * children perf made from it).  Sleeps.
 */
void vp_shared_put(struct vp_shared *sh)
{
	if (!sh)
		return;
	mutex_lock(&vp_shared_lock);
	if (!refcount_dec_and_test(&sh->ref)) {
		mutex_unlock(&vp_shared_lock);
		return;
	}
	hash_del(&sh->node);
	hash_del(&sh->tnode);
	mutex_unlock(&vp_shared_lock);
	perf_event_release_kernel(sh->event);
	put_task_struct(sh->task);
	kfree(sh);
}

/**
 * vp_shared_load() - what a thread asks of its PMU, from the registry
 * @task:	the thread
 * @load:	filled in: its hardware counters (those it inherited from a
 *		process counter of its process among them), the PMU's
 *		counters and rotation interval (from one of them), the users
 *		of the most shared one
 *
 * Only vcpuperf's counters are seen: another perf user's are not.  Walks
 * the counters of @task and of its process only.  Sleeps.
 */
void vp_shared_load(struct task_struct *task, struct vcpuperf_pmu_load *load)
{
	const void *proc = vp_shared_where_key(task, true);
	struct perf_event *hw = NULL;
	struct vp_shared *sh;

	memset(load, 0, sizeof(*load));
	mutex_lock(&vp_shared_lock);
	hash_for_each_possible(vp_shared_where, sh, tnode,
			       (unsigned long)task) {
		if (sh->inherit || sh->task != task ||
		    !vp_is_pmu_event(sh->type))
			continue;
		load->pmu_events++;
		load->users = max(load->users, refcount_read(&sh->ref));
		hw = hw ? hw : sh->event;
	}
	/* Process counters on it: its own or inherited from its creator. */
	hash_for_each_possible(vp_shared_where, sh, tnode,
			       (unsigned long)proc) {
		if (!sh->inherit || sh->task->signal != task->signal ||
		    !vp_is_pmu_event(sh->type) || !vp_event_on(sh->event, task))
			continue;
		load->pmu_events++;
		load->inherited++;
		hw = hw ? hw : sh->event;
	}
	if (hw) {
		load->pmu_counters = vp_pmu_counters(hw);
		load->rotate_ms = vp_pmu_rotate_ms(hw);
	}
	mutex_unlock(&vp_shared_lock);
}

/**
 * vp_shared_users() - how many users a counter has now
 * @sh:		the shared counter
 *
 * Return: the count, 1 when only the caller uses it.
 */
u32 vp_shared_users(const struct vp_shared *sh)
{
	return refcount_read(&sh->ref);
}
