// SPDX-License-Identifier: GPL-2.0
/*
 * vcpuperf-cat: attach vcpuperf to a QEMU process (or any thread), read
 * its record stream and write perf_qemu.py-compatible JSONL rows and
 * lifecycle events.
 *
 * Options, validation before anything touches the kernel, the control
 * writes, signal handling and the read loop live here.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "vcpuperf-cat.h"

#define VC_STOP_TIMEOUT_NS	(10ULL * 1000000000ULL)	/* EOF after stop */
#define VC_POLL_MAX_MS		1000
/*
 * Output is written out whenever the stream runs dry, and at least this
 * often while it does not: a reader that is always behind (a slow disk, a
 * busy host) still lands its rows within a second.
 */
#define VC_FLUSH_MAX_NS		(1000ULL * 1000000ULL)
#define VC_CMD_BUFSZ		(VCPUPERF_CMD_MAX + 1)
#define VC_HELP_WIDTH		72	/* columns of the --help text */
#define VC_HELP_OPT_INDENT	2	/* where an option starts */
#define VC_HELP_COLUMN		22	/* where its description starts */

enum {
	OPT_QEMU = 256, OPT_PID, OPT_TID, OPT_NO_ATTACH, OPT_EVENTS,
	OPT_INTERVAL, OPT_DURATION, OPT_EVENTS_OUT, OPT_RAW, OPT_MONO_ORIGIN,
	OPT_DEBUGFS, OPT_DEVICE, OPT_REPLAY, OPT_RECORD, OPT_HELP,
};

/* getopt value of a mode option: VC_OPT_MOD | its VCPUPERF_MOD_* bit */
#define VC_OPT_MOD	0x10000

static const struct option vc_longopts[] = {
	{ "qemu", required_argument, NULL, OPT_QEMU },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "no-attach", no_argument, NULL, OPT_NO_ATTACH },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "guest-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_GUEST },
	{ "host-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_HOST },
	{ "user-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_USER },
	{ "kernel-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_KERNEL },
	{ "pinned", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_PINNED },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "output", required_argument, NULL, 'o' },
	{ "events-out", required_argument, NULL, OPT_EVENTS_OUT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "mono-origin", required_argument, NULL, OPT_MONO_ORIGIN },
	{ "debugfs", required_argument, NULL, OPT_DEBUGFS },
	{ "device", required_argument, NULL, OPT_DEVICE },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static const char vc_usage_head[] =
"Usage: " VC_NAME " (--qemu PID | --pid PID | --tid T[,T...] | --no-attach)\n"
"                    [OPTION...]\n"
"       " VC_NAME " --replay FILE [OUTPUT OPTION...]\n"
"\n"
"Attach vcpuperf in-kernel perf counters to threads, read the record\n"
"stream and write one JSONL row per thread and interval,\n"
"plus lifecycle events (perf_started, perf_first_row, perf_finished...).\n"
"\n"
"Target (exactly one, unless --replay):\n"
"  --qemu PID          the vCPU threads of QEMU process PID (also those\n"
"                      that appear later)\n"
"  --pid PID           every thread of process PID\n"
"  --tid T[,T...]      these threads\n"
"  --no-attach         attach nothing; read what the module produces\n"
"                      (e.g. started by module parameters) until EOF; a\n"
"                      signal flushes and exits without sending stop\n"
"\n"
"Counters:\n";

/* --events: filled to VC_HELP_WIDTH at run time, around the default list */
static const char vc_events_help[] =
"comma-separated perf events (default: " VP_DEFAULT_EVENTS "); "
"NAME[:MODS], rHEX, TYPE:CONFIG or SUBSYS:TRACEPOINT, MODS from u k G H D";

static const char vc_usage_tail[] =
"  --interval DUR      sampling interval, N[us|ms|s], 1ms..60s\n"
"                      (no unit: ms; module default 100ms)\n"
"  --guest-only        count guest mode only (hardware events)\n"
"  --host-only         count host mode only (hardware events)\n"
"  --user-only         count user mode only\n"
"  --kernel-only       count kernel mode only\n"
"  --pinned            pin the counters to the PMU (no multiplexing)\n"
"  --duration DUR      stop after DUR, N[ms|s|m] (no unit: s); default:\n"
"                      until SIGINT/SIGTERM\n"
"\n"
"Output:\n"
"  -o, --output FILE   JSONL rows to FILE (default: standard output)\n"
"  --events-out FILE   lifecycle events to FILE (default: inline with\n"
"                      the rows)\n"
"  --raw               add a \"raw\" object with the cumulative value,\n"
"                      enabled and running time of every counter\n"
"  --mono-origin NS    subtract NS from every t_mono_ns (default 0)\n"
"\n"
"Sources:\n"
"  --debugfs DIR       vcpuperf debugfs directory (default\n"
"                      " VC_DEBUGFS_DIR ")\n"
"  --device PATH       vcpuperf character device (default\n"
"                      " VC_DEVICE "), used instead of\n"
"                      debugfs when its control file is missing or\n"
"                      refused (kernel lockdown); a line on standard\n"
"                      error says so\n"
"  --replay FILE       decode a stream recorded with --record instead\n"
"                      of reading the module ('-' for standard input); no\n"
"                      control writes\n"
"  --record FILE       also copy the raw stream bytes to FILE\n"
"  --help              show this help\n"
"\n"
"On SIGINT, SIGTERM or the end of --duration, 'stop' is sent to the\n"
"module and the stream is read to its end, so the final samples\n"
"and perf_finished events are kept.\n"
"\n"
"Exit status: 0 ok, 1 runtime error or unexplained sequence gap,\n"
"2 usage error.\n";

/* The next piece of help text that may end a line: up to a comma or blank. */
static size_t vc_help_piece(const char *text)
{
	size_t n = 1;

	while (text[n] && text[n] != ' ' && text[n - 1] != ',')
		n++;
	return n;
}

/*
 * Print option @opt with its description @text filled to VC_HELP_WIDTH:
 * a line breaks after a comma or at a blank, and goes on in the
 * description column.
 */
static void vc_help_option(FILE *fp, const char *opt, const char *text)
{
	size_t col = VC_HELP_COLUMN;

	fprintf(fp, "%*s%-*s", VC_HELP_OPT_INDENT, "",
		VC_HELP_COLUMN - VC_HELP_OPT_INDENT, opt);
	while (*text) {
		size_t n = vc_help_piece(text);

		if (col + n > VC_HELP_WIDTH && col > VC_HELP_COLUMN) {
			fprintf(fp, "\n%*s", VC_HELP_COLUMN, "");
			col = VC_HELP_COLUMN;
			if (*text == ' ') {
				text++;
				n--;
			}
		}
		fwrite(text, 1, n, fp);
		col += n;
		text += n;
	}
	fputc('\n', fp);
}

/* --help: 0, or -1 when standard output cannot be written. */
static int vc_print_usage(FILE *fp)
{
	fputs(vc_usage_head, fp);
	vc_help_option(fp, "--events LIST", vc_events_help);
	fputs(vc_usage_tail, fp);
	return fflush(fp) ? -1 : 0;
}

/**
 * struct vc_opts - the command line
 * @kind:	VCPUPERF_TARGET_* of --qemu, --pid or --tid; 0 for none
 * @ids:	its argument
 * @no_attach:	--no-attach
 * @events:	--events, or NULL
 * @interval:	--interval as given, or NULL
 * @mods:	keyword modifiers (guest_only ...) as VCPUPERF_MOD_*
 * @duration_ns: --duration, 0 for none
 * @out:	-o, or NULL for stdout
 * @events_out:	--events-out, or NULL for inline
 * @raw:	--raw
 * @mono_origin: --mono-origin
 * @dir:	--debugfs
 * @device:	--device
 * @replay:	--replay
 * @record:	--record
 */
struct vc_opts {
	enum vcpuperf_target_kind kind;
	const char *ids;
	bool no_attach;
	const char *events;
	const char *interval;
	__u32 mods;
	__u64 duration_ns;
	const char *out;
	const char *events_out;
	bool raw;
	__u64 mono_origin;
	const char *dir;
	const char *device;
	const char *replay;
	const char *record;
};

static volatile sig_atomic_t vc_signals;

static void vc_on_signal(int sig)
{
	(void)sig;
	vc_signals++;
}

static __printf(1, 2) int vc_usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(VC_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry '" VC_NAME " --help'.\n", stderr);
	return VC_EXIT_USAGE;
}

static __u64 vc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* N[ms|s|m], no unit meaning seconds, at least 1 ms, at most a year. */
static int vc_parse_run_duration(const char *s, __u64 *ns)
{
	static const __u64 max = 366ULL * 24 * 3600 * 1000000000ULL;
	__u64 v = 0, unit = 1000000000ULL;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		if (v > max)
			return -EINVAL;
		v = v * 10 + (__u64)(*p++ - '0');
	}
	if (!strcmp(p, "ms"))
		unit = 1000000ULL;
	else if (!strcmp(p, "m"))
		unit = 60ULL * 1000000000ULL;
	else if (*p && strcmp(p, "s"))
		return -EINVAL;
	if (!v || v > max / unit)
		return -EINVAL;
	*ns = v * unit;
	return 0;
}

static int vc_parse_u64(const char *s, __u64 *out)
{
	__u64 v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (~0ULL - 9) / 10)
			return -EINVAL;
		v = v * 10 + (__u64)(*s - '0');
	}
	*out = v;
	return 0;
}

static int vc_set_target(struct vc_opts *o, enum vcpuperf_target_kind kind,
			 const char *ids)
{
	if (o->kind || o->no_attach)
		return vc_usage_error("give one of --qemu, --pid, --tid and "
				      "--no-attach");
	o->kind = kind;
	o->ids = ids;
	return 0;
}

/* The name of the mode option of one modifier, without its dashes. */
static const char *vc_mod_option(__u32 mod)
{
	const struct option *opt;

	for (opt = vc_longopts; opt->name; opt++)
		if (opt->val == (int)(VC_OPT_MOD | mod))
			return opt->name;
	return "?";
}

/* A mode option (--guest-only ...): add its modifier unless it clashes. */
static int vc_add_mod(struct vc_opts *o, __u32 mod)
{
	__u32 clash = vp_mods_conflict(o->mods | mod);

	if (clash) {
		__u32 second = clash & (clash - 1);

		return vc_usage_error("--%s and --%s exclude each other",
				      vc_mod_option(clash ^ second),
				      vc_mod_option(second));
	}
	o->mods |= mod;
	return 0;
}

/* Parse argv into @o; return 0, or an exit code to leave with. */
static int vc_parse_args(int argc, char **argv, struct vc_opts *o)
{
	int c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->dir = VC_DEBUGFS_DIR;
	o->device = VC_DEVICE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", vc_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_QEMU:
			ret = vc_set_target(o, VCPUPERF_TARGET_QEMU, optarg);
			break;
		case OPT_PID:
			ret = vc_set_target(o, VCPUPERF_TARGET_PID, optarg);
			break;
		case OPT_TID:
			ret = vc_set_target(o, VCPUPERF_TARGET_TID, optarg);
			break;
		case OPT_NO_ATTACH:
			if (o->kind)
				ret = vc_set_target(o, 0, NULL);
			o->no_attach = true;
			break;
		case OPT_EVENTS:
			o->events = optarg;
			break;
		case OPT_INTERVAL:
			o->interval = optarg;
			break;
		case OPT_DURATION:
			if (vc_parse_run_duration(optarg, &o->duration_ns))
				ret = vc_usage_error("bad --duration '%s': "
						     "want N[ms|s|m] > 0",
						     optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case OPT_EVENTS_OUT:
			o->events_out = optarg;
			break;
		case OPT_RAW:
			o->raw = true;
			break;
		case OPT_MONO_ORIGIN:
			if (vc_parse_u64(optarg, &o->mono_origin))
				ret = vc_usage_error("bad --mono-origin '%s': "
						     "want nanoseconds",
						     optarg);
			break;
		case OPT_DEBUGFS:
			o->dir = optarg;
			break;
		case OPT_DEVICE:
			o->device = optarg;
			break;
		case OPT_REPLAY:
			o->replay = optarg;
			break;
		case OPT_RECORD:
			o->record = optarg;
			break;
		case 'h':
		case OPT_HELP:
			return vc_print_usage(stdout) ? VC_EXIT_RUNTIME : -1;
		case ':':
			return vc_usage_error("%s needs an argument",
					      argv[optind - 1]);
		default:
			if (c & VC_OPT_MOD) {
				ret = vc_add_mod(o, c & ~VC_OPT_MOD);
				break;
			}
			return vc_usage_error("unknown option '%s'",
					      argv[optind - 1]);
		}
		if (ret)
			return ret;
	}
	if (optind < argc)
		return vc_usage_error("unexpected argument '%s'",
				      argv[optind]);
	return 0;
}

/* Check everything and build the attach command, before any I/O. */
static int vc_validate(const struct vc_opts *o, char *attach, size_t len,
		       __u64 *interval_ns)
{
	static struct vp_event_spec evs[VCPUPERF_MAX_EVENTS];
	static struct vp_cmd cmd;
	char err[VP_ERR_LEN];
	__u32 nr;
	int ret, n;

	/* --events first: a bad list is the likeliest mistake. */
	if (o->events) {
		ret = vp_parse_event_list(o->events, strlen(o->events), evs,
					  &nr, err, sizeof(err));
		if (ret)
			return vc_usage_error("--events: %s", err);
	}
	if (o->interval &&
	    vp_parse_duration(o->interval, strlen(o->interval), interval_ns))
		return vc_usage_error("bad --interval '%s': want N[us|ms|s] "
				      "from 1ms to 60s", o->interval);
	if (o->replay && (o->kind || o->no_attach))
		return vc_usage_error("--replay reads a file: no --qemu, "
				      "--pid, --tid or --no-attach");
	if (o->replay && o->record)
		return vc_usage_error("--record and --replay exclude each "
				      "other");
	if (!o->replay && !o->kind && !o->no_attach)
		return vc_usage_error("give a target: --qemu PID, --pid PID, "
				      "--tid T[,T...] or --no-attach");
	if (!o->kind && (o->events || o->interval || o->mods))
		return vc_usage_error("--events, --interval and the mode "
				      "options need --qemu, --pid or --tid");
	if (o->out && o->events_out && !strcmp(o->out, o->events_out))
		return vc_usage_error("-o and --events-out name the same "
				      "file: leave --events-out out to get "
				      "events inline");
	if (!o->kind)
		return 0;

	n = vp_build_attach(attach, len, o->kind, o->ids, o->events, o->mods);
	if (n < 0)
		return vc_usage_error("attach command longer than %d bytes",
				      VCPUPERF_CMD_MAX);
	ret = vp_parse_cmd(attach, n, &cmd, err, sizeof(err));
	if (ret)
		return vc_usage_error("--%s %s: %s", vp_kind_name(o->kind),
				      o->ids, err);
	return 0;
}

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

static void vc_signals_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void vc_flush_all(struct json_writer *rows,
			 struct json_writer *events, FILE *record)
{
	json_flush(rows);
	if (events != rows)
		json_flush(events);
	if (record)
		fflush(record);
}

/**
 * struct vc_loop - the read loop's inputs
 * @fd:		stream (non-blocking unless replayed)
 * @ctl:	where commands go, -1 when no stop is to be sent
 * @dir:	debugfs directory
 * @record:	copy of the raw bytes, or NULL
 * @deadline:	CLOCK_MONOTONIC ns to stop at, 0 for none
 * @d:		the decoder
 * @rows:	writer of its rows
 * @events:	writer of its lifecycle lines (may be @rows)
 */
struct vc_loop {
	int fd;
	int ctl;
	const char *dir;
	FILE *record;
	__u64 deadline;
	struct vc_decoder *d;
	struct json_writer *rows;
	struct json_writer *events;
};

/* Read until EOF, a fatal decode error or an interruption: 0 or 1. */
static int vc_read_loop(struct vc_loop *l)
{
	struct vc_decoder *d = l->d;
	__u64 flushed = vc_now_ns();
	__u64 stop_by = 0;
	bool stop = false;
	int spurious = 0;

	for (;;) {
		__u64 now = vc_now_ns();
		size_t room;
		void *buf;
		ssize_t n;

		if (!stop && (vc_signals ||
			      (l->deadline && now >= l->deadline))) {
			if (l->ctl < 0)
				return 0;	/* no-attach / replay */
			stop = true;
			vc_signals = 0;
			stop_by = now + VC_STOP_TIMEOUT_NS;
			vc_control(l->ctl, l->dir, "stop");
		} else if (stop && vc_signals) {
			fprintf(stderr, VC_NAME ": interrupted again before "
				"the end of the stream: output is "
				"incomplete\n");
			return 1;
		} else if (stop && now >= stop_by) {
			fprintf(stderr, VC_NAME ": no end of stream %llu s "
				"after stop: output may be incomplete\n",
				VC_STOP_TIMEOUT_NS / 1000000000ULL);
			return 1;
		}

		buf = vc_dec_space(d, &room);
		n = read(l->fd, buf, room);
		if (n > 0) {
			spurious = 0;
			if (stop)
				stop_by = vc_now_ns() + VC_STOP_TIMEOUT_NS;
			if (l->record &&
			    fwrite(buf, 1, (size_t)n, l->record) != (size_t)n) {
				fprintf(stderr, VC_NAME ": writing --record "
					"file: %s\n", strerror(errno));
				return 1;
			}
			if (vc_dec_commit(d, (size_t)n))
				return 1;
			if (l->rows->err || l->events->err)
				return 1;	/* reported by the caller */
			if (now - flushed >= VC_FLUSH_MAX_NS) {
				vc_flush_all(l->rows, l->events, l->record);
				flushed = now;
			}
			continue;
		}
		if (n == 0)
			return vc_dec_end(d) ? 1 : 0;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN) {
			struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
			int timeout = VC_POLL_MAX_MS;

			vc_flush_all(l->rows, l->events, l->record);
			flushed = now;
			if (!stop && l->deadline) {
				__u64 left = l->deadline > now ?
					     l->deadline - now : 0;

				if (left / 1000000ULL < (__u64)timeout)
					timeout = (int)(left / 1000000ULL) + 1;
			}
			/* a stream without poll support always says ready */
			if (++spurious > 2) {
				struct timespec ts = { 0, 5000000 };

				nanosleep(&ts, NULL);
			}
			if (poll(&pfd, 1, timeout) < 0 && errno != EINTR) {
				fprintf(stderr, VC_NAME ": poll: %s\n",
					strerror(errno));
				return 1;
			}
			continue;
		}
		fprintf(stderr, VC_NAME ": reading stream: %s\n",
			strerror(errno));
		return 1;
	}
}

/* Send interval (if given) and attach: 0 or -1. */
static int vc_attach(int ctl, const char *dir, const char *attach,
		     const char *interval)
{
	char cmd[64];

	if (interval) {
		snprintf(cmd, sizeof(cmd), "interval %s", interval);
		if (vc_control(ctl, dir, cmd))
			return -1;
	}
	return vc_control(ctl, dir, attach) ? -1 : 0;
}

static int vc_run(const struct vc_opts *o, const char *attach,
		  __u64 interval_ns)
{
	struct json_writer rows, events_w, *events = &rows;
	FILE *out = NULL, *evout = NULL, *record = NULL;
	struct vc_decoder d;
	struct vc_jsonl jsonl;
	struct vc_files files;
	struct vc_loop l;
	char ivl[32];
	int fd, rc;

	if (o->replay) {
		files.ctl = -1;
		files.stream = vc_open_replay(o->replay);
	} else if (vc_open_module(o->dir, o->device, o->kind != 0, &files)) {
		files.stream = -1;
	}
	fd = files.stream;
	if (fd < 0)
		return VC_EXIT_RUNTIME;
	out = vc_open_out(o->out);
	if (!out)
		return VC_EXIT_RUNTIME;
	if (json_init(&rows, out, o->out ? o->out : "standard output"))
		return VC_EXIT_RUNTIME;
	if (o->events_out) {
		evout = vc_open_out(o->events_out);
		if (!evout || json_init(&events_w, evout, o->events_out))
			return VC_EXIT_RUNTIME;
		events = &events_w;
	}
	if (o->record) {
		record = fopen(o->record, "w");
		if (!record) {
			fprintf(stderr, VC_NAME ": %s: %s\n", o->record,
				strerror(errno));
			return VC_EXIT_RUNTIME;
		}
		setvbuf(record, NULL, _IOFBF, 1U << 20);
	}
	vc_jsonl_init(&jsonl, &rows, events, o->mono_origin, o->raw);
	if (vc_dec_init(&d, &jsonl.sink)) {
		fprintf(stderr, VC_NAME ": out of memory\n");
		return VC_EXIT_RUNTIME;
	}

	memset(&l, 0, sizeof(l));
	l.fd = fd;
	l.ctl = -1;
	l.dir = o->dir;
	l.record = record;
	l.d = &d;
	l.rows = &rows;
	l.events = events;
	if (o->kind) {
		if (o->interval)
			vp_format_duration(ivl, sizeof(ivl), interval_ns);
		if (vc_attach(files.ctl, o->dir, attach,
			      o->interval ? ivl : NULL))
			return VC_EXIT_RUNTIME;
		l.ctl = files.ctl;
	}
	if (o->duration_ns)
		l.deadline = vc_now_ns() + o->duration_ns;

	rc = vc_read_loop(&l);

	if (d.stats.unexplained) {
		fprintf(stderr, VC_NAME ": %llu sequence gap(s) not explained "
			"by a dropped record\n",
			(unsigned long long)d.stats.unexplained);
		rc = 1;
	}
	if (d.stats.bad) {
		fprintf(stderr, VC_NAME ": %llu malformed record(s) skipped\n",
			(unsigned long long)d.stats.bad);
		rc = 1;
	}
	if (d.stats.orphans)
		fprintf(stderr, VC_NAME ": %llu sample(s) of threads without "
			"a started record skipped\n",
			(unsigned long long)d.stats.orphans);
	if (json_flush(&rows)) {
		fprintf(stderr, VC_NAME ": writing %s: %s\n", rows.path,
			strerror(rows.err));
		rc = 1;
	}
	if (events != &rows && json_flush(events)) {
		fprintf(stderr, VC_NAME ": writing %s: %s\n", events->path,
			strerror(events->err));
		rc = 1;
	}
	if (out != stdout && fclose(out)) {
		fprintf(stderr, VC_NAME ": closing %s: %s\n", o->out,
			strerror(errno));
		rc = 1;
	}
	if (evout && evout != stdout && fclose(evout)) {
		fprintf(stderr, VC_NAME ": closing %s: %s\n", o->events_out,
			strerror(errno));
		rc = 1;
	}
	if (record && fclose(record)) {
		fprintf(stderr, VC_NAME ": closing %s: %s\n", o->record,
			strerror(errno));
		rc = 1;
	}
	if (files.ctl >= 0 && files.ctl != fd)
		close(files.ctl);
	if (fd != STDIN_FILENO)
		close(fd);
	vc_dec_free(&d);
	json_free(&rows);
	if (events != &rows)
		json_free(events);
	return rc ? VC_EXIT_RUNTIME : VC_EXIT_OK;
}

int main(int argc, char **argv)
{
	static char attach[VC_CMD_BUFSZ];
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
