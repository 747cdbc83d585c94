// SPDX-License-Identifier: GPL-2.0
/*
 * latrd - end-to-end latency of JSONL rows.
 *
 * Reads JSONL from stdin; for every line with "t_mono_ns", takes
 * CLOCK_MONOTONIC on arrival and keeps arrival - t_mono_ns.  At EOF prints
 * {"rows": N, "early": rows read before latrd started, "p50_ns": .., "p99_ns": .., "max_ns": .., "mean_ns": ..}.
 * t_mono_ns is the kernel's ktime_get_ns() at the read (vcpuperf-cat
 * without --mono-origin), i.e. the same clock.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	static char line[1 << 16];
	size_t n = 0, cap = 1 << 16;
	int64_t *lat = malloc(cap * sizeof(*lat));
	double sum = 0;
	size_t early = 0;
	struct timespec t0;
	int64_t start;

	if (!lat)
		return 1;
	/* Rows read by the kernel before this reader ran are not latency. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	start = (int64_t)t0.tv_sec * 1000000000LL + t0.tv_nsec;
	while (fgets(line, sizeof(line), stdin)) {
		struct timespec ts;
		const char *p = strstr(line, "\"t_mono_ns\":");
		int64_t now, t;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (!p)
			continue;
		now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
		t = strtoll(p + 12, NULL, 10);
		if (t < start) {
			early++;
			continue;
		}
		if (n == cap) {
			cap *= 2;
			lat = realloc(lat, cap * sizeof(*lat));
			if (!lat)
				return 1;
		}
		lat[n++] = now - t;
		sum += (double)(now - t);
	}
	if (!n) {
		printf("{\"rows\": 0, \"early\": %zu}\n", early);
		return 0;
	}
	qsort(lat, n, sizeof(*lat), cmp);
	printf("{\"rows\": %zu, \"early\": %zu, \"p50_ns\": %lld, \"p99_ns\": %lld, \"max_ns\": %lld, \"mean_ns\": %.0f}\n",
	       n, early, (long long)lat[n / 2], (long long)lat[(n * 99) / 100],
	       (long long)lat[n - 1], sum / (double)n);
	return 0;
}
