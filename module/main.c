// SPDX-License-Identifier: GPL-2.0
/*
 * vcpuperf: per-thread in-kernel perf counters, above all per vCPU thread
 * of a QEMU/KVM process, streamed to userspace through /dev/vcpuperf (one
 * collection per open file) or debugfs (the default collection).
 *
 * This file holds the module's life: parameters, load and unload, and the
 * default collection.  See include/uapi/vcpuperf.h for the interface.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "chardev.h"
#include "collection.h"
#include "control.h"
#include "debugfs.h"
#include "selfread.h"
#include "vcpuperf.h"
#include "who.h"

#define VP_INTERVAL_MS_MAX	(VCPUPERF_INTERVAL_MAX_NS / NSEC_PER_MSEC)
#define VP_PARAM_CMD_LEN	(VCPUPERF_CMD_MAX + 64)
#define VP_PARAM_ID_LEN		16	/* a pid in decimal */
#define VP_MAX_COLLECTIONS_DEFAULT	64
#define VP_MAX_COLLECTIONS_MAX		4096
#define VP_RING_TOTAL_KB_DEFAULT	(512U * 1024U)	/* 512 MiB */
#define VP_MAX_TARGETS_MAX		16384

static int pid;
module_param(pid, int, 0444);
MODULE_PARM_DESC(pid, "Attach every thread of this process at load (default collection)");

static int qemu;
module_param(qemu, int, 0444);
MODULE_PARM_DESC(qemu, "Attach the vCPU threads of this QEMU process at load (default collection)");

static char *tid;
module_param(tid, charp, 0444);
MODULE_PARM_DESC(tid, "Attach these threads (comma-separated tids) at load (default collection)");

static char *events;
module_param(events, charp, 0444);
MODULE_PARM_DESC(events, "Events for the load-time attach (default: " VP_DEFAULT_EVENTS ")");

static unsigned int interval_ms = VP_INTERVAL_DEFAULT_NS / NSEC_PER_MSEC;
module_param(interval_ms, uint, 0444);
MODULE_PARM_DESC(interval_ms, "Sampling interval of the default collection in ms, 1..60000 (default 100)");

static bool guest_only;
module_param(guest_only, bool, 0444);
MODULE_PARM_DESC(guest_only, "Count hardware events in guest mode only (exclude_host) in the load-time attach");

static unsigned int ring_kb = VP_RING_DEFAULT_KB;
module_param(ring_kb, uint, 0444);
MODULE_PARM_DESC(ring_kb, "Ring size of a new collection in KiB, 64..1048576 (default 4096)");

static unsigned int max_collections = VP_MAX_COLLECTIONS_DEFAULT;
module_param(max_collections, uint, 0444);
MODULE_PARM_DESC(max_collections, "Collections open on /dev/vcpuperf at once, 1..4096 (default 64)");

static unsigned long ring_total_kb = VP_RING_TOTAL_KB_DEFAULT;
module_param(ring_total_kb, ulong, 0444);
MODULE_PARM_DESC(ring_total_kb, "Ring memory of all collections together in KiB, at least ring_kb (default 524288)");

static unsigned int max_targets = VCPUPERF_MAX_TARGETS;
module_param(max_targets, uint, 0444);
MODULE_PARM_DESC(max_targets, "Threads one collection may sample, 1..16384 (default 1024)");

static struct vp_module vp_mod;

/* Build and run the attach command the parameters describe, if any. */
static int vp_param_attach(struct vp_coll *c)
{
	const char *ev = events && *events ? events : NULL;
	enum vcpuperf_target_kind kind;
	char ids[VP_PARAM_ID_LEN];
	const char *what = ids;
	char *cmd;
	int n, ret;

	if (!pid && !qemu && !(tid && *tid))
		return 0;
	if (!!pid + !!qemu + !!(tid && *tid) > 1) {
		pr_err("give only one of pid=, qemu= and tid=\n");
		return -EINVAL;
	}
	if (tid && *tid) {
		kind = VCPUPERF_TARGET_TID;
		what = tid;
	} else {
		kind = pid ? VCPUPERF_TARGET_PID : VCPUPERF_TARGET_QEMU;
		snprintf(ids, sizeof(ids), "%d", pid ? pid : qemu);
	}
	cmd = kmalloc(VP_PARAM_CMD_LEN, GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	n = vp_build_attach(cmd, VP_PARAM_CMD_LEN, kind, what, ev,
			    guest_only ? VCPUPERF_MOD_GUEST : 0);
	if (n < 0) {
		pr_err("parameters too long\n");
		ret = n;
	} else {
		ret = vp_control_apply(c, NULL, cmd, n);
		if (ret)
			pr_err("load-time attach failed (%s): %s\n",
			       vp_errno_name(ret), c->last_error);
	}
	kfree(cmd);
	return ret;
}

/* Check the parameters; every complaint names the parameter. */
static int vp_check_params(void)
{
	if (ring_kb < VCPUPERF_RING_MIN_KB || ring_kb > VCPUPERF_RING_MAX_KB) {
		pr_err("ring_kb=%u outside %u..%u\n", ring_kb,
		       VCPUPERF_RING_MIN_KB, VCPUPERF_RING_MAX_KB);
		return -EINVAL;
	}
	if (!interval_ms || interval_ms > VP_INTERVAL_MS_MAX) {
		pr_err("interval_ms=%u outside 1..%llu\n", interval_ms,
		       VP_INTERVAL_MS_MAX);
		return -EINVAL;
	}
	if (!max_collections || max_collections > VP_MAX_COLLECTIONS_MAX) {
		pr_err("max_collections=%u outside 1..%u\n", max_collections,
		       VP_MAX_COLLECTIONS_MAX);
		return -EINVAL;
	}
	if (ring_total_kb < ring_kb) {
		pr_err("ring_total_kb=%lu is below ring_kb=%u\n", ring_total_kb,
		       ring_kb);
		return -EINVAL;
	}
	if (!max_targets || max_targets > VP_MAX_TARGETS_MAX) {
		pr_err("max_targets=%u outside 1..%u\n", max_targets,
		       VP_MAX_TARGETS_MAX);
		return -EINVAL;
	}
	return 0;
}

static int __init vcpuperf_init(void)
{
	struct vp_module *mod = &vp_mod;
	struct vp_coll *c;
	int ret;

	ret = vp_check_params();
	if (ret)
		return ret;
	vp_module_setup(mod, max_collections, ring_total_kb, max_targets,
			ring_kb);

	c = vp_coll_create(mod, true);
	if (IS_ERR(c)) {
		vp_module_teardown(mod);
		return PTR_ERR(c);
	}
	mod->dflt = c;
	mutex_lock(&c->lock);
	vp_coll_set_interval(c, (u64)interval_ms * NSEC_PER_MSEC);
	mutex_unlock(&c->lock);
	ret = vp_param_attach(c);
	if (ret)
		goto err_coll;
	ret = vp_debugfs_init(mod);
	if (ret)
		goto err_coll;
	ret = vp_chardev_register(mod);
	if (ret)
		goto err_debugfs;
	pr_info("loaded, ABI %u, ring %u KiB, interval %u ms, up to %u collections\n",
		VCPUPERF_ABI_VERSION, ring_kb, interval_ms, max_collections);
	return 0;

err_debugfs:
	vp_debugfs_exit(mod);
err_coll:
	vp_coll_destroy(c);
	vp_module_teardown(mod);
	/* The load-time attach's sampler may have queued reads meanwhile. */
	vp_selfread_drain();
	return ret;
}

/*
 * Every vcpuperf file pins the module while it is open (.owner), so unload
 * begins only once none is: every collection on /dev/vcpuperf has been
 * destroyed by its file's release, and the default collection has no
 * reader.  Its threads (attached by the load-time parameters or the
 * debugfs control file) are dropped without records: nobody can read
 * them.
 */
static void __exit vcpuperf_exit(void)
{
	struct vp_module *mod = &vp_mod;

	vp_debugfs_exit(mod);
	vp_chardev_unregister(mod);
	vp_coll_destroy(mod->dflt);
	vp_module_teardown(mod);
	/* Threads' reads still queued run this module's code: wait. */
	vp_selfread_drain();
	/* Likewise the freeing of who took the threads' CPUs. */
	vp_who_exit();
	pr_info("unloaded\n");
}

module_init(vcpuperf_init);
module_exit(vcpuperf_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("vcpuperf developers");
MODULE_DESCRIPTION("Per-thread and per-vCPU in-kernel perf counters streamed through /dev/vcpuperf and debugfs");
MODULE_VERSION(VP_VERSION);	/* dkms.conf, by Kbuild */
