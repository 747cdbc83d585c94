// SPDX-License-Identifier: GPL-2.0
/*
 * The status file: a human-readable view of the collection (targets,
 * each counter's state and last values, ring use and drops, the reason of
 * the last rejected command).
 */
#include <linux/fs.h>
#include <linux/seq_file.h>

#include "vcpuperf.h"

static void vp_status_ring(struct seq_file *m, struct vp_ring *ring)
{
	unsigned long flags;
	u64 used, records, produced, drops, next;

	spin_lock_irqsave(&ring->lock, flags);
	used = ring->wr - ring->rd;
	records = ring->records;
	produced = ring->produced;
	drops = ring->drops_total;
	next = ring->next_seq;
	spin_unlock_irqrestore(&ring->lock, flags);
	seq_printf(m, "ring: %zu bytes, %llu used, %llu records queued\n",
		   ring->size, used, records);
	seq_printf(m, "records: %llu produced, %llu dropped, next seq %llu\n",
		   produced, drops, next);
}

static void vp_status_target(struct seq_file *m, struct vp_target *t)
{
	u32 i;

	seq_printf(m, "tid %d pid %u vcpu %d comm \"%s\" by %s: %llu intervals, %llu ran, %llu with values\n",
		   t->tid, t->id.pid, t->id.vcpu, t->comm,
		   vp_kind_name(t->kind), t->intervals_seen,
		   t->intervals_ran, t->intervals_with_values);
	for (i = 0; i < t->nr_events; i++) {
		const struct vp_counter *c = &t->counters[i];
		const struct vcpuperf_event_desc *d = &t->events[i];
		u64 scaled;

		if (!c->event) {
			enum vcpuperf_cause cause;

			cause = vp_cause_from_errno(c->error, d->type, d->mods);
			seq_printf(m, "  %-24s unavailable %s (%s)\n", d->name,
				   vp_errno_name(c->error),
				   vp_cause_name(cause));
			continue;
		}
		if (!vp_scale(c->last.value, c->last.enabled,
			      c->last.running, &scaled))
			scaled = 0;
		seq_printf(m, "  %-24s %s value %llu enabled %llu running %llu scaled %llu\n",
			   d->name, vp_counter_state(c), c->last.value,
			   c->last.enabled, c->last.running, scaled);
	}
}

static int vp_status_show(struct seq_file *m, void *unused)
{
	struct vp_state *vp = m->private;
	struct vp_target *t;
	struct vp_group *g;
	char dur[32];

	mutex_lock(&vp->lock);
	vp_format_duration(dur, sizeof(dur), vp->interval_ns);
	seq_printf(m, "vcpuperf abi %u\n", VCPUPERF_ABI_VERSION);
	seq_printf(m, "state: %s\n", vp->nr_targets ? "sampling" :
		   vp->nr_groups ? "waiting for threads" : "idle");
	seq_printf(m, "interval: %s\n", dur);
	seq_printf(m, "passes: %llu, missed grid points: %llu\n", vp->passes,
		   vp->missed_ticks);
	vp_status_ring(m, &vp->ring);
	seq_printf(m, "reader: %s\n",
		   atomic_read(&vp->reader_open) ? "open" : "none");
	if (vp->last_errno)
		seq_printf(m, "last_error: %s: %s\n",
			   vp_errno_name(vp->last_errno), vp->last_error);
	else
		seq_puts(m, "last_error: none\n");
	seq_printf(m, "processes: %u\n", vp->nr_groups);
	list_for_each_entry(g, &vp->groups, node)
		seq_printf(m, "  %s=%d, %u events\n", vp_kind_name(g->kind),
			   g->nr, g->nr_events);
	seq_printf(m, "targets: %u (limit %d)\n", vp->nr_targets,
		   VCPUPERF_MAX_TARGETS);
	list_for_each_entry(t, &vp->targets, node)
		vp_status_target(m, t);
	mutex_unlock(&vp->lock);
	return 0;
}

static int vp_status_open(struct inode *inode, struct file *file)
{
	return vp_single_open(file, vp_status_show, inode->i_private);
}

const struct file_operations vp_status_fops = {
	.open = vp_status_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = vp_single_release,
};
