// SPDX-License-Identifier: GPL-2.0
/*
 * vcpuperf-cat: attach vcpuperf to a QEMU process (or any thread), read
 * its record stream and write JSONL rows and lifecycle events in the
 * schema of the Python perf-stat collector that vcpuperf replaces.
 *
 * The run lives here: opening the stream and the outputs, the control
 * writes, signal handling and the read loop.  The command line is
 * options.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"
#include "control.h"
#include "decode.h"
#include "episodes.h"
#include "host.h"
#include "jsonl.h"
#include "loop.h"
#include "options.h"
#include "output.h"
#include "prom.h"
#include "qemus.h"
#include "rows.h"
#include "tee.h"

#define VC_RECORD_BUFSZ		(1024U * 1024U)	/* stdio buffer of --record */
#define VC_DURATION_LEN		32	/* "NNNus": any valid interval */

/**
 * struct vc_outputs - where a run writes
 * @out:	rows (stdout unless -o)
 * @evout:	lifecycle lines with --events-out, else NULL
 * @record:	copy of the raw stream with --record, else NULL
 * @rows:	the JSON writer on @out
 * @events_w:	the JSON writer on @evout
 * @events:	&@events_w, or &@rows when lines go inline
 */
struct vc_outputs {
	FILE *out;
	FILE *evout;
	FILE *record;
	struct json_writer rows;
	struct json_writer events_w;
	struct json_writer *events;
};

static FILE *vc_open_out(const char *path)
{
	FILE *fp;

	if (!path || !strcmp(path, "-"))
		return stdout;
	fp = fopen(path, "w");
	if (!fp)
		fprintf(stderr, VC_NAME ": %s: %s\n", path, strerror(errno));
	return fp;
}

/* Open the replay file or stdin: the fd, or -1 after a message. */
static int vc_open_replay(const char *replay)
{
	int fd;

	if (!strcmp(replay, "-"))
		return STDIN_FILENO;
	fd = open(replay, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fprintf(stderr, VC_NAME ": %s: %s\n", replay, strerror(errno));
	return fd;
}

/* Open the stream: replay file or the module's files; 0 or -1. */
static int vc_open_stream(const struct vc_opts *o, struct vc_files *files)
{
	if (o->replay) {
		files->ctl = -1;
		files->stream = vc_open_replay(o->replay);
	} else if (vc_open_module(o->dir, o->device, o->kind != 0, files)) {
		files->stream = -1;
	}
	return files->stream < 0 ? -1 : 0;
}

static void vc_close_stream(struct vc_files *files)
{
	if (files->ctl >= 0 && files->ctl != files->stream)
		close(files->ctl);
	if (files->stream != STDIN_FILENO)
		close(files->stream);
}

/* Close what is not stdout; 0, or 1 after a message. */
static int vc_close_file(FILE *fp, const char *path)
{
	if (!fp || fp == stdout || !fclose(fp))
		return 0;
	fprintf(stderr, VC_NAME ": closing %s: %s\n", path, strerror(errno));
	return 1;
}

/* Open -o, --events-out and --record; 0 or -1 after a message. */
static int vc_open_outputs(const struct vc_opts *o, struct vc_outputs *w)
{
	memset(w, 0, sizeof(*w));
	w->events = &w->rows;
	w->out = vc_open_out(o->out);
	if (!w->out)
		return -1;
	if (json_init(&w->rows, w->out, o->out ? o->out : "standard output"))
		goto err_out;
	if (o->events_out) {
		w->evout = vc_open_out(o->events_out);
		if (!w->evout)
			goto err_rows;
		if (json_init(&w->events_w, w->evout, o->events_out))
			goto err_evout;
		w->events = &w->events_w;
	}
	if (o->record) {
		w->record = fopen(o->record, "w");
		if (!w->record) {
			fprintf(stderr, VC_NAME ": %s: %s\n", o->record,
				strerror(errno));
			goto err_events;
		}
		setvbuf(w->record, NULL, _IOFBF, VC_RECORD_BUFSZ);
	}
	return 0;

err_events:
	if (w->events != &w->rows)
		json_free(w->events);
err_evout:
	vc_close_file(w->evout, o->events_out);
err_rows:
	json_free(&w->rows);
err_out:
	vc_close_file(w->out, o->out);
	return -1;
}

/* Write out what is pending and close the outputs; 0, or 1 on an error. */
static int vc_close_outputs(const struct vc_opts *o, struct vc_outputs *w)
{
	int rc = 0;

	if (json_flush(&w->rows)) {
		fprintf(stderr, VC_NAME ": writing %s: %s\n", w->rows.path,
			strerror(w->rows.err));
		rc = 1;
	}
	if (w->events != &w->rows && json_flush(w->events)) {
		fprintf(stderr, VC_NAME ": writing %s: %s\n", w->events->path,
			strerror(w->events->err));
		rc = 1;
	}
	rc |= vc_close_file(w->out, o->out);
	rc |= vc_close_file(w->evout, o->events_out);
	rc |= vc_close_file(w->record, o->record);
	json_free(&w->rows);
	if (w->events != &w->rows)
		json_free(w->events);
	return rc;
}

/* What went wrong in the stream, on stderr; 1 if that fails the run. */
static int vc_report(const struct vc_stats *st)
{
	int rc = 0;

	if (st->unexplained) {
		fprintf(stderr, VC_NAME ": %llu sequence gap(s) not explained "
			"by a dropped record\n",
			(unsigned long long)st->unexplained);
		rc = 1;
	}
	if (st->bad) {
		fprintf(stderr, VC_NAME ": %llu malformed record(s) skipped\n",
			(unsigned long long)st->bad);
		rc = 1;
	}
	if (st->orphans)
		fprintf(stderr, VC_NAME ": %llu sample(s) of threads without "
			"a started record skipped\n",
			(unsigned long long)st->orphans);
	return rc;
}

/* Send ring, read mode and interval (if given): 0 or -1. */
static int vc_configure(int ctl, const char *dir, const struct vc_opts *o,
			const char *interval)
{
	char cmd[sizeof("interval ") + VC_DURATION_LEN];

	if (o->ring) {
		snprintf(cmd, sizeof(cmd), "ring %s", o->ring);
		if (vc_control(ctl, dir, cmd))
			return -1;
	}
	if (o->read) {
		snprintf(cmd, sizeof(cmd), "read %s", o->read);
		if (vc_control(ctl, dir, cmd))
			return -1;
	}
	if (interval) {
		snprintf(cmd, sizeof(cmd), "interval %s", interval);
		if (vc_control(ctl, dir, cmd))
			return -1;
	}
	return 0;
}

/* Configure the collection, then attach: 0 or -1. */
static int vc_attach(int ctl, const char *dir, const char *attach,
		     const struct vc_opts *o, const char *interval)
{
	if (vc_configure(ctl, dir, o, interval))
		return -1;
	return vc_control(ctl, dir, attach) ? -1 : 0;
}

/* Attach (with a target) and read the stream to its end: 0 or 1. */
static int vc_collect(const struct vc_opts *o, const char *attach,
		      __u64 interval_ns, struct vc_loop *l,
		      const struct vc_files *files)
{
	char ivl[VC_DURATION_LEN];

	if (o->kind) {
		if (o->interval)
			vp_format_duration(ivl, sizeof(ivl), interval_ns);
		/* --all-qemu: each VM is attached when a scan finds it. */
		if (o->all_qemu ?
		    vc_configure(files->ctl, o->dir, o,
				 o->interval ? ivl : NULL) :
		    vc_attach(files->ctl, o->dir, attach, o,
			      o->interval ? ivl : NULL))
			return 1;
		l->ctl = files->ctl;
		/* Our own collection's ring, unless its size was given. */
		l->ring.on = !o->ring && files->ctl == files->stream;
	}
	if (o->duration_ns)
		l->deadline = vc_now_ns() + o->duration_ns;
	return vc_read_loop(l);
}

/* --output-dir: made if missing (its parent must exist); 0 or -1. */
static int vc_make_dir(const char *dir)
{
	struct stat st;

	if (!mkdir(dir, 0755) || (errno == EEXIST && !stat(dir, &st) &&
				  S_ISDIR(st.st_mode)))
		return 0;
	fprintf(stderr, VC_NAME ": --output-dir %s: %s\n", dir,
		errno == EEXIST ? "not a directory" : strerror(errno));
	return -1;
}

static int vc_run(const struct vc_opts *o, const char *attach,
		  __u64 interval_ns)
{
	struct vc_outputs w;
	struct vc_decoder d;
	struct vc_jsonl jsonl;
	struct vc_episodes eps;
	struct vc_host host;
	struct vc_prom *prom = NULL;
	struct vc_sink *sink;
	struct vc_tee tee;
	struct vc_files files;
	struct vc_loop l;
	int rc;

	if (o->all_qemu && vc_make_dir(o->output_dir))
		return VC_EXIT_RUNTIME;
	if (vc_open_stream(o, &files))
		return VC_EXIT_RUNTIME;
	if (vc_open_outputs(o, &w))
		goto err_stream;
	if (o->textfile) {
		prom = vc_prom_new(o->textfile);
		if (!prom) {
			fprintf(stderr, VC_NAME ": out of memory\n");
			goto err_outputs;
		}
	}
	vc_jsonl_init(&jsonl, &w.rows, w.events, o->mono_origin, o->raw);
	/*
	 * Rows name the other VMs that took a vCPU's CPU (--who) from this
	 * host's processes; a replayed stream's pids are another moment's.
	 */
	if (!o->replay)
		vc_rows_set_vm_namer(vc_vm_name_of);
	/* --all-qemu: each VM's records to its episode, the rest to -o. */
	vc_episodes_init(&eps, o->output_dir, &jsonl, o->mono_origin, o->raw,
			 prom);
	sink = o->all_qemu ? &eps.sink : &jsonl.sink;
	/* --textfile: every row to the textfile too. */
	if (prom) {
		vc_tee_init(&tee, sink, vc_prom_sink(prom));
		sink = &tee.sink;
	}
	if (vc_dec_init(&d, sink)) {
		fprintf(stderr, VC_NAME ": out of memory\n");
		goto err_outputs;
	}
	vc_host_init(&host, &eps, files.ctl, o->events, o->mods, o->flags,
		     o->match, o->scan_ns);

	memset(&l, 0, sizeof(l));
	l.fd = files.stream;
	l.ctl = -1;
	l.dir = o->dir;
	l.record = w.record;
	l.d = &d;
	l.rows = &w.rows;
	l.events = w.events;
	l.prom = prom;
	l.status = !o->quiet && isatty(STDERR_FILENO);
	if (o->all_qemu) {
		l.host = &host;
		l.eps = &eps;
	}
	rc = vc_collect(o, attach, interval_ns, &l, &files);
	rc |= vc_report(&d.stats);
	rc |= vc_episodes_close_all(&eps) ? 1 : 0;
	rc |= vc_close_outputs(o, &w);
	vc_close_stream(&files);
	vc_dec_free(&d);
	vc_host_free(&host);
	vc_prom_free(prom);
	return rc ? VC_EXIT_RUNTIME : VC_EXIT_OK;

err_outputs:
	vc_prom_free(prom);
	vc_close_outputs(o, &w);
err_stream:
	vc_close_stream(&files);
	return VC_EXIT_RUNTIME;
}

int main(int argc, char **argv)
{
	static char attach[VCPUPERF_CMD_MAX + 1];
	__u64 interval_ns = 0;
	struct vc_opts o;
	int ret;

	ret = vc_parse_args(argc, argv, &o);
	if (ret)
		return ret < 0 ? VC_EXIT_OK : ret;
	ret = vc_validate(&o, attach, sizeof(attach), &interval_ns);
	if (ret)
		return ret;
	vc_signals_setup();
	return vc_run(&o, attach, interval_ns);
}
