// SPDX-License-Identifier: GPL-2.0
/*
 * rowstat - interval statistics of a collector's JSONL output (C, because
 * Python under TCG is too slow for a few hundred thousand rows).
 *
 * rowstat vcpuperf INTERVAL_NS FILE [LO HI]
 *	vcpuperf-cat rows (or ureader --jsonl's): per tid, deltas of
 *	"t_mono_ns" between rows (the last delta of each tid, which ends at
 *	the final sample taken at stop, is left out); and the distribution
 *	of "late_ns" (null off the grid: not counted), over every row and
 *	over the rows whose grid point (t_mono_ns - late_ns) lies in
 *	[LO, HI] (CLOCK_MONOTONIC ns; vcpuperf-cat without --mono-origin
 *	writes that clock).
 * rowstat perf INTERVAL_NS FILE
 *	perf stat -I -j lines: the distinct "interval" stamps (seconds) are
 *	the ticks; deltas between consecutive stamps.
 * Prints {"lines", "tids", "ticks", "interval_mean_ns", "jitter_p99_ns",
 * "jitter_max_ns"}, jitter being |delta - INTERVAL_NS|; for vcpuperf also
 * "late" {rows, p50_ns, p99_ns, max_ns} and "late_window" (the same for
 * [LO, HI], with "grid_points": distinct grid points seen there).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HSIZE 16384

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct slot { long tid; uint64_t last, pending; int used, has_pending; };

struct vec { uint64_t *v; uint64_t n, cap; };

static int push(struct vec *a, uint64_t x)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 4096;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v)
			return -1;
	}
	a->v[a->n++] = x;
	return 0;
}

static void print_late(const char *name, struct vec *a, uint64_t extra)
{
	if (a->n)
		qsort(a->v, a->n, sizeof(*a->v), cmp);
	printf(", \"%s\": {\"rows\": %llu, \"p50_ns\": %llu, \"p99_ns\": %llu, "
	       "\"max_ns\": %llu", name, (unsigned long long)a->n,
	       (unsigned long long)(a->n ? a->v[a->n / 2] : 0),
	       (unsigned long long)(a->n ? a->v[(a->n * 99) / 100] : 0),
	       (unsigned long long)(a->n ? a->v[a->n - 1] : 0));
	if (extra != UINT64_MAX)
		printf(", \"grid_points\": %llu", (unsigned long long)extra);
	printf("}");
}
int main(int argc, char **argv)
{
	static char line[1 << 16];
	static struct slot tab[HSIZE];
	uint64_t interval, *jit = NULL, ndelta = 0, cap = 0, lines = 0, ticks = 0;
	uint64_t ntids = 0, last_perf = 0, lo = 0, hi = UINT64_MAX;
	struct vec late = { 0 }, wlate = { 0 }, wgrid = { 0 };
	double sum = 0;
	int perf;
	FILE *f;

	if (argc != 4 && argc != 6)
		return 2;
	if (argc == 6) {
		lo = strtoull(argv[4], NULL, 10);
		hi = strtoull(argv[5], NULL, 10);
	}
	perf = !strcmp(argv[1], "perf");
	interval = strtoull(argv[2], NULL, 10);
	f = fopen(argv[3], "r");
	if (!f) {
		printf("{\"lines\": 0, \"tids\": 0, \"ticks\": 0}\n");
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		uint64_t t, t2 = 0, prev = 0;
		int have_prev = 0;
		const char *p;

		if (perf) {
			double sec;

			p = strstr(line, "\"interval\"");
			if (!p || !(p = strchr(p, ':')))
				continue;
			lines++;
			sec = strtod(p + 1, NULL);
			t = (uint64_t)(sec * 1e9 + 0.5);
			if (ticks && t == last_perf)
				continue;
			if (ticks) {
				prev = last_perf;
				have_prev = 1;
			}
			last_perf = t;
			ticks++;
			t2 = t;
		} else {
			long tid;
			unsigned int h;

			p = strstr(line, "\"t_mono_ns\":");
			if (!p)
				continue;
			t = strtoull(p + 12, NULL, 10);
			p = strstr(line, "\"tid\":");
			if (!p)
				continue;
			tid = strtol(p + 6, NULL, 10);
			lines++;
			p = strstr(line, "\"late_ns\":");
			if (p && p[10] >= '0' && p[10] <= '9') {
				uint64_t l = strtoull(p + 10, NULL, 10), g = t - l;

				if (push(&late, l))
					return 1;
				if (g >= lo && g <= hi &&
				    (push(&wlate, l) || push(&wgrid, g)))
					return 1;
			}
			for (h = (unsigned int)tid % HSIZE; tab[h].used && tab[h].tid != tid;
			     h = (h + 1) % HSIZE)
				;
			if (tab[h].used) {
				/*
				 * A thread's last delta ends at its final
				 * sample (taken at stop, off the grid): a
				 * delta counts only once another row follows.
				 */
				if (tab[h].has_pending) {
					prev = tab[h].last - tab[h].pending;
					t2 = tab[h].last;
					have_prev = 1;
				}
				tab[h].pending = t - tab[h].last;
				tab[h].has_pending = 1;
			} else {
				tab[h].used = 1;
				tab[h].tid = tid;
				ntids++;
			}
			tab[h].last = t;
		}
		if (have_prev) {
			uint64_t dt = t2 - prev;

			if (ndelta == cap) {
				cap = cap ? cap * 2 : 4096;
				jit = realloc(jit, cap * sizeof(*jit));
				if (!jit)
					return 1;
			}
			sum += (double)dt;
			jit[ndelta++] = dt > interval ? dt - interval : interval - dt;
		}
	}
	fclose(f);
	if (!perf)
		ticks = ntids ? lines / ntids : 0;
	if (ndelta)
		qsort(jit, ndelta, sizeof(*jit), cmp);
	printf("{\"lines\": %llu, \"tids\": %llu, \"ticks\": %llu, "
	       "\"interval_mean_ns\": %.0f, \"jitter_p99_ns\": %llu, \"jitter_max_ns\": %llu",
	       (unsigned long long)lines, (unsigned long long)ntids,
	       (unsigned long long)ticks, ndelta ? sum / (double)ndelta : 0.0,
	       (unsigned long long)(ndelta ? jit[(ndelta * 99) / 100] : 0),
	       (unsigned long long)(ndelta ? jit[ndelta - 1] : 0));
	if (!perf) {
		uint64_t i, points = 0;

		print_late("late", &late, UINT64_MAX);
		if (wgrid.n)
			qsort(wgrid.v, wgrid.n, sizeof(*wgrid.v), cmp);
		for (i = 0; i < wgrid.n; i++)
			points += !i || wgrid.v[i] != wgrid.v[i - 1];
		print_late("late_window", &wlate, points);
	}
	printf("}\n");
	free(late.v);
	free(wlate.v);
	free(wgrid.v);
	free(jit);
	return 0;
}
