// SPDX-License-Identifier: GPL-2.0
/*
 * ctlfuzz - write random and mutated commands to the vcpuperf control file,
 * one command per write(), as fast as the kernel takes them.
 *
 *   ctlfuzz --control PATH --count N [--seed S] [--reset-every K]
 *           [--reset CMD] [--progress FILE] -- SEED_COMMAND...
 *   ctlfuzz --control PATH --count N --fixed CMD
 *
 * Each write is one of (by a seeded xorshift generator):
 *   15 %  pure junk: 0..80 random bytes
 *    1 %  a seed command repeated 300..2000 times (mostly over 16 KiB)
 *   30 %  a command built from the grammar's words with random values,
 *         mostly near-valid (wrong numbers, doubled keys, unknown events)
 *   54 %  a seed command mutated 1..4 times (bit flips, byte replacement,
 *         truncation, slice duplication, splicing, random bytes, number
 *         replacement, long id lists, whitespace games)
 * Candidates that contain "stop" or "detach" (in any case) are not written:
 * they could end the session or detach the collection being watched; they
 * are counted as filtered.  Every K writes (--reset-every, default 200) the
 * --reset command (default "interval 5ms") is written and must succeed, so a
 * fuzzed "interval 60s" cannot stop the rows for long.
 *
 * Only the write() calls are timed.  At the end one JSON line goes to
 * stdout: writes, filtered, resets, the count per errno name, the write
 * time (total, max) and up to 8 commands that got an errno outside the
 * documented set (0 EINVAL ENOENT ESRCH E2BIG ENOSPC EEXIST).  --progress
 * FILE gets the number of writes done, rewritten every 1000 writes.
 * Writes slower than --slow-ms (default 100) are counted, and the first 10
 * are printed to stderr with their time and result.
 * --dump FILE writes each command to FILE instead, as a 4-byte native
 * length and the bytes (to look at the corpus offline).
 * --fixed CMD writes CMD N times instead (no resets): the kernel's cost
 * of one write, for the report.
 * Exit status 0, 1 if an undocumented errno or a failed reset was seen,
 * 2 on usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXCMD		(160 * 1024)
#define MAXERR		256
#define MAXBAD		8

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* uniform in [0, n) (n > 0) */
static size_t below(size_t n)
{
	return (size_t)(rnd() % n);
}

static int nseeds;
static char **seeds;

static const char *const words[] = {
	"attach", "attach", "attach", "interval", "interval", "tid=", "pid=",
	"qemu=", "events=", "guest_only", "host_only", "user_only",
	"kernel_only", "pinned", "all", "=", ",", ":",
};

static const char *const evnames[] = {
	"cycles", "instructions", "task-clock", "context-switches", "cs",
	"page-faults", "faults", "cpu-migrations", "cpu-clock",
	"branch-misses", "ref-cycles", "stalled-cycles-frontend",
	"L1-dcache-load-misses", "LLC-loads", "dTLB-store-misses",
	"r1234", "rfffffffffffffffff", "1:3", "4:0", "99:1", "sched:sched_switch",
	"kvm:kvm_exit", "nosuch:event", "sched:", ":", "cycles:u", "cycles:k",
	"cycles:GH", "instructions:D", "task-clock:uk", "cache-misses:x",
	"", "a-very-long-event-name-that-is-longer-than-the-limit-of-48",
};

static const char *const units[] = { "", "ms", "us", "s", "ns", "m", "h" };

static const long long numbers[] = {
	0, -1, 1, 2, 3, 5, 999, 1000, 60000, 65535, 2147483647LL,
	2147483648LL, 4294967297LL, 999999999999LL,
};

struct buf {
	unsigned char *p;
	size_t len;
};

static void put(struct buf *b, const void *s, size_t n)
{
	if (b->len + n > MAXCMD)
		n = MAXCMD - b->len;
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void puts_(struct buf *b, const char *s)
{
	put(b, s, strlen(s));
}

static void putnum(struct buf *b, long long v)
{
	char t[32];

	put(b, t, (size_t)snprintf(t, sizeof(t), "%lld", v));
}

static long long pick_id(const long long *ids, int nids)
{
	if (nids && below(3))
		return ids[below((size_t)nids)];
	return numbers[below(sizeof(numbers) / sizeof(numbers[0]))];
}

/* A command from the grammar's words, mostly near-valid. */
static void gen_grammar(struct buf *b, const long long *ids, int nids)
{
	int ntok = 1 + (int)below(6);

	if (below(2)) {
		puts_(b, "interval ");
		if (below(4))
			putnum(b, (long long)below(70000));
		else
			putnum(b, numbers[below(sizeof(numbers) /
						sizeof(numbers[0]))]);
		puts_(b, units[below(sizeof(units) / sizeof(units[0]))]);
		return;
	}
	puts_(b, "attach");
	for (int i = 0; i < ntok; i++) {
		const char *w = words[below(sizeof(words) / sizeof(words[0]))];

		puts_(b, below(10) ? " " : below(2) ? "\t" : "  ");
		if (!strcmp(w, "events=")) {
			int n = 1 + (int)below(below(8) ? 4 : 20);

			puts_(b, w);
			for (int k = 0; k < n; k++) {
				if (k)
					puts_(b, ",");
				puts_(b, evnames[below(sizeof(evnames) /
						       sizeof(evnames[0]))]);
			}
		} else if (!strcmp(w, "tid=") || !strcmp(w, "pid=") ||
			   !strcmp(w, "qemu=")) {
			int n = below(4) ? 1 : 1 + (int)below(40);

			puts_(b, w);
			for (int k = 0; k < n; k++) {
				if (k)
					puts_(b, ",");
				putnum(b, pick_id(ids, nids));
			}
		} else {
			puts_(b, w);
		}
	}
}

static void mutate(struct buf *b)
{
	int rounds = 1 + (int)below(4);

	for (int r = 0; r < rounds; r++) {
		switch (below(9)) {
		case 0:				/* bit flip */
			if (b->len)
				b->p[below(b->len)] ^= (unsigned char)(1u << below(8));
			break;
		case 1: {			/* byte replacement */
			static const unsigned char pick[] = {
				0, 10, 32, 44, 61, 58, 255 };
			unsigned char c = below(8) ? pick[below(sizeof(pick))] :
				(unsigned char)below(256);

			if (b->len)
				b->p[below(b->len)] = c;
			break;
		}
		case 2:				/* truncate */
			b->len = below(b->len + 1);
			break;
		case 3: {			/* duplicate a slice */
			size_t i, j, n, times;

			if (!b->len)
				break;
			i = below(b->len);
			j = i + below(b->len - i + 1);
			n = j - i;
			times = 1 + below(8);
			while (times-- && n && b->len + n <= MAXCMD) {
				memmove(b->p + j + n, b->p + j, b->len - j);
				memcpy(b->p + j, b->p + i, n);
				b->len += n;
			}
			break;
		}
		case 4: {			/* splice with another seed */
			const char *o = seeds[below((size_t)nseeds)];
			size_t olen = strlen(o);
			size_t i = below(b->len + 1), j = below(olen + 1);

			b->len = i;
			put(b, o + j, olen - j);
			break;
		}
		case 5: {			/* insert random bytes */
			size_t i = below(b->len + 1), n = 1 + below(8);

			if (b->len + n > MAXCMD)
				break;
			memmove(b->p + i + n, b->p + i, b->len - i);
			for (size_t k = 0; k < n; k++)
				b->p[i + k] = (unsigned char)below(256);
			b->len += n;
			break;
		}
		case 6: {			/* replace the number after an '=' */
			unsigned char *eq = memchr(b->p, '=', b->len);
			size_t at, end;
			char t[32];
			size_t tn;

			if (!eq)
				break;
			at = (size_t)(eq - b->p) + 1;
			end = at;
			while (end < b->len && ((b->p[end] >= '0' &&
						 b->p[end] <= '9') ||
						b->p[end] == '-'))
				end++;
			tn = (size_t)snprintf(t, sizeof(t), "%lld",
					      numbers[below(sizeof(numbers) /
							    sizeof(numbers[0]))]);
			if (b->len - (end - at) + tn > MAXCMD)
				break;
			memmove(b->p + at + tn, b->p + end, b->len - end);
			memcpy(b->p + at, t, tn);
			b->len = b->len - (end - at) + tn;
			break;
		}
		case 7: {			/* many list entries */
			static const int counts[] = { 5, 100, 1100 };
			int n = counts[below(3)];

			for (int k = 0; k < n; k++) {
				puts_(b, ",");
				putnum(b, 1 + (long long)below(40000));
			}
			break;
		}
		default: {			/* whitespace games */
			static const char *const rep[] = {
				"  ", "\t", "", "\n", " \0" };
			size_t ri = below(5);
			size_t rl = ri == 4 ? 2 : strlen(rep[ri]);
			unsigned char *tmp = malloc(MAXCMD);
			size_t n = 0;

			if (!tmp)
				break;
			for (size_t k = 0; k < b->len; k++) {
				if (b->p[k] != ' ') {
					if (n < MAXCMD)
						tmp[n++] = b->p[k];
				} else if (n + rl <= MAXCMD) {
					memcpy(tmp + n, rep[ri], rl);
					n += rl;
				}
			}
			memcpy(b->p, tmp, n);
			b->len = n;
			free(tmp);
			break;
		}
		}
	}
}

/* Could this be a valid stop or detach?  Then it is never written. */
static int forbidden(const struct buf *b)
{
	static const char *const bad[] = { "stop", "detach" };

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		size_t n = strlen(bad[k]);

		for (size_t i = 0; i + n <= b->len; i++) {
			size_t m = 0;

			while (m < n && (b->p[i + m] | 0x20) == bad[k][m])
				m++;
			if (m == n)
				return 1;
		}
	}
	return 0;
}

static int documented(int e)
{
	return e == 0 || e == EINVAL || e == ENOENT || e == ESRCH ||
	       e == E2BIG || e == ENOSPC || e == EEXIST;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: ctlfuzz --control PATH --count N [--seed S] [--reset-every K] [--reset CMD] [--progress FILE] -- SEED_COMMAND...\n");
	exit(2);
}

static void progress(const char *path, long done)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%ld\n", done);
	if (!fclose(f))
		rename(tmp, path);
}

int main(int argc, char **argv)
{
	const char *ctl = NULL, *reset = "interval 5ms", *prog_path = NULL;
	const char *fixed = NULL;
	FILE *dump = NULL;
	long slow_ms = 100, slow = 0;
	long count = -1, reset_every = 200, resets = 0, written = 0;
	long filtered = 0, per_errno[MAXERR] = { 0 };
	long long ids[64];
	int nids = 0, bad_seen = 0, failed = 0, fd, i;
	uint64_t t_total = 0, t_max = 0, t_start;
	struct buf b;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--") ) {
			i++;
			break;
		} else if (i + 1 >= argc) {
			usage();
		} else if (!strcmp(argv[i], "--control")) {
			ctl = argv[++i];
		} else if (!strcmp(argv[i], "--count")) {
			count = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--seed")) {
			rng_state ^= strtoull(argv[++i], NULL, 0) * 0x9e3779b97f4a7c15ULL;
		} else if (!strcmp(argv[i], "--reset-every")) {
			reset_every = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--reset")) {
			reset = argv[++i];
		} else if (!strcmp(argv[i], "--slow-ms")) {
			slow_ms = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--dump")) {
			dump = fopen(argv[++i], "w");
			if (!dump) {
				perror(argv[i]);
				return 1;
			}
		} else if (!strcmp(argv[i], "--fixed")) {
			fixed = argv[++i];
		} else if (!strcmp(argv[i], "--progress")) {
			prog_path = argv[++i];
		} else {
			usage();
		}
	}
	if (fixed) {
		reset_every = count + 1;
	} else if (i >= argc) {
		usage();
	}
	if (!ctl || count < 0 || reset_every < 1)
		usage();
	if (!rng_state)
		rng_state = 1;
	seeds = argv + i;
	nseeds = argc - i;
	/* the numbers in the seeds: real tids and pids to aim at */
	for (int s = 0; s < nseeds && nids < 64; s++)
		for (const char *p = seeds[s]; *p && nids < 64; p++)
			if ((p[0] == '=' || p[0] == ',') && p[1] >= '1' &&
			    p[1] <= '9')
				ids[nids++] = strtoll(p + 1, NULL, 10);

	b.p = malloc(MAXCMD);
	if (!b.p)
		return 1;
	fd = open(ctl, O_WRONLY);
	if (fd < 0) {
		perror(ctl);
		return 1;
	}
	t_start = now_ns();
	while (written < count) {
		uint64_t r = below(100), t0, dt;
		int e;

		b.len = 0;
		if (fixed) {
			puts_(&b, fixed);
		} else if (r < 15) {
			size_t n = below(81);

			for (size_t k = 0; k < n; k++)
				b.p[b.len++] = (unsigned char)below(256);
		} else if (r < 16) {
			const char *s = seeds[below((size_t)nseeds)];
			size_t times = 300 + below(1701);

			while (times-- && b.len < MAXCMD)
				puts_(&b, s);
		} else if (r < 46) {
			gen_grammar(&b, ids, nids);
		} else {
			puts_(&b, seeds[below((size_t)nseeds)]);
			mutate(&b);
		}
		if (!fixed && forbidden(&b)) {
			filtered++;
			continue;
		}
		t0 = now_ns();
		if (dump) {
			unsigned int n = (unsigned int)b.len;

			e = fwrite(&n, sizeof(n), 1, dump) == 1 &&
			    fwrite(b.p, 1, b.len, dump) == b.len ? 0 : EIO;
		} else {
			e = write(fd, b.p, b.len) < 0 ? errno : 0;
		}
		dt = now_ns() - t0;
		t_total += dt;
		if (dt > t_max)
			t_max = dt;
		written++;
		per_errno[e < MAXERR ? e : MAXERR - 1]++;
		if (dt > (uint64_t)slow_ms * 1000000ULL && slow++ < 10) {
			fprintf(stderr, "ctlfuzz: slow write %.1f ms, %s, %zu bytes: '",
				(double)dt / 1e6, e ? strerror(e) : "ok", b.len);
			for (size_t k = 0; k < b.len && k < 160; k++)
				fprintf(stderr, b.p[k] >= 32 && b.p[k] < 127 ?
					"%c" : "\\x%02x", b.p[k]);
			fprintf(stderr, "'\n");
		}
		if (!documented(e)) {
			failed = 1;
			if (bad_seen++ < MAXBAD) {
				fprintf(stderr, "ctlfuzz: errno %d (%s) for %zu bytes: '",
					e, strerror(e), b.len);
				for (size_t k = 0; k < b.len && k < 120; k++)
					fprintf(stderr, b.p[k] >= 32 && b.p[k] < 127 ?
						"%c" : "\\x%02x", b.p[k]);
				fprintf(stderr, "'\n");
			}
		}
		if (written % reset_every == 0) {
			resets++;
			if (write(fd, reset, strlen(reset)) < 0) {
				fprintf(stderr, "ctlfuzz: reset '%s': %s\n",
					reset, strerror(errno));
				failed = 1;
			}
		}
		if (prog_path && written % 1000 == 0)
			progress(prog_path, written);
	}
	close(fd);
	if (prog_path)
		progress(prog_path, written);
	printf("{\"writes\": %ld, \"filtered\": %ld, \"resets\": %ld, \"undocumented\": %d, \"slow\": %ld, \"wall_ns\": %llu, \"write_ns_total\": %llu, \"write_ns_max\": %llu, \"errno\": {",
	       written, filtered, resets, bad_seen, slow,
	       (unsigned long long)(now_ns() - t_start),
	       (unsigned long long)t_total, (unsigned long long)t_max);
	for (int e = 0, first = 1; e < MAXERR; e++) {
		const char *name;

		if (!per_errno[e])
			continue;
		switch (e) {
		case 0: name = "ok"; break;
		case EINVAL: name = "EINVAL"; break;
		case ENOENT: name = "ENOENT"; break;
		case ESRCH: name = "ESRCH"; break;
		case E2BIG: name = "E2BIG"; break;
		case ENOSPC: name = "ENOSPC"; break;
		case EEXIST: name = "EEXIST"; break;
		default: name = NULL; break;
		}
		if (name)
			printf("%s\"%s\": %ld", first ? "" : ", ", name,
			       per_errno[e]);
		else
			printf("%s\"%d\": %ld", first ? "" : ", ", e,
			       per_errno[e]);
		first = 0;
	}
	printf("}}\n");
	return failed;
}
