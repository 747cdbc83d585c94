// SPDX-License-Identifier: GPL-2.0
/*
 * The status text: the module's limits and, for every collection (the
 * default one first), its owner, state, interval, ring use and drops, the
 * reason of its last rejected command, its processes and its threads with
 * each counter's state and last values.
 *
 * Whoever may open the file (CAP_SYS_ADMIN) sees every collection's
 * summary, but a process or a thread, its id, name and counts, only if
 * the file's opener could attach it (the check of an attach, access.c):
 * the others are counted as not shown.
 *
 * A collection's threads are copied under its lock and formatted after it
 * is released: their lines (a few thousand with hundreds of threads) take
 * milliseconds to format, more each time seq_file starts over with a larger
 * buffer, and a sampler due meanwhile would wait for the lock and skip
 * grid points.
 */
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>

#include "access.h"
#include "counter.h"
#include "pass.h"
#include "process.h"
#include "ring.h"
#include "selfread.h"
#include "shared.h"
#include "status.h"
#include "vcpuperf.h"

static void vp_status_ring(struct seq_file *m, struct vp_ring *ring)
{
	struct vp_ring_stats st;

	vp_ring_stats(ring, &st);
	seq_printf(m, "ring: %zu bytes, %llu used, %llu records queued\n",
		   st.size, st.used, st.records);
	seq_printf(m, "records: %llu produced, %llu dropped, next seq %llu\n",
		   st.produced, st.drops, st.next_seq);
}

/* A counter's status line, copied under the collection's lock. */
struct vp_status_cnt {
	char name[VCPUPERF_NAME_LEN];
	const char *state;
	struct vcpuperf_count last;
	enum vcpuperf_cause cause;
	int error;
	u32 users;
	bool available;
};

/* A thread's status lines: its own and @nr_events counters' from @first. */
struct vp_status_thread {
	bool hidden;
	pid_t tid;
	struct vcpuperf_target_id id;
	char comm[VCPUPERF_COMM_LEN];
	enum vcpuperf_target_kind kind;
	u64 seen;
	u64 ran;
	u64 with_values;
	u32 first;
	u32 nr_events;
};

/* A collection's threads; @nr_threads and @nr_cnts of room for. */
struct vp_status_snap {
	struct vp_status_thread *threads;
	struct vp_status_cnt *cnts;
	u32 nr_threads;
	u32 nr_cnts;
};

static void vp_status_snap_free(struct vp_status_snap *s)
{
	kvfree(s->threads);
	kvfree(s->cnts);
	s->threads = NULL;
	s->cnts = NULL;
	s->nr_threads = 0;
	s->nr_cnts = 0;
}

/*
 * Lock @c with room in @s for its threads: the memory is allocated with
 * the lock dropped (threads come and go meanwhile: count again).
 */
static int vp_status_lock_room(struct vp_coll *c, struct vp_status_snap *s)
{
	struct vp_target *t;
	u32 nt, ncnt;

	for (;;) {
		nt = 0;
		ncnt = 0;
		mutex_lock(&c->lock);
		list_for_each_entry(t, &c->targets, node) {
			nt++;
			ncnt += t->nr_events;
		}
		if (nt <= s->nr_threads && ncnt <= s->nr_cnts)
			return 0;
		mutex_unlock(&c->lock);
		vp_status_snap_free(s);
		/* At least one of each: kvmalloc_array() of 0 is no room. */
		nt = max(nt, 1U);
		ncnt = max(ncnt, 1U);
		s->threads = kvmalloc_array(nt, sizeof(*s->threads),
					    GFP_KERNEL);
		s->cnts = kvmalloc_array(ncnt, sizeof(*s->cnts), GFP_KERNEL);
		if (!s->threads || !s->cnts) {
			vp_status_snap_free(s);
			return -ENOMEM;
		}
		s->nr_threads = nt;
		s->nr_cnts = ncnt;
	}
}

static void vp_status_copy_cnt(struct vp_status_cnt *d,
			       const struct vp_counter *c,
			       const struct vcpuperf_event_desc *desc)
{
	strscpy(d->name, desc->name, sizeof(d->name));
	d->available = !!c->event;
	d->state = vp_counter_state(c);
	d->last = c->last;
	d->error = c->error;
	d->cause = c->event ? VCPUPERF_CAUSE_UNKNOWN :
		   vp_counter_cause(c, desc);
	d->users = c->event ? vp_shared_users(c->sh) : 0;
}

/* Copy @c's threads into @s; @c locked with room (vp_status_lock_room()). */
static void vp_status_copy(struct vp_coll *c, struct vp_status_snap *s,
			   const struct cred *cred)
{
	struct vp_status_thread *d = s->threads;
	struct vp_target *t;
	u32 ncnt = 0, i;

	list_for_each_entry(t, &c->targets, node) {
		d->hidden = vp_may_count(cred, t->task, t->tid, NULL, 0) != 0;
		d->tid = t->tid;
		d->id = t->id;
		memcpy(d->comm, t->comm, sizeof(d->comm));
		d->kind = t->kind;
		d->seen = t->intervals_seen;
		d->ran = t->intervals_ran;
		d->with_values = t->intervals_with_values;
		d->first = ncnt;
		d->nr_events = t->nr_events;
		for (i = 0; i < t->nr_events; i++)
			vp_status_copy_cnt(&s->cnts[ncnt++], &t->counters[i],
					   &t->events[i]);
		d++;
	}
	s->nr_threads = d - s->threads;
}

static void vp_status_counter(struct seq_file *m,
			      const struct vp_status_cnt *c)
{
	u64 scaled;

	if (!c->available) {
		seq_printf(m, "  %-24s unavailable %s (%s)\n", c->name,
			   vp_errno_name(c->error), vp_cause_name(c->cause));
		return;
	}
	if (!vp_scale(c->last.value, c->last.enabled, c->last.running, &scaled))
		scaled = 0;
	seq_printf(m, "  %-24s %s value %llu enabled %llu running %llu scaled %llu users %u\n",
		   c->name, c->state, c->last.value, c->last.enabled,
		   c->last.running, scaled, c->users);
}

static void vp_status_threads(struct seq_file *m,
			      const struct vp_status_snap *s)
{
	const struct vp_status_thread *t;
	u32 i, hidden = 0;

	for (t = s->threads; t < s->threads + s->nr_threads; t++) {
		if (t->hidden) {
			hidden++;
			continue;
		}
		seq_printf(m, "tid %d pid %u vcpu %d comm \"%s\" by %s: %llu intervals, %llu ran, %llu with values\n",
			   t->tid, t->id.pid, t->id.vcpu, t->comm,
			   vp_kind_name(t->kind), t->seen, t->ran,
			   t->with_values);
		for (i = 0; i < t->nr_events; i++)
			vp_status_counter(m, &s->cnts[t->first + i]);
		/* A sampler due gets the CPU between two threads. */
		cond_resched();
	}
	if (hidden)
		seq_printf(m, "  (%u threads not shown: this file's opener may not count them)\n",
			   hidden);
}

/* May the opener of the status file (@cred) count @g's process? */
static bool vp_status_group_shown(struct vp_group *g, const struct cred *cred)
{
	struct task_struct *leader = get_pid_task(g->pid, PIDTYPE_TGID);
	bool shown;

	/* Gone: nothing of it can be counted any more. */
	if (!leader)
		return true;
	shown = !vp_may_count(cred, leader, g->nr, NULL, 0);
	put_task_struct(leader);
	return shown;
}

static void vp_status_reads(struct seq_file *m, struct vp_coll *c)
{
	const struct vp_read_stats *r = &c->reads;
	struct vp_target *t;
	u64 self_ns = r->self_ns;

	list_for_each_entry(t, &c->targets, node)
		if (t->sr)
			self_ns += vp_selfread_cpu_ns(t->sr);
	seq_printf(m, "read: %s (now %s); %llu direct (not on a CPU), %llu by the thread itself (%llu kicks, %llu us in the threads)\n",
		   vp_read_mode_name(c->read_mode),
		   vp_read_mode_name(vp_read_mode(c)), r->direct, r->self,
		   r->kicks, div_u64(self_ns, NSEC_PER_USEC));
	seq_printf(m, "read fallbacks: %llu timeout, %llu switched out, %llu pending, %llu kthread, %llu exiting, %llu user worker\n",
		   r->fb_timeout, r->fb_switched, r->fb_pending, r->fb_kthread,
		   r->fb_exiting, r->fb_user_worker);
	seq_printf(m, "read unchanged: %llu of the direct (off every CPU since the last read: values kept)\n",
		   r->unchanged);
}

static void vp_status_owner(struct seq_file *m, struct vp_coll *c)
{
	if (!c->id)
		seq_printf(m, "collection %u: default (load-time parameters, debugfs control and stream)\n",
			   c->id);
	else
		seq_printf(m, "collection %u: /dev/vcpuperf, owner pid %d comm \"%s\"\n",
			   c->id, c->owner_pid, c->owner_comm);
}

static void vp_status_coll(struct seq_file *m, struct vp_coll *c)
{
	const struct cred *cred = m->file->f_cred;
	struct vp_status_snap s = {};
	char dur[VP_DURATION_LEN];
	struct vp_group *g;
	u32 hidden = 0;
	int ret;

	vp_status_owner(m, c);
	ret = vp_status_lock_room(c, &s);
	if (ret)
		mutex_lock(&c->lock);
	vp_format_duration(dur, sizeof(dur), c->interval_ns);
	seq_printf(m, "state: %s\n", c->ended ? "ended" :
		   c->nr_targets ? "sampling" :
		   c->nr_groups ? "waiting for threads" : "idle");
	seq_printf(m, "interval: %s\n", dur);
	seq_printf(m, "passes: %llu, missed grid points: %llu\n", c->passes,
		   c->missed_ticks);
	vp_status_ring(m, &c->ring);
	vp_status_reads(m, c);
	if (!c->id)
		seq_printf(m, "reader: %s\n",
			   atomic_read(&c->reader_open) ? "open" : "none");
	if (c->last_errno)
		seq_printf(m, "last_error: %s: %s\n",
			   vp_errno_name(c->last_errno), c->last_error);
	else
		seq_puts(m, "last_error: none\n");
	seq_printf(m, "processes: %u\n", c->nr_groups);
	list_for_each_entry(g, &c->groups, node) {
		if (!vp_status_group_shown(g, cred)) {
			hidden++;
			continue;
		}
		seq_printf(m, "  %s=%d, %u events", vp_kind_name(g->kind),
			   g->nr, g->nr_events);
		if (g->proc)
			seq_printf(m, ", process totals on %u threads",
				   g->proc->nr);
		seq_putc(m, '\n');
	}
	if (hidden)
		seq_printf(m, "  (%u processes not shown: this file's opener may not count them)\n",
			   hidden);
	seq_printf(m, "targets: %u (limit %u)\n", c->nr_targets,
		   c->mod->max_targets);
	if (ret) {
		mutex_unlock(&c->lock);
		seq_printf(m, "  (threads not listed: %s)\n",
			   vp_errno_name(ret));
		return;
	}
	vp_status_copy(c, &s, cred);
	mutex_unlock(&c->lock);
	vp_status_threads(m, &s);
	vp_status_snap_free(&s);
}

/**
 * vp_status_show() - the status file
 * @m:		the seq_file; its private data is the module
 * @unused:	unused
 *
 * The default collection comes first, so that its lines (last_error:,
 * reader:) are the first of their kind.
 *
 * Return: 0.
 */
int vp_status_show(struct seq_file *m, void *unused)
{
	struct vp_module *mod = m->private;
	u32 nr_open;
	u64 ring_kb;
	struct vp_coll *c;

	spin_lock(&mod->acct);
	nr_open = mod->nr_open;
	ring_kb = mod->ring_kb_used;
	spin_unlock(&mod->acct);
	seq_printf(m, "vcpuperf abi %u\n", VCPUPERF_ABI_VERSION);
	seq_printf(m, "collections: %u on /dev/vcpuperf (limit %u), ring memory %llu KiB of %llu KiB\n",
		   nr_open, mod->max_collections, ring_kb, mod->ring_total_kb);
	vp_selfread_show(m, 0);
	mutex_lock(&mod->lock);
	list_for_each_entry(c, &mod->collections, node) {
		seq_putc(m, '\n');
		vp_status_coll(m, c);
	}
	mutex_unlock(&mod->lock);
	return 0;
}
