// SPDX-License-Identifier: GPL-2.0
/*
 * ureader - benchmark: a plain userspace per-thread perf reader.
 *
 * ureader --tids T1,T2,... --events TYPE:CONFIG,... --interval-us N
 *         --duration-ms D [--group] [--out FILE] [--ready FILE]
 *
 * Opens one counter per (TID, event) with perf_event_open(2) (pid = TID,
 * cpu = -1).  Every tick of a drift-free CLOCK_MONOTONIC grid
 * (clock_nanosleep TIMER_ABSTIME) it reads every counter, one read() per
 * fd (value, time_enabled, time_running), and discards the values.  With
 * --group, each TID's events are one group (the first is the leader) read
 * with PERF_FORMAT_GROUP: one read() per TID.  A tick that overruns skips
 * grid points.  --ready FILE is created once the counters are open.
 * At the end it writes a JSON summary (ticks, reads, tick
 * timestamps' interval mean and jitter) to FILE or stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_EVENTS 16

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void usage(void)
{
	fprintf(stderr, "usage: ureader --tids T,... --events TYPE:CONFIG,... "
		"--interval-us N --duration-ms D [--group] [--out FILE] [--ready FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *tids_arg = NULL, *events_arg = NULL, *out = NULL;
	const char *ready = NULL;
	uint64_t interval_ns = 100000000ULL, duration_ns = 1000000000ULL;
	struct perf_event_attr attr[MAX_EVENTS];
	int group = 0, nev = 0, ntid = 0, i, j, failed = 0;
	int *tids, *fds;
	uint64_t *stamps, ticks = 0, missed = 0, reads = 0, nstamps;
	uint64_t start, next, end, buf[3 + 2 * MAX_EVENTS];
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
		else
			usage();
	}
	if (!tids_arg || !events_arg || !interval_ns)
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
		if (group && nev == 0)
			attr[nev].read_format |= PERF_FORMAT_GROUP;
		nev++;
	}
	free(copy);
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

	if (ready) {
		f = fopen(ready, "w");
		if (f)
			fclose(f);
	}
	nstamps = duration_ns / interval_ns + 2;
	stamps = calloc(nstamps, sizeof(*stamps));
	start = now_ns();
	end = start + duration_ns;
	next = start;
	for (;;) {
		struct timespec ts;
		uint64_t t;

		next += interval_ns;
		if (next > end)
			break;
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		t = now_ns();
		if (ticks < nstamps)
			stamps[ticks] = t;
		for (i = 0; i < ntid; i++) {
			if (group) {
				if (fds[i * nev] >= 0 &&
				    read(fds[i * nev], buf, sizeof(buf)) > 0) {
					sink += buf[3];
					reads++;
				}
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

	{
		uint64_t n = ticks < nstamps ? ticks : nstamps, k, *jit;
		double mean = 0;

		jit = calloc(n + 1, sizeof(*jit));
		for (k = 1; k < n; k++) {
			uint64_t dt = stamps[k] - stamps[k - 1];

			mean += (double)dt;
			jit[k - 1] = dt > interval_ns ? dt - interval_ns : interval_ns - dt;
		}
		if (n > 1) {
			mean /= (double)(n - 1);
			qsort(jit, n - 1, sizeof(*jit), cmp_u64);
		}
		f = out ? fopen(out, "w") : stdout;
		if (!f) {
			perror(out);
			return 1;
		}
		fprintf(f, "{\"ticks\": %llu, \"missed\": %llu, \"reads\": %llu, "
			"\"counters\": %d, \"failed\": %d, \"group\": %s, "
			"\"interval_mean_ns\": %.0f, \"jitter_p99_ns\": %llu, "
			"\"jitter_max_ns\": %llu, \"sink\": %llu}\n",
			(unsigned long long)ticks, (unsigned long long)missed,
			(unsigned long long)reads, ntid * nev - failed, failed,
			group ? "true" : "false", mean,
			(unsigned long long)(n > 1 ? jit[((n - 1) * 99) / 100] : 0),
			(unsigned long long)(n > 1 ? jit[n - 2] : 0),
			(unsigned long long)sink);
		if (f != stdout)
			fclose(f);
		free(jit);
	}
	free(stamps);
	free(fds);
	free(tids);
	return failed == ntid * nev;
}
