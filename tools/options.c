// SPDX-License-Identifier: GPL-2.0
/*
 * The command line of vcpuperf-cat: its options, --help, and the checks
 * made before anything touches the kernel, down to the attach command
 * the module will be sent (parsed here with the module's own parser).
 */
#include <getopt.h>
#include <stdarg.h>

#include "common.h"
#include "control.h"
#include "options.h"

#define VC_HELP_WIDTH		72	/* columns of the --help text */
#define VC_HELP_OPT_INDENT	2	/* where an option starts */
#define VC_HELP_COLUMN		22	/* where its description starts */

enum {
	OPT_QEMU = 256, OPT_PID, OPT_TID, OPT_NO_ATTACH, OPT_EVENTS,
	OPT_INTERVAL, OPT_RING, OPT_READ, OPT_DURATION, OPT_EVENTS_OUT, OPT_RAW,
	OPT_MONO_ORIGIN,
	OPT_DEBUGFS, OPT_DEVICE, OPT_REPLAY, OPT_RECORD, OPT_HELP,
	OPT_PER_VM, OPT_EMULATOR, OPT_TEXTFILE, OPT_ALL_QEMU, OPT_OUTPUT_DIR,
	OPT_MATCH, OPT_SCAN_INTERVAL, OPT_NO_SCHED, OPT_KVM_EXITS,
	OPT_WHO,
};

/* getopt value of a mode option: VC_OPT_MOD | its VCPUPERF_MOD_* bit */
#define VC_OPT_MOD	0x10000

static const struct option vc_longopts[] = {
	{ "qemu", required_argument, NULL, OPT_QEMU },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "no-attach", no_argument, NULL, OPT_NO_ATTACH },
	{ "all-qemu", no_argument, NULL, OPT_ALL_QEMU },
	{ "output-dir", required_argument, NULL, OPT_OUTPUT_DIR },
	{ "match", required_argument, NULL, OPT_MATCH },
	{ "scan-interval", required_argument, NULL, OPT_SCAN_INTERVAL },
	{ "events", required_argument, NULL, OPT_EVENTS },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "ring", required_argument, NULL, OPT_RING },
	{ "read", required_argument, NULL, OPT_READ },
	{ "guest-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_GUEST },
	{ "host-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_HOST },
	{ "user-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_USER },
	{ "kernel-only", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_KERNEL },
	{ "pinned", no_argument, NULL, VC_OPT_MOD | VCPUPERF_MOD_PINNED },
	{ "per-vm", no_argument, NULL, OPT_PER_VM },
	{ "emulator-threads", no_argument, NULL, OPT_EMULATOR },
	{ "no-sched", no_argument, NULL, OPT_NO_SCHED },
	{ "kvm-exits", no_argument, NULL, OPT_KVM_EXITS },
	{ "who", no_argument, NULL, OPT_WHO },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "output", required_argument, NULL, 'o' },
	{ "events-out", required_argument, NULL, OPT_EVENTS_OUT },
	{ "raw", no_argument, NULL, OPT_RAW },
	{ "mono-origin", required_argument, NULL, OPT_MONO_ORIGIN },
	{ "textfile", required_argument, NULL, OPT_TEXTFILE },
	{ "quiet", no_argument, NULL, 'q' },
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
"       " VC_NAME " --all-qemu --output-dir DIR [--match GLOB] [OPTION...]\n"
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
"  --no-attach         attach nothing; read the module's default\n"
"                      collection (started by module parameters or\n"
"                      through debugfs) until EOF; a signal flushes\n"
"                      and exits without sending stop\n"
"  --all-qemu          every QEMU of the host (a qemu* executable with a\n"
"                      'CPU <n>/KVM' or 'CPU <n>/TCG' thread), those\n"
"                      running and those started later, as --qemu\n"
"                      records one, in one collection; each VM run to a\n"
"                      file of its own in --output-dir\n"
"  --output-dir DIR    with --all-qemu: where each VM run goes, as\n"
"                      NAME-YYYYmmddTHHMMSSZ.jsonl (NAME its -name, else\n"
"                      qemu-PID), closed after its perf_finished; -o\n"
"                      gets what belongs to no VM (created if missing)\n"
"  --match GLOB        with --all-qemu: only VMs whose NAME matches GLOB\n"
"  --scan-interval DUR with --all-qemu: how often new QEMUs are looked\n"
"                      for (the kernel's process events, else a scan\n"
"                      of /proc), N[ms|s|m] (no unit: s; default 1s)\n"
"\n"
"Counters:\n";

/* --events: filled to VC_HELP_WIDTH at run time, around the default list */
static const char vc_events_help[] =
"comma-separated perf events (default: " VP_DEFAULT_EVENTS "); "
"NAME[:MODS], rHEX, TYPE:CONFIG or SUBSYS:TRACEPOINT, MODS from u k G H D";

static const char vc_usage_tail[] =
"  --interval DUR      sampling interval, N[us|ms|s], 1ms..60s\n"
"                      (no unit: ms; module default 100ms)\n"
"  --ring SIZE         the collection's record ring, N[K|M|G], 64K..1G\n"
"                      (no unit: KiB; default: ring_kb, grown to hold\n"
"                      2 s of the stream, up to 64M)\n"
"  --read MODE         how a thread running on another CPU is read:\n"
"                      auto (default), direct, kick or lazy\n"
"  --guest-only        count guest mode only (hardware events)\n"
"  --host-only         count host mode only (hardware events)\n"
"  --user-only         count user mode only\n"
"  --kernel-only       count kernel mode only\n"
"  --pinned            pin the counters to the PMU (no multiplexing)\n"
"  --per-vm            also one row per process and interval with its\n"
"                      whole-process totals (every thread, short-lived\n"
"                      ones included; tid null), in the perf-stat\n"
"                      collector's schema (--qemu or --pid)\n"
"  --emulator-threads  with --qemu, also rows for QEMU's other threads\n"
"                      (role \"emulator\")\n"
"  --no-sched          rows without the scheduler's figures (sched_*,\n"
"                      cpu)\n"
"  --kvm-exits         also count KVM's exits, returns to the VMM, MMIO,\n"
"                      halts and hypercalls per vCPU (the events\n"
"                      kvm-exits ... kvm-hypercalls after --events)\n"
"  --who               also who took each thread's CPU while it waited:\n"
"                      its wait and involuntary switches by what ran\n"
"                      instead (same VM, other VM by name, kernel thread,\n"
"                      host), kept by probes on the scheduler\n"
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
"  --textfile FILE     also write the counters to FILE in node_exporter's\n"
"                      textfile-collector format (name it *.prom),\n"
"                      replaced atomically as rows arrive\n"
"  -q, --quiet         no live status line on standard error (shown\n"
"                      only when it is a terminal)\n"
"\n"
"Sources:\n"
"  --debugfs DIR       vcpuperf debugfs directory (default\n"
"                      " VC_DEBUGFS_DIR ")\n"
"  --device PATH       vcpuperf character device (default\n"
"                      " VC_DEVICE "): to attach, the\n"
"                      tool opens a collection of its own there;\n"
"                      without it, the default collection through\n"
"                      debugfs (a line on standard error says so)\n"
"  --replay FILE       decode a stream recorded with --record instead\n"
"                      of reading the module ('-' for standard input); no\n"
"                      control writes\n"
"  --record FILE       also copy the raw stream bytes to FILE\n"
"  --help              show this help\n"
"\n"
"On SIGINT, SIGTERM or the end of --duration, 'stop' is sent to the\n"
"collection and the stream is read to its end, so the final samples\n"
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

#define VC_NS_PER_MIN		(60 * VP_NS_PER_S)
#define VC_RUN_MAX_NS		(366 * 24 * 60 * VC_NS_PER_MIN)	/* a year */

/* N[ms|s|m], no unit meaning seconds, at least 1 ms, at most a year. */
static int vc_parse_run_duration(const char *s, __u64 *ns)
{
	const __u64 max = VC_RUN_MAX_NS;
	__u64 v = 0, unit = VP_NS_PER_S;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		if (v > max)
			return -EINVAL;
		v = v * 10 + (__u64)(*p++ - '0');
	}
	if (!strcmp(p, "ms"))
		unit = VP_NS_PER_MS;
	else if (!strcmp(p, "m"))
		unit = VC_NS_PER_MIN;
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

static const char vc_one_target[] =
	"give one of --qemu, --pid, --tid, --all-qemu and --no-attach";

static int vc_set_target(struct vc_opts *o, enum vcpuperf_target_kind kind,
			 const char *ids)
{
	if (o->kind || o->no_attach)
		return vc_usage_error("%s", vc_one_target);
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

/* Where an option that keeps its argument as given keeps it, or NULL. */
static const char **vc_string_option(struct vc_opts *o, int c)
{
	switch (c) {
	case OPT_EVENTS:
		return &o->events;
	case OPT_INTERVAL:
		return &o->interval;
	case OPT_RING:
		return &o->ring;
	case OPT_READ:
		return &o->read;
	case 'o':
		return &o->out;
	case OPT_EVENTS_OUT:
		return &o->events_out;
	case OPT_DEBUGFS:
		return &o->dir;
	case OPT_DEVICE:
		return &o->device;
	case OPT_REPLAY:
		return &o->replay;
	case OPT_RECORD:
		return &o->record;
	case OPT_TEXTFILE:
		return &o->textfile;
	case OPT_OUTPUT_DIR:
		return &o->output_dir;
	case OPT_MATCH:
		return &o->match;
	default:
		return NULL;
	}
}

/*
 * Apply option @c (getopt_long()'s return) with argument @arg; @given is
 * the option as written, for messages.  Return 0, an exit code to leave
 * with, or -1 to leave with 0 (--help).
 */
static int vc_apply_option(struct vc_opts *o, int c, char *arg,
			   const char *given)
{
	const char **keep = vc_string_option(o, c);

	if (keep) {
		*keep = arg;
		return 0;
	}
	if (c & VC_OPT_MOD)
		return vc_add_mod(o, c & ~VC_OPT_MOD);
	switch (c) {
	case OPT_QEMU:
		return vc_set_target(o, VCPUPERF_TARGET_QEMU, arg);
	case OPT_PID:
		return vc_set_target(o, VCPUPERF_TARGET_PID, arg);
	case OPT_TID:
		return vc_set_target(o, VCPUPERF_TARGET_TID, arg);
	case OPT_NO_ATTACH:
		if (o->kind)
			return vc_usage_error("%s", vc_one_target);
		o->no_attach = true;
		return 0;
	case OPT_ALL_QEMU:
		o->all_qemu = true;
		return vc_set_target(o, VCPUPERF_TARGET_QEMU, NULL);
	case OPT_SCAN_INTERVAL:
		if (vc_parse_run_duration(arg, &o->scan_ns))
			return vc_usage_error("bad --scan-interval '%s': want "
					      "N[ms|s|m] > 0", arg);
		return 0;
	case OPT_DURATION:
		if (vc_parse_run_duration(arg, &o->duration_ns))
			return vc_usage_error("bad --duration '%s': want "
					      "N[ms|s|m] > 0", arg);
		return 0;
	case OPT_RAW:
		o->raw = true;
		return 0;
	case OPT_PER_VM:
		o->flags |= VCPUPERF_ATTACH_PROCESS_TOTALS;
		return 0;
	case OPT_EMULATOR:
		o->flags |= VCPUPERF_ATTACH_ALL_THREADS;
		return 0;
	case OPT_NO_SCHED:
		o->flags |= VCPUPERF_ATTACH_NO_SCHED;
		return 0;
	case OPT_KVM_EXITS:
		o->kvm_exits = true;
		return 0;
	case OPT_WHO:
		o->flags |= VCPUPERF_ATTACH_WHO;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case OPT_MONO_ORIGIN:
		if (vc_parse_u64(arg, &o->mono_origin))
			return vc_usage_error("bad --mono-origin '%s': want "
					      "nanoseconds", arg);
		return 0;
	case 'h':
	case OPT_HELP:
		return vc_print_usage(stdout) ? VC_EXIT_RUNTIME : -1;
	case ':':
		return vc_usage_error("%s needs an argument", given);
	default:
		return vc_usage_error("unknown option '%s'", given);
	}
}

/* Is @name (@len bytes) one of the comma-separated names of @list? */
static bool vc_in_list(const char *list, const char *name, size_t len)
{
	const char *p = list;

	while (*p) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncasecmp(p, name, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

/*
 * --kvm-exits: the named KVM events (VP_KVM_EVENTS) after --events or the
 * default set, but for those --events already names.
 */
static int vc_add_kvm_events(struct vc_opts *o)
{
	static char list[VCPUPERF_CMD_MAX + 1];
	const char *kvm = VP_KVM_EVENTS;
	size_t len;

	if (!o->kvm_exits)
		return 0;
	len = (size_t)snprintf(list, sizeof(list), "%s",
			       o->events ? o->events : VP_DEFAULT_EVENTS);
	while (*kvm && len < sizeof(list)) {
		size_t n = strcspn(kvm, ",");

		if (!vc_in_list(list, kvm, n))
			len += (size_t)snprintf(list + len, sizeof(list) - len,
						",%.*s", (int)n, kvm);
		kvm += n + (kvm[n] == ',');
	}
	if (len >= sizeof(list))
		return vc_usage_error("--events with --kvm-exits: longer than "
				      "%d bytes", VCPUPERF_CMD_MAX);
	o->events = list;
	return 0;
}

/**
 * vc_parse_args() - parse the command line
 * @argc:	as main() got it
 * @argv:	as main() got it
 * @o:		filled in
 *
 * Return: 0; an exit code to leave with after a message; -1 to leave
 * with VC_EXIT_OK (--help was printed).
 */
int vc_parse_args(int argc, char **argv, struct vc_opts *o)
{
	int c, ret;

	memset(o, 0, sizeof(*o));
	o->dir = VC_DEBUGFS_DIR;
	o->device = VC_DEVICE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:hq", vc_longopts, NULL)) != -1) {
		ret = vc_apply_option(o, c, optarg, argv[optind - 1]);
		if (ret)
			return ret;
	}
	if (optind < argc)
		return vc_usage_error("unexpected argument '%s'",
				      argv[optind]);
	return vc_add_kvm_events(o);
}

/* Is @word a read mode of the read command? */
static bool vc_read_mode_ok(const char *word)
{
	__u32 m;

	for (m = VCPUPERF_READ_AUTO; m <= VCPUPERF_READ_LAZY; m++)
		if (!strcmp(word, vp_read_mode_name(m)))
			return true;
	return false;
}

/**
 * vc_validate() - check the options together and build the attach command
 * @o:		the parsed command line
 * @attach:	the attach command, when there is a target
 * @len:	size of @attach (VCPUPERF_CMD_MAX + 1)
 * @interval_ns: --interval, when given
 *
 * Everything is checked before any I/O, the attach command with the
 * module's own parser.
 *
 * Return: 0, or VC_EXIT_USAGE after a message.
 */
int vc_validate(const struct vc_opts *o, char *attach, size_t len,
		__u64 *interval_ns)
{
	static struct vp_event_spec evs[VCPUPERF_MAX_EVENTS];
	static struct vp_cmd cmd;
	char err[VP_ERR_LEN];
	__u32 nr, ring_kb;
	int ret, n;

	/* --events first: a bad list is the likeliest mistake. */
	if (o->events) {
		ret = vp_parse_event_list(o->events, strlen(o->events), evs,
					  &nr, err, sizeof(err));
		if (ret)
			return vc_usage_error("--events%s: %s", o->kvm_exits ?
					      " with --kvm-exits" : "", err);
	}
	if (o->interval &&
	    vp_parse_duration(o->interval, strlen(o->interval), interval_ns))
		return vc_usage_error("bad --interval '%s': want N[us|ms|s] "
				      "from 1ms to 60s", o->interval);
	if (o->ring && vp_parse_ring_size(o->ring, strlen(o->ring), &ring_kb))
		return vc_usage_error("bad --ring '%s': want N[K|M|G] from "
				      "64K to 1G", o->ring);
	if (o->read && !vc_read_mode_ok(o->read))
		return vc_usage_error("bad --read '%s': want auto, direct, "
				      "kick or lazy", o->read);
	if (o->replay && (o->kind || o->no_attach))
		return vc_usage_error("--replay reads a file: no --qemu, "
				      "--pid, --tid or --no-attach");
	if (o->replay && o->record)
		return vc_usage_error("--record and --replay exclude each "
				      "other");
	if (!o->replay && !o->kind && !o->no_attach)
		return vc_usage_error("give a target: --qemu PID, --pid PID, "
				      "--tid T[,T...], --all-qemu or "
				      "--no-attach");
	if (o->all_qemu && !o->output_dir)
		return vc_usage_error("--all-qemu needs --output-dir DIR");
	if (!o->all_qemu && (o->output_dir || o->match || o->scan_ns))
		return vc_usage_error("--output-dir, --match and "
				      "--scan-interval need --all-qemu");
	if (o->all_qemu && o->events_out)
		return vc_usage_error("--all-qemu writes each VM's events in "
				      "its own file: no --events-out");
	if (!o->kind && (o->events || o->interval || o->ring || o->read ||
			 o->mods || (o->flags & (VCPUPERF_ATTACH_NO_SCHED |
						      VCPUPERF_ATTACH_WHO))))
		return vc_usage_error("--events, --kvm-exits, --interval, "
				      "--ring, --read, --no-sched, --who and "
				      "the mode options need --qemu, --pid or "
				      "--tid");
	if ((o->flags & VCPUPERF_ATTACH_PROCESS_TOTALS) &&
	    o->kind != VCPUPERF_TARGET_QEMU && o->kind != VCPUPERF_TARGET_PID)
		return vc_usage_error("--per-vm needs --qemu or --pid");
	if ((o->flags & VCPUPERF_ATTACH_ALL_THREADS) &&
	    o->kind != VCPUPERF_TARGET_QEMU)
		return vc_usage_error("--emulator-threads needs --qemu");
	if (o->out && o->events_out && !strcmp(o->out, o->events_out))
		return vc_usage_error("-o and --events-out name the same "
				      "file: leave --events-out out to get "
				      "events inline");
	if (!o->kind)
		return 0;

	/* --all-qemu: the command of one VM, checked with a pid. */
	n = vp_build_attach(attach, len, o->kind, o->all_qemu ? "1" : o->ids,
			    o->events, o->mods);
	n = vp_build_attach_flags(attach, len, n, o->flags);
	if (n < 0)
		return vc_usage_error("attach command longer than %d bytes",
				      VCPUPERF_CMD_MAX);
	ret = vp_parse_cmd(attach, n, &cmd, err, sizeof(err));
	if (ret)
		return vc_usage_error("--%s %s: %s", o->all_qemu ? "all-qemu" :
				      vp_kind_name(o->kind),
				      o->all_qemu ? "" : o->ids, err);
	return 0;
}

