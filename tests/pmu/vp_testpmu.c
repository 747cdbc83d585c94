// SPDX-License-Identifier: GPL-2.0
/*
 * vp_testpmu: a PMU for testing vcpuperf, never installed.
 *
 * It registers with perf_pmu_register() under a dynamic type on the
 * hardware context (the test VMs have no CPU PMU, so the one hardware
 * context 6.1 allows is free) and has a settable number of counter slots
 * per CPU: add() refuses an event when they are all taken, so perf core
 * must rotate flexible events and put a pinned one that finds no slot in
 * error state.
 *
 * What an event counts is known to the test without asking this module:
 * RATE counts per nanosecond that the event was on a slot, so a thread that
 * stays on the CPU gives RATE x its run time, which the task-clock software
 * event measures independently.  The nanoseconds are those of perf's own
 * context clock (the stamp perf core took when it last brought the
 * context's time up to date, just before add(), del() and read()), which
 * is what perf measures time_running with: the count per ns running is
 * RATE exactly, an ideal constant-rate PMU.  Timed with local_clock() in
 * add() and del() instead, under emulation the count fell short of
 * time_running by the time between perf's stamp and add(), a few ms now
 * and then on a loaded host, which scaling then extrapolates (36% off in
 * an interval where the event was on for 1 ms): an error of this module,
 * not of what it tests.
 *
 * config of an event of its own type:
 *	bits 0-7	RATE (0 means 1)
 *	bit 8		never: every add() is refused (a counter that is
 *			enabled while its thread runs but never gets a slot)
 * With claim_generic=1 it also takes PERF_TYPE_HARDWARE, PERF_TYPE_HW_CACHE
 * and PERF_TYPE_RAW events, which only reach it when no CPU PMU is
 * registered; the generic hardware events count at fixed rates (cycles 3,
 * instructions 2, cache-references 5, cache-misses 1, others 1), so ipc
 * and cache-miss rate are known exactly.
 *
 * debugfs vp_testpmu/events lists every event created since load (or the
 * last "reset" written to it): its attributes as perf core passed them and
 * this PMU's own totals (adds, refused adds, count).
 *
 * Beside the PMU, a competitor of known kind for the tests of who took a
 * thread's CPU: "CPU MS" written to debugfs vp_testpmu/burn starts a
 * kernel thread, "vpt_burn/CPU", bound to CPU, that keeps it busy for MS
 * ms of local_clock() (giving it up only where cond_resched() lets the
 * scheduler), then sleeps until the next write or the unload.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/mutex.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>

#define VPT_NAME		"vp_testpmu"
#define VPT_MAX_SLOTS		16
#define VPT_DEFAULT_SLOTS	2
#define VPT_RATE_MASK		0xffULL
#define VPT_NEVER		BIT_ULL(8)
#define VPT_CONFIG_MASK		(VPT_RATE_MASK | VPT_NEVER)
#define VPT_RESET_CMD		"reset"
/* Longest write to the burn file: "CPU MS". */
#define VPT_BURN_CMD_MAX	32
/* Longest burn, ms. */
#define VPT_BURN_MAX_MS		60000

/* Rates of the generic hardware events, per ns on a slot. */
#define VPT_RATE_CYCLES		3
#define VPT_RATE_INSNS		2
#define VPT_RATE_CACHE_REFS	5
#define VPT_RATE_CACHE_MISSES	1
#define VPT_RATE_OTHER		1

static unsigned int slots = VPT_DEFAULT_SLOTS;
module_param(slots, uint, 0444);
MODULE_PARM_DESC(slots, "counter slots per CPU, 0..16 (default 2)");

static bool claim_generic;
module_param(claim_generic, bool, 0444);
MODULE_PARM_DESC(claim_generic,
		 "also count generic hardware, hw-cache and raw events (no CPU PMU only)");

static bool no_exclude;
module_param(no_exclude, bool, 0444);
MODULE_PARM_DESC(no_exclude,
		 "declare PERF_PMU_CAP_NO_EXCLUDE: perf core refuses u/k/G/H");

/**
 * struct vpt_event - this PMU's record of one event
 * @node:	in vpt_events
 * @id:		creation order, from 1
 * @type:	attr.type
 * @config:	attr.config
 * @tid:	the thread it counts, -1 for a CPU event
 * @rate:	counts per ns on a slot, 0 when it never gets one
 * @pinned:	attr.pinned
 * @excl:	attr.exclude_{user,kernel,hv,host,guest} as a bit mask
 * @live:	not destroyed yet
 * @adds:	add() calls that got a slot
 * @refused:	add() calls refused
 * @final:	count when the event was destroyed
 */
struct vpt_event {
	struct list_head node;
	u64 id;
	u32 type;
	u64 config;
	pid_t tid;
	u64 rate;
	bool pinned;
	u32 excl;
	bool live;
	atomic64_t adds;
	atomic64_t refused;
	u64 final;
};

enum vpt_excl_bit {
	VPT_EXCL_USER,
	VPT_EXCL_KERNEL,
	VPT_EXCL_HV,
	VPT_EXCL_HOST,
	VPT_EXCL_GUEST,
};

static DEFINE_PER_CPU(unsigned int, vpt_used);
static LIST_HEAD(vpt_events);
static DEFINE_SPINLOCK(vpt_lock);	/* vpt_events, vpt_next_id */
static u64 vpt_next_id = 1;
static struct dentry *vpt_dir;
static struct pmu vpt_pmu;

static u64 vpt_generic_rate(const struct perf_event *event)
{
	if (event->attr.type != PERF_TYPE_HARDWARE)
		return VPT_RATE_OTHER;
	switch (event->attr.config) {
	case PERF_COUNT_HW_CPU_CYCLES:
		return VPT_RATE_CYCLES;
	case PERF_COUNT_HW_INSTRUCTIONS:
		return VPT_RATE_INSNS;
	case PERF_COUNT_HW_CACHE_REFERENCES:
		return VPT_RATE_CACHE_REFS;
	case PERF_COUNT_HW_CACHE_MISSES:
		return VPT_RATE_CACHE_MISSES;
	default:
		return VPT_RATE_OTHER;
	}
}

static u32 vpt_excl_mask(const struct perf_event_attr *attr)
{
	return (attr->exclude_user ? BIT(VPT_EXCL_USER) : 0) |
	       (attr->exclude_kernel ? BIT(VPT_EXCL_KERNEL) : 0) |
	       (attr->exclude_hv ? BIT(VPT_EXCL_HV) : 0) |
	       (attr->exclude_host ? BIT(VPT_EXCL_HOST) : 0) |
	       (attr->exclude_guest ? BIT(VPT_EXCL_GUEST) : 0);
}

static void vpt_destroy(struct perf_event *event)
{
	struct vpt_event *e = event->pmu_private;
	unsigned long flags;

	spin_lock_irqsave(&vpt_lock, flags);
	e->final = local64_read(&event->count);
	e->live = false;
	spin_unlock_irqrestore(&vpt_lock, flags);
}

static int vpt_event_init(struct perf_event *event)
{
	bool own = event->attr.type == vpt_pmu.type;
	u32 type = event->attr.type;
	struct vpt_event *e;
	unsigned long flags;

	if (!own && !(claim_generic && (type == PERF_TYPE_HARDWARE ||
					type == PERF_TYPE_HW_CACHE ||
					type == PERF_TYPE_RAW)))
		return -ENOENT;
	if (own && (event->attr.config & ~VPT_CONFIG_MASK))
		return -EINVAL;
	/* Counting only: no interrupt to deliver samples with. */
	if (is_sampling_event(event))
		return -EOPNOTSUPP;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->type = type;
	e->config = event->attr.config;
	e->tid = event->hw.target ? task_pid_nr(event->hw.target) : -1;
	if (own)
		e->rate = (event->attr.config & VPT_NEVER) ? 0 :
			  (event->attr.config & VPT_RATE_MASK) ?: 1;
	else
		e->rate = vpt_generic_rate(event);
	e->pinned = event->attr.pinned;
	e->excl = vpt_excl_mask(&event->attr);
	e->live = true;
	atomic64_set(&e->adds, 0);
	atomic64_set(&e->refused, 0);

	spin_lock_irqsave(&vpt_lock, flags);
	e->id = vpt_next_id++;
	list_add_tail(&e->node, &vpt_events);
	spin_unlock_irqrestore(&vpt_lock, flags);

	event->pmu_private = e;
	event->destroy = vpt_destroy;
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	return 0;
}

/*
 * perf's context clock stamp (see the top of this file); called with the
 * context's lock held, as add(), del(), start(), stop() and read() are.
 * PERF_PMU_CAP_MEDIATED_VPMU came with struct perf_time_ctx (7.x).
 */
static u64 vpt_ctx_stamp(const struct perf_event *event)
{
#ifdef PERF_PMU_CAP_MEDIATED_VPMU
	return READ_ONCE(event->ctx->time.stamp);
#else
	return READ_ONCE(event->ctx->timestamp);
#endif
}

static void vpt_read(struct perf_event *event)
{
	struct vpt_event *e = event->pmu_private;
	struct hw_perf_event *hwc = &event->hw;
	u64 now, prev;

	if (hwc->state & PERF_HES_STOPPED)
		return;
	now = vpt_ctx_stamp(event);
	prev = local64_xchg(&hwc->prev_count, now);
	if (now > prev)
		local64_add((now - prev) * e->rate, &event->count);
}

static void vpt_start(struct perf_event *event, int flags)
{
	struct hw_perf_event *hwc = &event->hw;

	local64_set(&hwc->prev_count, vpt_ctx_stamp(event));
	hwc->state = 0;
}

static void vpt_stop(struct perf_event *event, int flags)
{
	struct hw_perf_event *hwc = &event->hw;

	if (hwc->state & PERF_HES_STOPPED)
		return;
	vpt_read(event);
	hwc->state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static int vpt_add(struct perf_event *event, int flags)
{
	struct vpt_event *e = event->pmu_private;
	unsigned int *used = this_cpu_ptr(&vpt_used);

	if (!e->rate || *used >= slots) {
		atomic64_inc(&e->refused);
		return -EAGAIN;
	}
	(*used)++;
	atomic64_inc(&e->adds);
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		vpt_start(event, flags);
	return 0;
}

static void vpt_del(struct perf_event *event, int flags)
{
	unsigned int *used = this_cpu_ptr(&vpt_used);

	vpt_stop(event, PERF_EF_UPDATE);
	if (!WARN_ON_ONCE(!*used))
		(*used)--;
}

/*
 * 6.1 remembers for the whole boot that a PMU took the hardware context and
 * demotes any later one (this module loaded again) to the invalid context
 * with a warning, after which its task events fail with -EINVAL; a PMU
 * with PERF_PMU_CAP_HETEROGENEOUS_CPUS may share the hardware context.
 * The test VMs have no CPU PMU to share it with.  6.2 gave every PMU its
 * own context and later kernels dropped the capability.
 */
#ifdef PERF_PMU_CAP_HETEROGENEOUS_CPUS
#define VPT_SHARED_HW_CONTEXT	PERF_PMU_CAP_HETEROGENEOUS_CPUS
#else
#define VPT_SHARED_HW_CONTEXT	0
#endif

static struct pmu vpt_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= perf_hw_context,
	.capabilities	= PERF_PMU_CAP_NO_INTERRUPT | VPT_SHARED_HW_CONTEXT,
	.event_init	= vpt_event_init,
	.add		= vpt_add,
	.del		= vpt_del,
	.start		= vpt_start,
	.stop		= vpt_stop,
	.read		= vpt_read,
};

static int vpt_events_show(struct seq_file *m, void *unused)
{
	struct vpt_event *e;
	unsigned long flags;

	seq_puts(m, "id type config tid rate pinned excl adds refused count live\n");
	spin_lock_irqsave(&vpt_lock, flags);
	list_for_each_entry(e, &vpt_events, node)
		seq_printf(m, "%llu %u %llu %d %llu %d %u %lld %lld %llu %d\n",
			   e->id, e->type, e->config, e->tid, e->rate,
			   e->pinned, e->excl, atomic64_read(&e->adds),
			   atomic64_read(&e->refused), e->final, e->live);
	spin_unlock_irqrestore(&vpt_lock, flags);
	return 0;
}

static int vpt_events_open(struct inode *inode, struct file *file)
{
	return single_open(file, vpt_events_show, NULL);
}

/* Writing "reset" forgets the destroyed events (live ones stay listed). */
static ssize_t vpt_events_write(struct file *file, const char __user *ubuf,
				size_t count, loff_t *ppos)
{
	char buf[sizeof(VPT_RESET_CMD) + 1] = "";
	struct vpt_event *e, *tmp;
	unsigned long flags;
	LIST_HEAD(dead);

	if (count > sizeof(buf) - 1)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	if (strcmp(strim(buf), VPT_RESET_CMD))
		return -EINVAL;
	spin_lock_irqsave(&vpt_lock, flags);
	list_for_each_entry_safe(e, tmp, &vpt_events, node)
		if (!e->live)
			list_move(&e->node, &dead);
	spin_unlock_irqrestore(&vpt_lock, flags);
	list_for_each_entry_safe(e, tmp, &dead, node)
		kfree(e);
	return count;
}

static const struct file_operations vpt_events_fops = {
	.owner		= THIS_MODULE,
	.open		= vpt_events_open,
	.read		= seq_read,
	.write		= vpt_events_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* The burning kernel thread, NULL when none; vpt_burn_lock. */
static struct task_struct *vpt_burner;
static DEFINE_MUTEX(vpt_burn_lock);

static int vpt_burn_fn(void *data)
{
	u64 end = local_clock() + (unsigned long)data * NSEC_PER_MSEC;

	while (!kthread_should_stop() && local_clock() < end)
		cond_resched();
	/* Alive until stopped: kthread_stop() needs it. */
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static void vpt_burn_stop(void)
{
	lockdep_assert_held(&vpt_burn_lock);
	if (vpt_burner)
		kthread_stop(vpt_burner);
	vpt_burner = NULL;
}

static ssize_t vpt_burn_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char buf[VPT_BURN_CMD_MAX];
	unsigned int cpu, ms;
	struct task_struct *k;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%u %u", &cpu, &ms) != 2 || !ms ||
	    ms > VPT_BURN_MAX_MS || cpu >= nr_cpu_ids || !cpu_online(cpu))
		return -EINVAL;
	mutex_lock(&vpt_burn_lock);
	vpt_burn_stop();
	k = kthread_create(vpt_burn_fn, (void *)(unsigned long)ms,
			   "vpt_burn/%u", cpu);
	if (IS_ERR(k)) {
		mutex_unlock(&vpt_burn_lock);
		return PTR_ERR(k);
	}
	kthread_bind(k, cpu);
	vpt_burner = k;
	wake_up_process(k);
	mutex_unlock(&vpt_burn_lock);
	return count;
}

static const struct file_operations vpt_burn_fops = {
	.owner		= THIS_MODULE,
	.write		= vpt_burn_write,
	.llseek		= noop_llseek,
};

static int __init vpt_init(void)
{
	int ret;

	if (slots > VPT_MAX_SLOTS) {
		pr_err(VPT_NAME ": slots=%u: at most %d\n", slots,
		       VPT_MAX_SLOTS);
		return -EINVAL;
	}
	if (no_exclude)
		vpt_pmu.capabilities |= PERF_PMU_CAP_NO_EXCLUDE;
	vpt_dir = debugfs_create_dir(VPT_NAME, NULL);
	debugfs_create_file("events", 0600, vpt_dir, NULL, &vpt_events_fops);
	debugfs_create_file("burn", 0200, vpt_dir, NULL, &vpt_burn_fops);
	ret = perf_pmu_register(&vpt_pmu, VPT_NAME, -1);
	if (ret)
		goto err_debugfs;
	pr_info(VPT_NAME ": type %d, %u slots per CPU%s%s\n", vpt_pmu.type,
		slots, claim_generic ? ", claims generic events" : "",
		no_exclude ? ", no exclude" : "");
	return 0;

err_debugfs:
	debugfs_remove_recursive(vpt_dir);
	return ret;
}

static void __exit vpt_exit(void)
{
	struct vpt_event *e, *tmp;

	/* Events pin the module: none is left by now. */
	perf_pmu_unregister(&vpt_pmu);
	debugfs_remove_recursive(vpt_dir);
	mutex_lock(&vpt_burn_lock);
	vpt_burn_stop();
	mutex_unlock(&vpt_burn_lock);
	list_for_each_entry_safe(e, tmp, &vpt_events, node)
		kfree(e);
}

module_init(vpt_init);
module_exit(vpt_exit);
MODULE_DESCRIPTION("vcpuperf test PMU: counter slots, rotation, never-scheduled and pinned-conflict events; a CPU-burning kernel thread");
MODULE_LICENSE("GPL");
