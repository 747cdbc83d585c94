// SPDX-License-Identifier: GPL-2.0
/*
 * Episode files: a host-wide recording (--all-qemu) writes each VM run to
 * a file of its own in the output directory, NAME-YYYYmmddTHHMMSSZ.jsonl
 * (NAME the VM's name, else qemu-PID; the time, UTC, of its process
 * record), holding that VM's rows and lifecycle lines only, in the order
 * of the stream, as a --qemu recording's single output would.
 *
 * This is a sink for the decoder (struct vc_sink) that finds each
 * record's process and hands the record to that process's own JSONL sink
 * (output.c): a thread's by its process, a per-thread record of a thread
 * never started by the id it carries, a process's by its pid.  An
 * episode opens with its process record and closes after the VM's
 * perf_finished, written for its final process sample (the module queues
 * one for every process it stops sampling: QEMU exited, stop, detach).
 * What belongs to no VM goes to the host sink: the session's end; a
 * dropped record and a sequence gap go there and to every open episode,
 * whose rows they may concern.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "episodes.h"
#include "lifecycle.h"
#include "prom.h"
#include "rows.h"

/* Output buffer of an episode: many are open at once. */
#define VC_EPISODE_BUFSZ	(256U * 1024U)
/*
 * Once its first row is out, an episode is written at most this often
 * (and when its buffer fills, and when it closes).
 */
#define VC_EPISODE_WRITE_NS	VP_NS_PER_S
/* Files tried under one name and second before giving up. */
#define VC_EPISODE_TRIES	100
#define VC_STAMP_LEN		sizeof("YYYYmmddTHHMMSSZ")

static struct vc_episode *vc_episode_find(struct vc_episodes *e, __u32 pid)
{
	struct vc_episode *ep;

	for (ep = e->open; ep; ep = ep->next)
		if (ep->pid == pid)
			return ep;
	return NULL;
}

static void vc_episodes_fail(struct vc_episodes *e, int err)
{
	if (!e->err)
		e->err = err;
}

/* @name as a file name: [A-Za-z0-9._-], no leading dot, never empty. */
static void vc_file_name(char *out, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		      (c == '.' && i)))
			c = '_';
		out[i] = c;
	}
	out[i] = '\0';
	if (!i)
		snprintf(out, len, "vm");
}

/* Create a new file for episode @name begun at @t_wall_ns (NULL: errno). */
static FILE *vc_episode_create(struct vc_episodes *e, const char *name,
			       __u64 t_wall_ns, char **pathp)
{
	char base[VCPUPERF_VM_NAME_LEN], stamp[VC_STAMP_LEN];
	char path[PATH_MAX];
	time_t secs = (time_t)(t_wall_ns / VP_NS_PER_S);
	struct tm tm;
	int fd = -1, n;

	vc_file_name(base, sizeof(base), name);
	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (n = 0; n < VC_EPISODE_TRIES && fd < 0; n++) {
		if (n)
			snprintf(path, sizeof(path), "%s/%s-%s-%d.jsonl",
				 e->dir, base, stamp, n);
		else
			snprintf(path, sizeof(path), "%s/%s-%s.jsonl", e->dir,
				 base, stamp);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			return NULL;
	}
	if (fd < 0)
		return NULL;
	*pathp = strdup(path);
	if (!*pathp) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	return fdopen(fd, "w");
}

/*
 * Open the episode of process @pid (VM @vm, @uuid), named @name, begun at
 * @t_wall_ns.
 */
static struct vc_episode *vc_episode_open(struct vc_episodes *e, __u32 pid,
					  const char *vm, const char *uuid,
					  const char *name, __u64 t_wall_ns)
{
	struct vc_episode *ep = calloc(1, sizeof(*ep));

	if (!ep)
		goto err;
	ep->pid = pid;
	snprintf(ep->vm, sizeof(ep->vm), "%s", vm);
	snprintf(ep->uuid, sizeof(ep->uuid), "%s", uuid);
	ep->fp = vc_episode_create(e, name, t_wall_ns, &ep->path);
	if (!ep->fp)
		goto err_free;
	if (json_init_size(&ep->w, ep->fp, ep->path, VC_EPISODE_BUFSZ))
		goto err_close;
	vc_jsonl_init(&ep->out, &ep->w, &ep->w, e->mono_origin, e->raw);
	ep->next = e->open;
	e->open = ep;
	e->opened++;
	return ep;

err_close:
	fclose(ep->fp);
	unlink(ep->path);
	free(ep->path);
err_free:
	free(ep);
err:
	vc_episodes_fail(e, errno ? errno : ENOMEM);
	fprintf(stderr, VC_NAME ": %s: episode of %s: %s\n", e->dir, name,
		strerror(errno ? errno : ENOMEM));
	return NULL;
}

/* Write out and close an episode, and forget it. */
static void vc_episode_close(struct vc_episodes *e, struct vc_episode *ep)
{
	struct vc_episode **pp;

	for (pp = &e->open; *pp; pp = &(*pp)->next) {
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	}
	if (json_flush(&ep->w)) {
		vc_episodes_fail(e, ep->w.err);
		fprintf(stderr, VC_NAME ": writing %s: %s\n", ep->path,
			strerror(ep->w.err));
	}
	json_free(&ep->w);
	if (fclose(ep->fp)) {
		vc_episodes_fail(e, errno);
		fprintf(stderr, VC_NAME ": closing %s: %s\n", ep->path,
			strerror(errno));
	}
	free(ep->path);
	free(ep);
}

/* An ended VM's textfile series go, unless a running VM has its labels. */
static void vc_episode_forget(struct vc_episodes *e,
			      const struct vc_episode *ep)
{
	const struct vc_episode *o;

	if (!e->prom)
		return;
	for (o = e->open; o; o = o->next)
		if (o != ep && !strcmp(o->vm, ep->vm) &&
		    !strcmp(o->uuid, ep->uuid))
			return;
	vc_prom_forget(e->prom, ep->vm, ep->uuid);
}

/* The sink of process @pid: its episode's, else the host's. */
static struct vc_sink *vc_route(struct vc_episodes *e, __u32 pid)
{
	struct vc_episode *ep = vc_episode_find(e, pid);

	return ep ? &ep->out.sink : &e->host->sink;
}

/* The process a per-thread record is about, 0 for a session record. */
static __u32 vc_rec_pid(const struct vcpuperf_rec *rec, const struct vc_tid *t)
{
	if (t && t->proc)
		return t->proc->pid;
	if (!rec->tid)
		return 0;
	/* Every per-thread record begins with the thread's identity. */
	return ((const struct vcpuperf_started *)rec)->id.pid;
}

static void *vc_ep_thread_start(struct vc_sink *sink, const struct vc_tid *t,
				void *data)
{
	return vc_row_thread_start(sink, t, data);
}

static void vc_ep_thread_free(struct vc_sink *sink, void *data)
{
	vc_row_thread_free(sink, data);
}

static void *vc_ep_process_start(struct vc_sink *sink,
				 const struct vc_proc *p, void *data)
{
	return vc_row_process_start(sink, p, data);
}

static void vc_ep_process_free(struct vc_sink *sink, void *data)
{
	vc_row_process_free(sink, data);
}

static void vc_ep_row(struct vc_sink *sink, const struct vc_tid *t,
		      const struct vc_row *row)
{
	struct vc_episodes *e = container_of(sink, struct vc_episodes, sink);
	struct vc_episode *ep = vc_episode_find(e, t->proc ? t->proc->pid : 0);
	struct vc_sink *to = ep ? &ep->out.sink : &e->host->sink;

	to->row(to, t, row);
	if (ep)
		ep->row_held = true;
}

static void vc_ep_lifecycle(struct vc_sink *sink,
			    const struct vcpuperf_rec *rec,
			    const struct vc_tid *t, __u64 rows)
{
	struct vc_episodes *e = container_of(sink, struct vc_episodes, sink);
	struct vc_episode *ep;
	struct vc_sink *to;

	if (rec->type == VCPUPERF_REC_DROPPED)
		for (ep = e->open; ep; ep = ep->next)
			ep->out.sink.lifecycle(&ep->out.sink, rec, t, rows);
	to = vc_route(e, vc_rec_pid(rec, t));
	to->lifecycle(to, rec, t, rows);
}

static void vc_ep_gap(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      __u64 expected, bool explained)
{
	struct vc_episodes *e = container_of(sink, struct vc_episodes, sink);
	struct vc_episode *ep;

	for (ep = e->open; ep; ep = ep->next)
		ep->out.sink.gap(&ep->out.sink, rec, expected, explained);
	e->host->sink.gap(&e->host->sink, rec, expected, explained);
}

static void vc_ep_process(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			  const struct vc_proc *p)
{
	struct vc_episodes *e = container_of(sink, struct vc_episodes, sink);
	struct vc_episode *ep = vc_episode_find(e, p->pid);
	char name[sizeof(p->vm)];

	/* A process record for a pid with an episode open: a new run. */
	if (ep)
		vc_episode_close(e, ep);
	if (p->vm[0])
		memcpy(name, p->vm, sizeof(name));
	else
		snprintf(name, sizeof(name), "qemu-%u", p->pid);
	ep = vc_episode_open(e, p->pid, p->vm, p->uuid, name, rec->t_wall_ns);
	if (ep)
		ep->out.sink.process(&ep->out.sink, rec, p);
	else
		e->host->sink.process(&e->host->sink, rec, p);
}

static void vc_ep_process_row(struct vc_sink *sink, const struct vc_proc *p,
			      const struct vc_row *row)
{
	struct vc_episodes *e = container_of(sink, struct vc_episodes, sink);
	struct vc_episode *ep = vc_episode_find(e, p->pid);
	struct vc_sink *to = ep ? &ep->out.sink : &e->host->sink;

	to->process_row(to, p, row);
	if (ep)
		ep->row_held = true;
	/* The VM's perf_finished is written: its episode is complete. */
	if (ep && (row->ps->flags & VCPUPERF_SAMPLE_FINAL)) {
		if (!e->ending)
			vc_episode_forget(e, ep);
		vc_episode_close(e, ep);
	}
}

/**
 * vc_episodes_init() - set up the episode sink
 * @e:		the sink; give &@e->sink to vc_dec_init()
 * @dir:	the output directory, existing
 * @host:	the sink of what belongs to no VM
 * @mono_origin: subtracted from every t_mono_ns written
 * @raw:	add cumulative raw values to each row
 * @prom:	the textfile every row goes to, or NULL
 */
void vc_episodes_init(struct vc_episodes *e, const char *dir,
		      struct vc_jsonl *host, __u64 mono_origin, bool raw,
		      struct vc_prom *prom)
{
	memset(e, 0, sizeof(*e));
	e->sink.thread_start = vc_ep_thread_start;
	e->sink.thread_free = vc_ep_thread_free;
	e->sink.process_start = vc_ep_process_start;
	e->sink.process_free = vc_ep_process_free;
	e->sink.row = vc_ep_row;
	e->sink.lifecycle = vc_ep_lifecycle;
	e->sink.gap = vc_ep_gap;
	e->sink.process = vc_ep_process;
	e->sink.process_row = vc_ep_process_row;
	e->dir = dir;
	e->host = host;
	e->mono_origin = mono_origin;
	e->raw = raw;
	e->prom = prom;
}

/**
 * vc_episodes_flush() - write out what the open episodes hold, when due
 * @e:		the sink
 * @now:	CLOCK_MONOTONIC now
 * @all:	write every episode now (the caller is about to wait long or
 *		to end)
 *
 * Otherwise an episode is written until its first row is out, then at
 * most once in VC_EPISODE_WRITE_NS: a host of many VMs sampled every few
 * ms makes one write per VM and second instead of one per VM and pass.
 * What an episode holds is written anyway when its buffer fills and when
 * it closes.
 *
 * Return: 0, or the errno of the first write that failed (said once).
 */
int vc_episodes_flush(struct vc_episodes *e, __u64 now, bool all)
{
	struct vc_episode *ep;

	for (ep = e->open; ep; ep = ep->next) {
		if (!all && ep->row_out &&
		    now - ep->written_ns < VC_EPISODE_WRITE_NS)
			continue;
		if (!ep->w.err && json_flush(&ep->w)) {
			vc_episodes_fail(e, ep->w.err);
			fprintf(stderr, VC_NAME ": writing %s: %s\n",
				ep->path, strerror(ep->w.err));
		}
		ep->written_ns = now;
		ep->row_out = ep->row_held;
	}
	return e->err;
}

/**
 * vc_episodes_close_all() - close every episode still open
 * @e:		the sink
 *
 * At the end of the run: an episode still open had no perf_finished (the
 * stream ended early).
 *
 * Return: 0, or the errno of the first failure of the run.
 */
int vc_episodes_close_all(struct vc_episodes *e)
{
	while (e->open)
		vc_episode_close(e, e->open);
	return e->err;
}

/**
 * vc_episodes_attach_failed() - a VM that could not be attached
 * @e:		the sink
 * @pid:	its QEMU
 * @name:	its episode name (VM name, else qemu-PID)
 * @vm:		its VM name, "" for none
 * @uuid:	its UUID, "" for none
 * @err:	positive errno of the attach
 * @reason:	the module's reason, "" for none
 *
 * An episode of its own that says so (perf_attach_failed) and nothing
 * else: never silence.
 */
void vc_episodes_attach_failed(struct vc_episodes *e, int pid,
			       const char *name, const char *vm,
			       const char *uuid, int err, const char *reason)
{
	struct timespec ts;
	struct vc_episode *ep;
	__u64 wall;

	clock_gettime(CLOCK_REALTIME, &ts);
	wall = (__u64)ts.tv_sec * VP_NS_PER_S + (__u64)ts.tv_nsec;
	ep = vc_episode_open(e, (__u32)pid, vm, uuid, name, wall);
	if (!ep)
		return;
	vc_write_attach_failed(&ep->out, pid, vm, uuid, err, reason);
	vc_episode_close(e, ep);
}
