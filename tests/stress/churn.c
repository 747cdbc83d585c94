// SPDX-License-Identifier: GPL-2.0
/*
 * churn - a fake QEMU process for the vcpuperf stress test: threads named
 * "CPU <n>/KVM" that are created and exit continuously.
 *
 *   churn [--persist N] [--spawners M] [--ready FILE]
 *
 * --persist N   N threads "CPU 0/KVM".."CPU N-1/KVM" that live until the
 *               process is killed, each waking every ~1 ms (20 ms when
 *               N > 16) to do a little work (default 2)
 * --spawners M  M threads that create and join short-lived threads named
 *               "CPU <n>/KVM" (n >= N) without pause (default 2); a third of
 *               them exit right after naming themselves (microseconds after
 *               creation, racing counter creation and the first read), the
 *               others spin or sleep up to 3 ms first
 * --ready FILE  write {"pid": P, "tids": [...]} (the persistent threads)
 *               there once they all run
 *
 * Runs until killed.  No output otherwise.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int n_persist = 2;
static int n_spawners = 2;
static const char *ready_path;
static atomic_int persist_ready;
static pid_t *persist_tids;
static atomic_uint next_vcpu;

static void set_name(unsigned int n)
{
	char name[16];

	snprintf(name, sizeof(name), "CPU %u/KVM", n);
	pthread_setname_np(pthread_self(), name);
}

static void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	nanosleep(&ts, NULL);
}

static void *persist_fn(void *arg)
{
	long i = (long)arg;
	volatile unsigned long x = 0;

	set_name((unsigned int)i);
	persist_tids[i] = (pid_t)syscall(SYS_gettid);
	atomic_fetch_add(&persist_ready, 1);
	for (;;) {
		for (int k = 0; k < 2000; k++)
			x += (unsigned long)k;
		/*
		 * Many threads: wake once a second.  Under TCG with a debug
		 * kernel 256 threads waking every few ms take both vCPUs, and
		 * the fair scheduler leaves the test itself 1/257 of them.
		 */
		sleep_ns(n_persist > 16 ? 1000000000L : 1000000L);
	}
	return NULL;
}

static void *short_fn(void *arg)
{
	unsigned long r = (unsigned long)arg;
	volatile unsigned long x = 0;

	set_name(atomic_fetch_add(&next_vcpu, 1) % 4096);
	switch (r % 3) {
	case 0:			/* exit within microseconds of creation */
		break;
	case 1:			/* spin up to ~1 ms */
		for (unsigned long k = 0; k < (r >> 2) % 200000; k++)
			x += k;
		break;
	default:		/* sleep up to 3 ms */
		sleep_ns((long)((r >> 2) % 3000000));
		break;
	}
	return NULL;
}

static void *spawner_fn(void *arg)
{
	unsigned int seed = (unsigned int)(unsigned long)arg;

	for (;;) {
		pthread_t t;
		unsigned long r = (unsigned long)rand_r(&seed);

		if (pthread_create(&t, NULL, short_fn, (void *)r) == 0)
			pthread_join(t, NULL);
		else
			sleep_ns(1000000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--persist") && i + 1 < argc)
			n_persist = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--spawners") && i + 1 < argc)
			n_spawners = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready_path = argv[++i];
		else {
			fprintf(stderr, "usage: churn [--persist N] [--spawners M] [--ready FILE]\n");
			return 2;
		}
	}
	if (n_persist < 0 || n_persist > 4000 || n_spawners < 0 || n_spawners > 64) {
		fprintf(stderr, "churn: bad counts\n");
		return 2;
	}
	atomic_store(&next_vcpu, (unsigned int)n_persist);
	persist_tids = calloc((size_t)n_persist + 1, sizeof(*persist_tids));
	if (!persist_tids)
		return 1;
	for (long i = 0; i < n_persist; i++)
		if (pthread_create(&t, NULL, persist_fn, (void *)i)) {
			perror("churn: pthread_create");
			return 1;
		}
	while (atomic_load(&persist_ready) < n_persist)
		sleep_ns(1000000);
	for (long i = 0; i < n_spawners; i++)
		if (pthread_create(&t, NULL, spawner_fn, (void *)(i * 7919 + 1))) {
			perror("churn: pthread_create");
			return 1;
		}
	if (ready_path) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", ready_path);
		f = fopen(tmp, "w");
		if (!f) {
			perror(tmp);
			return 1;
		}
		fprintf(f, "{\"pid\": %d, \"tids\": [", (int)getpid());
		for (int i = 0; i < n_persist; i++)
			fprintf(f, "%s%d", i ? ", " : "", (int)persist_tids[i]);
		fprintf(f, "]}\n");
		if (fclose(f) || rename(tmp, ready_path)) {
			perror(ready_path);
			return 1;
		}
	}
	for (;;)
		pause();
	return 0;
}
