// SPDX-License-Identifier: GPL-2.0
/*
 * --textfile: the counters in node_exporter's textfile-collector format
 * (the Prometheus text exposition format), rewritten atomically (a
 * temporary file, then rename()) as rows arrive.
 *
 * One series per (vm, uuid, vcpu, mode) and event: vcpu is the vCPU
 * index, or "none" for the threads that are no vCPU (summed: no thread
 * ids as labels); mode the modifiers (all, user, kernel, guest, host or
 * a combination joined by "_").  Each series is the sum of the raw
 * (unscaled) deltas of its counters since the collection began, so it is
 * monotonic for the life of the collection even as threads come and go;
 * time_enabled and time_running are summed likewise, to scale with.  The
 * whole-process totals (--per-vm) are families of their own
 * (vcpuperf_process_...), so that a sum over a family never counts a
 * thread twice.
 *
 * A host-wide recording (--all-qemu) sees VMs come and go for as long as
 * it runs: once a VM's QEMU has exited and no other running VM carries
 * its labels, its series are written a last time and then dropped
 * (vc_prom_forget()), so that the file and its state stay the size of the
 * VMs running.  A VM started again under the same labels starts its
 * series from 0, which Prometheus reads as a counter reset.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "common.h"
#include "decode.h"
#include "procs.h"
#include "prom.h"
#include "threads.h"

#define VC_PROM_BASE_LEN	(VCPUPERF_NAME_LEN + 1)
#define VC_PROM_LABEL_LEN	16	/* a vCPU index or "none", a mode */
#define VC_PROM_ESC_MAX		2	/* an escaped byte: \" */

/* The modifiers a mode label names, in label order. */
static const struct {
	__u32 mod;
	const char *word;
} vc_prom_modes[] = {
	{ VCPUPERF_MOD_GUEST, "guest" },
	{ VCPUPERF_MOD_HOST, "host" },
	{ VCPUPERF_MOD_USER, "user" },
	{ VCPUPERF_MOD_KERNEL, "kernel" },
};

/**
 * struct vc_series - one counter series and its time sums
 * @next:	the next series, in order of appearance
 * @process:	a whole-process total (vcpuperf_process_... families)
 * @sched:	a scheduler figure (sched_wait ...): no mode, no times
 * @seconds:	the event counts nanoseconds: shown in seconds
 * @ended:	its VM ended: dropped after the next write
 * @base:	the event's metric name part (page_faults)
 * @vm:		label
 * @uuid:	label
 * @vcpu:	label
 * @mode:	label
 * @value:	sum of the raw value deltas
 * @enabled:	sum of the time_enabled deltas, ns
 * @running:	sum of the time_running deltas, ns
 */
struct vc_series {
	struct vc_series *next;
	bool process;
	bool sched;
	bool seconds;
	bool ended;
	char base[VC_PROM_BASE_LEN];
	char vm[VCPUPERF_VM_NAME_LEN + 1];
	char uuid[VCPUPERF_UUID_LEN + 1];
	char vcpu[VC_PROM_LABEL_LEN];
	char mode[VC_PROM_LABEL_LEN * 2];
	__u64 value;
	__u64 enabled;
	__u64 running;
};

/**
 * struct vc_prom - the textfile and its series
 * @sink:	its callbacks, for the decoder (rows and process rows)
 * @path:	the file
 * @tmp:	the temporary file renamed over it
 * @head:	the series
 * @dirty:	rows were added, or series ended, since the last write
 * @failed:	a write failed (said once)
 */
struct vc_prom {
	struct vc_sink sink;
	const char *path;
	char *tmp;
	struct vc_series *head;
	bool dirty;
	bool failed;
};

/**
 * vc_prom_new() - the textfile's state
 * @path:	the file to write
 *
 * Return: the state, or NULL when out of memory.
 */
struct vc_prom *vc_prom_new(const char *path)
{
	struct vc_prom *pr = calloc(1, sizeof(*pr));
	size_t n = strlen(path) + sizeof(".tmp");

	if (!pr)
		return NULL;
	pr->tmp = malloc(n);
	if (!pr->tmp) {
		free(pr);
		return NULL;
	}
	snprintf(pr->tmp, n, "%s.tmp", path);
	pr->path = path;
	return pr;
}

/**
 * vc_prom_free() - release the state
 * @pr:		the state, or NULL
 */
void vc_prom_free(struct vc_prom *pr)
{
	struct vc_series *s, *next;

	if (!pr)
		return;
	for (s = pr->head; s; s = next) {
		next = s->next;
		free(s);
	}
	free(pr->tmp);
	free(pr);
}

/* The metric name part of an event: lower case, [a-z0-9_], no modifier. */
static void vc_prom_base(const struct vcpuperf_event_desc *ev, char *out)
{
	size_t len = strnlen(ev->name, VCPUPERF_NAME_LEN - 1), i;
	const char *colon = memchr(ev->name, ':', len), *last = NULL;

	while (colon) {
		last = colon;
		colon = memchr(colon + 1, ':', len - (colon + 1 - ev->name));
	}
	if (last && (ev->mods & VCPUPERF_MOD_ALL) && last[1] &&
	    strspn(last + 1, "ukGHD") == len - (size_t)(last + 1 - ev->name))
		len = (size_t)(last - ev->name);
	for (i = 0; i < len; i++) {
		char c = ev->name[i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		out[i] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ?
			 c : '_';
	}
	out[len] = '\0';
}

/* The mode label of an event's modifiers. */
static void vc_prom_mode(__u32 mods, char *out, size_t len)
{
	size_t i, n = 0;

	out[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(vc_prom_modes); i++)
		if (mods & vc_prom_modes[i].mod)
			n += (size_t)snprintf(out + n, len - n, "%s%s",
					      n ? "_" : "",
					      vc_prom_modes[i].word);
	if (!n)
		snprintf(out, len, "all");
}

/* Is event @ev counted in nanoseconds (cpu-clock, task-clock)? */
static bool vc_prom_ns(const struct vcpuperf_event_desc *ev)
{
	return ev->type == PERF_TYPE_SOFTWARE &&
	       (ev->config == PERF_COUNT_SW_CPU_CLOCK ||
		ev->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* The series of @key, made if new; NULL when out of memory. */
static struct vc_series *vc_prom_series(struct vc_prom *pr,
					const struct vc_series *key)
{
	struct vc_series *s, **tail = &pr->head;

	for (s = pr->head; s; s = s->next) {
		tail = &s->next;
		if (s->process == key->process && s->sched == key->sched &&
		    !strcmp(s->base, key->base) &&
		    !strcmp(s->mode, key->mode) && !strcmp(s->vcpu, key->vcpu) &&
		    !strcmp(s->vm, key->vm) && !strcmp(s->uuid, key->uuid)) {
			/* Rows again under ended labels: a VM started again. */
			s->ended = false;
			return s;
		}
	}
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	*s = *key;
	s->next = NULL;
	s->ended = false;
	s->value = 0;
	s->enabled = 0;
	s->running = 0;
	*tail = s;
	return s;
}

/* Add the deltas of one row to its series. */
static void vc_prom_add(struct vc_prom *pr, struct vc_series *key,
			const struct vcpuperf_event_desc *ev, __u32 nr,
			__u32 mask, const struct vc_row *row)
{
	struct vc_series *s;
	__u32 i;

	for (i = 0; i < nr; i++) {
		if (!(mask & (1U << i)))
			continue;
		vc_prom_base(&ev[i], key->base);
		vc_prom_mode(ev[i].mods, key->mode, sizeof(key->mode));
		key->seconds = vc_prom_ns(&ev[i]);
		s = vc_prom_series(pr, key);
		if (!s)
			continue;
		s->value += row->d[i].value;
		s->enabled += row->d[i].enabled;
		s->running += row->d[i].running;
	}
	pr->dirty = true;
}

/* The scheduler figures as series: base name, in ns, kept without SCHED_INFO. */
static const struct {
	const char *base;
	bool seconds;
	bool always;
} vc_prom_sched[] = {
	{ "sched_run", true, true },
	{ "sched_wait", true, false },
	{ "sched_timeslices", false, false },
	{ "sched_voluntary_switches", false, true },
	{ "sched_involuntary_switches", false, true },
	{ "sched_migrations", false, true },
};

/* Add the scheduler figures of one row (if it has them) to their series. */
static void vc_prom_add_sched(struct vc_prom *pr, struct vc_series *key,
			      const struct vcpuperf_sched *d)
{
	const __u64 v[] = { d->run_ns, d->wait_ns, d->timeslices,
			    d->voluntary, d->involuntary, d->migrations };
	bool info = d->valid & VCPUPERF_SCHED_INFO;
	struct vc_series *s;
	size_t i;

	_Static_assert(ARRAY_SIZE(v) == ARRAY_SIZE(vc_prom_sched),
		       "one value per scheduler series");
	key->sched = true;
	key->mode[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(vc_prom_sched); i++) {
		if (!vc_prom_sched[i].always && !info)
			continue;
		snprintf(key->base, sizeof(key->base), "%s",
			 vc_prom_sched[i].base);
		key->seconds = vc_prom_sched[i].seconds;
		s = vc_prom_series(pr, key);
		if (s)
			s->value += v[i];
	}
}

/*
 * Who took a thread's CPU (--who), as series of the scheduler's kind: its
 * wait by what ran instead (sched_wait_KIND, seconds) and its involuntary
 * switches by what was switched in (sched_preempted_KIND).  None where
 * the module could not keep them; the other VMs' parts only in the rows.
 */
static void vc_prom_add_who(struct vc_prom *pr, struct vc_series *key,
			    const struct vcpuperf_who *d)
{
	struct vc_series *s;
	__u32 i;

	if (!d->valid)
		return;
	key->sched = true;
	key->mode[0] = '\0';
	for (i = 0; i < 2 * VCPUPERF_WHO_NR; i++) {
		bool wait = i < VCPUPERF_WHO_NR;
		__u32 kind = wait ? i : i - VCPUPERF_WHO_NR;

		if (!wait && kind == VCPUPERF_WHO_IDLE)
			continue;
		snprintf(key->base, sizeof(key->base), "sched_%s_%s",
			 wait ? "wait" : "preempted", vp_who_kind_name(kind));
		key->seconds = wait;
		s = vc_prom_series(pr, key);
		if (s)
			s->value += wait ? d->wait_ns[kind] :
				    d->preempted[kind];
	}
}

/* The labels every series of a process has. */
static void vc_prom_identity(struct vc_series *key, const struct vc_proc *p)
{
	memset(key, 0, sizeof(*key));
	if (!p)
		return;
	snprintf(key->vm, sizeof(key->vm), "%s", p->vm);
	snprintf(key->uuid, sizeof(key->uuid), "%s", p->uuid);
}

/* A thread's row, added to its series. */
static void vc_prom_row(struct vc_sink *sink, const struct vc_tid *t,
			const struct vc_row *row)
{
	struct vc_prom *pr = container_of(sink, struct vc_prom, sink);
	struct vc_series key;

	vc_prom_identity(&key, t->proc);
	if (t->vcpu == VCPUPERF_NO_VCPU)
		snprintf(key.vcpu, sizeof(key.vcpu), "none");
	else
		snprintf(key.vcpu, sizeof(key.vcpu), "%d", t->vcpu);
	vc_prom_add(pr, &key, t->ev, row->s->nr_events, row->s->counting_mask,
		    row);
	if (row->sched)
		vc_prom_add_sched(pr, &key, row->sched);
	if (row->who)
		vc_prom_add_who(pr, &key, row->who);
}

/* A process's totals (its process sample), added to their series. */
static void vc_prom_vm_row(struct vc_sink *sink, const struct vc_proc *p,
			   const struct vc_row *row)
{
	struct vc_prom *pr = container_of(sink, struct vc_prom, sink);
	struct vc_series key;

	/* Without process totals only the end comes, counting nothing. */
	if (!(p->flags & VCPUPERF_ATTACH_PROCESS_TOTALS))
		return;
	vc_prom_identity(&key, p);
	key.process = true;
	vc_prom_add(pr, &key, p->ev, row->ps->nr_events,
		    row->ps->counting_mask, row);
	if (row->sched)
		vc_prom_add_sched(pr, &key, row->sched);
}

/**
 * vc_prom_sink() - the textfile as a sink of the decoder
 * @pr:		the state
 *
 * It takes the rows and the process rows, and keeps no per-thread data:
 * give it to vc_tee_init() as the second sink.
 *
 * Return: its sink.
 */
struct vc_sink *vc_prom_sink(struct vc_prom *pr)
{
	pr->sink.row = vc_prom_row;
	pr->sink.process_row = vc_prom_vm_row;
	return &pr->sink;
}

/**
 * vc_prom_dirty() - were rows added since the last write?
 * @pr:		the state
 *
 * Return: true if so.
 */
bool vc_prom_dirty(const struct vc_prom *pr)
{
	return pr->dirty;
}

/**
 * vc_prom_forget() - drop a VM's series after the next write
 * @pr:		the state
 * @vm:		the VM's name label
 * @uuid:	its uuid label
 *
 * For a VM whose QEMU has exited, when no running VM has the same labels:
 * its series (per vCPU and whole-process) keep their final values for one
 * more write of the file, then go.
 */
void vc_prom_forget(struct vc_prom *pr, const char *vm, const char *uuid)
{
	struct vc_series *s;

	for (s = pr->head; s; s = s->next) {
		if (!strcmp(s->vm, vm) && !strcmp(s->uuid, uuid)) {
			s->ended = true;
			pr->dirty = true;
		}
	}
}

/* Free the series that ended: they were just written a last time. */
static void vc_prom_prune(struct vc_prom *pr)
{
	struct vc_series **pp = &pr->head, *s;

	while ((s = *pp)) {
		if (s->ended) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

/* A label value, escaped as the exposition format wants. */
static void vc_prom_label(FILE *f, const char *name, const char *v,
			  bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
	fputc('"', f);
}

/* {vm,uuid[,vcpu],mode[,event]} of a series. */
static void vc_prom_labels(FILE *f, const struct vc_series *s, bool event)
{
	fputc('{', f);
	vc_prom_label(f, "vm", s->vm, true);
	vc_prom_label(f, "uuid", s->uuid, false);
	if (!s->process)
		vc_prom_label(f, "vcpu", s->vcpu, false);
	if (!s->sched)
		vc_prom_label(f, "mode", s->mode, false);
	if (event)
		vc_prom_label(f, "event", s->base, false);
	fputc('}', f);
}

static void vc_prom_ns_value(FILE *f, __u64 ns)
{
	fprintf(f, " %llu.%09llu\n", (unsigned long long)(ns / VP_NS_PER_S),
		(unsigned long long)(ns % VP_NS_PER_S));
}

/* What a family of series shows. */
enum vc_prom_what {
	VC_PROM_COUNT,
	VC_PROM_ENABLED,
	VC_PROM_RUNNING,
	VC_PROM_RATIO,
};

/* The full name of family @what for series @s. */
static void vc_prom_name(char *buf, size_t len, const struct vc_series *s,
			 enum vc_prom_what what)
{
	const char *scope = s->process ? "process_" : "";

	switch (what) {
	case VC_PROM_COUNT:
		snprintf(buf, len, "vcpuperf_%s%s%s_total", scope, s->base,
			 s->seconds ? "_seconds" : "");
		break;
	case VC_PROM_ENABLED:
		snprintf(buf, len, "vcpuperf_%stime_enabled_seconds_total",
			 scope);
		break;
	case VC_PROM_RUNNING:
		snprintf(buf, len, "vcpuperf_%stime_running_seconds_total",
			 scope);
		break;
	case VC_PROM_RATIO:
		snprintf(buf, len, "vcpuperf_%sscaling_ratio", scope);
		break;
	}
}

static const char *const vc_prom_help[] = {
	[VC_PROM_COUNT] = "counted by vcpuperf since the collection began, "
			  "raw (multiply by time_enabled/time_running to scale)",
	[VC_PROM_ENABLED] = "time the counters of the series were enabled, "
			    "summed over its threads",
	[VC_PROM_RUNNING] = "time the counters of the series were on the PMU, "
			    "summed over its threads",
	[VC_PROM_RATIO] = "time_running / time_enabled since the collection "
			  "began (1: never multiplexed; NaN: never enabled)",
};

static const char vc_prom_sched_help[] =
	"kept by the scheduler for the series' threads, summed since the "
	"collection began (vcpuperf(4))";

/* One sample line of family @what for series @s. */
static void vc_prom_sample(FILE *f, const struct vc_series *s,
			   enum vc_prom_what what, const char *name)
{
	fputs(name, f);
	vc_prom_labels(f, s, what != VC_PROM_COUNT);
	switch (what) {
	case VC_PROM_COUNT:
		if (s->seconds)
			vc_prom_ns_value(f, s->value);
		else
			fprintf(f, " %llu\n", (unsigned long long)s->value);
		break;
	case VC_PROM_ENABLED:
		vc_prom_ns_value(f, s->enabled);
		break;
	case VC_PROM_RUNNING:
		vc_prom_ns_value(f, s->running);
		break;
	case VC_PROM_RATIO:
		if (s->enabled)
			fprintf(f, " %.6f\n",
				(double)s->running / (double)s->enabled);
		else
			fputs(" NaN\n", f);
		break;
	}
}

/*
 * Is series @s in the families of @what?  A scheduler figure is no
 * counter: it has no times and no ratio.
 */
static bool vc_prom_in(const struct vc_series *s, enum vc_prom_what what)
{
	return !s->sched || what == VC_PROM_COUNT;
}

/* Every family of @what, each with its HELP and TYPE lines once. */
static void vc_prom_families(FILE *f, const struct vc_prom *pr,
			     enum vc_prom_what what)
{
	char name[VC_PROM_BASE_LEN + 64], other[VC_PROM_BASE_LEN + 64];
	const struct vc_series *s, *o;
	bool seen;

	for (s = pr->head; s; s = s->next) {
		if (!vc_prom_in(s, what))
			continue;
		vc_prom_name(name, sizeof(name), s, what);
		seen = false;
		for (o = pr->head; o != s && !seen; o = o->next) {
			vc_prom_name(other, sizeof(other), o, what);
			seen = vc_prom_in(o, what) && !strcmp(name, other);
		}
		if (seen)
			continue;
		fprintf(f, "# HELP %s %s%s %s\n", name,
			what == VC_PROM_COUNT ? s->base : "",
			what == VC_PROM_COUNT ? ":" : "",
			s->sched ? vc_prom_sched_help : vc_prom_help[what]);
		fprintf(f, "# TYPE %s %s\n", name,
			what == VC_PROM_RATIO ? "gauge" : "counter");
		for (o = s; o; o = o->next) {
			vc_prom_name(other, sizeof(other), o, what);
			if (vc_prom_in(o, what) && !strcmp(name, other))
				vc_prom_sample(f, o, what, name);
		}
	}
}

/**
 * vc_prom_write() - replace the textfile with the current totals
 * @pr:		the state
 * @up:		the value of vcpuperf_up (false once the collection ended)
 *
 * Written to PATH.tmp (which node_exporter ignores: it reads *.prom
 * only), then renamed over PATH.
 *
 * Return: 0, or -1 (said once on standard error).
 */
int vc_prom_write(struct vc_prom *pr, bool up)
{
	FILE *f = fopen(pr->tmp, "w");
	enum vc_prom_what what;
	int err;

	pr->dirty = false;
	if (!f)
		goto fail;
	fputs("# HELP vcpuperf_up 1 while vcpuperf-cat collects, 0 once the collection ended\n"
	      "# TYPE vcpuperf_up gauge\n", f);
	fprintf(f, "vcpuperf_up %d\n", up ? 1 : 0);
	for (what = VC_PROM_COUNT; what <= VC_PROM_RATIO; what++)
		vc_prom_families(f, pr, what);
	err = ferror(f);
	if (fclose(f) || err)
		goto fail;
	if (rename(pr->tmp, pr->path))
		goto fail;
	vc_prom_prune(pr);
	return 0;

fail:
	if (!pr->failed)
		fprintf(stderr, VC_NAME ": --textfile %s: %s\n", pr->path,
			strerror(errno ? errno : EIO));
	pr->failed = true;
	return -1;
}
