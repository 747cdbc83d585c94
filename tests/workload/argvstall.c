// SPDX-License-Identifier: GPL-2.0
/*
 * argvstall - a process whose command line another process cannot read
 * at once: for the vcpuperf tests of a QEMU whose argv cannot be read
 * without waiting for it.
 *
 * It names one thread "CPU 0/KVM" (so that qemu= attaches to it) and puts
 * the whole pages inside its command line (give it an argument of a few
 * KiB) behind something only it serves, until SIGUSR1 (or --hold-ms):
 *
 *   --uffd      a userfaultfd (missing pages; nobody reads its faults)
 *   --fuse DIR  a file of a FUSE file system it mounts on DIR and serves
 *               itself (raw /dev/fuse protocol), mapped over those pages:
 *               a read of them waits for its FUSE_READ answer
 *
 * A read of its command line by another process (/proc/PID/cmdline,
 * access_process_vm()) waits there, if the kernel lets it wait.  The
 * process itself never touches those pages.
 *
 * Usage: argvstall (--uffd | --fuse DIR) --ready FILE [--hold-ms N]
 *                  [-- ARGS...]
 *   FILE gets {"pid": P, "argv_pages": N} once the pages are gone; SIGUSR1
 *   serves them (a read waiting there then completes); SIGTERM ends it
 *   (and unmounts DIR).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_COPY	(64 * 1024)
#define FUSE_BUF	(FUSE_MIN_READ_BUFFER + 64 * 1024)
#define FILE_NAME	"argv"
#define FILE_INO	2
#define MAX_HELD	64

static char saved[MAX_COPY];
static uintptr_t area_start;
static size_t area_len;
static int uffd = -1;
static int fuse_fd = -1;
static const char *mnt;
static volatile sig_atomic_t serve;

/* FUSE_READ requests held until SIGUSR1: their unique ids and sizes. */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t held_unique[MAX_HELD];
static uint32_t held_size[MAX_HELD];
static int nheld;

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static void on_usr1(int sig)
{
	(void)sig;
	serve = 1;
}

static void on_term(int sig)
{
	(void)sig;
	if (mnt)
		umount2(mnt, MNT_DETACH);
	_exit(0);
}

static void *vcpu(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "CPU 0/KVM");
	for (;;)
		pause();
	return NULL;
}

/* ------------------------------------------------------------ FUSE --- */

static void fuse_reply(uint64_t unique, int error, const void *arg,
		       size_t len)
{
	char buf[sizeof(struct fuse_out_header) + MAX_COPY];
	struct fuse_out_header *h = (void *)buf;

	if (len > MAX_COPY)
		len = MAX_COPY;
	h->len = sizeof(*h) + (error ? 0 : len);
	h->error = error;
	h->unique = unique;
	if (!error && len)
		memcpy(h + 1, arg, len);
	if (write(fuse_fd, buf, h->len) < 0 && errno != ENOENT)
		perror("fuse reply");
}

static void fuse_attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = ino == FUSE_ROOT_ID ? 040755 : 0100644;
	a->nlink = 1;
	a->size = ino == FUSE_ROOT_ID ? 0 : area_len;
	a->blocks = (a->size + 511) / 512;
	a->blksize = 4096;
}

/* The file's bytes: the command line's pages as they were. */
static void fuse_read_reply(uint64_t unique, uint64_t off, uint32_t size)
{
	if (off >= area_len)
		size = 0;
	else if (off + size > area_len)
		size = area_len - off;
	fuse_reply(unique, 0, saved + off, size);
}

static void fuse_release_held(void)
{
	int i;

	pthread_mutex_lock(&held_lock);
	for (i = 0; i < nheld; i++)
		fuse_read_reply(held_unique[i], 0, held_size[i]);
	nheld = 0;
	pthread_mutex_unlock(&held_lock);
}

static void fuse_handle(const struct fuse_in_header *in, const void *arg)
{
	union {
		struct fuse_init_out init;
		struct fuse_attr_out attr;
		struct fuse_entry_out entry;
		struct fuse_open_out open;
	} out;
	const struct fuse_read_in *rd = arg;

	memset(&out, 0, sizeof(out));
	switch (in->opcode) {
	case FUSE_INIT:
		out.init.major = FUSE_KERNEL_VERSION;
		out.init.minor = FUSE_KERNEL_MINOR_VERSION;
		out.init.max_readahead = 0;
		out.init.max_write = 4096;
		fuse_reply(in->unique, 0, &out.init, sizeof(out.init));
		break;
	case FUSE_GETATTR:
		fuse_attr(&out.attr.attr, in->nodeid);
		fuse_reply(in->unique, 0, &out.attr, sizeof(out.attr));
		break;
	case FUSE_LOOKUP:
		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, FILE_NAME)) {
			fuse_reply(in->unique, -ENOENT, NULL, 0);
			break;
		}
		out.entry.nodeid = FILE_INO;
		fuse_attr(&out.entry.attr, FILE_INO);
		fuse_reply(in->unique, 0, &out.entry, sizeof(out.entry));
		break;
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		out.open.fh = 1;
		fuse_reply(in->unique, 0, &out.open, sizeof(out.open));
		break;
	case FUSE_READ:
		pthread_mutex_lock(&held_lock);
		if (!serve && nheld < MAX_HELD) {
			held_unique[nheld] = in->unique;
			held_size[nheld++] = rd->size;
			pthread_mutex_unlock(&held_lock);
			break;
		}
		pthread_mutex_unlock(&held_lock);
		fuse_read_reply(in->unique, rd->offset, rd->size);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;		/* no reply */
	case FUSE_FLUSH:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_DESTROY:
		fuse_reply(in->unique, 0, NULL, 0);
		break;
	default:
		fuse_reply(in->unique, -ENOSYS, NULL, 0);
	}
}

static void *fuse_serve(void *arg)
{
	static char buf[FUSE_BUF];
	const struct fuse_in_header *in = (void *)buf;
	ssize_t n;

	(void)arg;
	for (;;) {
		n = read(fuse_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n <= 0)
			return NULL;
		fuse_handle(in, in + 1);
	}
}

static void fuse_cover(uintptr_t lo, size_t len)
{
	char opts[128], path[4096];
	pthread_t thr;
	void *p;
	int fd;

	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0)
		die("/dev/fuse");
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other",
		 fuse_fd);
	if (mount("argvstall", mnt, "fuse.argvstall", MS_NOSUID | MS_NODEV,
		  opts))
		die("mount fuse");
	if (pthread_create(&thr, NULL, fuse_serve, NULL))
		die("pthread_create");
	snprintf(path, sizeof(path), "%s/" FILE_NAME, mnt);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path);
	p = mmap((void *)lo, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (p == MAP_FAILED)
		die("mmap over the command line");
	close(fd);
}

/* ------------------------------------------------------- userfaultfd --- */

static void uffd_cover(uintptr_t lo, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die("userfaultfd");
	if (ioctl(uffd, UFFDIO_API, &api))
		die("UFFDIO_API");
	reg.range.start = lo;
	reg.range.len = len;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die("UFFDIO_REGISTER");
	if (madvise((void *)lo, len, MADV_DONTNEED))
		die("madvise");
}

/* Put the saved pages back: readers waiting on them go on. */
static void uffd_serve(void)
{
	struct uffdio_copy cp = {
		.dst = area_start,
		.src = (uintptr_t)saved,
		.len = area_len,
	};

	if (ioctl(uffd, UFFDIO_COPY, &cp) && errno != EEXIST)
		die("UFFDIO_COPY");
}

int main(int argc, char **argv)
{
	const char *ready = NULL;
	char tmp[4096];
	long hold_ms = 60000, waited = 0;
	long page = sysconf(_SC_PAGESIZE);
	bool use_uffd = false;
	uintptr_t lo, hi;
	pthread_t thr;
	FILE *f;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ready") && i + 1 < argc)
			ready = argv[++i];
		else if (!strcmp(argv[i], "--hold-ms") && i + 1 < argc)
			hold_ms = atol(argv[++i]);
		else if (!strcmp(argv[i], "--fuse") && i + 1 < argc)
			mnt = argv[++i];
		else if (!strcmp(argv[i], "--uffd"))
			use_uffd = true;
		else if (!strcmp(argv[i], "--"))
			break;
	}
	if (!ready || use_uffd == !!mnt) {
		fprintf(stderr, "usage: argvstall (--uffd | --fuse DIR) --ready FILE [--hold-ms N] [-- ARGS...]\n");
		return 2;
	}
	ready = strdup(ready);
	mnt = mnt ? strdup(mnt) : NULL;
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	if (pthread_create(&thr, NULL, vcpu, NULL))
		die("pthread_create");

	/*
	 * The whole pages inside the command line: the arguments hold
	 * nothing else (the pointer arrays, the environment and this
	 * thread's stack are in the pages around them, which stay).
	 */
	lo = ((uintptr_t)argv[0] + page - 1) & ~(uintptr_t)(page - 1);
	hi = ((uintptr_t)argv[argc - 1] + strlen(argv[argc - 1])) &
	     ~(uintptr_t)(page - 1);
	if (hi <= lo || hi - lo > MAX_COPY) {
		fprintf(stderr, "argvstall: the command line must span a whole page and at most %d bytes (give a long argument)\n",
			MAX_COPY);
		return 2;
	}
	area_start = lo;
	area_len = hi - lo;
	memcpy(saved, (void *)lo, area_len);
	if (use_uffd)
		uffd_cover(lo, area_len);
	else
		fuse_cover(lo, area_len);

	/* Atomically: whoever sees the file sees all of it. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
	f = fopen(tmp, "w");
	if (!f)
		die(tmp);
	fprintf(f, "{\"pid\": %d, \"argv_pages\": %zu}\n", getpid(),
		area_len / page);
	if (fclose(f) || rename(tmp, ready))
		die(ready);

	/* Nothing here touches the command line until it is served. */
	while (!serve && waited < hold_ms) {
		usleep(10000);
		waited += 10;
	}
	serve = 1;
	if (use_uffd)
		uffd_serve();
	else
		fuse_release_held();
	for (;;)
		pause();
}
