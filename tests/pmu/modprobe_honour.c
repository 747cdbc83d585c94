// SPDX-License-Identifier: GPL-2.0
/*
 * modprobe_honour: does the running kernel honour perf's event modifiers?
 *
 * For each event class and modifier (u, k, G, H, D) it opens the event on
 * its own thread with perf_event_open() twice, plain and modified, runs a
 * workload whose user/kernel split is known (checked with getrusage()) and
 * compares the two counts.  One JSON object per line on stdout:
 *   {"class":..., "event":..., "mod":..., "verdict":..., "plain":N,
 *    "modified":N, "why":...}
 * verdict: "honoured" (the modified count is what the modifier asks for),
 * "ignored" (the modified count is the plain one where it should not be),
 * "same" (no count can tell honouring from ignoring: every such event
 * happens on one side only), "untestable" (the event does not exist here,
 * or no workload here can tell), "refused" (perf_event_open() failed).
 *
 * Runs as root inside the test VM (tests/integration/pmu.py); the
 * integration test compares the verdicts with the table vcpuperf enforces.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define NPAGES		2000
#define ZERO_CHUNK	(1024 * 1024)
#define NSLEEPS		100
#define NSYSCALLS	5000
#define SPIN_NS		300000000LL
#define KERNEL_NS	300000000LL
#define MOSTLY		0.9	/* modified >= MOSTLY * plain: not excluded */
#define LITTLE		0.1	/* modified <= LITTLE * plain: excluded */

enum wl { WL_USER, WL_KERNEL, WL_FAULT_USER, WL_FAULT_KERNEL, WL_SLEEP,
	  WL_SYSCALL };

static const char *const wl_names[] = {
	"user spin", "kernel (read /dev/zero)", "user page faults",
	"kernel page faults (read into fresh pages)", "nanosleep",
	"getppid syscalls",
};

static long perf_open(struct perf_event_attr *a)
{
	return syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
}

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long tv_ns(struct timeval tv)
{
	return tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
}

static volatile unsigned long sink;
static long long rus_user, rus_sys;

/* Run a workload; rus_user/rus_sys get its user and system time. */
static void run(enum wl w)
{
	static char *zero_buf;
	struct rusage r0, r1;
	long long t0;
	char *p;
	int fd, i;

	getrusage(RUSAGE_THREAD, &r0);
	switch (w) {
	case WL_USER:
		/* CLOCK_THREAD_CPUTIME_ID is a syscall: check it rarely */
		t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		do {
			unsigned long x = sink;

			for (i = 0; i < 2000000; i++)
				x = x * 2862933555777941757UL + 3037000493UL;
			sink = x;
		} while (now_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < SPIN_NS);
		break;
	case WL_KERNEL:
		if (!zero_buf) {
			zero_buf = malloc(ZERO_CHUNK);
			memset(zero_buf, 1, ZERO_CHUNK);
		}
		fd = open("/dev/zero", O_RDONLY);
		t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		while (now_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < KERNEL_NS)
			if (read(fd, zero_buf, ZERO_CHUNK) < 0)
				break;
		close(fd);
		break;
	case WL_FAULT_USER:
	case WL_FAULT_KERNEL:
		p = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		if (w == WL_FAULT_USER) {
			for (i = 0; i < NPAGES; i++)
				p[i * PAGE] = 1;
		} else {
			fd = open("/dev/zero", O_RDONLY);
			for (i = 0; i < NPAGES; i++)
				if (read(fd, p + i * PAGE, PAGE) < 0)
					break;
			close(fd);
		}
		munmap(p, NPAGES * PAGE);
		break;
	case WL_SLEEP:
		for (i = 0; i < NSLEEPS; i++) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
		break;
	case WL_SYSCALL:
		for (i = 0; i < NSYSCALLS; i++)
			syscall(SYS_getppid);
		break;
	}
	getrusage(RUSAGE_THREAD, &r1);
	rus_user = tv_ns(r1.ru_utime) - tv_ns(r0.ru_utime);
	rus_sys = tv_ns(r1.ru_stime) - tv_ns(r0.ru_stime);
}

struct ev {
	const char *cls;
	const char *name;
	__u32 type;
	__u64 config;
	const char *tp;		/* tracepoint path under tracefs, or NULL */
};

static int tp_id(const char *tp, __u64 *id)
{
	static const char *const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events",
	};
	char path[256];
	unsigned int i;
	FILE *f;

	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s/id", roots[i], tp);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%llu", (unsigned long long *)id) != 1)
			*id = 0;
		fclose(f);
		return 0;
	}
	return -1;
}

static void mod_attr(struct perf_event_attr *a, char mod)
{
	switch (mod) {
	case 'u':
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		break;
	case 'k':
		a->exclude_user = 1;
		a->exclude_hv = 1;
		break;
	case 'G':
		a->exclude_host = 1;
		break;
	case 'H':
		a->exclude_guest = 1;
		break;
	case 'D':
		a->pinned = 1;
		break;
	}
}

/* The workload that tells honouring @mod apart from ignoring it. */
static enum wl pick(const struct ev *e, char mod)
{
	bool clock = e->type == PERF_TYPE_SOFTWARE &&
		     (e->config == PERF_COUNT_SW_TASK_CLOCK ||
		      e->config == PERF_COUNT_SW_CPU_CLOCK);
	bool fault = e->type == PERF_TYPE_SOFTWARE &&
		     (e->config == PERF_COUNT_SW_PAGE_FAULTS ||
		      e->config == PERF_COUNT_SW_PAGE_FAULTS_MIN);

	if (e->tp && strstr(e->tp, "sys_enter"))
		return WL_SYSCALL;
	if (e->tp || (e->type == PERF_TYPE_SOFTWARE && !clock && !fault))
		return WL_SLEEP;
	if (fault)
		return mod == 'k' ? WL_FAULT_USER : WL_FAULT_KERNEL;
	/* clocks and PMU events: the side the modifier excludes */
	return mod == 'k' ? WL_USER : WL_KERNEL;
}

static void probe(const struct ev *e, char mod)
{
	struct perf_event_attr a, m;
	long long plain = 0, modified = 0;
	const char *verdict, *why = "";
	char whybuf[160];
	long fa, fm;
	__u64 cfg = e->config;
	enum wl w = pick(e, mod);

	if (e->tp && tp_id(e->tp, &cfg)) {
		verdict = "untestable";
		why = "no such tracepoint";
		goto out;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = e->type;
	a.config = cfg;
	a.disabled = 1;
	m = a;
	mod_attr(&m, mod);
	fa = perf_open(&a);
	if (fa < 0) {
		verdict = "untestable";
		snprintf(whybuf, sizeof(whybuf), "plain event: %s",
			 strerror(errno));
		why = whybuf;
		goto out;
	}
	fm = perf_open(&m);
	if (fm < 0) {
		verdict = "refused";
		snprintf(whybuf, sizeof(whybuf), "%s", strerror(errno));
		why = whybuf;
		close(fa);
		goto out;
	}
	ioctl(fa, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(fm, PERF_EVENT_IOC_ENABLE, 0);
	run(w);
	ioctl(fa, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(fm, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fa, &plain, sizeof(plain)) != sizeof(plain) ||
	    read(fm, &modified, sizeof(modified)) != sizeof(modified)) {
		plain = -1;
		modified = -1;
	}
	close(fa);
	close(fm);
	if (plain <= 0) {
		verdict = "untestable";
		why = "the plain event counted nothing";
		goto out;
	}
	switch (mod) {
	case 'D':
		verdict = modified >= MOSTLY * plain ? "honoured" : "ignored";
		why = "pinned: counts like the plain event when it gets on";
		break;
	case 'G':
		/* a host thread: exclude_host honoured counts ~nothing */
		verdict = modified <= LITTLE * plain ? "honoured" :
			  modified >= MOSTLY * plain ? "ignored" : "unclear";
		why = "exclude_host on a host thread";
		break;
	case 'H':
		/* a host thread: exclude_guest changes nothing either way */
		verdict = modified >= MOSTLY * plain ? "same" : "unclear";
		why = "exclude_guest on a host thread (no guest mode here)";
		break;
	default:
		if (modified <= LITTLE * plain)
			verdict = "honoured";
		else if (modified >= MOSTLY * plain)
			verdict = "ignored";
		else
			verdict = "unclear";
		snprintf(whybuf, sizeof(whybuf),
			 "%s: user %lld ms, system %lld ms", wl_names[w],
			 rus_user / 1000000, rus_sys / 1000000);
		why = whybuf;
		/*
		 * Context switches and sched_switch happen in the kernel
		 * only: counting all of them under k is what k asks for.
		 * Syscall tracepoints carry the user registers of the
		 * syscall: perf counts them under u, by definition.
		 */
		if (!strcmp(verdict, "ignored") && mod == 'u' &&
		    w == WL_SYSCALL)
			verdict = "honoured";
		if (!strcmp(verdict, "ignored") && mod == 'k' &&
		    w == WL_SLEEP)
			verdict = "same";
		break;
	}
	goto print;
out:
	plain = -1;
	modified = -1;
print:
	printf("{\"class\":\"%s\",\"event\":\"%s\",\"mod\":\"%c\",",
	       e->cls, e->name, mod);
	printf("\"verdict\":\"%s\",\"plain\":%lld,\"modified\":%lld,",
	       verdict, plain, modified);
	printf("\"why\":\"%s\"}\n", why);
	fflush(stdout);
}

static const struct ev events[] = {
	{ "hardware", "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, NULL },
	{ "hw-cache", "L1-dcache-loads", PERF_TYPE_HW_CACHE, 0, NULL },
	{ "raw", "r003c", PERF_TYPE_RAW, 0x3c, NULL },
	{ "software", "page-faults", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_PAGE_FAULTS, NULL },
	{ "software", "context-switches", PERF_TYPE_SOFTWARE,
	  PERF_COUNT_SW_CONTEXT_SWITCHES, NULL },
	{ "clock", "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL },
	{ "clock", "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, NULL },
	{ "tracepoint", "sched:sched_switch", PERF_TYPE_TRACEPOINT, 0,
	  "sched/sched_switch" },
	{ "tracepoint", "syscalls:sys_enter_getppid", PERF_TYPE_TRACEPOINT, 0,
	  "syscalls/sys_enter_getppid" },
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

int main(void)
{
	static const char mods[] = "ukGHD";
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(events); i++)
		for (j = 0; j < sizeof(mods) - 1; j++)
			probe(&events[i], mods[j]);
	return 0;
}
