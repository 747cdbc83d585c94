// SPDX-License-Identifier: GPL-2.0
/*
 * vcpuperf: per-thread in-kernel perf counters, above all per vCPU thread
 * of a QEMU/KVM process, streamed to userspace through debugfs or
 * /dev/vcpuperf.
 *
 * This file holds the module's life: parameters, load and unload, and the
 * debugfs directory.  See include/uapi/vcpuperf.h for the interface.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "vcpuperf.h"

#define VP_RING_KB_DEFAULT	4096
#define VP_RING_KB_MIN		64
#define VP_RING_KB_MAX		(1024 * 1024)
#define VP_INTERVAL_MS_MAX	60000
#define VP_PARAM_CMD_LEN	(VCPUPERF_CMD_MAX + 64)

static int pid;
module_param(pid, int, 0444);
MODULE_PARM_DESC(pid, "Attach every thread of this process at load");

static int qemu;
module_param(qemu, int, 0444);
MODULE_PARM_DESC(qemu, "Attach the vCPU threads of this QEMU process at load");

static char *tid;
module_param(tid, charp, 0444);
MODULE_PARM_DESC(tid, "Attach these threads (comma-separated tids) at load");

static char *events;
module_param(events, charp, 0444);
MODULE_PARM_DESC(events, "Events for the load-time attach (default: cycles,instructions,cache-references,cache-misses,branches,branch-misses,page-faults,context-switches)");

static unsigned int interval_ms = VCPUPERF_INTERVAL_DEFAULT_NS / NSEC_PER_MSEC;
module_param(interval_ms, uint, 0444);
MODULE_PARM_DESC(interval_ms, "Sampling interval in ms, 1..60000 (default 100)");

static bool guest_only;
module_param(guest_only, bool, 0444);
MODULE_PARM_DESC(guest_only, "Count hardware events in guest mode only (exclude_host)");

static unsigned int ring_kb = VP_RING_KB_DEFAULT;
module_param(ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "Record ring size in KiB, 64..1048576 (default 4096)");

struct vp_state *vp_global;

static int vp_debugfs_init(struct vp_state *vp)
{
	vp->dir = debugfs_create_dir("vcpuperf", NULL);
	if (IS_ERR(vp->dir))
		return PTR_ERR(vp->dir);
	/*
	 * No .owner in these fops: an open file must not pin the module, so
	 * that unloading can end a collection that has a reader.  Unload
	 * waits for every open file's release instead (files.c).
	 */
	debugfs_create_file("control", 0600, vp->dir, vp, &vp_control_fops);
	debugfs_create_file("stream", 0400, vp->dir, vp, &vp_stream_fops);
	debugfs_create_file("status", 0400, vp->dir, vp, &vp_status_fops);
	return 0;
}

/* Build and run the attach command the parameters describe, if any. */
static int vp_param_attach(struct vp_state *vp)
{
	const char *ev = events && *events ? events : NULL;
	char *cmd;
	int n, ret;

	if (!pid && !qemu && !(tid && *tid))
		return 0;
	if (!!pid + !!qemu + !!(tid && *tid) > 1) {
		pr_err("vcpuperf: give only one of pid=, qemu= and tid=\n");
		return -EINVAL;
	}
	cmd = kmalloc(VP_PARAM_CMD_LEN, GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	if (pid)
		n = snprintf(cmd, VP_PARAM_CMD_LEN, "attach pid=%d", pid);
	else if (qemu)
		n = snprintf(cmd, VP_PARAM_CMD_LEN, "attach qemu=%d", qemu);
	else
		n = snprintf(cmd, VP_PARAM_CMD_LEN, "attach tid=%s", tid);
	if (ev)
		n += snprintf(cmd + n, VP_PARAM_CMD_LEN - n, " events=%s", ev);
	if (guest_only)
		n += snprintf(cmd + n, VP_PARAM_CMD_LEN - n, " guest_only");
	if (n >= VP_PARAM_CMD_LEN) {
		pr_err("vcpuperf: parameters too long\n");
		ret = -E2BIG;
	} else {
		ret = vp_control_apply(vp, cmd, n);
		if (ret)
			pr_err("vcpuperf: load-time attach failed (%s): %s\n",
			       vp_errno_name(ret), vp->last_error);
	}
	kfree(cmd);
	return ret;
}

static int __init vcpuperf_init(void)
{
	struct vp_state *vp;
	int ret;

	if (ring_kb < VP_RING_KB_MIN || ring_kb > VP_RING_KB_MAX) {
		pr_err("vcpuperf: ring_kb=%u outside %u..%u\n", ring_kb,
		       VP_RING_KB_MIN, VP_RING_KB_MAX);
		return -EINVAL;
	}
	if (!interval_ms || interval_ms > VP_INTERVAL_MS_MAX) {
		pr_err("vcpuperf: interval_ms=%u outside 1..%u\n", interval_ms,
		       VP_INTERVAL_MS_MAX);
		return -EINVAL;
	}
	vp = kzalloc(sizeof(*vp), GFP_KERNEL);
	if (!vp)
		return -ENOMEM;
	mutex_init(&vp->lock);
	INIT_LIST_HEAD(&vp->targets);
	INIT_LIST_HEAD(&vp->groups);
	xa_init(&vp->by_tid);
	init_waitqueue_head(&vp->files_wait);
	vp->interval_ns = (u64)interval_ms * NSEC_PER_MSEC;
	vp->scratch = kmalloc(VP_MAX_REC_SIZE, GFP_KERNEL);
	if (!vp->scratch) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = vp_ring_init(&vp->ring, (size_t)ring_kb * SZ_1K);
	if (ret)
		goto err_scratch;
	ret = vp_sampler_start(vp);
	if (ret)
		goto err_ring;
	ret = vp_param_attach(vp);
	if (ret)
		goto err_sampler;
	ret = vp_debugfs_init(vp);
	if (ret)
		goto err_detach;
	ret = vp_chardev_register(vp);
	if (ret)
		goto err_debugfs;
	vp_global = vp;
	pr_info("vcpuperf: loaded, ABI %u, ring %u KiB, interval %u ms\n",
		VCPUPERF_ABI_VERSION, ring_kb, interval_ms);
	return 0;

err_debugfs:
	debugfs_remove_recursive(vp->dir);
err_detach:
	mutex_lock(&vp->lock);
	vp_detach_all(vp, VCPUPERF_DETACH_UNLOAD);
	mutex_unlock(&vp->lock);
err_sampler:
	vp_sampler_stop(vp);
err_ring:
	vp_ring_free(&vp->ring);
err_scratch:
	kfree(vp->scratch);
err_free:
	xa_destroy(&vp->by_tid);
	kfree(vp);
	return ret;
}

static void __exit vcpuperf_exit(void)
{
	struct vp_state *vp = vp_global;

	/* Refuse new opens; pairs with the barrier in vp_file_get(). */
	smp_store_mb(vp->unloading, true);
	vp_chardev_unregister(vp);
	vp_sampler_stop(vp);
	mutex_lock(&vp->lock);
	vp_detach_all(vp, VCPUPERF_DETACH_UNLOAD);
	vp_emit_session_finished(vp);
	mutex_unlock(&vp->lock);
	vp_files_wait(vp);
	debugfs_remove_recursive(vp->dir);
	vp_ring_free(&vp->ring);
	kfree(vp->scratch);
	xa_destroy(&vp->by_tid);
	kfree(vp);
	pr_info("vcpuperf: unloaded\n");
}

module_init(vcpuperf_init);
module_exit(vcpuperf_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("vcpuperf developers");
MODULE_DESCRIPTION("Per-thread and per-vCPU in-kernel perf counters streamed through debugfs or /dev/vcpuperf");
MODULE_VERSION("0.1.0");
