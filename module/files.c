// SPDX-License-Identifier: GPL-2.0
/*
 * Open-file accounting shared by every vcpuperf file, the debugfs ones and
 * /dev/vcpuperf: the capability check, refusing opens once unload has
 * begun, and letting unload wait until the last file is released.
 *
 * None of the file_operations has an .owner: an open file must not pin
 * the module, so that rmmod can end a collection that has a reader (the
 * reader drains to end of file and closes).  Since the files then point
 * into module code that unload frees, unload waits here until every one
 * of them has been released.  What the VFS does after a release returns
 * (a debugfs proxy or __fput() reading the file_operations' .owner) still
 * runs after the count drops; unload then has the rest of module exit and
 * an RCU grace period to go before the module's memory is freed, which
 * makes that window theoretical, but unlike a pinned module it is not
 * closed by construction.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/seq_file.h>
#include <linux/wait.h>

#include "vcpuperf.h"

#define VP_UNLOAD_WARN_SECS	10

/**
 * vp_file_get() - admit one more open vcpuperf file
 * @vp:		module state
 *
 * Kernel counters bypass perf_event_paranoid and perf's ptrace-style
 * checks, so opening any vcpuperf file needs what perf_event_open() needs
 * to count any thread at the strictest setting: Debian's
 * perf_event_paranoid=3 (its default) wants CAP_SYS_ADMIN, and CAP_PERFMON
 * is not enough there.  The sysctl is not exported to modules, so
 * CAP_SYS_ADMIN is required whatever its value.
 *
 * Return: 0, with the file counted until vp_file_put(); -EPERM without
 * the capability; -ENODEV once unload has begun.
 */
int vp_file_get(struct vp_state *vp)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	atomic_inc(&vp->files_open);
	/*
	 * Pairs with smp_store_mb() of @unloading in vcpuperf_exit(): either
	 * this open sees it, or vp_files_wait() sees the count.
	 */
	smp_mb__after_atomic();
	if (READ_ONCE(vp->unloading)) {
		vp_file_put(vp);
		return -ENODEV;
	}
	return 0;
}

/**
 * vp_file_put() - a vcpuperf file is released
 * @vp:		module state
 *
 * The count drops and unload is woken under the wait queue's lock:
 * vp_files_wait() takes that lock after seeing the count reach zero, so
 * it cannot free @vp while this function still touches it.
 */
void vp_file_put(struct vp_state *vp)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->files_wait.lock, flags);
	if (atomic_dec_and_test(&vp->files_open))
		wake_up_locked(&vp->files_wait);
	spin_unlock_irqrestore(&vp->files_wait.lock, flags);
}

/**
 * vp_files_wait() - wait until every open vcpuperf file is released
 * @vp:		module state, with @vp->unloading set by smp_store_mb()
 *
 * Called by module exit, once no file can be opened any more.  A stream
 * reader is expected to read to end of
 * file (the session's finished record must be queued before) and close;
 * any other file only has to be closed.  The kernel log says what unload
 * waits for every 10 seconds.
 */
void vp_files_wait(struct vp_state *vp)
{
	while (!wait_event_timeout(vp->files_wait,
				   !atomic_read(&vp->files_open),
				   VP_UNLOAD_WARN_SECS * HZ))
		pr_warn("vcpuperf: unload waits for %d open file(s) to be closed (a stream reader must read to end of file)\n",
			atomic_read(&vp->files_open));
	/* Let vp_file_put() leave its critical section. */
	spin_lock_irq(&vp->files_wait.lock);
	spin_unlock_irq(&vp->files_wait.lock);
}

/**
 * vp_single_open() - open a counted seq_file showing the module state
 * @file:	the file being opened
 * @show:	its show function, called with @vp as private data
 * @vp:		module state
 *
 * Return: 0 or a negative errno (see vp_file_get()).
 */
int vp_single_open(struct file *file, int (*show)(struct seq_file *, void *),
		   struct vp_state *vp)
{
	int ret;

	ret = vp_file_get(vp);
	if (ret)
		return ret;
	ret = single_open(file, show, vp);
	if (ret)
		vp_file_put(vp);
	return ret;
}

/**
 * vp_single_release() - release a file opened by vp_single_open()
 * @inode:	its inode
 * @file:	the file
 *
 * Return: 0.
 */
int vp_single_release(struct inode *inode, struct file *file)
{
	struct vp_state *vp = ((struct seq_file *)file->private_data)->private;

	single_release(inode, file);
	vp_file_put(vp);
	return 0;
}
