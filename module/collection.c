// SPDX-License-Identifier: GPL-2.0
/*
 * Collections: creating one (within the module's limits), destroying
 * one (close: counters released, memory freed, nothing left), and the
 * per-collection settings commands change: ring size, interval, the
 * reason of the last rejected command.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "attach.h"
#include "collection.h"
#include "record.h"
#include "ring.h"
#include "sampler.h"
#include "vcpuperf.h"

/*
 * Reserve room for one more collection (@count) and @kb of ring memory
 * within the module's limits.  The accounting lock is innermost: this is
 * called with or without a collection's lock held.
 */
static int vp_reserve(struct vp_module *mod, bool count, u32 kb)
{
	int ret = 0;

	spin_lock(&mod->acct);
	if (count && mod->nr_open >= mod->max_collections)
		ret = -EUSERS;
	else if (mod->ring_kb_used + kb > mod->ring_total_kb)
		ret = -ENOSPC;
	if (!ret) {
		if (count)
			mod->nr_open++;
		mod->ring_kb_used += kb;
	}
	spin_unlock(&mod->acct);
	return ret;
}

static void vp_unreserve(struct vp_module *mod, bool count, u32 kb)
{
	spin_lock(&mod->acct);
	if (count)
		mod->nr_open--;
	mod->ring_kb_used -= kb;
	spin_unlock(&mod->acct);
}

/**
 * vp_module_setup() - make the module object ready for collections
 * @mod:	the module object, zeroed
 * @max_collections: collections on /dev/vcpuperf at once
 * @ring_total_kb: ring memory of all collections together, KiB
 * @max_targets: threads one collection may sample
 * @ring_kb:	ring size of a new collection, KiB
 *
 * The limits are taken as they are: the module parameters are checked by
 * the caller.
 */
void vp_module_setup(struct vp_module *mod, u32 max_collections,
		     u64 ring_total_kb, u32 max_targets, u32 ring_kb)
{
	mutex_init(&mod->lock);
	spin_lock_init(&mod->acct);
	INIT_LIST_HEAD(&mod->collections);
	idr_init(&mod->ids);
	mod->max_collections = max_collections;
	mod->ring_total_kb = ring_total_kb;
	mod->max_targets = max_targets;
	mod->ring_kb = ring_kb;
}

/* Give a collection's id back (none for the default collection). */
static void vp_coll_put_id(struct vp_coll *c)
{
	struct vp_module *mod = c->mod;

	if (!c->id)
		return;
	mutex_lock(&mod->lock);
	idr_remove(&mod->ids, c->id);
	mutex_unlock(&mod->lock);
}

/**
 * vp_module_teardown() - free what vp_module_setup() set up
 * @mod:	the module object, with no collection left
 */
void vp_module_teardown(struct vp_module *mod)
{
	idr_destroy(&mod->ids);
}

/* Free what vp_coll_alloc() allocated; the collection is unlisted. */
static void vp_coll_free(struct vp_coll *c)
{
	vp_ring_free(&c->ring);
	kfree(c->scratch);
	xa_destroy(&c->by_tid);
	kfree(c);
}

static struct vp_coll *vp_coll_alloc(struct vp_module *mod, u32 ring_kb)
{
	struct vp_coll *c;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return NULL;
	c->mod = mod;
	mutex_init(&c->lock);
	INIT_LIST_HEAD(&c->targets);
	INIT_LIST_HEAD(&c->groups);
	INIT_LIST_HEAD(&c->restarts);
	xa_init(&c->by_tid);
	c->interval_ns = VP_INTERVAL_DEFAULT_NS;
	c->ring_kb = ring_kb;
	c->scratch = kmalloc(VP_MAX_REC_SIZE, GFP_KERNEL);
	if (!c->scratch)
		goto err_free;
	if (vp_ring_init(&c->ring, (size_t)ring_kb * SZ_1K))
		goto err_scratch;
	return c;

err_scratch:
	kfree(c->scratch);
err_free:
	kfree(c);
	return NULL;
}

/**
 * vp_coll_create() - create a collection and list it
 * @mod:	the module
 * @dflt:	the module's default collection (owned by the module, not
 *		counted against max_collections)
 *
 * The new collection has no targets, the module's default ring size and
 * interval, and its sampling kthread running (idle until something is
 * attached).  It is owned by the calling process (for the status file),
 * except the default one.
 *
 * Return: the collection, or ERR_PTR(-EUSERS) at the module's
 * max_collections, ERR_PTR(-ENOSPC) when its ring would exceed
 * ring_total_kb, ERR_PTR(-ENOSPC) when every id is in use, ERR_PTR(-ENOMEM).
 */
struct vp_coll *vp_coll_create(struct vp_module *mod, bool dflt)
{
	struct vp_coll *c;
	u32 kb;
	int ret;

	kb = mod->ring_kb;
	ret = vp_reserve(mod, !dflt, kb);
	if (ret)
		return ERR_PTR(ret);

	c = vp_coll_alloc(mod, kb);
	if (!c) {
		ret = -ENOMEM;
		goto err_unreserve;
	}
	if (!dflt) {
		c->owner_pid = task_tgid_vnr(current);
		get_task_comm(c->owner_comm, current->group_leader);
		/*
		 * Ids go round (not the lowest free one: a closed collection's
		 * id is not reused at once) and skip those in use and 0, the
		 * default collection's.
		 */
		mutex_lock(&mod->lock);
		ret = idr_alloc_cyclic(&mod->ids, NULL, 1, 0, GFP_KERNEL);
		mutex_unlock(&mod->lock);
		if (ret < 0)
			goto err_free;
		c->id = ret;
	}
	ret = vp_sampler_start(c);
	if (ret)
		goto err_id;

	mutex_lock(&mod->lock);
	list_add_tail(&c->node, &mod->collections);
	mutex_unlock(&mod->lock);
	return c;

err_id:
	vp_coll_put_id(c);
err_free:
	vp_coll_free(c);
err_unreserve:
	vp_unreserve(mod, !dflt, kb);
	return ERR_PTR(ret);
}

/**
 * vp_coll_destroy() - unlist a collection and free it
 * @c:		the collection; nobody may use it afterwards
 *
 * For a closed file: nobody reads its records any more, so its threads
 * are dropped without final records and every counter is released.  The
 * same at unload for the default collection, which then has no reader.
 */
void vp_coll_destroy(struct vp_coll *c)
{
	struct vp_module *mod = c->mod;
	bool dflt = !c->id;

	mutex_lock(&mod->lock);
	list_del(&c->node);
	mutex_unlock(&mod->lock);
	vp_unreserve(mod, !dflt, c->ring_kb);
	vp_coll_put_id(c);

	vp_sampler_stop(c);
	mutex_lock(&c->lock);
	vp_forget_all(c);
	c->ended = true;
	mutex_unlock(&c->lock);
	vp_coll_free(c);
}

/*
 * Reserve @rc->kb of ring memory and allocate it, with or without the
 * collection's lock held.  Both rings exist while the records move: both
 * count.
 */
static int vp_coll_ring_get(struct vp_coll *c, struct vp_ring_change *rc,
			    char *err, size_t errlen)
{
	struct vp_module *mod = c->mod;
	int ret;

	ret = vp_reserve(mod, false, rc->kb);
	if (ret) {
		snprintf(err, errlen,
			 "ring memory of all collections would exceed ring_total_kb=%llu while the records move to the new ring (old and new: %u KiB)",
			 mod->ring_total_kb, READ_ONCE(c->ring_kb) + rc->kb);
		return ret;
	}
	rc->buf = vp_ring_buf_alloc((size_t)rc->kb * SZ_1K);
	if (!rc->buf) {
		vp_unreserve(mod, false, rc->kb);
		return -ENOMEM;
	}
	rc->free_kb = rc->kb;
	return 0;
}

/**
 * vp_coll_ring_prepare() - get a new ring's memory, before the lock
 * @c:		the collection, lock not held
 * @rc:		the change, zeroed by the caller
 * @kb:		the new size in KiB, within the command's bounds
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * The memory is reserved against ring_total_kb and allocated here, so
 * that the collection's lock, which the sampler takes at every grid
 * point, is not held for the milliseconds a vmalloc() of megabytes takes.
 * Whatever happens next, vp_coll_ring_finish() gives back what is left.
 *
 * Return: 0; -ENOSPC when the module's ring memory has no room for both
 * rings, -ENOMEM.
 */
int vp_coll_ring_prepare(struct vp_coll *c, struct vp_ring_change *rc,
			 u32 kb, char *err, size_t errlen)
{
	rc->kb = kb;
	/* Read unlocked: vp_coll_set_ring() looks again under the lock. */
	if (kb == READ_ONCE(c->ring_kb))
		return 0;
	return vp_coll_ring_get(c, rc, err, errlen);
}

/**
 * vp_coll_set_ring() - give a collection a ring of another size
 * @c:		the collection, lock held
 * @rc:		the change, from vp_coll_ring_prepare()
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * The records queued move to the new ring; the old one is left in @rc for
 * vp_coll_ring_finish().  Should the ring have changed size since
 * vp_coll_ring_prepare() (another command on the same collection), the
 * memory is got here.
 *
 * Return: 0; -ENOSPC when the module's ring memory (ring_total_kb) has no
 * room for it, -EBUSY when the queued records would not fit, -ENOMEM.
 */
int vp_coll_set_ring(struct vp_coll *c, struct vp_ring_change *rc,
		     char *err, size_t errlen)
{
	int ret;

	lockdep_assert_held(&c->lock);
	if (rc->kb == c->ring_kb)
		return 0;
	if (!rc->buf) {
		ret = vp_coll_ring_get(c, rc, err, errlen);
		if (ret)
			return ret;
	}
	ret = vp_ring_move(&c->ring, &rc->buf, (size_t)rc->kb * SZ_1K);
	if (ret) {
		snprintf(err, errlen,
			 "the records queued do not fit in %u KiB (read them first)",
			 rc->kb);
		return ret;
	}
	/* @rc now holds the old ring. */
	rc->free_kb = c->ring_kb;
	WRITE_ONCE(c->ring_kb, rc->kb);
	return 0;
}

/**
 * vp_coll_ring_finish() - give back the memory a ring change left over
 * @c:		the collection, lock not held
 * @rc:		the change: the old ring after a change, else the new
 *		one that was not used
 */
void vp_coll_ring_finish(struct vp_coll *c, struct vp_ring_change *rc)
{
	vp_ring_buf_free(rc->buf);
	rc->buf = NULL;
	if (rc->free_kb)
		vp_unreserve(c->mod, false, rc->free_kb);
	rc->free_kb = 0;
}

/**
 * vp_coll_set_interval() - change a collection's sampling interval
 * @c:		the collection, lock held
 * @ns:		the interval, within the grammar's bounds
 *
 * The grid starts again from the next pass.
 */
void vp_coll_set_interval(struct vp_coll *c, u64 ns)
{
	lockdep_assert_held(&c->lock);
	WRITE_ONCE(c->interval_ns, ns);
	c->grid_base = 0;
}

/**
 * vp_coll_reject() - keep the reason of a rejected command
 * @c:		the collection, lock held
 * @ret:	its negative errno
 * @why:	its reason
 *
 * Only the writers of this collection can read it back; the kernel log
 * gets it too (rate-limited).
 */
void vp_coll_reject(struct vp_coll *c, int ret, const char *why)
{
	lockdep_assert_held(&c->lock);
	c->last_errno = ret;
	strscpy(c->last_error, why, sizeof(c->last_error));
	pr_warn_ratelimited("collection %u: command rejected (%s): %s\n",
			    c->id, vp_errno_name(ret), why);
}

/**
 * vp_coll_last_error() - copy out the reason of the last rejected command
 * @c:		the collection, lock not held
 * @e:		filled in (zeroed first)
 */
void vp_coll_last_error(struct vp_coll *c, struct vcpuperf_error *e)
{
	memset(e, 0, sizeof(*e));
	mutex_lock(&c->lock);
	e->error = c->last_errno;
	if (c->last_errno)
		strscpy(e->reason, c->last_error, sizeof(e->reason));
	mutex_unlock(&c->lock);
}
