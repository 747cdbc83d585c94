// SPDX-License-Identifier: GPL-2.0
/*
 * collworker - one of the stress test's concurrent /dev/vcpuperf users:
 * cycles of open, interval, attach, ring, a few reads, sometimes stop and
 * a read to end of file, close.
 *
 *   collworker DEVICE CHURN_PID STEADY_TID QUOTA SEED
 *
 * Each cycle (by a seeded xorshift generator):
 *   interval 1..10 ms;
 *   attach, events task-clock and context-switches, to 1..6 of CHURN_PID's
 *     threads (40 %; pid=CHURN_PID when it has none), to qemu=CHURN_PID
 *     (30 %) or to tid=STEADY_TID (30 %);
 *   ring 64K, 128K or 256K;
 *   0..5 reads of 1, 64, 4096 or 65536 bytes (a short sleep when none is
 *     queued);
 *   stop and reads to end of file (30 %);
 *   close.
 * "cycle N" goes to stdout after each (the stress driver kills workers at
 * random and counts what each one finished); "done N refused R" at the end.
 * An open refused with ENOENT, ENODEV or ENXIO (the module is between
 * rmmod and insmod) is counted and tried again.
 *
 * Exit status 0 when QUOTA cycles are done; 3 at the first errno outside
 * the documented set (printed); 2 on usage errors.  It is C rather than a
 * Python child because the driver's SIGKILLs mean a new worker per kill:
 * a Python interpreter took seconds to start in the debug kernel.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TIDS	64
#define CMD_LEN		1024
#define DRAIN_READS	1000

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A number in [lo, hi]. */
static unsigned int rnd_in(unsigned int lo, unsigned int hi)
{
	return lo + rnd() % (hi - lo + 1);
}

/* A fraction in [0, 1). */
static double rnd_frac(void)
{
	return (rnd() >> 11) * (1.0 / 9007199254740992.0);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

/* The command's errno, 0 when it was taken. */
static int cmd(int fd, const char *c)
{
	return write(fd, c, strlen(c)) < 0 ? errno : 0;
}

/* Up to @max thread ids of @pid into @tids; how many. */
static int list_tids(int pid, long *tids, int max)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (n < max && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			tids[n++] = atol(d->d_name);
	closedir(dir);
	return n;
}

/* The attach target: some of the churn's threads, its process, or the
 * steady thread. */
static void pick_target(char *buf, size_t len, int churn_pid,
			const char *steady)
{
	double k = rnd_frac();
	long tids[MAX_TIDS];
	int n, want, i;
	size_t at;

	if (k >= 0.7) {
		snprintf(buf, len, "tid=%s", steady);
		return;
	}
	if (k >= 0.4) {
		snprintf(buf, len, "qemu=%d", churn_pid);
		return;
	}
	n = list_tids(churn_pid, tids, MAX_TIDS);
	if (!n) {
		snprintf(buf, len, "pid=%d", churn_pid);
		return;
	}
	want = rnd_in(1, 6);
	if (want > n)
		want = n;
	/* a sample without repetition: the first @want of a shuffle */
	for (i = 0; i < want; i++) {
		int j = i + rnd() % (n - i);
		long t = tids[i];

		tids[i] = tids[j];
		tids[j] = t;
	}
	at = snprintf(buf, len, "tid=");
	for (i = 0; i < want && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%ld", i ? "," : "",
			       tids[i]);
}

/* A read's errno, 0 for data, -1 at end of file. */
static int read_some(int fd, size_t len)
{
	static char buf[65536];
	ssize_t n = read(fd, buf, len);

	if (n < 0)
		return errno;
	return n ? 0 : -1;
}

static int bad(const char *what, int err)
{
	printf("%s: %s\n", what, strerrorname_np(err) ?: "?");
	fflush(stdout);
	return 3;
}

static int cycle(const char *dev, int churn_pid, const char *steady,
		 int *refused)
{
	static const size_t sizes[] = { 1, 64, 4096, 65536 };
	static const int rings[] = { 64, 128, 256 };
	char target[CMD_LEN - 64], c[CMD_LEN];
	int fd, e, i, reads;

	fd = open(dev, O_RDWR | O_NONBLOCK);
	if (fd < 0) {
		if (errno != ENOENT && errno != ENODEV && errno != ENXIO)
			return bad("open", errno);
		++*refused;
		sleep_s(0.02);
		return 1;
	}
	snprintf(c, sizeof(c), "interval %ums", rnd_in(1, 10));
	cmd(fd, c);
	pick_target(target, sizeof(target), churn_pid, steady);
	snprintf(c, sizeof(c), "attach %s events=task-clock,context-switches",
		 target);
	e = cmd(fd, c);
	if (e && e != ESRCH && e != EEXIST && e != ENODEV)
		return bad(c, e);
	snprintf(c, sizeof(c), "ring %dK", rings[rnd() % 3]);
	e = cmd(fd, c);
	if (e && e != ESRCH && e != EEXIST && e != ENODEV && e != EBUSY &&
	    e != ENOSPC)
		return bad(c, e);
	reads = rnd_in(0, 5);
	for (i = 0; i < reads; i++) {
		e = read_some(fd, sizes[rnd() % 4]);
		if (e < 0)
			break;
		if (e == EAGAIN)
			sleep_s(rnd_frac() * 0.01);
		else if (e)
			return bad("read", e);
	}
	if (rnd_frac() < 0.3 && cmd(fd, "stop") == 0) {
		for (i = 0; i < DRAIN_READS; i++) {
			e = read_some(fd, 65536);
			if (e < 0)
				break;
			if (e == EAGAIN)
				sleep_s(0.002);
			else if (e)
				return bad("read after stop", e);
		}
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	int churn_pid, quota, done = 0, refused = 0, rc;

	if (argc != 6) {
		fprintf(stderr, "usage: collworker DEVICE CHURN_PID STEADY_TID QUOTA SEED\n");
		return 2;
	}
	churn_pid = atoi(argv[2]);
	quota = atoi(argv[4]);
	rng_state = strtoull(argv[5], NULL, 0) * 2654435761ULL + 1;
	while (done < quota) {
		rc = cycle(argv[1], churn_pid, argv[3], &refused);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		printf("cycle %d\n", ++done);
		fflush(stdout);
	}
	printf("done %d refused %d\n", done, refused);
	return 0;
}
