// SPDX-License-Identifier: GPL-2.0
/*
 * Who took a thread's CPU while it waited for one.  While any thread is
 * attached with the attach word "who", probes on three scheduler
 * tracepoints keep, for each such thread, its time runnable but waiting
 * by what ran on the CPU it waited for, and its involuntary switches by
 * what ran next (struct vcpuperf_who):
 *
 *  - sched_wakeup: a woken thread begins to wait on its CPU's list;
 *  - sched_switch: the time since the CPU's last switch is charged to the
 *    task switched out (prev), for every thread waiting on that CPU; a
 *    thread switched in stops waiting; a thread switched out that stays
 *    runnable (preempted) begins to wait, and its switch is put to the
 *    task switched in;
 *  - sched_migrate_task: a waiting thread moved to another CPU has its
 *    wait until now charged on the old CPU and goes on waiting on the
 *    new one.
 *
 * Each CPU's list has its own raw spinlock, taken inside the runqueue
 * lock the tracepoints run under and never nested in another.  The
 * threads are found by task in an RCU hash table; an entry leaves it at
 * its last put and is freed after a grace period, when no probe can hold
 * it any more (it leaves its CPU's list then).  Only a thread attached
 * who is looked up: the probes' cost on every other switch is two
 * lookups in a mostly empty table, and no probe is registered while no
 * thread is attached who.
 */
#include <linux/hash.h>
#include <linux/hashtable.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "../lib/vcpuperf_lib.h"
#include "compat.h"
#include "who.h"

#define VP_WHO_HASH_BITS	8
/* vp_who.wcpu of a thread that is not waiting */
#define VP_WHO_NO_CPU		(-1)

/**
 * struct vp_who_runner - what ran on a CPU, as a waiter's wait is put to it
 * @tgid:	its process
 * @idle:	the CPU's idle task
 * @kthread:	a kernel thread
 * @vcpu:	a vCPU thread ("CPU <n>/KVM" or "/TCG")
 */
struct vp_who_runner {
	pid_t tgid;
	bool idle;
	bool kthread;
	bool vcpu;
};

/**
 * struct vp_who - one thread attached who, shared by its targets
 * @hnode:	in vp_who_hash, by @task
 * @wnode:	in its CPU's list of waiters while it waits
 * @rcu:	its freeing
 * @task:	the thread (its targets hold a reference; only compared here)
 * @tgid:	its process
 * @wcpu:	the CPU whose list holds it, VP_WHO_NO_CPU when not waiting
 * @since:	the start of the part of its wait not yet charged
 * @users:	targets using it (vp_who_lock)
 * @acc:	its figures since the entry was made
 *
 * @wnode, @wcpu, @since and @acc change under the lock of the CPU it
 * waits on (or, for @acc.preempted, of the CPU it is switched out of);
 * they are read without it, each field on its own.
 */
struct vp_who {
	struct hlist_node hnode;
	struct list_head wnode;
	struct rcu_head rcu;
	const struct task_struct *task;
	pid_t tgid;
	int wcpu;
	u64 since;
	unsigned int users;
	struct vcpuperf_who acc;
};

/**
 * struct vp_who_cpu - one CPU as the probes see it
 * @lock:	protects the rest, and the waiters' fields
 * @waiters:	threads attached who waiting for this CPU
 * @last:	its clock (vp_sched_clock_cpu(): the scheduler's) at its
 *		last switch
 * @cur:	what it switched to then
 */
struct vp_who_cpu {
	raw_spinlock_t lock;
	struct list_head waiters;
	u64 last;
	struct vp_who_runner cur;
};

static DEFINE_PER_CPU(struct vp_who_cpu, vp_who_cpus);
static DEFINE_HASHTABLE(vp_who_hash, VP_WHO_HASH_BITS);
/* Entries made and put, the probes registered and unregistered. */
static DEFINE_MUTEX(vp_who_lock);
static unsigned int vp_who_nr;
static bool vp_who_ready;

/**
 * vp_who_kind_of() - what a part of a thread's wait is put to
 * @waiter_tgid: the waiting thread's process
 * @idle:	the CPU ran its idle task meanwhile
 * @kthread:	it ran a kernel thread
 * @tgid:	the process of what it ran
 * @vcpu:	what it ran is a vCPU thread
 *
 * Return: enum vcpuperf_who_kind.
 */
enum vcpuperf_who_kind vp_who_kind_of(pid_t waiter_tgid, bool idle,
				      bool kthread, pid_t tgid, bool vcpu)
{
	if (idle)
		return VCPUPERF_WHO_IDLE;
	if (kthread)
		return VCPUPERF_WHO_KERNEL;
	if (tgid == waiter_tgid)
		return VCPUPERF_WHO_SAME_VM;
	return vcpu ? VCPUPERF_WHO_OTHER_VM : VCPUPERF_WHO_HOST;
}

/**
 * vp_who_add_vm() - put part of a wait to the other VM that caused it
 * @acc:	the waiting thread's figures
 * @tgid:	that VM's process
 * @ns:		the part
 *
 * In its slot of @acc->vms, made for it if one is free; a VM past the
 * slots is only in @acc->wait_ns[VCPUPERF_WHO_OTHER_VM].
 */
void vp_who_add_vm(struct vcpuperf_who *acc, pid_t tgid, u64 ns)
{
	u32 i;

	for (i = 0; i < VCPUPERF_WHO_VMS; i++) {
		struct vcpuperf_who_vm *vm = &acc->vms[i];

		if (!vm->pid)
			WRITE_ONCE(vm->pid, tgid);
		if (vm->pid == tgid) {
			WRITE_ONCE(vm->wait_ns, vm->wait_ns + ns);
			return;
		}
	}
}

static void vp_who_runner_of(const struct task_struct *p,
			     struct vp_who_runner *r)
{
	char comm[TASK_COMM_LEN];

	r->tgid = p->tgid;
	r->idle = is_idle_task(p);
	r->kthread = p->flags & PF_KTHREAD;
	r->vcpu = false;
	/* A vCPU thread's name begins so: most switches end here. */
	if (r->idle || r->kthread || p->comm[0] != 'C')
		return;
	/* Its name may be changed meanwhile: a copy, terminated. */
	memcpy(comm, p->comm, sizeof(comm));
	comm[sizeof(comm) - 1] = '\0';
	r->vcpu = vp_parse_vcpu(comm) >= 0;
}

/* Charge @w's wait from its start or @last to @now to runner @r. */
static void vp_who_charge(struct vp_who *w, const struct vp_who_runner *r,
			  u64 last, u64 now)
{
	u64 from = max(last, w->since), ns;
	enum vcpuperf_who_kind kind;

	if (now <= from)
		return;
	ns = now - from;
	kind = vp_who_kind_of(w->tgid, r->idle, r->kthread, r->tgid, r->vcpu);
	WRITE_ONCE(w->acc.wait_ns[kind], w->acc.wait_ns[kind] + ns);
	if (kind == VCPUPERF_WHO_OTHER_VM)
		vp_who_add_vm(&w->acc, r->tgid, ns);
	w->since = now;
}

static struct vp_who *vp_who_find(const struct task_struct *task)
{
	struct vp_who *w;

	hash_for_each_possible_rcu(vp_who_hash, w, hnode, (unsigned long)task)
		if (w->task == task)
			return w;
	return NULL;
}

/* @w begins to wait on @cpu at @now, unless it waits already. */
static void vp_who_wait(struct vp_who *w, int cpu, u64 now)
{
	struct vp_who_cpu *wc = per_cpu_ptr(&vp_who_cpus, cpu);

	raw_spin_lock(&wc->lock);
	if (READ_ONCE(w->wcpu) == VP_WHO_NO_CPU) {
		w->since = now;
		list_add_tail(&w->wnode, &wc->waiters);
		WRITE_ONCE(w->wcpu, cpu);
	}
	raw_spin_unlock(&wc->lock);
}

/*
 * Take @w off the list of the CPU it waits on, its wait until now (by that
 * CPU's clock) put to what runs there if @charge.  Returns the CPU it
 * waited on, or VP_WHO_NO_CPU.
 */
static int vp_who_unwait(struct vp_who *w, bool charge)
{
	struct vp_who_cpu *wc;
	unsigned long flags;
	int cpu;

	for (;;) {
		cpu = READ_ONCE(w->wcpu);
		if (cpu == VP_WHO_NO_CPU)
			return cpu;
		wc = per_cpu_ptr(&vp_who_cpus, cpu);
		raw_spin_lock_irqsave(&wc->lock, flags);
		if (w->wcpu == cpu)
			break;
		raw_spin_unlock_irqrestore(&wc->lock, flags);
	}
	if (charge)
		vp_who_charge(w, &wc->cur, wc->last, vp_sched_clock_cpu(cpu));
	list_del_init(&w->wnode);
	WRITE_ONCE(w->wcpu, VP_WHO_NO_CPU);
	raw_spin_unlock_irqrestore(&wc->lock, flags);
	return cpu;
}

static void vp_who_probe_switch(void *data, bool preempt,
				struct task_struct *prev,
				struct task_struct *next,
				unsigned int prev_state)
{
	struct vp_who_cpu *wc = this_cpu_ptr(&vp_who_cpus);
	int cpu = smp_processor_id();
	struct vp_who *w, *wn, *wp;
	u64 now = vp_sched_clock_cpu(cpu);
	struct vp_who_runner r;
	bool invol;

	wn = vp_who_find(next);
	/*
	 * Its switch is involuntary as the scheduler counts prev->nivcsw,
	 * and it waits from now if it is still running (as the scheduler's
	 * sched_info begins a wait: one preempted on its way to sleep is
	 * queued, but waits for nothing but to sleep).
	 */
	invol = preempt || !prev_state;
	wp = invol || task_is_running(prev) ? vp_who_find(prev) : NULL;
	raw_spin_lock(&wc->lock);
	if (!list_empty(&wc->waiters)) {
		vp_who_runner_of(prev, &r);
		list_for_each_entry(w, &wc->waiters, wnode)
			vp_who_charge(w, &r, wc->last, now);
	}
	if (wn && wn->wcpu == cpu) {
		list_del_init(&wn->wnode);
		WRITE_ONCE(wn->wcpu, VP_WHO_NO_CPU);
		wn = NULL;
	}
	wc->last = now;
	vp_who_runner_of(next, &wc->cur);
	if (wp) {
		if (invol) {
			enum vcpuperf_who_kind k;

			k = vp_who_kind_of(wp->tgid, wc->cur.idle,
					   wc->cur.kthread, wc->cur.tgid,
					   wc->cur.vcpu);
			WRITE_ONCE(wp->acc.preempted[k],
				   wp->acc.preempted[k] + 1);
		}
		if (task_is_running(prev) && wp->wcpu == VP_WHO_NO_CPU) {
			wp->since = now;
			list_add_tail(&wp->wnode, &wc->waiters);
			WRITE_ONCE(wp->wcpu, cpu);
		}
	}
	raw_spin_unlock(&wc->lock);
	/* Listed elsewhere (its wait began before the probes): no charge. */
	if (wn && READ_ONCE(wn->wcpu) != VP_WHO_NO_CPU)
		vp_who_unwait(wn, false);
}

static void vp_who_probe_wakeup(void *data, struct task_struct *p)
{
	struct vp_who *w = vp_who_find(p);
	int cpu;

	/* Woken before it was switched out: it runs on. */
	if (!w || READ_ONCE(p->on_cpu))
		return;
	cpu = task_cpu(p);
	vp_who_wait(w, cpu, vp_sched_clock_cpu(cpu));
}

static void vp_who_probe_migrate(void *data, struct task_struct *p,
				 int dest_cpu)
{
	struct vp_who *w = vp_who_find(p);

	/* A sleeping thread placed by its wake-up waits nowhere yet. */
	if (!w || READ_ONCE(w->wcpu) == VP_WHO_NO_CPU ||
	    READ_ONCE(w->wcpu) == dest_cpu)
		return;
	if (vp_who_unwait(w, true) != VP_WHO_NO_CPU)
		vp_who_wait(w, dest_cpu, vp_sched_clock_cpu(dest_cpu));
}

/**
 * struct vp_who_tp - a scheduler tracepoint and the probe put on it
 * @name:	its name
 * @probe:	the probe
 * @tp:		the tracepoint, once found
 */
struct vp_who_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct vp_who_tp vp_who_tps[] = {
	{ "sched_switch", vp_who_probe_switch },
	{ "sched_wakeup", vp_who_probe_wakeup },
	{ "sched_migrate_task", vp_who_probe_migrate },
};

static void vp_who_tp_match(struct tracepoint *tp, void *priv)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(vp_who_tps); i++)
		if (!strcmp(tp->name, vp_who_tps[i].name))
			vp_who_tps[i].tp = tp;
}

static void vp_who_unregister(u32 nr)
{
	while (nr--)
		tracepoint_probe_unregister(vp_who_tps[nr].tp,
					    vp_who_tps[nr].probe, NULL);
	/* No probe runs from here on. */
	tracepoint_synchronize_unregister();
}

static int vp_who_register(void)
{
	int cpu, ret;
	u32 i;

	lockdep_assert_held(&vp_who_lock);
	if (!vp_who_ready) {
		for_each_possible_cpu(cpu) {
			struct vp_who_cpu *wc = per_cpu_ptr(&vp_who_cpus, cpu);

			raw_spin_lock_init(&wc->lock);
			INIT_LIST_HEAD(&wc->waiters);
		}
		for_each_kernel_tracepoint(vp_who_tp_match, NULL);
		vp_who_ready = true;
	}
	for (i = 0; i < ARRAY_SIZE(vp_who_tps); i++) {
		if (!vp_who_tps[i].tp) {
			ret = -ENOENT;
			goto unwind;
		}
		ret = tracepoint_probe_register(vp_who_tps[i].tp,
						vp_who_tps[i].probe, NULL);
		if (ret)
			goto unwind;
	}
	return 0;
unwind:
	vp_who_unregister(i);
	return ret;
}

/**
 * vp_who_get() - keep who took a thread's CPU
 * @task:	the thread (referenced by the caller for as long as it uses
 *		the entry)
 *
 * The first entry registers the probes.  An entry's figures begin when
 * it is made: a wait in progress then is not in them.
 *
 * Return: the thread's entry, shared with its other users; ERR_PTR(-ENOMEM),
 * or ERR_PTR(-ENOENT) when the kernel lacks one of the tracepoints (or the
 * error of registering a probe).
 */
struct vp_who *vp_who_get(struct task_struct *task)
{
	struct vp_who *w;
	int ret;

	mutex_lock(&vp_who_lock);
	hash_for_each_possible(vp_who_hash, w, hnode, (unsigned long)task) {
		if (w->task == task) {
			w->users++;
			goto out;
		}
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w) {
		w = ERR_PTR(-ENOMEM);
		goto out;
	}
	if (!vp_who_nr) {
		ret = vp_who_register();
		if (ret) {
			kfree(w);
			w = ERR_PTR(ret);
			goto out;
		}
	}
	w->task = task;
	w->tgid = task->tgid;
	w->wcpu = VP_WHO_NO_CPU;
	INIT_LIST_HEAD(&w->wnode);
	w->users = 1;
	hash_add_rcu(vp_who_hash, &w->hnode, (unsigned long)task);
	vp_who_nr++;
out:
	mutex_unlock(&vp_who_lock);
	return w;
}

/* After a grace period no probe holds @w: off its list, and freed. */
static void vp_who_free_rcu(struct rcu_head *head)
{
	struct vp_who *w = container_of(head, struct vp_who, rcu);

	vp_who_unwait(w, false);
	kfree(w);
}

/**
 * vp_who_put() - a user of an entry is done with it
 * @w:		from vp_who_get()
 *
 * The last put takes it out of the table (freed after a grace period);
 * the last entry unregisters the probes.
 */
void vp_who_put(struct vp_who *w)
{
	mutex_lock(&vp_who_lock);
	if (!--w->users) {
		hash_del_rcu(&w->hnode);
		if (!--vp_who_nr)
			vp_who_unregister(ARRAY_SIZE(vp_who_tps));
		call_rcu(&w->rcu, vp_who_free_rcu);
	}
	mutex_unlock(&vp_who_lock);
}

/**
 * vp_who_read() - an entry's figures now
 * @w:		the entry
 * @out:	filled, each field read on its own
 *
 * A wait in progress is in them up to now, put to what runs on its CPU
 * (as the scheduler's figures have it up to now): the probe charges that
 * part to the same at the CPU's next switch, and more.
 */
void vp_who_read(struct vp_who *w, struct vcpuperf_who *out)
{
	struct vp_who_cpu *wc;
	unsigned long flags;
	int cpu;
	u32 i;

	/* The part of a wait in progress, charged as the next switch will. */
	cpu = READ_ONCE(w->wcpu);
	if (cpu != VP_WHO_NO_CPU) {
		wc = per_cpu_ptr(&vp_who_cpus, cpu);
		raw_spin_lock_irqsave(&wc->lock, flags);
		if (w->wcpu == cpu)
			vp_who_charge(w, &wc->cur, wc->last,
				      vp_sched_clock_cpu(cpu));
		raw_spin_unlock_irqrestore(&wc->lock, flags);
	}
	memset(out, 0, sizeof(*out));
	for (i = 0; i < VCPUPERF_WHO_NR; i++) {
		out->wait_ns[i] = READ_ONCE(w->acc.wait_ns[i]);
		out->preempted[i] = READ_ONCE(w->acc.preempted[i]);
	}
	for (i = 0; i < VCPUPERF_WHO_VMS; i++) {
		out->vms[i].pid = READ_ONCE(w->acc.vms[i].pid);
		out->vms[i].wait_ns = READ_ONCE(w->acc.vms[i].wait_ns);
	}
	out->valid = 1;
}

/**
 * vp_who_cause() - why a thread's entry could not be made
 * @err:	the error of vp_who_get()
 *
 * Return: enum vcpuperf_cause.
 */
enum vcpuperf_cause vp_who_cause(int err)
{
	switch (err) {
	case -ENOMEM:
		return VCPUPERF_CAUSE_NO_MEMORY;
	case -ENOENT:
		return VCPUPERF_CAUSE_NO_TRACEPOINT;
	default:
		return VCPUPERF_CAUSE_UNKNOWN;
	}
}

/**
 * vp_who_exit() - at module unload, after every target is gone
 *
 * Waits for the entries' freeing: its callbacks are this module's code.
 */
void vp_who_exit(void)
{
	WARN_ON(vp_who_nr);
	rcu_barrier();
}
