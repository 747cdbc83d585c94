/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Collections (collection.c): the module's limits, creating one within them,
 * ending one (final records, then end of file for its reader), destroying
 * one, and the settings commands change (ring size, interval, last error).
 */
#ifndef _VCPUPERF_COLLECTION_H
#define _VCPUPERF_COLLECTION_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct vp_coll;
struct vp_module;

void vp_module_setup(struct vp_module *mod, u32 max_collections,
		     u64 ring_total_kb, u32 max_targets, u32 ring_kb);
struct vp_coll *vp_coll_create(struct vp_module *mod, bool dflt);
void vp_coll_end(struct vp_coll *c, u32 reason);
void vp_coll_destroy(struct vp_coll *c);
int vp_coll_set_ring(struct vp_coll *c, u32 kb, char *err, size_t errlen);
void vp_coll_set_interval(struct vp_coll *c, u64 ns);
void vp_coll_reject(struct vp_coll *c, int ret, const char *why);
void vp_coll_last_error(struct vp_coll *c, struct vcpuperf_error *e);

#endif /* _VCPUPERF_COLLECTION_H */
