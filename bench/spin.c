// SPDX-License-Identifier: GPL-2.0
/*
 * spin - benchmark workload: N threads named "CPU <n>/KVM" that spin.
 *
 * spin -n N [--ready FILE] [--idle]
 * The main thread is vCPU 0 and spins too, so the process has exactly N
 * threads (perf stat -p PID, vcpuperf --pid PID and the TID list of the
 * other collectors see the same threads).  --idle puts every spinner in
 * SCHED_IDLE: always runnable, so each CPU always runs one of them, but
 * they never delay a collector.  Once all threads are named, FILE gets
 * {"pid": P, "tids": [...]}.  Runs until killed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_THREADS 4096

static int nthreads = 2;
static int idle_policy;
static pid_t tid_of[MAX_THREADS];
static int nnamed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static volatile unsigned long sink;

static void become(int vcpu)
{
	char name[16];
	struct sched_param sp = { 0 };

	snprintf(name, sizeof(name), "CPU %d/KVM", vcpu);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	if (idle_policy && sched_setscheduler(0, SCHED_IDLE, &sp))
		perror("sched_setscheduler(SCHED_IDLE)");
	pthread_mutex_lock(&lock);
	tid_of[vcpu] = (pid_t)syscall(SYS_gettid);
	nnamed++;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void spin_forever(void)
{
	unsigned long x = 0;

	for (;;) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		if (!(x & 0xfffff))
			sink = x;
	}
}

static void *worker(void *arg)
{
	become((int)(long)arg);
	spin_forever();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	pthread_attr_t pa;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready = argv[++i];
		else if (!strcmp(argv[i], "--idle"))
			idle_policy = 1;
		else {
			fprintf(stderr, "usage: spin -n N [--ready FILE] [--idle]\n");
			return 2;
		}
	}
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "spin: -n must be 1..%d\n", MAX_THREADS);
		return 2;
	}
	pthread_attr_init(&pa);
	pthread_attr_setstacksize(&pa, 64 * 1024);
	for (i = 1; i < nthreads; i++) {
		pthread_t t;
		int err = pthread_create(&t, &pa, worker, (void *)(long)i);

		if (err) {
			fprintf(stderr, "spin: pthread_create: %s\n", strerror(err));
			return 1;
		}
	}
	become(0);
	pthread_mutex_lock(&lock);
	while (nnamed < nthreads)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	if (ready) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		f = fopen(tmp, "w");
		if (!f) {
			perror(tmp);
			return 1;
		}
		fprintf(f, "{\"pid\": %d, \"tids\": [", (int)getpid());
		for (i = 0; i < nthreads; i++)
			fprintf(f, "%s%d", i ? ", " : "", (int)tid_of[i]);
		fprintf(f, "]}\n");
		if (fclose(f) || rename(tmp, ready)) {
			perror(ready);
			return 1;
		}
	}
	spin_forever();
	return 0;
}
