/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collections (collection.c): the module's limits, creating one within them,
 * destroying one, and the settings commands change (ring size, interval,
 * last error).
 */
#ifndef _VCPUPERF_COLLECTION_H
#define _VCPUPERF_COLLECTION_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct vp_coll;
struct vp_module;

/**
 * struct vp_ring_change - the memory of a ring command, got before and
 *			   given back after the collection's lock
 * @kb:		the size asked, KiB
 * @free_kb:	ring memory to give back with @buf, KiB
 * @buf:	the new ring until it takes over, then the old one
 */
struct vp_ring_change {
	u32 kb;
	u32 free_kb;
	u8 *buf;
};

void vp_module_setup(struct vp_module *mod, u32 max_collections,
		     u64 ring_total_kb, u32 max_targets, u32 ring_kb);
void vp_module_teardown(struct vp_module *mod);
struct vp_coll *vp_coll_create(struct vp_module *mod, bool dflt);
void vp_coll_destroy(struct vp_coll *c);
int vp_coll_ring_prepare(struct vp_coll *c, struct vp_ring_change *rc,
			 u32 kb, char *err, size_t errlen);
int vp_coll_set_ring(struct vp_coll *c, struct vp_ring_change *rc,
		     char *err, size_t errlen);
void vp_coll_ring_finish(struct vp_coll *c, struct vp_ring_change *rc);
void vp_coll_set_interval(struct vp_coll *c, u64 ns);
void vp_coll_reject(struct vp_coll *c, int ret, const char *why);
void vp_coll_last_error(struct vp_coll *c, struct vcpuperf_error *e);

#endif /* _VCPUPERF_COLLECTION_H */
