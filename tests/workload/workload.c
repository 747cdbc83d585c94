// SPDX-License-Identifier: GPL-2.0
/*
 * workload - a fake "QEMU" process for vcpuperf integration tests.
 *
 * Its worker threads are named like QEMU vCPU threads ("CPU %d/KVM") and do a
 * known amount of work (minor faults, voluntary context switches, CPU time).
 * Each worker samples its own per-thread counters from /proc right before and
 * right after its work; the JSON report is the independent oracle the module's
 * numbers are compared against.  Run with --help for the options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PAGE_SZ 4096UL
#define MAX_THREADS 1024
#define NAME_MAX_LEN 16		/* TASK_COMM_LEN, including the NUL */
#define PROCBUF_SZ 4096

struct sample {
	int64_t minflt, majflt;
	int64_t nvcsw, nivcsw;
	int64_t sum_exec_runtime_ns;
	int64_t run_delay_ns;
	int64_t timeslices;
	int64_t thread_cputime_ns;
	int64_t mono_ns;
};

struct worker {
	pthread_t thread;
	int vcpu;
	char name[NAME_MAX_LEN];
	volatile pid_t tid;		/* published before "named" */
	struct sample before, after;
	int has_before, has_after;	/* atomic flags (release/acquire) */
	int exited;			/* atomic */
	char procbuf[PROCBUF_SZ];	/* per-thread, prefaulted */
	char path_stat[64], path_status[64], path_schedstat[64];
};

/* options */
static int opt_threads = 2;
static const char *opt_name_fmt = "CPU %d/KVM";
static long opt_pages;
static long opt_sleeps;
static long opt_sleep_us = 1000;
static long opt_burn_ms;
static long opt_late_ms = -1;
static bool opt_exit_thread;
static long opt_hold_ms = 2000;
static const char *opt_report;
static const char *opt_ready;
static bool opt_wait_go;
static bool opt_spawner;
static long opt_iothread_ms;
static long opt_spawn;
static long opt_spawn_pages;
static long opt_spawn_gap_us = 1000;
static long opt_fork_pages;
static const char *opt_done;

/* The spawner thread (--spawner): not a vCPU, named "worker". */
static pthread_t spawner, iothread;
static volatile pid_t spawner_tid;
static long spawned;			/* threads it started and joined */

static struct worker *workers;
static int nworkers;			/* includes a spawned late thread */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int named;			/* under lock */
static bool go;				/* under lock */
static int done;			/* atomic: workers finished their work */
static int64_t go_mono_ns;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("workload: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Read a small /proc file into buf (NUL-terminated) without allocating. */
static ssize_t read_small(const char *path, char *buf, size_t sz)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((size_t)total < sz - 1) {
		n = read(fd, buf + total, sz - 1 - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	return total;
}

static int64_t parse_i64(const char *s)
{
	int64_t v = 0;
	bool neg = false;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '-') {
		neg = true;
		s++;
	}
	while (*s >= '0' && *s <= '9')
		v = v * 10 + (*s++ - '0');
	return neg ? -v : v;
}

/* Value of "key:\t<num>" at the start of a line of a status file, or -1. */
static int64_t status_field(const char *buf, const char *key)
{
	size_t kl = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, kl) && p[kl] == ':')
			return parse_i64(p + kl + 1);
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static void take_sample(struct worker *w, struct sample *s)
{
	char *p;
	int field;

	s->minflt = s->majflt = -1;
	s->nvcsw = s->nivcsw = -1;
	s->sum_exec_runtime_ns = -1;
	s->run_delay_ns = s->timeslices = -1;

	if (read_small(w->path_stat, w->procbuf, PROCBUF_SZ) > 0) {
		/* comm may contain spaces and parens: start after the last ')' */
		p = strrchr(w->procbuf, ')');
		if (p) {
			p++;
			/* p now points at " S ...": field 3 is the 1st token */
			for (field = 3; field <= 12 && *p; field++) {
				while (*p == ' ')
					p++;
				if (field == 10)
					s->minflt = parse_i64(p);
				else if (field == 12)
					s->majflt = parse_i64(p);
				while (*p && *p != ' ')
					p++;
			}
		}
	}
	if (read_small(w->path_status, w->procbuf, PROCBUF_SZ) > 0) {
		s->nvcsw = status_field(w->procbuf, "voluntary_ctxt_switches");
		s->nivcsw = status_field(w->procbuf, "nonvoluntary_ctxt_switches");
	}
	if (read_small(w->path_schedstat, w->procbuf, PROCBUF_SZ) > 0) {
		/* runtime, run_delay, timeslices: three numbers */
		p = w->procbuf;
		s->sum_exec_runtime_ns = parse_i64(p);
		p = strchr(p, ' ');
		if (p) {
			s->run_delay_ns = parse_i64(++p);
			p = strchr(p, ' ');
			if (p)
				s->timeslices = parse_i64(++p);
		}
	}
	s->thread_cputime_ns = now_ns(CLOCK_THREAD_CPUTIME_ID);
	s->mono_ns = now_ns(CLOCK_MONOTONIC);
}

/* Touch a chunk of this thread's stack so the work does not fault it in. */
static __attribute__((noinline)) void prefault_stack(void)
{
	volatile char buf[128 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 512)
		buf[i] = 0;
	(void)buf[0];
}

/*
 * Touch @k fresh pages (one write each: k minor faults), then unmap them
 * if @unmap; left mapped otherwise: unmapping is not part of the work.
 */
static void do_pages(long k, bool unmap)
{
	char *m;
	long i;

	if (k <= 0)
		return;
	m = mmap(NULL, (size_t)k * PAGE_SZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		die("mmap %ld pages: %s", k, strerror(errno));
	madvise(m, (size_t)k * PAGE_SZ, MADV_NOHUGEPAGE);
	for (i = 0; i < k; i++)
		((volatile char *)m)[i * PAGE_SZ] = 1;
	if (unmap)
		munmap(m, (size_t)k * PAGE_SZ);
}

static void do_sleeps(long m, long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 }, rem;
	long i;

	for (i = 0; i < m; i++) {
		struct timespec t = ts;

		while (nanosleep(&t, &rem) && errno == EINTR)
			t = rem;
	}
}

static void do_burn(long ms)
{
	int64_t end;
	volatile uint64_t x = 0;

	if (ms <= 0)
		return;
	end = now_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000LL;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		x++;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pid_t tid = my_tid();
	struct sample warm;
	int rc;

	rc = pthread_setname_np(pthread_self(), w->name);
	if (rc)
		fprintf(stderr, "workload: pthread_setname_np(%s): %s\n",
			w->name, strerror(rc));
	snprintf(w->path_stat, sizeof(w->path_stat), "/proc/self/task/%d/stat", tid);
	snprintf(w->path_status, sizeof(w->path_status), "/proc/self/task/%d/status", tid);
	snprintf(w->path_schedstat, sizeof(w->path_schedstat),
		 "/proc/self/task/%d/schedstat", tid);
	/* prefault stack, the read buffer, the sample structs and the code */
	prefault_stack();
	memset(w->procbuf, 0, sizeof(w->procbuf));
	take_sample(w, &warm);
	memcpy(&w->before, &warm, sizeof(warm));
	memcpy(&w->after, &warm, sizeof(warm));

	pthread_mutex_lock(&lock);
	w->tid = tid;
	named++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	take_sample(w, &w->before);
	__atomic_store_n(&w->has_before, 1, __ATOMIC_RELEASE);

	do_pages(opt_pages, false);
	do_sleeps(opt_sleeps, opt_sleep_us);
	do_burn(opt_burn_ms);

	take_sample(w, &w->after);
	__atomic_store_n(&w->has_after, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);

	if (opt_exit_thread && w->vcpu == 0) {
		__atomic_store_n(&w->exited, 1, __ATOMIC_RELEASE);
		pthread_exit(NULL);
	}
	/* idle, blocked (all catchable signals are blocked), until exit */
	for (;;)
		pause();
	return NULL;
}

/* A short-lived thread: touch fresh pages, unmap them, exit. */
static void *short_main(void *arg)
{
	(void)arg;
	do_pages(opt_spawn_pages, true);
	return NULL;
}

/*
 * A child process (fork(), as QEMU's helpers are), not a thread: it
 * touches --fork-pages fresh pages and exits, and the spawner reaps it.
 * Its work is not the process's: /proc/PID/stat counts it in cminflt,
 * not minflt.
 */
static void fork_child(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		do_pages(opt_fork_pages, true);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("the forked child failed");
}

/*
 * The spawner: present from the start (so that it holds whole-process
 * counters), it waits for go like the workers, then starts and joins
 * --spawn short-lived threads one after the other, --spawn-gap-us apart;
 * each lives far less than a sampling interval.
 */
/*
 * --iothread-ms: a thread of the process that is no vCPU, named like
 * QEMU's iothread, burning its CPU time after go: a competitor of the
 * same VM for the vCPUs' CPU.  Not waited for by the report.
 */
static void *iothread_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "iothread");
	pthread_mutex_lock(&lock);
	named++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	do_burn(opt_iothread_ms);
	for (;;)
		pause();
	return NULL;
}

static void *spawner_main(void *arg)
{
	struct timespec gap = { opt_spawn_gap_us / 1000000,
				(opt_spawn_gap_us % 1000000) * 1000 };
	pthread_t t;
	long i;
	int rc;

	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	prefault_stack();
	pthread_mutex_lock(&lock);
	spawner_tid = my_tid();
	named++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	for (i = 0; i < opt_spawn; i++) {
		rc = pthread_create(&t, NULL, short_main, NULL);
		if (rc)
			die("pthread_create: %s", strerror(rc));
		pthread_join(t, NULL);
		__atomic_add_fetch(&spawned, 1, __ATOMIC_RELEASE);
		nanosleep(&gap, NULL);
	}
	if (opt_fork_pages)
		fork_child();
	__atomic_add_fetch(&done, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* Substitute the vCPU index for "%d" ("%%" -> "%"), truncate to 15 chars. */
static void format_name(char *dst, int idx)
{
	char tmp[256];
	const char *f = opt_name_fmt;
	size_t n = 0;

	while (*f && n < sizeof(tmp) - 12) {
		if (f[0] == '%' && f[1] == 'd') {
			n += (size_t)snprintf(tmp + n, sizeof(tmp) - n, "%d", idx);
			f += 2;
		} else if (f[0] == '%' && f[1] == '%') {
			tmp[n++] = '%';
			f += 2;
		} else {
			tmp[n++] = *f++;
		}
	}
	tmp[n] = '\0';
	n = strnlen(tmp, NAME_MAX_LEN - 1);
	memcpy(dst, tmp, n);
	dst[n] = '\0';
}

static void start_worker(int idx)
{
	struct worker *w = &workers[idx];
	int rc;

	w->vcpu = idx;
	format_name(w->name, idx);
	rc = pthread_create(&w->thread, NULL, worker_main, w);
	if (rc)
		die("pthread_create: %s", strerror(rc));
	nworkers = idx + 1;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_sample(FILE *f, const struct sample *s, bool valid)
{
	if (!valid) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"minflt\": %" PRId64 ", \"majflt\": %" PRId64
		", \"voluntary_ctxt_switches\": %" PRId64
		", \"nonvoluntary_ctxt_switches\": %" PRId64
		", \"sum_exec_runtime_ns\": %" PRId64
		", \"run_delay_ns\": %" PRId64
		", \"timeslices\": %" PRId64
		", \"thread_cputime_ns\": %" PRId64
		", \"mono_ns\": %" PRId64 "}",
		s->minflt, s->majflt, s->nvcsw, s->nivcsw,
		s->sum_exec_runtime_ns, s->run_delay_ns, s->timeslices,
		s->thread_cputime_ns, s->mono_ns);
}

/* Write path atomically: path.tmp.<pid> then rename. */
static FILE *open_atomic(const char *path, char *tmp, size_t tmpsz)
{
	FILE *f;

	snprintf(tmp, tmpsz, "%s.tmp.%d", path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s: %s", tmp, strerror(errno));
	return f;
}

static void close_atomic(FILE *f, const char *tmp, const char *path)
{
	if (fflush(f) || ferror(f) || fclose(f))
		die("write error on %s", tmp);
	if (rename(tmp, path))
		die("rename %s -> %s: %s", tmp, path, strerror(errno));
}

static void write_report(bool complete, int sig)
{
	char tmp[PATH_MAX];
	FILE *f;
	int i;

	if (!opt_report)
		return;
	f = open_atomic(opt_report, tmp, sizeof(tmp));
	fprintf(f, "{\"pid\": %d, \"complete\": %s, \"signal\": %d, "
		"\"go_mono_ns\": %" PRId64 ", \"end_mono_ns\": %" PRId64
		", \"spawner_tid\": %d, \"spawned\": %ld, \"spawn_pages\": %ld"
		", \"threads\": [", (int)getpid(), complete ? "true" : "false",
		sig, go_mono_ns, now_ns(CLOCK_MONOTONIC), (int)spawner_tid,
		__atomic_load_n(&spawned, __ATOMIC_ACQUIRE), opt_spawn_pages);
	for (i = 0; i < nworkers; i++) {
		struct worker *w = &workers[i];
		bool hb = __atomic_load_n(&w->has_before, __ATOMIC_ACQUIRE);
		bool ha = __atomic_load_n(&w->has_after, __ATOMIC_ACQUIRE);

		fprintf(f, "%s\n  {\"tid\": %d, \"vcpu\": %d, \"name\": ",
			i ? "," : "", (int)w->tid, w->vcpu);
		json_str(f, w->name);
		fprintf(f, ", \"exited\": %s, \"pages\": %ld, \"sleeps\": %ld"
			", \"sleep_us\": %ld, \"burn_ms\": %ld, \"before\": ",
			__atomic_load_n(&w->exited, __ATOMIC_ACQUIRE) ? "true" : "false",
			opt_pages, opt_sleeps, opt_sleep_us, opt_burn_ms);
		json_sample(f, &w->before, hb);
		fputs(", \"after\": ", f);
		json_sample(f, &w->after, ha);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	close_atomic(f, tmp, opt_report);
}

static void write_ready(void)
{
	char tmp[PATH_MAX];
	FILE *f;
	int i;

	/* the file first, so that whoever sees the READY line can read it */
	if (opt_ready) {
		f = open_atomic(opt_ready, tmp, sizeof(tmp));
		fprintf(f, "{\"pid\": %d, \"tids\": [", (int)getpid());
		for (i = 0; i < nworkers; i++)
			fprintf(f, "%s%d", i ? ", " : "", (int)workers[i].tid);
		fputs("], \"vcpus\": [", f);
		for (i = 0; i < nworkers; i++)
			fprintf(f, "%s%d", i ? ", " : "", workers[i].vcpu);
		fprintf(f, "], \"spawner_tid\": %d}\n", (int)spawner_tid);
		close_atomic(f, tmp, opt_ready);
	}
	printf("READY pid=%d tids=", (int)getpid());
	for (i = 0; i < nworkers; i++)
		printf("%s%d", i ? "," : "", (int)workers[i].tid);
	printf("\n");
	fflush(stdout);
}

static bool done_written;

static void write_done(void)
{
	char tmp[PATH_MAX];
	FILE *f;

	done_written = true;
	if (!opt_done)
		return;
	f = open_atomic(opt_done, tmp, sizeof(tmp));
	fprintf(f, "{\"done_mono_ns\": %" PRId64 "}\n", now_ns(CLOCK_MONOTONIC));
	close_atomic(f, tmp, opt_done);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: workload [OPTIONS]\n"
"Fake QEMU process: worker threads named like vCPU threads do a known amount\n"
"of work and record their own /proc counters before/after it.\n"
"\n"
"  --threads N         worker threads (default 2, max %d)\n"
"  --name-fmt FMT      thread name, %%d = vCPU index (default \"CPU %%d/KVM\");\n"
"                      truncated to 15 characters\n"
"  --pages K           each worker touches K fresh anonymous 4 KiB pages\n"
"                      (one write each: K minor faults; default 0)\n"
"  --sleeps M          each worker does M nanosleep()s (default 0)\n"
"  --sleep-us U        length of each sleep in microseconds (default 1000)\n"
"  --burn-ms T         each worker burns T ms of its own CPU time (default 0)\n"
"  --late-thread-ms X  X ms after go, spawn one more worker with index N\n"
"                      that does the same work (vCPU hot-plug)\n"
"  --exit-thread       worker 0 exits right after its work instead of idling\n"
"  --hold-ms H         after the work, idle (blocked) until H ms after go,\n"
"                      then write the report and exit (default 2000)\n"
"  --report FILE       write the JSON report to FILE at exit (and on\n"
"                      SIGTERM/SIGINT, then with \"complete\": false)\n"
"  --ready FILE        once all workers exist and are named, atomically write\n"
"                      {\"pid\": P, \"tids\": [...], \"vcpus\": [...]} to FILE\n"
"                      (a line \"READY pid=P tids=a,b,c\" is always printed)\n"
"  --wait-go           wait for SIGUSR1 before starting the work\n"
"  --iothread-ms T     one more thread, named \"iothread\" (no vCPU), that\n"
"                      burns T ms of its CPU time after go\n"
"  --spawner           one more thread, named \"worker\" (no vCPU), that\n"
"                      after go starts and joins short-lived threads\n"
"  --spawn N           the spawner's threads, one after the other\n"
"  --spawn-pages K     each of them touches (then unmaps) K fresh pages\n"
"  --spawn-gap-us U    pause between two of them (default 1000)\n"
"  --fork-pages K      then the spawner fork()s a child process that\n"
"                      touches K fresh pages and exits (and reaps it)\n"
"  --done FILE         once all the work is done, atomically write\n"
"                      {\"done_mono_ns\": T} to FILE; then the process is\n"
"                      quiescent (every thread blocked) until --hold-ms\n"
"  -- ARGS...          ignored: a QEMU-like command line for the tests\n"
"                      that read /proc/PID/cmdline\n"
"  -h, --help          this help\n"
"\n"
"Report: {\"pid\", \"complete\", \"signal\", \"go_mono_ns\", \"end_mono_ns\",\n"
"  \"threads\": [{\"tid\", \"vcpu\", \"name\", \"exited\", \"pages\", \"sleeps\",\n"
"  \"sleep_us\", \"burn_ms\", \"before\": S, \"after\": S}]} where S (null if not\n"
"  sampled yet) = {\"minflt\", \"majflt\" (stat fields 10/12),\n"
"  \"voluntary_ctxt_switches\", \"nonvoluntary_ctxt_switches\" (status),\n"
"  \"sum_exec_runtime_ns\" (schedstat field 1, -1 if unavailable),\n"
"  \"run_delay_ns\", \"timeslices\" (schedstat fields 2 and 3, -1 if\n"
"  unavailable),\n"
"  \"thread_cputime_ns\" (CLOCK_THREAD_CPUTIME_ID), \"mono_ns\"}, sampled by\n"
"  each worker itself right before and right after its work.\n"
"Exit status: 0; 128+signo after SIGTERM/SIGINT; 2 on errors.\n",
		MAX_THREADS);
}

static long parse_num(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		die("invalid value '%s' for --%s (%ld..%ld)", s, opt, min, max);
	return v;
}

/* Wait for a termination signal until deadline (CLOCK_MONOTONIC ns); 0 if none. */
static int wait_term(const sigset_t *set, int64_t deadline)
{
	int64_t left = deadline - now_ns(CLOCK_MONOTONIC);
	struct timespec ts;
	int sig;

	if (left < 0)
		left = 0;
	ts.tv_sec = left / 1000000000LL;
	ts.tv_nsec = left % 1000000000LL;
	sig = sigtimedwait(set, NULL, &ts);
	return sig > 0 ? sig : 0;
}

static void finish(bool complete, int sig)
{
	write_report(complete, sig);
	fflush(stdout);
	_exit(sig ? 128 + sig : 0);
}

int main(int argc, char **argv)
{
	enum { O_NAMEFMT = 256, O_PAGES, O_SLEEPS, O_SLEEPUS, O_BURN, O_LATE,
	       O_EXIT, O_HOLD, O_REPORT, O_READY, O_WAITGO, O_SPAWNER, O_IOTHREAD,
	       O_SPAWN, O_SPAWNPAGES, O_SPAWNGAP, O_DONE, O_FORKPAGES };
	static const struct option lopts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "name-fmt", required_argument, NULL, O_NAMEFMT },
		{ "pages", required_argument, NULL, O_PAGES },
		{ "sleeps", required_argument, NULL, O_SLEEPS },
		{ "sleep-us", required_argument, NULL, O_SLEEPUS },
		{ "burn-ms", required_argument, NULL, O_BURN },
		{ "late-thread-ms", required_argument, NULL, O_LATE },
		{ "exit-thread", no_argument, NULL, O_EXIT },
		{ "hold-ms", required_argument, NULL, O_HOLD },
		{ "report", required_argument, NULL, O_REPORT },
		{ "ready", required_argument, NULL, O_READY },
		{ "wait-go", no_argument, NULL, O_WAITGO },
		{ "spawner", no_argument, NULL, O_SPAWNER },
		{ "iothread-ms", required_argument, NULL, O_IOTHREAD },
		{ "spawn", required_argument, NULL, O_SPAWN },
		{ "spawn-pages", required_argument, NULL, O_SPAWNPAGES },
		{ "spawn-gap-us", required_argument, NULL, O_SPAWNGAP },
		{ "done", required_argument, NULL, O_DONE },
		{ "fork-pages", required_argument, NULL, O_FORKPAGES },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	sigset_t goset, termset;
	int64_t hold_deadline, late_deadline = 0, deadline;
	bool late_pending;
	int c, i, sig, nstart;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 't': opt_threads = (int)parse_num("threads", optarg, 1, MAX_THREADS - 1); break;
		case O_NAMEFMT: opt_name_fmt = optarg; break;
		case O_PAGES: opt_pages = parse_num("pages", optarg, 0, 1L << 30); break;
		case O_SLEEPS: opt_sleeps = parse_num("sleeps", optarg, 0, 1L << 30); break;
		case O_SLEEPUS: opt_sleep_us = parse_num("sleep-us", optarg, 0, 1L << 30); break;
		case O_BURN: opt_burn_ms = parse_num("burn-ms", optarg, 0, 1L << 30); break;
		case O_LATE: opt_late_ms = parse_num("late-thread-ms", optarg, 0, 1L << 30); break;
		case O_EXIT: opt_exit_thread = true; break;
		case O_HOLD: opt_hold_ms = parse_num("hold-ms", optarg, 0, 1L << 30); break;
		case O_REPORT: opt_report = optarg; break;
		case O_READY: opt_ready = optarg; break;
		case O_WAITGO: opt_wait_go = true; break;
		case O_SPAWNER: opt_spawner = true; break;
		case O_IOTHREAD: opt_iothread_ms = parse_num("iothread-ms", optarg, 1, 1L << 30); break;
		case O_SPAWN: opt_spawn = parse_num("spawn", optarg, 0, 1L << 20); break;
		case O_SPAWNPAGES: opt_spawn_pages = parse_num("spawn-pages", optarg, 0, 1L << 20); break;
		case O_SPAWNGAP: opt_spawn_gap_us = parse_num("spawn-gap-us", optarg, 0, 1L << 30); break;
		case O_DONE: opt_done = optarg; break;
		case O_FORKPAGES: opt_fork_pages = parse_num("fork-pages", optarg, 0, 1L << 20); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	/* getopt stops at "--": what follows is a command line to show */
	if (optind < argc && strcmp(argv[optind - 1], "--"))
		die("unexpected argument '%s' (see --help)", argv[optind]);

	/* Signals are only ever taken synchronously by main (sigwait). */
	sigemptyset(&termset);
	sigaddset(&termset, SIGTERM);
	sigaddset(&termset, SIGINT);
	goset = termset;
	sigaddset(&goset, SIGUSR1);
	if (pthread_sigmask(SIG_BLOCK, &goset, NULL))
		die("pthread_sigmask failed");

	workers = calloc(MAX_THREADS, sizeof(*workers));
	if (!workers)
		die("out of memory");
	/* Warm up the libc paths the workers use, so that their page-table
	 * entries (shared by all threads) exist before any "before" sample. */
	{
		struct timespec ts = { 0, 1000 };
		void *m = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m != MAP_FAILED) {
			madvise(m, PAGE_SZ, MADV_NOHUGEPAGE);
			munmap(m, PAGE_SZ);
		}
		nanosleep(&ts, NULL);
		now_ns(CLOCK_THREAD_CPUTIME_ID);
	}

	nstart = opt_threads;
	for (i = 0; i < nstart; i++)
		start_worker(i);
	if (opt_spawner) {
		c = pthread_create(&spawner, NULL, spawner_main, NULL);
		if (c)
			die("pthread_create: %s", strerror(c));
	}
	if (opt_iothread_ms) {
		c = pthread_create(&iothread, NULL, iothread_main, NULL);
		if (c)
			die("pthread_create: %s", strerror(c));
	}

	pthread_mutex_lock(&lock);
	while (named < nstart + opt_spawner + (opt_iothread_ms > 0))
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	write_ready();

	if (opt_wait_go) {
		if (sigwait(&goset, &sig))
			die("sigwait failed");
		if (sig != SIGUSR1)
			finish(false, sig);
	}

	pthread_mutex_lock(&lock);
	go_mono_ns = now_ns(CLOCK_MONOTONIC);
	go = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);

	hold_deadline = go_mono_ns + opt_hold_ms * 1000000LL;
	late_pending = opt_late_ms >= 0;
	if (late_pending)
		late_deadline = go_mono_ns + opt_late_ms * 1000000LL;

	for (;;) {
		int64_t now = now_ns(CLOCK_MONOTONIC);
		int ndone = __atomic_load_n(&done, __ATOMIC_ACQUIRE);

		if (late_pending && now >= late_deadline) {
			start_worker(nstart);
			late_pending = false;
			continue;
		}
		if (!late_pending && ndone >= nworkers + opt_spawner &&
		    !done_written)
			write_done();
		if (!late_pending && ndone >= nworkers + opt_spawner &&
		    now >= hold_deadline)
			break;
		/* poll for "all done" every 10 ms, otherwise sleep to a deadline */
		deadline = now + 10000000LL;
		if (late_pending && late_deadline < deadline)
			deadline = late_deadline;
		if (!late_pending && ndone >= nworkers + opt_spawner)
			deadline = hold_deadline;
		sig = wait_term(&termset, deadline);
		if (sig)
			finish(false, sig);
	}
	finish(true, 0);
	return 0;
}
