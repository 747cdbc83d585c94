// SPDX-License-Identifier: GPL-2.0
/*
 * ureader - benchmark: a plain userspace per-thread perf reader.
 *
 * ureader --tids T1,T2,... --events TYPE:CONFIG[:MODS],... --interval-us N
 *         --duration-ms D [--group] [--out FILE] [--ready FILE]
 *         [--jsonl FILE --pid P --names a,b,... [--vm NAME] [--uuid U]]
 *         [--window FILE] [--align-ns A]
 *
 * Opens one counter per (TID, event) with perf_event_open(2) (pid = TID,
 * cpu = -1); MODS are vcpuperf's modifier letters u, k, G and H.  Every tick of a drift-free CLOCK_MONOTONIC grid
 * (clock_nanosleep TIMER_ABSTIME) it reads every counter, one read() per
 * fd (value, time_enabled, time_running), and discards the values.  With
 * --group, each TID's events are one group (the first is the leader) read
 * with PERF_FORMAT_GROUP: one read() per TID.  A tick that overruns skips
 * grid points.  --align-ns A bases the grid on the first multiple of A
 * (CLOCK_MONOTONIC) at or after the start: given the kernel's tick, as
 * vcpuperf's sampler bases its grid.  --ready FILE is created once the
 * counters are open, holding the grid's base (CLOCK_MONOTONIC ns).
 * SIGTERM or SIGINT ends the run early (with the summary).
 * At the end it writes a JSON summary (ticks, reads, tick
 * timestamps' interval mean and jitter) to FILE or stdout.
 *
 * Lateness: each TID's read is stamped (CLOCK_MONOTONIC) just before its
 * read(); late = stamp - the tick's grid point, one value per (TID, tick),
 * as vcpuperf-cat's late_ns is one per row.  --window FILE, read at exit,
 * holds "LO HI" (CLOCK_MONOTONIC ns): the summary then also gives ticks,
 * missed grid points and the lateness distribution (p50, p99, max) of the
 * ticks whose grid point lies in [LO, HI].
 *
 * --jsonl FILE (with --group; the benchmark's fair peer of vcpuperf-cat)
 * also writes one JSONL row per TID per tick, with the keys of
 * vcpuperf-cat's rows for these events (--names gives the event keys, - and
 * : made _; --pid the "pid" value; "vcpu" is the TID's index, "role"
 * "vcpu", --vm and --uuid the "vm" and "uuid" values, null without; "ipc"
 * and "cache_miss_rate" are null where vcpuperf-cat computes a ratio when
 * the thread ran, a difference in this peer's favour): per-tick
 * deltas of the group's values, scaled for multiplexing, time enabled and
 * running, read window, late_ns, both clocks taken per read as the module
 * does.  Numbers are formatted without printf and the rows of a tick go
 * out with one write() at its end (vcpuperf-cat writes whenever the stream
 * runs dry, once per interval).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vpmods.h"

#define MAX_EVENTS 16
#define KEY_LEN 64
#define OUT_CAP (4 << 20)
#define NAME_MAX_LEN 128	/* --vm, --uuid */
#define IDENT_LEN (64 + 2 * NAME_MAX_LEN)
/* The longest row: fixed keys plus MAX_EVENTS keys and values. */
#define ROW_MAX (640 + IDENT_LEN + MAX_EVENTS * (KEY_LEN + 24))

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: ureader --tids T,... --events TYPE:CONFIG[:ukGH],... "
		"--interval-us N --duration-ms D [--group] [--out FILE] [--ready FILE]\n"
		"               [--jsonl FILE --pid P --names a,b,... [--vm NAME] [--uuid U]]\n"
		"               [--window FILE] [--align-ns A]\n");
	exit(2);
}

/* ---- the JSONL writer: a flat buffer, numbers without printf ---- */

static char *obuf;
static size_t olen;
static int ofd = -1;

static const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

static void put(const char *s, size_t n)
{
	memcpy(obuf + olen, s, n);
	olen += n;
}

#define PUT_LIT(s) put(s, sizeof(s) - 1)

static void put_u64(uint64_t v)
{
	char tmp[24];
	char *p = tmp + sizeof(tmp);

	while (v >= 100) {
		unsigned int r = (unsigned int)(v % 100);

		v /= 100;
		p -= 2;
		memcpy(p, digit_pairs + 2 * r, 2);
	}
	if (v >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * v, 2);
	} else {
		*--p = (char)('0' + v);
	}
	put(p, (size_t)(tmp + sizeof(tmp) - p));
}

static void flush_out(void)
{
	size_t off = 0;

	while (off < olen) {
		ssize_t n = write(ofd, obuf + off, olen - off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("ureader: write --jsonl");
			exit(1);
		}
		off += (size_t)n;
	}
	olen = 0;
}

/*
 * A --vm or --uuid value that is a JSON string as it is (no quote,
 * backslash or control byte to escape) and fits the rows; NULL is none.
 */
static int json_plain(const char *v)
{
	if (!v)
		return 1;
	if (strlen(v) > NAME_MAX_LEN)
		return 0;
	for (; *v; v++)
		if (*v == '"' || *v == '\\' || (unsigned char)*v < 0x20)
			return 0;
	return 1;
}

/* value * enabled / running, as vp_scale(); false when there is none. */
static int scale(uint64_t value, uint64_t enabled, uint64_t running,
		 uint64_t *out)
{
	unsigned __int128 q;

	if (!enabled || running >= enabled) {
		*out = value;
		return 1;
	}
	if (!running)
		return 0;
	q = (unsigned __int128)value * enabled / running;
	if (q >> 64)
		return 0;
	*out = (uint64_t)q;
	return 1;
}

/* SIGTERM or SIGINT: end the run early, with its summary. */
static volatile sig_atomic_t stop_req;

static void on_stop(int sig)
{
	(void)sig;
	stop_req = 1;
}

/* Per TID: the previous group read, for deltas. */
struct prev {
	uint64_t enabled, running, t_mono, seen;
	uint64_t value[MAX_EVENTS];
};

int main(int argc, char **argv)
{
	const char *tids_arg = NULL, *events_arg = NULL, *out = NULL;
	const char *ready = NULL, *jsonl = NULL, *names = NULL, *window = NULL;
	const char *vm = NULL, *uuid = NULL;
	char ident[IDENT_LEN];
	size_t identlen;
	uint64_t interval_ns = 100000000ULL, duration_ns = 1000000000ULL;
	uint64_t align_ns = 0;
	struct perf_event_attr attr[MAX_EVENTS];
	char key[MAX_EVENTS][KEY_LEN], ivs[32];
	size_t keylen[MAX_EVENTS], ivslen;
	int group = 0, nev = 0, ntid = 0, i, j, failed = 0, pid = 0;
	int *tids, *fds;
	uint64_t *stamps, *grid, *late, ticks = 0, missed = 0, reads = 0;
	uint64_t nstamps, seq = 0;
	uint64_t start, next, end, buf[3 + 2 * MAX_EVENTS];
	struct prev *prev = NULL;
	volatile uint64_t sink = 0;
	struct rlimit rl;
	char *s, *tok, *copy;
	FILE *f;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tids") && i + 1 < argc)
			tids_arg = argv[++i];
		else if (!strcmp(argv[i], "--events") && i + 1 < argc)
			events_arg = argv[++i];
		else if (!strcmp(argv[i], "--interval-us") && i + 1 < argc)
			interval_ns = strtoull(argv[++i], NULL, 10) * 1000ULL;
		else if (!strcmp(argv[i], "--duration-ms") && i + 1 < argc)
			duration_ns = strtoull(argv[++i], NULL, 10) * 1000000ULL;
		else if (!strcmp(argv[i], "--group"))
			group = 1;
		else if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--jsonl") && i + 1 < argc)
			jsonl = argv[++i];
		else if (!strcmp(argv[i], "--names") && i + 1 < argc)
			names = argv[++i];
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--window") && i + 1 < argc)
			window = argv[++i];
		else if (!strcmp(argv[i], "--vm") && i + 1 < argc)
			vm = argv[++i];
		else if (!strcmp(argv[i], "--uuid") && i + 1 < argc)
			uuid = argv[++i];
		else if (!strcmp(argv[i], "--align-ns") && i + 1 < argc)
			align_ns = strtoull(argv[++i], NULL, 10);
		else
			usage();
	}
	if (!tids_arg || !events_arg || !interval_ns || (jsonl && !group))
		usage();

	copy = strdup(events_arg);
	for (s = copy; (tok = strsep(&s, ",")) != NULL;) {
		char *c = strchr(tok, ':');

		if (!c || nev >= MAX_EVENTS)
			usage();
		memset(&attr[nev], 0, sizeof(attr[0]));
		attr[nev].size = sizeof(attr[0]);
		attr[nev].type = (uint32_t)strtoul(tok, NULL, 0);
		attr[nev].config = strtoull(c + 1, NULL, 0);
		attr[nev].read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING;
		c = strchr(c + 1, ':');
		if (c && vpb_set_mods(&attr[nev], c + 1))
			usage();
		if (group && nev == 0)
			attr[nev].read_format |= PERF_FORMAT_GROUP;
		nev++;
	}
	free(copy);
	/* The event keys of the rows: ,"name": with - and : made _. */
	for (j = 0; j < nev; j++)
		keylen[j] = (size_t)snprintf(key[j], KEY_LEN, ",\"e%d\":", j);
	if (names) {
		copy = strdup(names);
		for (s = copy, j = 0; (tok = strsep(&s, ",")) != NULL && j < nev; j++) {
			char *c;

			if (strlen(tok) > KEY_LEN - 8)
				usage();
			for (c = tok; *c; c++)
				if (*c == '-' || *c == ':')
					*c = '_';
			keylen[j] = (size_t)snprintf(key[j], KEY_LEN, ",\"%s\":", tok);
		}
		free(copy);
	}
	/* role, vm and uuid: the same in every row, written once here. */
	if (!json_plain(vm) || !json_plain(uuid))
		usage();
	identlen = (size_t)snprintf(ident, sizeof(ident),
				    ",\"role\":\"vcpu\",\"vm\":%s%s%s,\"uuid\":%s%s%s",
				    vm ? "\"" : "", vm ? vm : "null", vm ? "\"" : "",
				    uuid ? "\"" : "", uuid ? uuid : "null",
				    uuid ? "\"" : "");
	/* "interval_s" as vcpuperf-cat writes it: exact, no trailing zeros. */
	ivslen = (size_t)snprintf(ivs, sizeof(ivs), "%llu.%09llu",
				  (unsigned long long)(interval_ns / 1000000000ULL),
				  (unsigned long long)(interval_ns % 1000000000ULL));
	while (ivs[ivslen - 1] == '0')
		ivslen--;
	if (ivs[ivslen - 1] == '.')
		ivslen--;

	copy = strdup(tids_arg);
	tids = calloc(strlen(tids_arg) / 2 + 2, sizeof(*tids));
	for (s = copy; (tok = strsep(&s, ",")) != NULL;)
		if (*tok)
			tids[ntid++] = atoi(tok);
	free(copy);
	if (!ntid || !nev)
		usage();

	/* One fd per counter: 512 threads x 8 events is over the default. */
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	fds = calloc((size_t)ntid * nev, sizeof(*fds));
	for (i = 0; i < ntid; i++) {
		for (j = 0; j < nev; j++) {
			int lead = group && j ? fds[i * nev] : -1;
			int fd;

			if (group && j && lead < 0) {
				fds[i * nev + j] = -1;
				failed++;
				continue;
			}
			fd = (int)syscall(SYS_perf_event_open, &attr[j], tids[i],
					  -1, lead, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				if (!failed)
					fprintf(stderr, "ureader: perf_event_open tid %d event %d: %s\n",
						tids[i], j, strerror(errno));
				failed++;
			}
			fds[i * nev + j] = fd;
		}
	}
	if (jsonl) {
		ofd = open(jsonl, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		obuf = malloc(OUT_CAP);
		prev = calloc((size_t)ntid, sizeof(*prev));
		if (ofd < 0 || !obuf || !prev) {
			perror(jsonl);
			return 1;
		}
	}

	nstamps = duration_ns / interval_ns + 2;
	stamps = calloc(nstamps, sizeof(*stamps));
	grid = calloc(nstamps, sizeof(*grid));
	late = calloc(nstamps * (uint64_t)ntid, sizeof(*late));
	if (!stamps || !grid || !late) {
		perror("ureader");
		return 1;
	}
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	start = now_ns();
	if (align_ns && start % align_ns)
		start += align_ns - start % align_ns;
	/* The ready file holds the grid's base (CLOCK_MONOTONIC ns). */
	if (ready) {
		f = fopen(ready, "w");
		if (f) {
			fprintf(f, "%" PRIu64 "\n", start);
			fclose(f);
		}
	}
	end = start + duration_ns;
	next = start;
	for (;;) {
		struct timespec ts;
		uint64_t t;

		next += interval_ns;
		if (next > end || stop_req)
			break;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			if (stop_req)
				break;
		if (stop_req)
			break;
		t = now_ns();
		if (ticks < nstamps) {
			stamps[ticks] = t;
			grid[ticks] = next;
		}
		for (i = 0; i < ntid; i++) {
			uint64_t t0 = now_ns();

			if (ticks < nstamps)
				late[ticks * ntid + i] = t0 > next ? t0 - next : 0;
			if (group) {
				uint64_t wall, t1, en, ru, v;
				struct prev *pv;
				int ok, k;

				if (fds[i * nev] < 0 ||
				    read(fds[i * nev], buf, sizeof(buf)) <= 0)
					continue;
				sink += buf[3];
				reads++;
				if (!jsonl)
					continue;
				/* The row, as vcpuperf-cat writes it. */
				wall = clock_ns(CLOCK_REALTIME);
				t1 = now_ns();
				pv = &prev[i];
				ok = buf[1] >= pv->enabled && buf[2] >= pv->running;
				for (k = 0; k < nev && ok; k++)
					ok = buf[3 + k] >= pv->value[k];
				en = ok ? buf[1] - pv->enabled : buf[1];
				ru = ok ? buf[2] - pv->running : buf[2];
				PUT_LIT("{\"t_mono_ns\":");
				put_u64(t0);
				PUT_LIT(",\"t_wall_ns\":");
				put_u64(wall);
				PUT_LIT(",\"source\":\"ureader\",\"available_in_deployment\":false,\"interval_s\":");
				put(ivs, ivslen);
				PUT_LIT(",\"dt_ns\":");
				if (pv->seen)
					put_u64(t0 - pv->t_mono);
				else
					PUT_LIT("null");
				PUT_LIT(",\"seq\":");
				put_u64(++seq);
				PUT_LIT(",\"pid\":");
				put_u64((uint64_t)pid);
				PUT_LIT(",\"tid\":");
				put_u64((uint64_t)tids[i]);
				PUT_LIT(",\"vcpu\":");
				put_u64((uint64_t)i);
				put(ident, identlen);
				PUT_LIT(",\"ran\":");
				if (en)
					PUT_LIT("true");
				else
					PUT_LIT("false");
				for (k = 0; k < nev; k++) {
					put(key[k], keylen[k]);
					if (scale(ok ? buf[3 + k] - pv->value[k] : buf[3 + k],
						  en, ru, &v))
						put_u64(v);
					else
						PUT_LIT("null");
					pv->value[k] = buf[3 + k];
				}
				PUT_LIT(",\"ipc\":null,\"cache_miss_rate\":null,\"time_enabled_ns\":");
				put_u64(en);
				PUT_LIT(",\"time_running_ns\":");
				put_u64(ru);
				PUT_LIT(",\"multiplexed\":");
				if (ru && ru < en)
					PUT_LIT("true");
				else
					PUT_LIT("false");
				PUT_LIT(",\"read_window_ns\":");
				put_u64(t1 - t0);
				PUT_LIT(",\"late_ns\":");
				put_u64(t0 > next ? t0 - next : 0);
				PUT_LIT("}\n");
				pv->enabled = buf[1];
				pv->running = buf[2];
				pv->t_mono = t0;
				pv->seen = 1;
				if (olen > OUT_CAP - ROW_MAX)
					flush_out();
				continue;
			}
			for (j = 0; j < nev; j++) {
				if (fds[i * nev + j] >= 0 &&
				    read(fds[i * nev + j], buf, 3 * sizeof(uint64_t)) > 0) {
					sink += buf[0];
					reads++;
				}
			}
		}
		if (jsonl)
			flush_out();
		ticks++;
		t = now_ns();
		while (next + interval_ns <= t) {
			next += interval_ns;
			missed++;
		}
	}
	for (i = 0; i < ntid * nev; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (jsonl)
		close(ofd);

	{
		uint64_t n = ticks < nstamps ? ticks : nstamps, k, *jit, *wl;
		uint64_t lo = 0, hi = UINT64_MAX, wticks = 0, wmissed = 0, nw = 0;
		unsigned long long a, b;
		double mean = 0;

		if (window) {
			f = fopen(window, "r");
			if (f && fscanf(f, "%llu %llu", &a, &b) == 2) {
				lo = a;
				hi = b;
			}
			if (f)
				fclose(f);
		}
		jit = calloc(n + 1, sizeof(*jit));
		wl = calloc(n * (uint64_t)ntid + 1, sizeof(*wl));
		for (k = 1; k < n; k++) {
			uint64_t dt = stamps[k] - stamps[k - 1];

			mean += (double)dt;
			jit[k - 1] = dt > interval_ns ? dt - interval_ns : interval_ns - dt;
		}
		for (k = 0; k < n; k++) {
			if (grid[k] < lo || grid[k] > hi)
				continue;
			wticks++;
			if (k && grid[k] - grid[k - 1] > interval_ns)
				wmissed += (grid[k] - grid[k - 1]) / interval_ns - 1;
			memcpy(wl + nw, late + k * ntid, ntid * sizeof(*wl));
			nw += (uint64_t)ntid;
		}
		if (n > 1) {
			mean /= (double)(n - 1);
			qsort(jit, n - 1, sizeof(*jit), cmp_u64);
		}
		qsort(wl, nw, sizeof(*wl), cmp_u64);
		f = out ? fopen(out, "w") : stdout;
		if (!f) {
			perror(out);
			return 1;
		}
		fprintf(f, "{\"ticks\": %llu, \"missed\": %llu, \"reads\": %llu, "
			"\"counters\": %d, \"failed\": %d, \"group\": %s, "
			"\"rows\": %llu, "
			"\"interval_mean_ns\": %.0f, \"jitter_p99_ns\": %llu, "
			"\"jitter_max_ns\": %llu, \"sink\": %llu, "
			"\"window\": {\"lo\": %llu, \"hi\": %llu, \"ticks\": %llu, "
			"\"missed\": %llu, \"rows\": %llu, \"late_p50_ns\": %llu, "
			"\"late_p99_ns\": %llu, \"late_max_ns\": %llu}}\n",
			(unsigned long long)ticks, (unsigned long long)missed,
			(unsigned long long)reads, ntid * nev - failed, failed,
			group ? "true" : "false", (unsigned long long)seq, mean,
			(unsigned long long)(n > 1 ? jit[((n - 1) * 99) / 100] : 0),
			(unsigned long long)(n > 1 ? jit[n - 2] : 0),
			(unsigned long long)sink,
			(unsigned long long)lo, (unsigned long long)hi,
			(unsigned long long)wticks, (unsigned long long)wmissed,
			(unsigned long long)nw,
			(unsigned long long)(nw ? wl[nw / 2] : 0),
			(unsigned long long)(nw ? wl[(nw * 99) / 100] : 0),
			(unsigned long long)(nw ? wl[nw - 1] : 0));
		if (f != stdout)
			fclose(f);
		free(jit);
		free(wl);
	}
	free(stamps);
	free(grid);
	free(late);
	free(prev);
	free(obuf);
	free(fds);
	free(tids);
	return failed == ntid * nev;
}
