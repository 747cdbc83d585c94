/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the vcpuperf KUnit suites share (vpk.c): the per-test context that
 * vpk_exit() tears down whatever the test did, worker kthreads the tests
 * control, and the private module state and collections they drive.
 *
 * The suites run inside a debug kernel (KASAN, lockdep, kmemleak,
 * DEBUG_ATOMIC_SLEEP) by scripts/kunit.sh, linked with the very objects
 * vcpuperf.ko is made of (the lib and module sources except
 * module/main.c, see Kbuild here), so they test the real code.  One
 * suite per unit: vcpuperf_parse (parse_kunit.c), vcpuperf_ring
 * (ring_kunit.c), vcpuperf_counter (counter_kunit.c), vcpuperf_collection
 * (collection_kunit.c), vcpuperf_read (read_kunit.c) and vcpuperf_sched
 * (sched_kunit.c).
 */
#ifndef _VCPUPERF_VPK_H
#define _VCPUPERF_VPK_H

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/types.h>

#include "../../module/vcpuperf.h"

#define ERRLEN	VP_ERR_LEN

#define VPK_MAX_WORKERS	2
#define VPK_MAX_COUNTERS 8

struct vpk_worker {
	struct task_struct *task;
	struct completion go;
	struct completion done;
	unsigned int sleeps;		/* sleep a jiffy this many times */
	u64 busy_ns;			/* then spin for this much CPU time */
	bool hold;			/* then wait for kthread_stop() */
	bool started;
	bool stopped;
};

struct vpk_ctx {
	struct vp_ring ring;
	struct vp_module mod;
	bool mod_ready;
	struct vp_coll *vp;
	struct vpk_worker workers[VPK_MAX_WORKERS];
	struct vp_counter counters[VPK_MAX_COUNTERS];
	struct vp_counter umh_counter;
	struct vcpuperf_event_desc umh_desc;
	int umh_create_error;
	char err[ERRLEN];
};

/* The module object of the tests: small rings, a few collections. */
#define VPK_RING_KB		64
#define VPK_MAX_COLLECTIONS	4
#define VPK_RING_TOTAL_KB	(VPK_MAX_COLLECTIONS * VPK_RING_KB)

struct vpk_worker *vpk_worker_new(struct kunit *test, unsigned int idx,
				  unsigned int sleeps, u64 busy_ns, bool hold);
void vpk_worker_go(struct vpk_worker *w);
bool vpk_worker_wait(struct vpk_worker *w);
void vpk_worker_stop(struct vpk_worker *w);
struct vp_coll *vpk_coll_new(struct kunit *test, bool sampler);
int vpk_init(struct kunit *test);
void vpk_exit(struct kunit *test);

#endif /* _VCPUPERF_VPK_H */
