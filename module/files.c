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
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/wait.h>

#include "files.h"
#include "vcpuperf.h"

#define VP_UNLOAD_WARN_SECS	10

/**
 * vp_file_get() - admit one more open vcpuperf file
 * @mod:		the module
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
int vp_file_get(struct vp_module *mod)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	atomic_inc(&mod->files_open);
	/*
	 * Pairs with smp_store_mb() of @unloading in vcpuperf_exit(): either
	 * this open sees it, or vp_files_wait() sees the count.
	 */
	smp_mb__after_atomic();
	if (READ_ONCE(mod->unloading)) {
		vp_file_put(mod);
		return -ENODEV;
	}
	return 0;
}

/**
 * vp_file_put() - a vcpuperf file is released
 * @mod:		the module
 *
 * The count drops and unload is woken under the wait queue's lock:
 * vp_files_wait() takes that lock after seeing the count reach zero, so
 * it cannot free @vp while this function still touches it.
 */
void vp_file_put(struct vp_module *mod)
{
	unsigned long flags;

	spin_lock_irqsave(&mod->files_wait.lock, flags);
	if (atomic_dec_and_test(&mod->files_open))
		wake_up_locked(&mod->files_wait);
	spin_unlock_irqrestore(&mod->files_wait.lock, flags);
}

/**
 * vp_files_wait() - wait until every open vcpuperf file is released
 * @mod:		the module, with @mod->unloading set by smp_store_mb()
 *
 * Called by module exit, once no file can be opened any more and every
 * collection has ended.  A stream reader is expected to read to end of
 * file (the session's finished record is queued by then) and close; any
 * other file only has to be closed.  The kernel log says what unload waits
 * for every VP_UNLOAD_WARN_SECS seconds.
 */
void vp_files_wait(struct vp_module *mod)
{
	while (!wait_event_timeout(mod->files_wait,
				   !atomic_read(&mod->files_open),
				   VP_UNLOAD_WARN_SECS * HZ))
		pr_warn("unload waits for %d open file(s) to be closed (a stream reader must read to end of file); every %d s\n",
			atomic_read(&mod->files_open), VP_UNLOAD_WARN_SECS);
	/* Let vp_file_put() leave its critical section. */
	spin_lock_irq(&mod->files_wait.lock);
	spin_unlock_irq(&mod->files_wait.lock);
}
