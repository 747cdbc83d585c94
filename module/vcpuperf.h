/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpuperf: internal declarations shared by the module's source files.
 *
 * Locking: struct vp_state.lock (a mutex) serialises control commands,
 * the sampler's passes and unload; it protects the target and group lists
 * and every per-target field.  The ring has its own spinlock, taken inside
 * vp_state.lock by producers and alone by the stream reader, which never
 * takes vp_state.lock.
 */
#ifndef _VCPUPERF_MODULE_H
#define _VCPUPERF_MODULE_H

#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "../lib/vcpuperf_lib.h"
#include "compat.h"

/**
 * enum vp_rec_class - how much of the ring a record may use
 * @VP_REC_SAMPLE:	up to the lifecycle reserve
 * @VP_REC_LIFECYCLE:	into the reserve, short of the room kept for the
 *			session's end
 * @VP_REC_SESSION_END:	the session's finished record: the whole ring, so
 *			that it (and the dropped record before it) always
 *			fits and the reader reaches EOF
 */
enum vp_rec_class {
	VP_REC_SAMPLE,
	VP_REC_LIFECYCLE,
	VP_REC_SESSION_END,
};

/**
 * struct vp_ring - bounded byte FIFO of whole records
 * @lock:	protects every field but @buf's contents being copied out
 * @buf:	storage, @size bytes
 * @size:	capacity in bytes
 * @reserve:	bytes only lifecycle records may use, so that the records
 *		explaining the end of a collection are not crowded out by
 *		samples
 * @wr:		bytes ever written
 * @rd:		bytes ever consumed
 * @next_seq:	sequence number of the next record produced
 * @oldest_seq:	sequence number of the oldest record in the ring
 * @records:	records in the ring
 * @drops_pending: records lost since the last dropped record was queued
 * @drop_first_seq: first sequence number of those
 * @drops_total: records lost since the module was loaded
 * @produced:	records queued since the module was loaded
 * @ended:	the session's finished record is queued: EOF once drained
 * @defer_wake:	a sampling pass is queueing records: wake the reader once,
 *		at its end (producers hold vp_state.lock)
 * @wait:	readers wait here for data
 */
struct vp_ring {
	spinlock_t lock;	/* see @lock above */
	u8 *buf;
	size_t size;
	size_t reserve;
	u64 wr;
	u64 rd;
	u64 next_seq;
	u64 oldest_seq;
	u64 records;
	u64 drops_pending;
	u64 drop_first_seq;
	u64 drops_total;
	u64 produced;
	bool ended;
	bool defer_wake;
	wait_queue_head_t wait;
};

int vp_ring_init(struct vp_ring *ring, size_t size);
void vp_ring_free(struct vp_ring *ring);
int vp_ring_put(struct vp_ring *ring, struct vcpuperf_rec *rec,
		enum vp_rec_class cls);
size_t vp_ring_pop(struct vp_ring *ring, u8 *dst, size_t len);
bool vp_ring_empty(struct vp_ring *ring);
bool vp_ring_eof(struct vp_ring *ring);
void vp_ring_set_ended(struct vp_ring *ring, bool ended);
void vp_ring_wake(struct vp_ring *ring);
u64 vp_ring_first_seq(struct vp_ring *ring);
u64 vp_ring_drops(struct vp_ring *ring);

/**
 * struct vp_counter - one (thread, event) counter
 * @event:	the kernel counter, NULL when it could not be created
 * @error:	positive errno of the failed creation, 0 otherwise
 * @in_error:	perf put the counter in error state (a pinned counter that
 *		found no free PMU counter); reported once, then left out
 * @last:	cumulative values at the previous read
 */
struct vp_counter {
	struct perf_event *event;
	int error;
	bool in_error;
	struct vcpuperf_count last;
};

/**
 * struct vp_group - a process attached by pid= or qemu=
 * @node:	in vp_state.groups
 * @kind:	VCPUPERF_TARGET_PID or VCPUPERF_TARGET_QEMU
 * @pid:	the process, referenced
 * @ns:		pid namespace of the attaching writer, referenced
 * @nr:		pid as the writer named it
 * @nr_events:	events in @events
 * @events:	what each of its threads counts
 */
struct vp_group {
	struct list_head node;
	enum vcpuperf_target_kind kind;
	struct pid *pid;
	struct pid_namespace *ns;
	pid_t nr;
	u32 nr_events;
	struct vcpuperf_event_desc events[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_target - one sampled thread
 * @node:	in vp_state.targets
 * @group:	the group it belongs to, NULL when attached by tid=
 * @task:	the thread, referenced
 * @kind:	how it was attached
 * @gtid:	tid in the initial pid namespace (key of vp_state.by_tid)
 * @id:		tid, pid and vCPU as the attaching writer sees them
 * @tid:	tid as the attaching writer sees it
 * @comm:	thread name when attached
 * @nr_events:	events in @events and @counters
 * @events:	configured events
 * @counters:	one per event
 * @intervals_seen: samples taken
 * @intervals_ran: samples in which the thread ran
 * @intervals_with_values: samples in which a counter counted
 * @first_row_sent: first_row record queued
 * @multiplexed_sent: multiplexed record queued
 * @no_counters_sent: no_counters record queued
 * @ever_counted: a counter has had time_running advance
 */
struct vp_target {
	struct list_head node;
	struct vp_group *group;
	struct task_struct *task;
	enum vcpuperf_target_kind kind;
	pid_t gtid;
	struct vcpuperf_target_id id;
	pid_t tid;
	char comm[VCPUPERF_COMM_LEN];
	u32 nr_events;
	struct vcpuperf_event_desc events[VCPUPERF_MAX_EVENTS];
	struct vp_counter counters[VCPUPERF_MAX_EVENTS];
	u64 intervals_seen;
	u64 intervals_ran;
	u64 intervals_with_values;
	bool first_row_sent;
	bool multiplexed_sent;
	bool no_counters_sent;
	bool ever_counted;
};

/**
 * struct vp_session - totals from the first attach to stop or unload
 * @active:	a session is open (something was attached since the stop)
 * @targets:	threads attached in it
 * @intervals_seen: samples of all its threads
 * @intervals_with_values: samples in which a counter counted
 * @drops_at_start: ring drop total when it began
 */
struct vp_session {
	bool active;
	u64 targets;
	u64 intervals_seen;
	u64 intervals_with_values;
	u64 drops_at_start;
};

/**
 * struct vp_state - the module's single instance
 * @lock:	see the top of this file
 * @targets:	sampled threads
 * @groups:	attached processes
 * @by_tid:	vp_target by global tid
 * @nr_targets:	entries in @targets
 * @nr_groups:	entries in @groups
 * @interval_ns: sampling interval
 * @grid_base:	CLOCK_MONOTONIC origin of the sampling grid, 0 when idle
 * @tick:	index on the grid of the last pass
 * @missed_ticks: grid points skipped because a pass overran
 * @passes:	sampling passes done
 * @kick:	the sampler must re-evaluate its schedule
 * @sampler:	the sampling kthread
 * @ring:	the record ring
 * @session:	current session totals
 * @unloading:	module exit has begun: refuse opens and commands
 * @reader_open: the stream is claimed (one reader at a time, through
 *		debugfs or the device)
 * @files_open:	open vcpuperf files, debugfs and device (files.c)
 * @files_wait:	unload waits here for them to be released
 * @last_error:	reason of the last rejected command
 * @last_errno:	its errno (negative), 0 if none
 * @scratch:	record under construction (vp_state.lock)
 * @dir:	debugfs directory
 * @misc:	/dev/vcpuperf
 */
struct vp_state {
	struct mutex lock;	/* see the top of this file */
	struct list_head targets;
	struct list_head groups;
	struct xarray by_tid;
	u32 nr_targets;
	u32 nr_groups;
	u64 interval_ns;
	u64 grid_base;
	u64 tick;
	u64 missed_ticks;
	u64 passes;
	atomic_t kick;
	struct task_struct *sampler;
	struct vp_ring ring;
	struct vp_session session;
	bool unloading;
	atomic_t reader_open;
	atomic_t files_open;
	wait_queue_head_t files_wait;
	char last_error[VP_ERR_LEN];
	int last_errno;
	void *scratch;
	struct dentry *dir;
	struct miscdevice misc;
};

/* Largest record the module builds. */
#define VP_MAX_REC_SIZE							\
	(sizeof(struct vcpuperf_started) +				\
	 VCPUPERF_MAX_EVENTS * sizeof(struct vcpuperf_event_desc))

/* record.c */
void *vp_rec_begin(struct vp_state *vp, u16 type, u32 size, u32 tid);
int vp_rec_emit(struct vp_state *vp, void *rec, enum vp_rec_class cls);
void vp_emit_started(struct vp_state *vp, struct vp_target *t);
void vp_emit_unavailable(struct vp_state *vp, struct vp_target *t, u32 idx);
void vp_emit_vcpu_added(struct vp_state *vp, struct vp_target *t);
void vp_emit_finished(struct vp_state *vp, struct vp_target *t);
void vp_emit_detached(struct vp_state *vp, struct vp_target *t, u32 reason);
void vp_emit_session_finished(struct vp_state *vp);

/* target.c */
int vp_attach(struct vp_state *vp, struct vp_cmd *cmd, char *err,
	      size_t errlen);
int vp_detach(struct vp_state *vp, const struct vp_cmd *cmd, char *err,
	      size_t errlen);
void vp_detach_all(struct vp_state *vp, u32 reason);
void vp_target_end(struct vp_state *vp, struct vp_target *t, u32 reason);
void vp_scan_groups(struct vp_state *vp);
int vp_parse_vcpu(const char *comm);

/* events.c */
int vp_resolve_events(struct vp_event_spec *evs, u32 nr, char *err,
		      size_t errlen);
void vp_counter_create(struct vp_counter *c,
		       const struct vcpuperf_event_desc *desc,
		       struct task_struct *task);
void vp_counter_release(struct vp_counter *c);
bool vp_counter_exited(const struct vp_counter *c);
bool vp_counter_in_error(const struct vp_counter *c);
const char *vp_counter_state(const struct vp_counter *c);

/* sampler.c */
int vp_sampler_start(struct vp_state *vp);
void vp_sampler_stop(struct vp_state *vp);
void vp_sampler_kick(struct vp_state *vp);
bool vp_sample_target(struct vp_state *vp, struct vp_target *t, u32 flags);
bool vp_sample_account(struct vp_state *vp, struct vp_target *t,
		       struct vcpuperf_sample *s, u32 counting, u32 exited,
		       u64 window_ns, u32 flags);

/* control.c */
int vp_control_apply(struct vp_state *vp, const char *buf, size_t len);
ssize_t vp_control_write(struct vp_state *vp, const char __user *ubuf,
			 size_t count);
extern const struct file_operations vp_control_fops;

/* stream.c */
struct vp_reader;
struct vp_reader *vp_reader_open(struct vp_state *vp);
void vp_reader_close(struct vp_reader *r);
ssize_t vp_reader_read(struct vp_reader *r, char __user *ubuf, size_t count,
		       bool nonblock);
__poll_t vp_reader_poll(struct vp_reader *r, struct file *file,
			poll_table *wait);
extern const struct file_operations vp_stream_fops;

/* status.c */
extern const struct file_operations vp_status_fops;

/* files.c */
int vp_file_get(struct vp_state *vp);
void vp_file_put(struct vp_state *vp);
void vp_files_wait(struct vp_state *vp);
int vp_single_open(struct file *file, int (*show)(struct seq_file *, void *),
		   struct vp_state *vp);
int vp_single_release(struct inode *inode, struct file *file);

/* chardev.c */
int vp_chardev_register(struct vp_state *vp);
void vp_chardev_unregister(struct vp_state *vp);

/* main.c */
extern struct vp_state *vp_global;

#endif /* _VCPUPERF_MODULE_H */
