/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building a collection's records (record.c): every record but the sample,
 * assembled in vp_coll.scratch under vp_coll.lock and queued in the ring;
 * and the session totals its finished record carries.
 */
#ifndef _VCPUPERF_RECORD_H
#define _VCPUPERF_RECORD_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"
#include "ring.h"

struct vp_coll;
struct vp_target;

/*
 * Largest record the module builds: the process record (the started
 * record, with the same events and a smaller head, is below it).
 */
#define VP_MAX_REC_SIZE							\
	(sizeof(struct vcpuperf_process) +				\
	 VCPUPERF_MAX_EVENTS * sizeof(struct vcpuperf_event_desc))

void *vp_rec_begin(struct vp_coll *c, u16 type, u32 size, u32 tid);
int vp_rec_emit(struct vp_coll *c, void *rec, enum vp_rec_class cls);
void vp_totals_begin(struct vp_coll *c);
void vp_emit_started(struct vp_coll *c, struct vp_target *t);
void vp_emit_unavailable_as(struct vp_coll *c, pid_t tid,
			    const struct vcpuperf_target_id *id, u32 idx,
			    const struct vcpuperf_event_desc *d, int error,
			    u32 cause, u32 flags);
void vp_emit_unavailable(struct vp_coll *c, struct vp_target *t, u32 idx);
void vp_emit_vcpu_added(struct vp_coll *c, struct vp_target *t);
void vp_emit_first_row(struct vp_coll *c, struct vp_target *t,
		       u32 counting);
void vp_emit_multiplexed(struct vp_coll *c, struct vp_target *t,
			 u32 mask, u32 min_ppm);
void vp_emit_no_counters(struct vp_coll *c, struct vp_target *t,
			 u32 counting);
void vp_emit_mux_expected(struct vp_coll *c, struct vp_target *t);
void vp_emit_task_exited(struct vp_coll *c, struct vp_target *t,
			 u32 exited);
void vp_emit_finished(struct vp_coll *c, struct vp_target *t);
void vp_emit_detached(struct vp_coll *c, struct vp_target *t, u32 reason);
void vp_emit_session_finished(struct vp_coll *c);

#endif /* _VCPUPERF_RECORD_H */
