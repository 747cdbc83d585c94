/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One (thread, event) counter as one target uses it (counter.c): created on
 * a kernel counter shared with every other user (shared.h), read from the
 * target's own baseline, its state, and why it does not count.  Deltas
 * between two reads and their scaling by time enabled and running are lib
 * code shared with vcpuperf-cat (vp_count_delta(), vp_scale(), vp_mul_div():
 * lib/vcpuperf_scale.c, declared in lib/vcpuperf_lib.h).
 */
#ifndef _VCPUPERF_COUNTER_H
#define _VCPUPERF_COUNTER_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct perf_event;
struct task_struct;
struct vp_shared;

/**
 * struct vp_counter - one (thread, event) counter, as one target uses it
 * @sh:		the kernel counter it shares (shared.c), NULL when it could
 *		not be created
 * @event:	that counter, NULL when it could not be created
 * @error:	positive errno of the failed creation, 0 otherwise
 * @in_error:	perf put the counter in error state (a pinned counter that
 *		found no free PMU counter); reported once, then left out
 * @pmu_lacks:	the creation failed with ENOENT while a cycles counter can
 *		be created: the PMU exists and lacks this event
 * @base:	the counter's values when this target began to use it: its
 *		samples are relative to them, as a counter of its own would be
 * @last:	values at the previous read, relative to @base
 */
struct vp_counter {
	struct vp_shared *sh;
	struct perf_event *event;
	int error;
	bool in_error;
	bool pmu_lacks;
	struct vcpuperf_count base;
	struct vcpuperf_count last;
};

int vp_resolve_events(struct vp_event_spec *evs, u32 nr, char *err,
		      size_t errlen);
void vp_counter_create(struct vp_counter *c,
		       const struct vcpuperf_event_desc *desc,
		       struct task_struct *task);
void vp_counter_read(struct vp_counter *c, struct vcpuperf_count *v);
void vp_event_read(struct perf_event *event, struct vcpuperf_count *v);
bool vp_event_exited(struct perf_event *event);
bool vp_event_on(struct perf_event *ev, struct task_struct *t);
void vp_counter_release(struct vp_counter *c);
bool vp_counter_exited(const struct vp_counter *c);
bool vp_counter_in_error(const struct vp_counter *c);
enum vcpuperf_cause vp_counter_cause(const struct vp_counter *c,
				     const struct vcpuperf_event_desc *desc);
const char *vp_counter_state(const struct vp_counter *c);

#endif /* _VCPUPERF_COUNTER_H */
