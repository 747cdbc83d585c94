/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A running thread reading its own counters from a task work (selfread.c):
 * the state a target keeps for it, asking the thread and taking its values,
 * the reads still queued that hold the module, and waiting for them at
 * unload.  Its own spinlock and the module-wide table of queued reads
 * (vp_sr_lock) are never held across another lock.
 */
#ifndef _VCPUPERF_SELFREAD_H
#define _VCPUPERF_SELFREAD_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct seq_file;
struct task_struct;
struct vp_counter;
struct vp_selfread;

/**
 * struct vp_reading - one read of a thread's counters, by the thread
 * @vals:	cumulative values, one per event (where a counter exists)
 * @exited:	counters that saw their thread's end
 * @t_mono:	CLOCK_MONOTONIC of the first read
 * @t_wall:	CLOCK_REALTIME then
 * @window:	ns from the first to the last read
 * @runtime:	the thread's sum_exec_runtime before the first read
 * @sched:	the thread's scheduler figures then (vp_sched_read())
 */
struct vp_reading {
	struct vcpuperf_count vals[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_sched sched;
	u32 exited;
	u64 t_mono;
	u64 t_wall;
	u64 window;
	u64 runtime;
};

struct vp_selfread *vp_selfread_new(void);
void vp_selfread_set_events(struct vp_selfread *sr,
			    const struct vp_counter *counters, u32 nr);
bool vp_selfread_kill(struct vp_selfread *sr);
int vp_selfread_queue(struct vp_selfread *sr, struct task_struct *task,
		      u64 pass, bool lazy);
bool vp_selfread_done(struct vp_selfread *sr, u64 pass);
bool vp_selfread_take(struct vp_selfread *sr, u64 pass,
		      struct vp_reading *r);
u64 vp_selfread_cpu_ns(struct vp_selfread *sr);
void vp_selfread_show(struct seq_file *m, u32 max);
void vp_selfread_drain(void);

#endif /* _VCPUPERF_SELFREAD_H */
