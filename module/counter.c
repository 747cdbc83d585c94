// SPDX-License-Identifier: GPL-2.0
/*
 * One kernel counter: resolving tracepoints to their perf id, and
 * creating, reading, inspecting and releasing a counter (a helper layer
 * over the exported perf API, as KVM keeps pmc_read_counter() beside
 * pmc_release_perf_event()).
 */
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/trace_events.h>

#include "compat.h"
#include "counter.h"
#include "shared.h"

#if VP_HAVE_TRACEPOINTS
static int vp_resolve_tracepoint(struct vp_event_spec *ev, char *err,
				 size_t errlen)
{
	struct trace_event_file *file;

	file = trace_get_event_file(NULL, ev->tp_system, ev->tp_event);
	if (IS_ERR(file)) {
		snprintf(err, errlen, "tracepoint '%s:%s' not found",
			 ev->tp_system, ev->tp_event);
		return -ENOENT;
	}
	ev->desc.config = file->event_call->event.type;
	trace_put_event_file(file);
	return 0;
}
#else
static int vp_resolve_tracepoint(struct vp_event_spec *ev, char *err,
				 size_t errlen)
{
	snprintf(err, errlen, "tracepoint '%s:%s': kernel has no tracing",
		 ev->tp_system, ev->tp_event);
	return -ENOENT;
}
#endif

/**
 * vp_resolve_events() - finish parsed events for counter creation
 * @evs:	parsed events
 * @nr:		how many
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * Looks tracepoints up and drops modifiers that mean nothing for an
 * event's type (guest/host on software events).  A named KVM event whose
 * tracepoint does not exist gets VCPUPERF_CONFIG_ABSENT: its counters
 * are never created (vp_shared_get()) and are reported unavailable.
 *
 * Return: 0, or -ENOENT naming a tracepoint that does not exist.
 */
int vp_resolve_events(struct vp_event_spec *evs, u32 nr, char *err,
		      size_t errlen)
{
	u32 i;
	int ret;

	for (i = 0; i < nr; i++) {
		if (evs[i].tracepoint) {
			ret = vp_resolve_tracepoint(&evs[i], err, errlen);
			/* A named KVM event counts nothing here, and says so. */
			if (ret && evs[i].optional) {
				evs[i].desc.config = VCPUPERF_CONFIG_ABSENT;
				ret = 0;
			}
			if (ret)
				return ret;
		}
		evs[i].desc.mods = vp_effective_mods(evs[i].desc.type,
						     evs[i].desc.mods);
	}
	return 0;
}

/*
 * Does a PMU count cycles on @task?  ENOENT for a hardware event means
 * either that no PMU counts here at all (a VM without a virtual PMU) or
 * that the PMU does not implement that event (QEMU's arm64 PMU has no
 * branch or cache events, ref-cycles is Intel's): a cycles counter,
 * created disabled and released at once, tells them apart.
 */
static bool vp_pmu_counts_cycles(struct task_struct *task)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.disabled = 1,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, -1, task, NULL, NULL);
	if (IS_ERR(event))
		return false;
	perf_event_release_kernel(event);
	return true;
}

/**
 * vp_counter_create() - create one counting kernel counter on a thread
 * @c:		the counter slot, zeroed
 * @desc:	the event
 * @task:	the thread
 *
 * The counter is shared with every other user of the same event on the
 * same thread (shared.c); c->base takes its values now.  Must be called
 * from process context.  On failure c->event stays NULL and c->error
 * holds the positive errno: the caller reports it (c->pmu_lacks tells an
 * event the PMU does not have from no PMU).
 */
void vp_counter_create(struct vp_counter *c,
		       const struct vcpuperf_event_desc *desc,
		       struct task_struct *task)
{
	struct perf_event *event;

	might_sleep();
	event = vp_shared_get(desc, task, false, &c->sh);
	if (IS_ERR(event)) {
		c->sh = NULL;
		c->event = NULL;
		c->error = -PTR_ERR(event);
		c->pmu_lacks = c->error == ENOENT &&
			       vp_is_pmu_event(desc->type) &&
			       vp_pmu_counts_cycles(task);
		return;
	}
	c->event = event;
	c->error = 0;
	/* Shared with other users, maybe: this one counts from now. */
	vp_event_read(event, &c->base);
}

/**
 * vp_event_read() - read a kernel counter's cumulative value and times
 * @event:	the counter
 * @v:		value, time_enabled and time_running, filled in
 *
 * Sleeps (perf_event_read_value() takes the event's context mutex).  A
 * counter whose thread runs on another CPU costs one cross-CPU call; one
 * read by its own thread, none.
 */
void vp_event_read(struct perf_event *event, struct vcpuperf_count *v)
{
	v->value = perf_event_read_value(event, &v->enabled, &v->running);
}

/**
 * vp_event_exited() - has a kernel counter seen its thread exit?
 * @event:	the counter
 *
 * Return: true once perf moved it to PERF_EVENT_STATE_EXIT: its value is
 * final.
 */
bool vp_event_exited(struct perf_event *event)
{
	return READ_ONCE(event->state) == PERF_EVENT_STATE_EXIT;
}

/**
 * vp_event_on() - is a counter, or a child perf inherited from it, on a
 *		   thread?
 * @ev:		the counter (attr.inherit: perf gives a child of it to every
 *		thread its thread creates)
 * @t:		the thread, listed in its process (done inheriting: perf
 *		does that in copy_process() before it lists the thread)
 *
 * A counter lives in its thread's perf context.  perf may swap a cloned
 * context between a parent and a child thread at a context switch, so
 * the counter itself may be on @t; an exited thread's context is no
 * longer its own (TASK_TOMBSTONE).  Sleeps (the counter's child_mutex).
 *
 * Return: true when @ev or one of its children counts on @t.
 */
bool vp_event_on(struct perf_event *ev, struct task_struct *t)
{
	struct perf_event *child;
	bool found = false;

	if (READ_ONCE(ev->ctx->task) == t)
		return true;
	/* No child of @t is being added now: see above. */
	if (list_empty(&ev->child_list))
		return false;
	mutex_lock(&ev->child_mutex);
	list_for_each_entry(child, &ev->child_list, child_list) {
		if (READ_ONCE(child->ctx->task) == t) {
			found = true;
			break;
		}
	}
	mutex_unlock(&ev->child_mutex);
	return found;
}

/**
 * vp_counter_read() - read a counter's cumulative value and times
 * @c:		the counter slot, with a counter
 * @v:		value, time_enabled and time_running, filled in
 *
 * See vp_event_read().
 */
void vp_counter_read(struct vp_counter *c, struct vcpuperf_count *v)
{
	vp_event_read(c->event, v);
}

/**
 * vp_counter_release() - release a counter, if it exists
 * @c:		the counter slot
 *
 * Only this user's reference: the counter goes with its last user.
 */
void vp_counter_release(struct vp_counter *c)
{
	vp_shared_put(c->sh);
	c->sh = NULL;
	c->event = NULL;
}

/**
 * vp_counter_exited() - has the counter seen its thread exit?
 * @c:		the counter slot
 *
 * Return: true once perf moved the counter to PERF_EVENT_STATE_EXIT: its
 * value is final.
 */
bool vp_counter_exited(const struct vp_counter *c)
{
	return c->event && vp_event_exited(c->event);
}

/**
 * vp_counter_in_error() - has perf put the counter in error state?
 * @c:		the counter slot
 *
 * A pinned counter that finds no free PMU counter when its thread is
 * scheduled in goes to PERF_EVENT_STATE_ERROR and stays there: it counts
 * nothing more, while its enabled time stands still (a read would look
 * like a thread that did not run).
 *
 * Return: true in that state.
 */
bool vp_counter_in_error(const struct vp_counter *c)
{
	return c->event &&
	       READ_ONCE(c->event->state) == PERF_EVENT_STATE_ERROR;
}

/**
 * vp_counter_cause() - why a counter does not count
 * @c:		the counter slot, not created or in error state
 * @desc:	its event
 *
 * Return: the enum vcpuperf_cause of its creation's errno, told apart for
 * ENOENT (an event the PMU lacks, or no PMU), or of its error state (a
 * pinned counter without a free PMU counter).
 */
enum vcpuperf_cause vp_counter_cause(const struct vp_counter *c,
				     const struct vcpuperf_event_desc *desc)
{
	if (c->in_error)
		return (desc->mods & VCPUPERF_MOD_PINNED) ?
		       VCPUPERF_CAUSE_PINNED_NO_SLOT : VCPUPERF_CAUSE_UNKNOWN;
	if (c->pmu_lacks)
		return VCPUPERF_CAUSE_PMU_LACKS_EVENT;
	return vp_cause_from_errno(c->error, desc->type, desc->mods);
}

/**
 * vp_counter_state() - perf's state of a counter, for the status file
 * @c:		the counter slot
 *
 * Return: a short lower-case word.
 */
const char *vp_counter_state(const struct vp_counter *c)
{
	if (!c->event)
		return "unavailable";
	switch (READ_ONCE(c->event->state)) {
	case PERF_EVENT_STATE_ACTIVE:
		return "active";
	case PERF_EVENT_STATE_INACTIVE:
		return "inactive";
	case PERF_EVENT_STATE_OFF:
		return "off";
	case PERF_EVENT_STATE_EXIT:
		return "exited";
	case PERF_EVENT_STATE_ERROR:
		return "error";
	default:
		return "other";
	}
}
