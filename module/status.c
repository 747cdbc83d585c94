// SPDX-License-Identifier: GPL-2.0
/*
 * The status text: the module's limits and, for every collection (the
 * default one first), its owner, state, interval, ring use and drops, the
 * reason of its last rejected command, its processes and its threads with
 * each counter's state and last values.
 */
#include <linux/math64.h>
#include <linux/seq_file.h>

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

static void vp_status_counter(struct seq_file *m, const struct vp_counter *c,
			      const struct vcpuperf_event_desc *d)
{
	enum vcpuperf_cause cause;
	u64 scaled;

	if (!c->event) {
		cause = vp_counter_cause(c, d);
		seq_printf(m, "  %-24s unavailable %s (%s)\n", d->name,
			   vp_errno_name(c->error), vp_cause_name(cause));
		return;
	}
	if (!vp_scale(c->last.value, c->last.enabled, c->last.running, &scaled))
		scaled = 0;
	seq_printf(m, "  %-24s %s value %llu enabled %llu running %llu scaled %llu users %u\n",
		   d->name, vp_counter_state(c), c->last.value,
		   c->last.enabled, c->last.running, scaled,
		   vp_shared_users(c->sh));
}

static void vp_status_target(struct seq_file *m, struct vp_target *t)
{
	u32 i;

	seq_printf(m, "tid %d pid %u vcpu %d comm \"%s\" by %s: %llu intervals, %llu ran, %llu with values\n",
		   t->tid, t->id.pid, t->id.vcpu, t->comm,
		   vp_kind_name(t->kind), t->intervals_seen,
		   t->intervals_ran, t->intervals_with_values);
	for (i = 0; i < t->nr_events; i++)
		vp_status_counter(m, &t->counters[i], &t->events[i]);
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
	char dur[VP_DURATION_LEN];
	struct vp_target *t;
	struct vp_group *g;

	vp_status_owner(m, c);
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
		seq_printf(m, "  %s=%d, %u events", vp_kind_name(g->kind),
			   g->nr, g->nr_events);
		if (g->proc)
			seq_printf(m, ", process totals on %u threads",
				   g->proc->nr);
		seq_putc(m, '\n');
	}
	seq_printf(m, "targets: %u (limit %u)\n", c->nr_targets,
		   c->mod->max_targets);
	list_for_each_entry(t, &c->targets, node)
		vp_status_target(m, t);
	mutex_unlock(&c->lock);
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
