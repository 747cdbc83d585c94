/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vcpuperf: the object model and the lock order, shared by the module's
 * source files.  What each file offers the others is declared in a header
 * of its own name (ring.c in ring.h, counter.c in counter.h, ...); a file
 * includes this one when it uses the objects below.
 *
 * Objects: one struct vp_module (the module: /dev/vcpuperf, the debugfs
 * directory, the list of collections, the limits, unload); any number of
 * struct vp_coll (a collection: its targets, interval, sampler, ring and
 * reader), one of them the module's default collection, the others each
 * owned by an open /dev/vcpuperf.  A collection samples targets (struct
 * vp_target, one thread each) and groups (struct vp_group, a process
 * attached by pid= or qemu=, with its whole-process counters: process.h);
 * a target's counters (struct vp_counter, counter.h) each use a kernel
 * counter shared by every user in the module (shared.h).
 *
 * Locking, outermost first:
 *  1. vp_module.lock (a mutex): the list of collections; held while a
 *     collection is listed, unlisted, or ended by unload, and while the
 *     status file walks them.
 *  2. vp_coll.lock (a mutex): serialises the collection's commands, its
 *     sampler's passes and its end; protects its target and group lists
 *     and every per-target field.
 *  3. a thread's signal->exec_update_lock (read): taken inside
 *     vp_coll.lock from the authority check of a thread until its
 *     counters exist (access.c), as perf_event_open() holds it.
 *  4. the shared counters' registry (a mutex, shared.c): taken inside
 *     vp_coll.lock, and alone by a thread's task work that releases the
 *     counters of a target that ended while it read them.
 *  5. vp_ring.lock (a spinlock): taken inside vp_coll.lock by producers and
 *     alone by the reader, which never takes vp_coll.lock.
 *  6. vp_module.acct (a spinlock): the limit accounting, innermost, taken
 *     with or without the others.
 * Nothing that may wait for a monitored process is done under
 * vp_coll.lock: a QEMU's command line is read before it (process.c).
 * The self-read state (selfread.c) has its own spinlock and a module-wide
 * table of queued reads (vp_sr_lock), never held across another lock.
 *
 * Directions of calls (a file includes the headers of the files it
 * calls): main -> the files (chardev, debugfs; status, stream) ->
 * control -> collection -> sampler -> pass -> target -> sample ->
 * lifecycle -> record -> ring; control and collection -> attach -> target; sampler, attach
 * and target -> process (whole-process counters) -> record; pass and
 * attach -> exec -> attach (a thread that exec'd, attached again);
 * pass, target and sample -> selfread; target, sample, process, record
 * and selfread -> counter <-> shared -> pmu; the files, attach, target
 * and process -> access.  Calls back up: sample and lifecycle ->
 * target (vp_task_exiting()), exec -> attach, shared -> counter.
 */
#ifndef _VCPUPERF_MODULE_H
#define _VCPUPERF_MODULE_H

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/xarray.h>

#include "../lib/vcpuperf_lib.h"
#include "compat.h"
#include "counter.h"
#include "ring.h"

/*
 * Module policy, not ABI (the uapi header holds what readers rely on):
 * defaults and thresholds a later version may change; vcpuperf(4) gives
 * their values.
 */
/* Interval of a new collection (and the interval_ms parameter's default). */
#define VP_INTERVAL_DEFAULT_NS		(100 * NSEC_PER_MSEC)
/* Ring of a new collection, KiB (and the ring_kb parameter's default). */
#define VP_RING_DEFAULT_KB		4096U
/* Intervals from which "read auto" waits for the timer tick (lazy). */
#define VP_LAZY_MIN_INTERVAL_NS		(50 * NSEC_PER_MSEC)
/* Intervals a thread runs with no (PMU) counter counting: no_counters. */
#define VP_NO_COUNTERS_INTERVALS	10

struct cred;
struct dentry;
struct pid;
struct pid_namespace;
struct vp_coll;
struct vp_proc;
struct vp_selfread;
struct vp_who;

/**
 * struct vp_group - a process attached by pid= or qemu=
 * @node:	in vp_coll.groups
 * @kind:	VCPUPERF_TARGET_PID or VCPUPERF_TARGET_QEMU
 * @pid:	the process, referenced
 * @ns:		pid namespace of the attaching writer, referenced
 * @nr:		pid as the writer named it
 * @nr_events:	events in @events
 * @flags:	VCPUPERF_ATTACH_* it was attached with
 * @cred:	the authority it was attached with (the file's opener),
 *		referenced: every thread counted for it is checked against it
 * @exec_id:	the leader's self_exec_id when last looked at: an exec in
 *		the process (which leaves one thread) changes it
 * @excluded:	threads detached by a detach tid= command, by global tid
 *		(their start time as value): a scan does not take them again
 * @proc:	its whole-process counters, NULL without process_totals
 * @vm:		for qemu=: the VM name from its command line, "" for none
 * @uuid:	for qemu=: the VM's UUID from its command line, "" for none
 * @events:	what each of its threads counts
 *
 * Every field is set before the group is listed and then only read, under
 * vp_coll.lock, but for @exec_id, @excluded and @proc, which change under
 * it.
 */
struct vp_group {
	struct list_head node;
	enum vcpuperf_target_kind kind;
	struct pid *pid;
	struct pid_namespace *ns;
	pid_t nr;
	u32 nr_events;
	u32 flags;
	const struct cred *cred;
	u64 exec_id;
	struct xarray excluded;
	struct vp_proc *proc;
	char vm[VCPUPERF_VM_NAME_LEN];
	char uuid[VCPUPERF_UUID_LEN];
	struct vcpuperf_event_desc events[VCPUPERF_MAX_EVENTS];
};

/**
 * struct vp_target - one sampled thread of one collection
 * @node:	in vp_coll.targets
 * @group:	the group it belongs to, NULL when attached by tid=
 * @task:	the thread, referenced
 * @cred:	the authority it is counted with (vp_group.cred, or the
 *		file's opener for tid=), referenced
 * @ns:		pid namespace its ids are given in, referenced
 * @kind:	how it was attached
 * @flags:	VCPUPERF_ATTACH_* it was attached with (no_sched: its
 *		samples carry no scheduler figures)
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
 * @proc_own:	events whose own counter counts for its process's totals
 *		(a vCPU thread of a process_totals group, which holds no
 *		inherited counter of that event: process.c)
 * @idle_able:	every event counts only while its thread runs (no
 *		tracepoint but KVM's: the others may count for a thread
 *		woken by another)
 * @idle_known:	the last sample was a direct read of the thread off every
 *		CPU, its switch count then in @idle_csw (sample.c)
 * @idle_csw:	nvcsw + nivcsw at that read
 * @idle_rec:	a copy of the last sample queued while @idle_known held
 *		(NULL if it could not be allocated): while it still holds,
 *		the thread's next sample is the same but for its times
 *		and scheduler figures (sample.c)
 * @sched_base:	the thread's scheduler figures at its attach (sched.c)
 * @sched_last:	the last raw figures a sample gave: the least the next
 *		may give (sched.c)
 * @who:	who took its CPU (who.c), NULL when not attached who or
 *		when that could not be kept (@who_err)
 * @who_err:	the error of vp_who_get(), 0 otherwise
 * @who_base:	@who's figures at the attach
 * @who_last:	the last figures a sample gave: the least the next may give
 * @who_snap:	@who's figures when the thread was last asked to read
 *		itself (sched.c)
 *
 * Every field is protected by the collection's vp_coll.lock.
 */
struct vp_target {
	struct list_head node;
	struct vp_group *group;
	struct task_struct *task;
	const struct cred *cred;
	struct pid_namespace *ns;
	enum vcpuperf_target_kind kind;
	u32 flags;
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
	u32 proc_own;
	bool idle_able;
	bool idle_known;
	unsigned long idle_csw;
	struct vcpuperf_sample *idle_rec;
	struct vcpuperf_sched sched_base;
	struct vcpuperf_sched sched_last;
	struct vp_who *who;
	int who_err;
	struct vcpuperf_who who_base;
	struct vcpuperf_who who_last;
	struct vcpuperf_who who_snap;
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
 * @unchanged:	of @direct, threads off every CPU since their last direct
 *		read: its values were kept, nothing was read
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
	u64 unchanged;
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
 * @lock:	protects @collections and @ids (lock order: see the top)
 * @acct:	protects @nr_open and @ring_kb_used
 * @collections: every collection, the default one first
 * @nr_open:	collections owned by open /dev/vcpuperf files
 * @ring_kb_used: ring memory of every collection, KiB
 * @ids:	ids of the collections on /dev/vcpuperf
 * @max_collections: limit of @nr_open (module parameter)
 * @ring_total_kb: limit of @ring_kb_used (module parameter)
 * @max_targets: threads one collection may sample (module parameter)
 * @ring_kb:	ring size of a new collection, KiB (module parameter)
 * @dflt:	the default collection (load-time parameters, debugfs)
 * @dir:	debugfs directory
 * @misc:	/dev/vcpuperf
 */
struct vp_module {
	struct mutex lock;	/* see @lock above */
	spinlock_t acct;	/* see @acct above */
	struct list_head collections;
	u32 nr_open;
	u64 ring_kb_used;
	struct idr ids;
	u32 max_collections;
	u64 ring_total_kb;
	u32 max_targets;
	u32 ring_kb;
	struct vp_coll *dflt;
	struct dentry *dir;
	struct miscdevice misc;
};

/**
 * struct vp_coll - a collection: targets, sampling and their records
 * @node:	in vp_module.collections (vp_module.lock)
 * @mod:	the module
 * @id:		number, 0 for the default collection; unique among the
 *		collections that exist
 * @owner_pid:	tgid of the process that created it, 0 for the default
 * @owner_comm:	its name
 * @lock:	see the top of this file; protects every field below it
 *		except @ring and @reader_open, and all targets and groups
 * @targets:	sampled threads
 * @groups:	attached processes
 * @restarts:	threads to attach again after an exec (exec.c)
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
	struct list_head restarts;
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

#endif /* _VCPUPERF_MODULE_H */
