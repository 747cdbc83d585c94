/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpuperf: internal declarations shared by the module's source files.
 *
 * Objects: one struct vp_module (the module: /dev/vcpuperf, the debugfs
 * directory, the list of collections, the limits, unload); any number of
 * struct vp_coll (a collection: its targets, interval, sampler, ring and
 * reader), one of them the module's default collection, the others each
 * owned by an open /dev/vcpuperf.
 *
 * Locking, outermost first:
 *  1. vp_module.lock (a mutex): the list of collections; held while a
 *     collection is listed, unlisted, or ended by unload, and while the
 *     status file walks them.
 *  2. vp_coll.lock (a mutex): serialises the collection's commands, its
 *     sampler's passes and its end; protects its target and group lists
 *     and every per-target field.
 *  3. vp_ring.lock (a spinlock): taken inside vp_coll.lock by producers and
 *     alone by the reader, which never takes vp_coll.lock.
 *  4. vp_module.acct (a spinlock): the limit accounting, innermost, taken
 *     with or without the others.
 * Directions of calls: files (chardev, debugfs) -> control -> collection
 * -> sampler -> pass -> attach -> target -> sample -> selfread,
 * counter, record -> ring; attach and sampler -> process (whole-process
 * counters) -> record, ring.
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

struct vp_coll;
struct vp_selfread;
struct vp_shared;

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
 * @drops_total: records lost since the collection was created
 * @produced:	records queued since the collection was created
 * @ended:	the session's finished record is queued: EOF once drained
 * @defer_wake:	a sampling pass is queueing records: wake the reader once,
 *		at its end (written by producers under vp_coll.lock)
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

/**
 * struct vp_ring_stats - a consistent snapshot of a ring's counters
 * @size:	capacity in bytes
 * @used:	bytes queued
 * @records:	records queued
 * @produced:	records ever queued
 * @drops:	records ever dropped
 * @next_seq:	next sequence number
 */
struct vp_ring_stats {
	size_t size;
	u64 used;
	u64 records;
	u64 produced;
	u64 drops;
	u64 next_seq;
};

int vp_ring_init(struct vp_ring *ring, size_t size);
void vp_ring_free(struct vp_ring *ring);
int vp_ring_resize(struct vp_ring *ring, size_t size);
int vp_ring_put(struct vp_ring *ring, struct vcpuperf_rec *rec,
		enum vp_rec_class cls);
size_t vp_ring_pop(struct vp_ring *ring, u8 *dst, size_t len);
bool vp_ring_empty(struct vp_ring *ring);
bool vp_ring_eof(struct vp_ring *ring);
void vp_ring_set_ended(struct vp_ring *ring, bool ended);
void vp_ring_defer_wake(struct vp_ring *ring, bool defer);
void vp_ring_wake(struct vp_ring *ring);
u64 vp_ring_first_seq(struct vp_ring *ring);
u64 vp_ring_drops(struct vp_ring *ring);
void vp_ring_stats(struct vp_ring *ring, struct vp_ring_stats *st);

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

/**
 * struct vp_pthread - a thread holding process counters (process_totals)
 * @task:	the thread, referenced
 * @sh:		one inherited counter per event (shared.c), NULL where
 *		creation failed
 * @event:	those counters
 * @base:	their values when the group began to use them
 */
struct vp_pthread {
	struct task_struct *task;
	struct vp_shared *sh[VCPUPERF_MAX_EVENTS];
	struct perf_event *event[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count base[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_proc - a process's whole-process counters (process_totals)
 * @nr:		entries used in @threads
 * @cap:	entries allocated
 * @threads:	the threads the process had at attach, each with inherited
 *		counters (perf gives every thread they create a child
 *		counter, whose count folds back when it exits); kept after
 *		they exit, since their counters hold their children's counts.
 *		vCPU threads are not among them: their own counters count
 *		for the process (vp_target.proc_own)
 * @vcpus:	vCPU threads the process had at attach (left to their own
 *		counters)
 * @own:	vCPU threads counting for the process with their own
 *		counters now
 * @own_gone:	vCPU threads that counted so and ended (exited or
 *		detached)
 * @gone_mask:	events with counts in @gone
 * @gone:	per event, the final counts of the ended ones
 */
struct vp_proc {
	u32 nr;
	u32 cap;
	struct vp_pthread *threads;
	u32 vcpus;
	u32 own;
	u32 own_gone;
	u32 gone_mask;
	struct vcpuperf_count gone[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_group - a process attached by pid= or qemu=
 * @node:	in vp_coll.groups
 * @kind:	VCPUPERF_TARGET_PID or VCPUPERF_TARGET_QEMU
 * @pid:	the process, referenced
 * @ns:		pid namespace of the attaching writer, referenced
 * @nr:		pid as the writer named it
 * @nr_events:	events in @events
 * @flags:	VCPUPERF_ATTACH_* it was attached with
 * @proc:	its whole-process counters, NULL without process_totals
 * @events:	what each of its threads counts
 *
 * Every field is set before the group is listed and then only read, under
 * vp_coll.lock.
 */
struct vp_group {
	struct list_head node;
	enum vcpuperf_target_kind kind;
	struct pid *pid;
	struct pid_namespace *ns;
	pid_t nr;
	u32 nr_events;
	u32 flags;
	struct vp_proc *proc;
	struct vcpuperf_event_desc events[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_target - one sampled thread of one collection
 * @node:	in vp_coll.targets
 * @group:	the group it belongs to, NULL when attached by tid=
 * @task:	the thread, referenced
 * @kind:	how it was attached
 * @gtid:	tid in the initial pid namespace (key of vp_coll.by_tid)
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
 * @sr:		its thread reading its own counters (selfread.c), NULL for
 *		none (allocation failed: always read directly)
 * @self_pass:	pass whose self-read was asked and not yet collected, 0
 *		for none
 * @self_grid:	grid point of that pass
 * @runtime_at_start: the thread's sum_exec_runtime once every counter
 *		existed (a pinned counter never enabled since it ran is in
 *		error state, even after its exit hid that state)
 * @proc_own:	its own counters count for its process's totals (a vCPU
 *		thread of a process_totals group, which holds no inherited
 *		counter: process.c)
 *
 * Every field is protected by the collection's vp_coll.lock.
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
	struct vp_selfread *sr;
	u64 self_pass;
	u64 self_grid;
	u64 runtime_at_start;
	bool proc_own;
};

/**
 * struct vp_read_stats - how a collection's passes read their threads
 * @direct:	threads read directly because they were not on a CPU (or
 *		the mode is direct)
 * @self:	threads that read their own counters in time
 * @kicks:	reschedule interrupts sent to make them do it
 * @fb_timeout:	read directly (cross-CPU): the thread had not by the
 *		next pass and was on a CPU (in the kernel all along)
 * @fb_switched: read directly (no cost): the thread had not by the
 *		next pass, having been switched out
 * @fb_pending:	read directly: its previous read was still queued
 * @fb_kthread:	read directly: a kernel thread (never runs task work)
 * @fb_exiting:	read directly: the thread was exiting
 * @fb_user_worker: read directly: a user worker that never runs task
 *		work (vhost's, Linux 6.4 on)
 * @self_ns:	time threads spent reading themselves, of ended targets
 */
struct vp_read_stats {
	u64 direct;
	u64 self;
	u64 kicks;
	u64 fb_timeout;
	u64 fb_switched;
	u64 fb_pending;
	u64 fb_kthread;
	u64 fb_exiting;
	u64 fb_user_worker;
	u64 self_ns;
};

/**
 * struct vp_totals - a collection's session totals, from its first attach
 *		      to its stop command (or its end)
 * @active:	a session is open (something was attached since the stop)
 * @targets:	threads attached in it
 * @intervals_seen: samples of all its threads
 * @intervals_with_values: samples in which a counter counted
 * @drops_at_start: ring drop total when it began
 */
struct vp_totals {
	bool active;
	u64 targets;
	u64 intervals_seen;
	u64 intervals_with_values;
	u64 drops_at_start;
};

/**
 * struct vp_module - the module: what exists once
 * @lock:	protects @collections and @next_id (lock order: see the top)
 * @acct:	protects @nr_open and @ring_kb_used
 * @collections: every collection, the default one first
 * @nr_open:	collections owned by open /dev/vcpuperf files
 * @ring_kb_used: ring memory of every collection, KiB
 * @next_id:	id of the next collection created
 * @max_collections: limit of @nr_open (module parameter)
 * @ring_total_kb: limit of @ring_kb_used (module parameter)
 * @max_targets: threads one collection may sample (module parameter)
 * @ring_kb:	ring size of a new collection, KiB (module parameter)
 * @dflt:	the default collection (load-time parameters, debugfs)
 * @unloading:	module exit has begun: refuse opens and commands
 * @files_open:	open vcpuperf files, debugfs and device (files.c)
 * @files_wait:	unload waits here for them to be released
 * @dir:	debugfs directory
 * @misc:	/dev/vcpuperf
 */
struct vp_module {
	struct mutex lock;	/* see @lock above */
	spinlock_t acct;	/* see @acct above */
	struct list_head collections;
	u32 nr_open;
	u64 ring_kb_used;
	u32 next_id;
	u32 max_collections;
	u64 ring_total_kb;
	u32 max_targets;
	u32 ring_kb;
	struct vp_coll *dflt;
	bool unloading;
	atomic_t files_open;
	wait_queue_head_t files_wait;
	struct dentry *dir;
	struct miscdevice misc;
};

/**
 * struct vp_coll - a collection: targets, sampling and their records
 * @node:	in vp_module.collections (vp_module.lock)
 * @mod:	the module
 * @id:		number, 0 for the default collection; unique while loaded
 * @owner_pid:	tgid of the process that created it, 0 for the default
 * @owner_comm:	its name
 * @lock:	see the top of this file; protects every field below it
 *		except @ring and @reader_open, and all targets and groups
 * @targets:	sampled threads
 * @groups:	attached processes
 * @by_tid:	vp_target by global tid
 * @nr_targets:	entries in @targets
 * @nr_groups:	entries in @groups
 * @interval_ns: sampling interval (written under @lock, read locklessly
 *		by a stream header with READ_ONCE())
 * @grid_base:	CLOCK_MONOTONIC origin of the sampling grid, 0 when idle
 * @tick:	index on the grid of the last pass
 * @missed_ticks: grid points skipped because a pass overran
 * @passes:	sampling passes done
 * @pass_grid:	grid point of the pass under way, 0 outside a pass
 * @ring_kb:	ring size, KiB
 * @read_mode:	enum vcpuperf_read_mode of the read command
 * @reads:	how the passes read their threads
 * @totals:	current session totals
 * @ended:	unload or close has ended it: refuse commands
 * @last_error:	reason of the last rejected command
 * @last_errno:	its errno (negative), 0 if none
 * @scratch:	record under construction
 * @kick:	the sampler must re-evaluate its schedule (atomic)
 * @sampler:	the sampling kthread (published under @lock)
 * @reader_open: the stream is claimed (the default collection's one reader)
 * @ring:	the record ring (its own lock)
 */
struct vp_coll {
	struct list_head node;
	struct vp_module *mod;
	u32 id;
	pid_t owner_pid;
	char owner_comm[TASK_COMM_LEN];

	struct mutex lock;	/* see @lock above */
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
	u64 pass_grid;
	u32 ring_kb;
	u32 read_mode;
	struct vp_read_stats reads;
	struct vp_totals totals;
	bool ended;
	char last_error[VP_ERR_LEN];
	int last_errno;
	void *scratch;

	atomic_t kick;
	struct task_struct *sampler;
	atomic_t reader_open;
	struct vp_ring ring;
};

/*
 * Largest record the module builds: the process record (the started
 * record, with the same events and a smaller head, is below it).
 */
#define VP_MAX_REC_SIZE							\
	(sizeof(struct vcpuperf_process) +				\
	 VCPUPERF_MAX_EVENTS * sizeof(struct vcpuperf_event_desc))

/* collection.c */
void vp_module_setup(struct vp_module *mod, u32 max_collections,
		     u64 ring_total_kb, u32 max_targets, u32 ring_kb);
struct vp_coll *vp_coll_create(struct vp_module *mod, bool dflt);
void vp_coll_end(struct vp_coll *c, u32 reason);
void vp_coll_destroy(struct vp_coll *c);
int vp_coll_set_ring(struct vp_coll *c, u32 kb, char *err, size_t errlen);
void vp_coll_set_interval(struct vp_coll *c, u64 ns);
void vp_coll_reject(struct vp_coll *c, int ret, const char *why);
void vp_coll_last_error(struct vp_coll *c, struct vcpuperf_error *e);

/* record.c */
void *vp_rec_begin(struct vp_coll *c, u16 type, u32 size, u32 tid);
int vp_rec_emit(struct vp_coll *c, void *rec, enum vp_rec_class cls);
void vp_totals_begin(struct vp_coll *c);
void vp_emit_started(struct vp_coll *c, struct vp_target *t);
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

/* sample.c */
bool vp_sample_target(struct vp_coll *c, struct vp_target *t, u32 flags);
bool vp_sample_deferred(struct vp_coll *c, struct vp_target *t);
bool vp_sample_values(struct vp_coll *c, struct vp_target *t,
		      const struct vcpuperf_count *vals, u32 exited,
		      u64 t_mono, u64 t_wall, u64 window, u32 flags);
bool vp_sample_account(struct vp_coll *c, struct vp_target *t,
		       struct vcpuperf_sample *s, u32 counting, u32 exited,
		       u64 window_ns, u32 flags);

/* target.c */
struct vp_target *vp_target_new(struct vp_coll *c, struct task_struct *task,
				struct pid_namespace *ns,
				enum vcpuperf_target_kind kind,
				struct vp_group *group,
				const struct vcpuperf_event_desc *descs,
				u32 nr_events);
void vp_target_start(struct vp_coll *c, struct vp_target *t);
void vp_target_end(struct vp_coll *c, struct vp_target *t, u32 reason);
void vp_target_free(struct vp_coll *c, struct vp_target *t);
int vp_parse_vcpu(const char *comm);

/* attach.c */
int vp_attach(struct vp_coll *c, const struct file *file, struct vp_cmd *cmd,
	      char *err, size_t errlen);
int vp_detach(struct vp_coll *c, const struct vp_cmd *cmd, char *err,
	      size_t errlen);
void vp_detach_all(struct vp_coll *c, u32 reason);
void vp_forget_all(struct vp_coll *c);
void vp_scan_groups(struct vp_coll *c);

/* shared.c */
struct perf_event *vp_shared_get(const struct vcpuperf_event_desc *desc,
				 struct task_struct *task, bool inherit,
				 struct vp_shared **shp);
void vp_shared_put(struct vp_shared *sh);
u32 vp_shared_users(const struct vp_shared *sh);
void vp_shared_load(struct task_struct *task, struct vcpuperf_pmu_load *load);

/* pmu.c */
u32 vp_pmu_counters(struct perf_event *event);
u32 vp_pmu_rotate_ms(struct perf_event *event);

/* access.c */
int vp_may_count(const struct file *file, struct task_struct *task,
		 pid_t tid, char *err, size_t errlen);

/* process.c */
int vp_proc_start(struct vp_coll *c, struct vp_group *g,
		  struct task_struct *leader);
void vp_proc_sample(struct vp_coll *c, struct vp_group *g, u32 flags);
void vp_proc_own_start(struct vp_group *g, struct vp_target *t);
void vp_proc_own_end(struct vp_group *g, struct vp_target *t);
void vp_proc_sample_all(struct vp_coll *c);
void vp_proc_free(struct vp_group *g);

/* counter.c */
int vp_resolve_events(struct vp_event_spec *evs, u32 nr, char *err,
		      size_t errlen);
void vp_counter_create(struct vp_counter *c,
		       const struct vcpuperf_event_desc *desc,
		       struct task_struct *task);
void vp_counter_read(struct vp_counter *c, struct vcpuperf_count *v);
void vp_event_read(struct perf_event *event, struct vcpuperf_count *v);
bool vp_event_exited(struct perf_event *event);
void vp_counter_release(struct vp_counter *c);
bool vp_counter_exited(const struct vp_counter *c);
bool vp_counter_in_error(const struct vp_counter *c);
enum vcpuperf_cause vp_counter_cause(const struct vp_counter *c,
				     const struct vcpuperf_event_desc *desc);
const char *vp_counter_state(const struct vp_counter *c);

/* pass.c */
u32 vp_read_mode(struct vp_coll *c);
bool vp_read_start(struct vp_coll *c, struct vp_target *t, u64 pass,
		   u32 mode);
void vp_read_pass(struct vp_coll *c, u64 pass);

/* selfread.c */
#define VP_DRAIN_WARN_SECS	10
struct vp_selfread *vp_selfread_new(void);
void vp_selfread_set_events(struct vp_selfread *sr,
			    const struct vp_counter *counters, u32 nr);
bool vp_selfread_kill(struct vp_selfread *sr);
int vp_selfread_queue(struct vp_selfread *sr, struct task_struct *task,
		      u64 pass, bool lazy);
bool vp_selfread_done(struct vp_selfread *sr, u64 pass);
bool vp_selfread_take(struct vp_selfread *sr, u64 pass,
		      struct vcpuperf_count *vals, u32 *exited, u64 *t_mono,
		      u64 *t_wall, u64 *window);
u64 vp_selfread_cpu_ns(struct vp_selfread *sr);
void vp_selfread_show(struct seq_file *m, u32 max);
void vp_selfread_drain(void);

/* sampler.c */
int vp_sampler_start(struct vp_coll *c);
void vp_sampler_stop(struct vp_coll *c);
void vp_sampler_kick(struct vp_coll *c);

/* control.c */
int vp_control_apply(struct vp_coll *c, const struct file *file,
		     const char *buf, size_t len);
ssize_t vp_control_write(struct vp_coll *c, const struct file *file,
			 const char __user *ubuf, size_t count);
void vp_control_show(struct seq_file *m, struct vp_coll *c);

/* stream.c */
struct vp_reader;
struct vp_reader *vp_reader_open(struct vp_coll *c);
void vp_reader_close(struct vp_reader *r);
ssize_t vp_reader_read(struct vp_reader *r, char __user *ubuf, size_t count,
		       bool nonblock);
__poll_t vp_reader_poll(struct vp_reader *r, struct file *file,
			poll_table *wait);

/* status.c */
int vp_status_show(struct seq_file *m, void *unused);

/* debugfs.c */
int vp_debugfs_init(struct vp_module *mod);
void vp_debugfs_exit(struct vp_module *mod);

/* files.c */
int vp_file_get(struct vp_module *mod);
void vp_file_put(struct vp_module *mod);
void vp_files_wait(struct vp_module *mod);

/* chardev.c */
int vp_chardev_register(struct vp_module *mod);
void vp_chardev_unregister(struct vp_module *mod);

#endif /* _VCPUPERF_MODULE_H */
