// SPDX-License-Identifier: GPL-2.0
/*
 * What the scheduler keeps of a thread, read from its task_struct at the
 * moment of its sample: no PMU counter, no software event.  CPU time is
 * se.sum_exec_runtime as of the thread's last scheduler update (a switch
 * or a tick: the kernel's task_sched_runtime(), which adds a running
 * thread's current slice, is not exported); the time waiting for a CPU is
 * sched_info.run_delay, which the scheduler adds to when a wait ends, so
 * a wait in progress (sched_info.last_queued set) is added up to now by
 * the CPU's scheduler clock.  A sample's figures are since the thread's
 * attach, and never go back: a read between the two stores that end a
 * wait (last_queued cleared, then run_delay grown) would.
 */
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/string.h>

#include "compat.h"
#include "sched.h"
#include "vcpuperf.h"

/**
 * vp_sched_read() - a thread's scheduler figures now, since it began
 * @task:	the thread
 * @out:	filled; @out->valid says which fields the kernel keeps
 */
void vp_sched_read(struct task_struct *task, struct vcpuperf_sched *out)
{
	memset(out, 0, sizeof(*out));
	out->run_ns = READ_ONCE(task->se.sum_exec_runtime);
	out->voluntary = READ_ONCE(task->nvcsw);
	out->involuntary = READ_ONCE(task->nivcsw);
	out->migrations = READ_ONCE(task->se.nr_migrations);
	out->cpu = task_cpu(task);
	out->valid = VCPUPERF_SCHED_RUN;
#ifdef CONFIG_SCHED_INFO
	{
		u64 queued = READ_ONCE(task->sched_info.last_queued);
		u64 now;

		out->wait_ns = READ_ONCE(task->sched_info.run_delay);
		out->timeslices = READ_ONCE(task->sched_info.pcount);
		if (queued) {
			now = vp_sched_clock_cpu(out->cpu);
			if (now > queued)
				out->wait_ns += now - queued;
		}
		out->valid |= VCPUPERF_SCHED_INFO;
	}
#endif
}

/**
 * vp_sched_start() - take a thread's figures as the base of its samples
 * @t:		the target, at its attach
 */
void vp_sched_start(struct vp_target *t)
{
	vp_sched_read(t->task, &t->sched_base);
	t->sched_last = t->sched_base;
}

/* @now - @base, never below @last - @base: each field is cumulative. */
static u64 vp_sched_field(u64 now, u64 base, u64 *last)
{
	if (now < *last)
		now = *last;
	*last = now;
	return now - base;
}

/**
 * vp_sched_since_start() - a thread's figures since its attach
 * @t:		the target, its collection's lock held
 * @now:	vp_sched_read() of its thread
 * @out:	the figures since vp_sched_start(), none below the last ones
 */
void vp_sched_since_start(struct vp_target *t,
			  const struct vcpuperf_sched *now,
			  struct vcpuperf_sched *out)
{
	struct vcpuperf_sched *b = &t->sched_base, *l = &t->sched_last;

	out->run_ns = vp_sched_field(now->run_ns, b->run_ns, &l->run_ns);
	out->wait_ns = vp_sched_field(now->wait_ns, b->wait_ns, &l->wait_ns);
	out->timeslices = vp_sched_field(now->timeslices, b->timeslices,
					 &l->timeslices);
	out->voluntary = vp_sched_field(now->voluntary, b->voluntary,
					&l->voluntary);
	out->involuntary = vp_sched_field(now->involuntary, b->involuntary,
					  &l->involuntary);
	out->migrations = vp_sched_field(now->migrations, b->migrations,
					 &l->migrations);
	out->cpu = now->cpu;
	out->valid = now->valid;
}
