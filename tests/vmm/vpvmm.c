// SPDX-License-Identifier: GPL-2.0
/*
 * vpvmm - a small KVM virtual machine monitor for the arm64 test bed.
 *
 * It looks to vcpuperf like QEMU: its vCPU threads are named "CPU <n>/KVM",
 * its command line carries -name and -uuid, and it has emulator threads
 * (the main thread and an I/O thread that never enters the guest).  Each
 * vCPU runs a list of phases of guest code whose instruction count is
 * known exactly, so that what vcpuperf counts can be compared with the
 * truth (instructions retired in guest kernel mode, EL1, and guest user
 * mode, EL0):
 *
 *   loop:N   the guest counts down from N at EL1 (N >= 1): 2N + 6
 *   user:N   the same at EL0: the guest drops to user mode and comes back
 *            with a system call: 2N + 1 at EL0, 13 at EL1
 *   hvc:N    N hypercalls (HVC SMCCC_VERSION, answered by KVM without
 *            an exit to this program): 4N + 11 at EL1
 *   halt:MS  the guest executes WFI: KVM blocks the vCPU thread (a halted
 *            vCPU) until the VMM wakes it with a signal MS ms later: 6
 *   pause:MS the vCPU thread sleeps MS ms in user space before it enters
 *            the guest again (a host-side pause): none
 *
 * Between two phases the guest stores to an MMIO address: an exit to this
 * program, which writes the next phase into the vCPU's mailbox.  The
 * guest program and why each phase retires what it does: vpvmm_guest.S.  The
 * report (--report, JSON) gives per vCPU its thread id, the guest
 * instructions of each phase and in all (EL1 and EL0 apart), each phase's
 * start and end (CLOCK_MONOTONIC, as vcpuperf's t_mono_ns) and the exits
 * seen: MMIO exits, and every return of KVM_RUN (run_returns).
 *
 * Run with --help for the options.  arm64 only (KVM_ARM_VCPU_INIT).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "vpvmm_guest.h"

#if !defined(__aarch64__)
#error "vpvmm runs arm64 guests with KVM_ARM_VCPU_INIT: build it for arm64"
#endif

#define MAX_VCPUS	512		/* arm64 KVM with a GICv3 host */
#define MAX_PHASES	64
#define NAME_LEN	16		/* TASK_COMM_LEN */
#define GO_LINE_LEN	32		/* --go-fd: a time in ns and a newline */

/* Guest physical layout: code and mailboxes in one slot, MMIO above it. */
#define GUEST_RAM_BASE	0x40000000ULL
#define GUEST_RAM_SIZE	0x10000ULL
#define MAILBOX_OFF	0x8000ULL	/* 16 bytes per vCPU */
#define MMIO_BASE	0x50000000ULL	/* 8 bytes per vCPU, unmapped */

/* How often a halted vCPU is signalled until it has woken. */
#define WAKE_RETRY_NS	20000000LL

enum phase_kind { PH_LOOP, PH_USER, PH_HALT, PH_PAUSE, PH_HVC };

struct phase {
	enum phase_kind kind;
	uint64_t arg;			/* iterations, or ms */
	uint64_t el1, el0;		/* what it retires in the guest */
	int64_t start_ns, end_ns;	/* CLOCK_MONOTONIC */
	uint64_t intr_exits;		/* KVM_RUN -EINTR returns during it */
};

struct vcpu {
	int idx;
	pthread_t thread;
	volatile pid_t tid;		/* published before "named" */
	int fd;
	struct kvm_run *run;
	int nphases;
	struct phase phases[MAX_PHASES];
	uint64_t mmio_exits;
	uint64_t run_returns;		/* every return of KVM_RUN */
	volatile int halted_phase;	/* index of the halt phase under way, -1 */
	int64_t halt_since_ns;		/* when it began (for the waker) */
	int finished;			/* atomic */
};

/* options */
static int opt_vcpus = 2;
static const char *opt_phase_spec[MAX_VCPUS];
static int opt_nspecs;
static const char *opt_ready;
static const char *opt_report;
static const char *opt_done;
static int opt_done_fd = -1;
static int opt_go_fd = -1;
static bool opt_wait_go;
static bool opt_hold;
static bool opt_sched_idle;
static bool opt_enter_early;
static long opt_io_ms;

static int kvm_fd = -1, vm_fd = -1;
static uint8_t *guest_mem;
static size_t run_size;
static struct vcpu vcpus[MAX_VCPUS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static int named;			/* under lock */
static int nfinished;			/* under lock */
static bool go;				/* under lock */
static int64_t go_ns;			/* when go was set */
static volatile pid_t io_tid;
static int io_stop;			/* atomic */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vpvmm: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void print_help(FILE *f)
{
	fputs("usage: vpvmm [-name guest=NAME[,debug-threads=on]] [-uuid UUID]\n"
	      "             [--vcpus N] [--phases SPEC]... [--io-ms MS]\n"
	      "             [--ready FILE] [--report FILE] [--done FILE]\n"
	      "             [--done-fd N]\n"
	      "             [--wait-go [--go-fd N]] [--hold] [--sched-idle]\n"
	      "             [--enter-early]\n"
	      "  --vcpus N       vCPU threads 'CPU <n>/KVM' (default 2)\n"
	      "  --phases SPEC   the phases of vCPU i (the i-th --phases; the last\n"
	      "                  one given serves the vCPUs after it): a comma list\n"
	      "                  of loop:N (2N+6 guest instructions at EL1), user:N\n"
	      "                  (2N+1 at EL0 and 13 at EL1), hvc:N (N hypercalls:\n"
	      "                  4N+11 at EL1), halt:MS (WFI, woken by a signal\n"
	      "                  after MS ms: 6 at EL1) and pause:MS (MS ms in\n"
	      "                  user space, none)\n"
	      "  --io-ms MS      an emulator thread 'IO iothread' that works MS ms\n"
	      "                  of every 100 ms on the host (never in the guest)\n"
	      "  --ready FILE    JSON {pid, tids, vcpus, emulator_tids} once named\n"
	      "  --report FILE   JSON of what every vCPU did, at the end\n"
	      "  --done FILE     written when every vCPU has run its phases\n"
	      "  --done-fd N     the same as a line on file descriptor N (a pipe\n"
	      "                  a caller blocks on: no polling)\n"
	      "  --wait-go       run the phases only after SIGUSR1\n"
	      "  --go-fd N       with --wait-go, go is a time instead: a line on\n"
	      "                  file descriptor N with a CLOCK_MONOTONIC time in\n"
	      "                  ns, when the main thread (woken by its own timer)\n"
	      "                  lets the vCPUs go; at once if it has passed\n"
	      "  --sched-idle    vCPU threads in SCHED_IDLE: anything else that\n"
	      "                  wants the CPU (a collector) gets it at once\n"
	      "  --enter-early   each vCPU's first entry (to the guest's first MMIO\n"
	      "                  store: no instruction retired) before --ready, so\n"
	      "                  that its set-up (stage-2 faults, vGIC) is not part\n"
	      "                  of the work after go\n"
	      "  --hold          after the phases keep the threads (blocked) until\n"
	      "                  SIGTERM; the report is written then\n"
	      "  -name, -uuid    accepted as QEMU's, for vcpuperf's VM identity\n",
	      f);
}

static uint64_t parse_u64(const char *s, const char *what)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-')
		die("bad %s '%s'", what, s);
	return v;
}

static void parse_phases(struct vcpu *v, const char *spec)
{
	char *copy = strdup(spec), *save = NULL, *tok;

	if (!copy)
		die("out of memory");
	v->nphases = 0;
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		struct phase *p;
		char *colon = strchr(tok, ':');

		if (v->nphases == MAX_PHASES)
			die("more than %d phases", MAX_PHASES);
		if (!colon)
			die("phase '%s': KIND:COUNT expected", tok);
		*colon = '\0';
		p = &v->phases[v->nphases++];
		memset(p, 0, sizeof(*p));
		p->arg = parse_u64(colon + 1, "phase count");
		if (!strcmp(tok, "loop") || !strcmp(tok, "user") ||
		    !strcmp(tok, "hvc")) {
			if (!p->arg || p->arg > UINT64_MAX / 4)
				die("%s:%s: a loop runs 1 to 2^62 times", tok,
				    colon + 1);
			if (!strcmp(tok, "loop")) {
				p->kind = PH_LOOP;
				p->el1 = LOOP_EL1 + LOOP_PER_ITER * p->arg;
			} else if (!strcmp(tok, "hvc")) {
				p->kind = PH_HVC;
				p->el1 = HVC_EL1 + HVC_PER_ITER * p->arg;
			} else {
				p->kind = PH_USER;
				p->el1 = USER_EL1;
				p->el0 = USER_EL0 + LOOP_PER_ITER * p->arg;
			}
		} else if (!strcmp(tok, "halt")) {
			p->kind = PH_HALT;
			p->el1 = HALT_EL1;
		} else if (!strcmp(tok, "pause")) {
			p->kind = PH_PAUSE;
		} else {
			die("unknown phase kind '%s' (loop, user, hvc, halt, "
			    "pause)", tok);
		}
	}
	free(copy);
	if (!v->nphases)
		die("no phases in '%s'", spec);
}

static void parse_args(int argc, char **argv)
{
	enum { O_VCPUS = 256, O_PHASES, O_READY, O_REPORT, O_DONE, O_DONE_FD,
	       O_GO, O_GO_FD, O_HOLD, O_IDLE, O_EARLY, O_IO, O_NAME, O_UUID };
	static const struct option opts[] = {
		{ "vcpus", required_argument, NULL, O_VCPUS },
		{ "phases", required_argument, NULL, O_PHASES },
		{ "ready", required_argument, NULL, O_READY },
		{ "report", required_argument, NULL, O_REPORT },
		{ "done", required_argument, NULL, O_DONE },
		{ "done-fd", required_argument, NULL, O_DONE_FD },
		{ "wait-go", no_argument, NULL, O_GO },
		{ "go-fd", required_argument, NULL, O_GO_FD },
		{ "hold", no_argument, NULL, O_HOLD },
		{ "sched-idle", no_argument, NULL, O_IDLE },
		{ "enter-early", no_argument, NULL, O_EARLY },
		{ "io-ms", required_argument, NULL, O_IO },
		{ "name", required_argument, NULL, O_NAME },
		{ "uuid", required_argument, NULL, O_UUID },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i;

	/* getopt_long_only: QEMU's -name and -uuid have one dash. */
	while ((c = getopt_long_only(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case O_VCPUS:
			opt_vcpus = (int)parse_u64(optarg, "--vcpus");
			if (opt_vcpus < 1 || opt_vcpus > MAX_VCPUS)
				die("--vcpus: 1 to %d", MAX_VCPUS);
			break;
		case O_PHASES:
			if (opt_nspecs == MAX_VCPUS)
				die("more --phases than vCPUs");
			opt_phase_spec[opt_nspecs++] = optarg;
			break;
		case O_READY:
			opt_ready = optarg;
			break;
		case O_REPORT:
			opt_report = optarg;
			break;
		case O_DONE:
			opt_done = optarg;
			break;
		case O_DONE_FD:
			opt_done_fd = (int)parse_u64(optarg, "--done-fd");
			break;
		case O_GO:
			opt_wait_go = true;
			break;
		case O_GO_FD:
			opt_go_fd = (int)parse_u64(optarg, "--go-fd");
			break;
		case O_HOLD:
			opt_hold = true;
			break;
		case O_IDLE:
			opt_sched_idle = true;
			break;
		case O_EARLY:
			opt_enter_early = true;
			break;
		case O_IO:
			opt_io_ms = (long)parse_u64(optarg, "--io-ms");
			if (opt_io_ms > 100)
				die("--io-ms: at most 100");
			break;
		case O_NAME:
		case O_UUID:
			break;	/* read by vcpuperf from /proc/PID/cmdline */
		case 'h':
			print_help(stdout);
			exit(0);
		default:
			print_help(stderr);
			exit(2);
		}
	}
	if (optind != argc)
		die("unexpected argument '%s'", argv[optind]);
	if (opt_go_fd >= 0 && !opt_wait_go)
		die("--go-fd needs --wait-go");
	if (!opt_nspecs)
		opt_phase_spec[opt_nspecs++] = "loop:1000000";
	for (i = 0; i < opt_vcpus; i++) {
		vcpus[i].idx = i;
		vcpus[i].halted_phase = -1;
		parse_phases(&vcpus[i],
			     opt_phase_spec[i < opt_nspecs ? i : opt_nspecs - 1]);
	}
}

static void set_reg(int fd, uint64_t id, uint64_t val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uint64_t)(uintptr_t)&val };

	if (ioctl(fd, KVM_SET_ONE_REG, &reg))
		die("KVM_SET_ONE_REG %#" PRIx64 ": %s", id, strerror(errno));
}

#define CORE_REG(x)	(KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
			 KVM_REG_ARM_CORE_REG(x))

static void vm_create(void)
{
	struct kvm_userspace_memory_region region;
	size_t code = (size_t)((const uint8_t *)guest_code_end -
			       (const uint8_t *)guest_code);

	if (code > MAILBOX_OFF)
		die("guest code of %zu bytes does not fit", code);
	int ret;

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0)
		die("/dev/kvm: %s", strerror(errno));
	ret = ioctl(kvm_fd, KVM_GET_API_VERSION, 0);
	if (ret != KVM_API_VERSION)
		die("KVM API version %d, want %d", ret, KVM_API_VERSION);
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0)
		die("KVM_CREATE_VM: %s", strerror(errno));
	ret = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (ret <= 0)
		die("KVM_GET_VCPU_MMAP_SIZE: %s", strerror(errno));
	run_size = (size_t)ret;
	guest_mem = mmap(NULL, GUEST_RAM_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guest_mem == MAP_FAILED)
		die("mmap guest memory: %s", strerror(errno));
	memcpy(guest_mem, guest_code, code);
	region = (struct kvm_userspace_memory_region) {
		.slot = 0,
		.guest_phys_addr = GUEST_RAM_BASE,
		.memory_size = GUEST_RAM_SIZE,
		.userspace_addr = (uint64_t)(uintptr_t)guest_mem,
	};
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region))
		die("KVM_SET_USER_MEMORY_REGION: %s", strerror(errno));
}

static volatile uint64_t *mailbox(int idx)
{
	return (volatile uint64_t *)(guest_mem + MAILBOX_OFF + 16 * idx);
}

static void vcpu_create(struct vcpu *v)
{
	struct kvm_vcpu_init init;

	v->fd = ioctl(vm_fd, KVM_CREATE_VCPU, v->idx);
	if (v->fd < 0)
		die("KVM_CREATE_VCPU %d: %s", v->idx, strerror(errno));
	v->run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      v->fd, 0);
	if (v->run == MAP_FAILED)
		die("mmap kvm_run: %s", strerror(errno));
	if (ioctl(vm_fd, KVM_ARM_PREFERRED_TARGET, &init))
		die("KVM_ARM_PREFERRED_TARGET: %s", strerror(errno));
	if (ioctl(v->fd, KVM_ARM_VCPU_INIT, &init))
		die("KVM_ARM_VCPU_INIT: %s", strerror(errno));
	set_reg(v->fd, CORE_REG(regs.pc), GUEST_RAM_BASE);
	set_reg(v->fd, CORE_REG(regs.regs[0]),
		GUEST_RAM_BASE + MAILBOX_OFF + 16 * v->idx);
	set_reg(v->fd, CORE_REG(regs.regs[5]), MMIO_BASE + 8 * v->idx);
	set_reg(v->fd, ARM64_SYS_REG(3, 0, 12, 0, 0),	/* VBAR_EL1 */
		GUEST_RAM_BASE + (uint64_t)((const uint8_t *)guest_vectors -
					    (const uint8_t *)guest_code));
}

/*
 * Enter the guest until its next MMIO exit.  -EINTR returns (a signal:
 * the waker of a halted vCPU, or a stray one) re-enter at once.
 */
static void vcpu_run_to_exit(struct vcpu *v, struct phase *p)
{
	for (;;) {
		int r = ioctl(v->fd, KVM_RUN, 0);

		v->run_returns++;
		if (r) {
			if (errno == EINTR || errno == EAGAIN) {
				if (p)
					p->intr_exits++;
				continue;
			}
			die("vCPU %d: KVM_RUN: %s", v->idx, strerror(errno));
		}
		switch (v->run->exit_reason) {
		case KVM_EXIT_MMIO:
			if (v->run->mmio.phys_addr != MMIO_BASE + 8 * v->idx ||
			    !v->run->mmio.is_write)
				die("vCPU %d: MMIO %s at %#llx", v->idx,
				    v->run->mmio.is_write ? "write" : "read",
				    (unsigned long long)v->run->mmio.phys_addr);
			v->mmio_exits++;
			return;
		case KVM_EXIT_INTR:
			if (p)
				p->intr_exits++;
			continue;
		default:
			die("vCPU %d: unexpected exit reason %u", v->idx,
			    v->run->exit_reason);
		}
	}
}

/*
 * --go-fd: read the time to go (CLOCK_MONOTONIC ns, one line) and sleep
 * until it.  The caller can be asleep by then: nothing it does is next
 * to the vCPUs' start.
 */
static void wait_go_time(void)
{
	char buf[GO_LINE_LEN + 1], *nl = NULL;
	size_t len = 0;
	uint64_t t;
	struct timespec ts;
	ssize_t n;
	int err;

	while (len < GO_LINE_LEN && !nl) {
		n = read(opt_go_fd, buf + len, GO_LINE_LEN - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("--go-fd %d: %s", opt_go_fd,
			    n ? strerror(errno) : "closed before a time");
		nl = memchr(buf + len, '\n', (size_t)n);
		len += (size_t)n;
	}
	if (!nl)
		die("--go-fd %d: no line in %d bytes", opt_go_fd, GO_LINE_LEN);
	*nl = '\0';
	t = parse_u64(buf, "--go-fd time");
	ts.tv_sec = (time_t)(t / 1000000000ULL);
	ts.tv_nsec = (long)(t % 1000000000ULL);
	/* On time, not within the default 50 us of timer slack. */
	if (prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL))
		die("PR_SET_TIMERSLACK: %s", strerror(errno));
	do {
		err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				      NULL);
	} while (err == EINTR);
	if (err)
		die("--go-fd: clock_nanosleep: %s", strerror(err));
}

static void wake_handler(int sig)
{
	(void)sig;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	char name[NAME_LEN];
	int i;

	snprintf(name, sizeof(name), "CPU %d/KVM", v->idx);
	pthread_setname_np(pthread_self(), name);
	if (opt_sched_idle) {
		struct sched_param sp = { .sched_priority = 0 };

		if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp))
			die("vCPU %d: SCHED_IDLE refused", v->idx);
	}
	vcpu_create(v);
	/* The first entry runs up to the first MMIO store: no instruction. */
	if (opt_enter_early)
		vcpu_run_to_exit(v, NULL);
	pthread_mutex_lock(&lock);
	v->tid = (pid_t)syscall(SYS_gettid);
	named++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);

	if (!opt_enter_early)
		vcpu_run_to_exit(v, NULL);
	for (i = 0; i < v->nphases; i++) {
		struct phase *p = &v->phases[i];

		p->start_ns = now_ns();
		switch (p->kind) {
		case PH_PAUSE:
			sleep_ns((int64_t)p->arg * 1000000LL);
			p->end_ns = now_ns();
			continue;
		case PH_LOOP:
		case PH_USER:
		case PH_HVC:
			mailbox(v->idx)[0] = p->kind == PH_LOOP ? GUEST_LOOP :
				p->kind == PH_USER ? GUEST_USER : GUEST_HVC;
			mailbox(v->idx)[1] = p->arg;
			break;
		case PH_HALT:
			mailbox(v->idx)[0] = GUEST_HALT;
			mailbox(v->idx)[1] = 0;
			v->halt_since_ns = p->start_ns;
			__atomic_store_n(&v->halted_phase, i, __ATOMIC_RELEASE);
			break;
		}
		vcpu_run_to_exit(v, p);
		__atomic_store_n(&v->halted_phase, -1, __ATOMIC_RELEASE);
		p->end_ns = now_ns();
	}
	/*
	 * --hold: stay, blocked, until the process ends at SIGTERM, on a
	 * condition nobody signals: the main thread is woken by the last
	 * vCPU only, and the vCPUs held are not woken by the others' ends.
	 */
	pthread_mutex_lock(&lock);
	__atomic_store_n(&v->finished, 1, __ATOMIC_RELEASE);
	if (++nfinished == opt_vcpus)
		pthread_cond_broadcast(&cond);
	while (opt_hold)
		pthread_cond_wait(&hold_cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The emulator's I/O thread: host work only, MS ms of every 100 ms. */
static void *io_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "IO iothread");
	pthread_mutex_lock(&lock);
	io_tid = (pid_t)syscall(SYS_gettid);
	named++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	while (!__atomic_load_n(&io_stop, __ATOMIC_ACQUIRE)) {
		int64_t until = now_ns() + opt_io_ms * 1000000LL;

		while (now_ns() < until)
			;
		sleep_ns((100 - opt_io_ms) * 1000000LL);
	}
	return NULL;
}

static void write_file(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fputs(text, f) == EOF || fclose(f))
		die("cannot write %s: %s", tmp, strerror(errno));
	if (rename(tmp, path))
		die("rename %s: %s", tmp, strerror(errno));
}

static void write_ready(void)
{
	char buf[16 * MAX_VCPUS + 128];
	int i, n;

	n = snprintf(buf, sizeof(buf), "{\"pid\": %d, \"tids\": [", getpid());
	for (i = 0; i < opt_vcpus; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? ", " : "",
			      vcpus[i].tid);
	n += snprintf(buf + n, sizeof(buf) - n, "], \"vcpus\": [");
	for (i = 0; i < opt_vcpus; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? ", " : "",
			      i);
	n += snprintf(buf + n, sizeof(buf) - n, "], \"emulator_tids\": [%d",
		      getpid());
	if (opt_io_ms)
		n += snprintf(buf + n, sizeof(buf) - n, ", %d", io_tid);
	snprintf(buf + n, sizeof(buf) - n, "]}\n");
	write_file(opt_ready, buf);
}

static const char *kind_name(enum phase_kind k)
{
	static const char *const names[] = {
		[PH_LOOP] = "loop", [PH_USER] = "user", [PH_HALT] = "halt",
		[PH_PAUSE] = "pause", [PH_HVC] = "hvc",
	};

	return names[k];
}

static void write_report(bool complete)
{
	FILE *f;
	char tmp[4096];
	int i, j;

	snprintf(tmp, sizeof(tmp), "%s.tmp", opt_report);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write %s: %s", tmp, strerror(errno));
	fprintf(f, "{\"pid\": %d, \"complete\": %s, \"io_tid\": %d, "
		"\"go_ns\": %" PRId64 ", \"vcpus\": [", getpid(),
		complete ? "true" : "false", opt_io_ms ? io_tid : 0, go_ns);
	for (i = 0; i < opt_vcpus; i++) {
		struct vcpu *v = &vcpus[i];
		uint64_t el1 = 0, el0 = 0;

		for (j = 0; j < v->nphases; j++) {
			if (!v->phases[j].end_ns)
				continue;
			el1 += v->phases[j].el1;
			el0 += v->phases[j].el0;
		}
		fprintf(f, "%s\n {\"vcpu\": %d, \"tid\": %d, "
			"\"guest_instructions\": %" PRIu64 ", "
			"\"guest_el1\": %" PRIu64 ", \"guest_el0\": %" PRIu64
			", \"mmio_exits\": %" PRIu64 ", \"run_returns\": %"
			PRIu64 ", \"finished\": %s, \"phases\": [",
			i ? "," : "", i, v->tid, el1 + el0, el1, el0,
			v->mmio_exits, v->run_returns,
			__atomic_load_n(&v->finished, __ATOMIC_ACQUIRE) ?
			"true" : "false");
		for (j = 0; j < v->nphases; j++) {
			struct phase *p = &v->phases[j];

			fprintf(f, "%s{\"kind\": \"%s\", \"arg\": %" PRIu64
				", \"guest_el1\": %" PRIu64 ", \"guest_el0\": %"
				PRIu64 ", \"start_ns\": %" PRId64
				", \"end_ns\": %" PRId64 ", \"intr_exits\": %"
				PRIu64 "}", j ? ", " : "", kind_name(p->kind),
				p->arg, p->end_ns ? p->el1 : 0,
				p->end_ns ? p->el0 : 0, p->start_ns, p->end_ns,
				p->intr_exits);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	if (fclose(f))
		die("cannot write %s: %s", tmp, strerror(errno));
	if (rename(tmp, opt_report))
		die("rename %s: %s", tmp, strerror(errno));
}

static bool all_finished(void)
{
	int i;

	for (i = 0; i < opt_vcpus; i++)
		if (!__atomic_load_n(&vcpus[i].finished, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * The main thread: wakes halted vCPUs when their time is up, and waits
 * for the end.  A signal that reaches a vCPU before its WFI only makes
 * KVM_RUN return -EINTR (re-entered at once): it is sent again until the
 * halt phase has ended.
 */
static void supervise(void)
{
	bool halts = false;
	int i, j;

	for (i = 0; i < opt_vcpus; i++)
		for (j = 0; j < vcpus[i].nphases; j++)
			halts |= vcpus[i].phases[j].kind == PH_HALT;
	if (!halts) {
		/* Nothing to wake: sleep until the end (no timer wakeups). */
		pthread_mutex_lock(&lock);
		while (!all_finished())
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
		return;
	}
	while (!all_finished()) {
		int64_t now = now_ns();

		for (i = 0; i < opt_vcpus; i++) {
			struct vcpu *v = &vcpus[i];
			int h = __atomic_load_n(&v->halted_phase,
						__ATOMIC_ACQUIRE);

			if (h < 0)
				continue;
			if (now - v->halt_since_ns >=
			    (int64_t)v->phases[h].arg * 1000000LL)
				pthread_kill(v->thread, SIGUSR2);
		}
		sleep_ns(WAKE_RETRY_NS / 4);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t set, old;
	int i, sig;

	parse_args(argc, argv);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL))
		die("sigaction: %s", strerror(errno));
	/* SIGUSR1 (go) and SIGTERM (end of --hold) reach the main thread. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);

	vm_create();
	for (i = 0; i < opt_vcpus; i++)
		if (pthread_create(&vcpus[i].thread, NULL, vcpu_thread,
				   &vcpus[i]))
			die("pthread_create failed");
	if (opt_io_ms) {
		pthread_t io;

		if (pthread_create(&io, NULL, io_thread, NULL))
			die("pthread_create failed");
	}
	pthread_mutex_lock(&lock);
	while (named < opt_vcpus + (opt_io_ms ? 1 : 0))
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if (opt_ready)
		write_ready();
	if (opt_wait_go) {
		sigset_t go_set;

		if (opt_go_fd >= 0) {
			wait_go_time();
		} else {
			sigemptyset(&go_set);
			sigaddset(&go_set, SIGUSR1);
			sigwait(&go_set, &sig);
		}
	}
	pthread_mutex_lock(&lock);
	go = true;
	go_ns = now_ns();
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);

	supervise();
	if (opt_done)
		write_file(opt_done, "done\n");
	if (opt_done_fd >= 0 && write(opt_done_fd, "done\n", 5) != 5)
		die("--done-fd %d: %s", opt_done_fd, strerror(errno));
	if (opt_hold) {
		sigset_t term;

		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigwait(&term, &sig);
		__atomic_store_n(&io_stop, 1, __ATOMIC_RELEASE);
		if (opt_report)
			write_report(true);
		return 0;
	}
	for (i = 0; i < opt_vcpus; i++)
		pthread_join(vcpus[i].thread, NULL);
	__atomic_store_n(&io_stop, 1, __ATOMIC_RELEASE);
	if (opt_report)
		write_report(true);
	return 0;
}
