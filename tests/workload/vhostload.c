// SPDX-License-Identifier: GPL-2.0
/*
 * vhostload - keep a real vhost worker busy, as a VM's vhost device does,
 * for vcpuperf's tests of threads that never return to user mode
 * (tests/integration/selfread.py, vhost_worker_never_asked).
 *
 * It owns a /dev/vhost-vsock device (VHOST_SET_OWNER starts its worker:
 * from Linux 6.4 a thread of this process, "vhost-<pid>", that never
 * returns to user mode; before, a kernel thread of that name), gives it a
 * memory table and two virtqueues in its own memory, and posts a ring of
 * transmit descriptors (resets of connections that do not exist: nothing
 * answers them) again each time the worker has consumed all of it,
 * kicking the queue, so that the worker runs most of the time.
 *
 *   vhostload --seconds N [--ready FILE]
 *
 * --ready gets {"pid": P, "worker": "vhost-P"} once the device runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/vhost.h>
#include <linux/virtio_ring.h>
#include <linux/virtio_vsock.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RX_QSIZE	256		/* descriptors of the unused rx queue */
#define TX_QSIZE	32768		/* the largest split virtqueue */
#define NPKT		256		/* packets the tx descriptors share */
#define MEM_SIZE	(4 * 1024 * 1024) /* the "guest" memory */
#define PKT_SIZE	64		/* a header and a little payload */
#define GUEST_CID	3		/* the first CID a guest may have */
#define HOST_CID	2		/* VMADDR_CID_HOST */
#define RX_Q		0
#define TX_Q		1
#define NQ		2
#define NS_PER_S	1000000000LL

struct queue {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	int kick, call;
	uint16_t avail_idx, used_seen;
};

static int vfd;
static uint8_t *mem;
static struct queue q[NQ];

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vhostload: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void vioctl(unsigned long req, void *arg, const char *what)
{
	if (ioctl(vfd, req, arg))
		die("%s: %s", what, strerror(errno));
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Lay out queue @i in the memory at @off; returns the next free offset. */
static size_t setup_queue(int i, size_t off)
{
	unsigned int qsize = i == TX_Q ? TX_QSIZE : RX_QSIZE;
	struct vhost_vring_state num = { .index = i, .num = qsize };
	struct vhost_vring_state base = { .index = i, .num = 0 };
	struct vhost_vring_addr addr = { .index = i };
	struct vhost_vring_file f = { .index = i };
	struct queue *qq = &q[i];

	qq->desc = (struct vring_desc *)(mem + off);
	off += sizeof(struct vring_desc) * qsize;
	qq->avail = (struct vring_avail *)(mem + off);
	off += sizeof(struct vring_avail) + sizeof(uint16_t) * (qsize + 1);
	off = (off + 4095) & ~(size_t)4095;
	qq->used = (struct vring_used *)(mem + off);
	off += sizeof(struct vring_used) +
	       sizeof(struct vring_used_elem) * qsize + sizeof(uint16_t);
	off = (off + 4095) & ~(size_t)4095;
	qq->kick = eventfd(0, EFD_NONBLOCK);
	qq->call = eventfd(0, EFD_NONBLOCK);
	if (qq->kick < 0 || qq->call < 0)
		die("eventfd: %s", strerror(errno));
	addr.desc_user_addr = (uint64_t)(uintptr_t)qq->desc;
	addr.avail_user_addr = (uint64_t)(uintptr_t)qq->avail;
	addr.used_user_addr = (uint64_t)(uintptr_t)qq->used;
	vioctl(VHOST_SET_VRING_NUM, &num, "VHOST_SET_VRING_NUM");
	vioctl(VHOST_SET_VRING_BASE, &base, "VHOST_SET_VRING_BASE");
	vioctl(VHOST_SET_VRING_ADDR, &addr, "VHOST_SET_VRING_ADDR");
	f.fd = qq->kick;
	vioctl(VHOST_SET_VRING_KICK, &f, "VHOST_SET_VRING_KICK");
	f.fd = qq->call;
	vioctl(VHOST_SET_VRING_CALL, &f, "VHOST_SET_VRING_CALL");
	return off;
}

/* Make descriptor @d available again on the transmit queue. */
static void post_tx(uint16_t d)
{
	struct queue *tx = &q[TX_Q];

	tx->avail->ring[tx->avail_idx % TX_QSIZE] = d;
	tx->avail_idx++;
}

static void kick(int i)
{
	uint64_t one = 1;

	__atomic_store_n(&q[i].avail->idx, q[i].avail_idx, __ATOMIC_RELEASE);
	if (write(q[i].kick, &one, sizeof(one)) != sizeof(one) &&
	    errno != EAGAIN)
		die("kick: %s", strerror(errno));
}

static void start_device(void)
{
	struct {
		struct vhost_memory m;
		struct vhost_memory_region r;
	} table = { .m = { .nregions = 1 } };
	uint64_t features, cid = GUEST_CID;
	size_t off = 0, pkts;
	int running = 1, i;

	vfd = open("/dev/vhost-vsock", O_RDWR | O_CLOEXEC);
	if (vfd < 0)
		die("/dev/vhost-vsock: %s", strerror(errno));
	vioctl(VHOST_SET_OWNER, NULL, "VHOST_SET_OWNER");
	vioctl(VHOST_GET_FEATURES, &features, "VHOST_GET_FEATURES");
	features &= 1ULL << VIRTIO_F_VERSION_1;
	vioctl(VHOST_SET_FEATURES, &features, "VHOST_SET_FEATURES");
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	/* Guest addresses are ours: one region mapped one to one. */
	table.r.guest_phys_addr = (uint64_t)(uintptr_t)mem;
	table.r.memory_size = MEM_SIZE;
	table.r.userspace_addr = (uint64_t)(uintptr_t)mem;
	vioctl(VHOST_SET_MEM_TABLE, &table, "VHOST_SET_MEM_TABLE");
	for (i = 0; i < NQ; i++)
		off = setup_queue(i, off);
	/*
	 * Transmit packets to the host, from this "guest", on no port: NPKT
	 * of them, each behind every NPKT-th descriptor of a ring as large
	 * as virtio allows, so that a kick gives the worker a long run of
	 * work (tens of milliseconds under TCG) rather than a short one it
	 * finishes before another CPU looks at it.
	 */
	pkts = off;
	if (pkts + NPKT * PKT_SIZE > MEM_SIZE)
		die("layout does not fit");
	for (i = 0; i < NPKT; i++) {
		struct virtio_vsock_hdr *h =
			(struct virtio_vsock_hdr *)(mem + pkts + i * PKT_SIZE);

		h->src_cid = GUEST_CID;
		h->dst_cid = HOST_CID;
		h->src_port = 1024 + i;
		h->dst_port = 1;
		h->len = PKT_SIZE - sizeof(*h);
		h->type = VIRTIO_VSOCK_TYPE_STREAM;
		h->op = VIRTIO_VSOCK_OP_RST;	/* answered by nothing */
	}
	for (i = 0; i < TX_QSIZE; i++) {
		q[TX_Q].desc[i].addr =
			(uint64_t)(uintptr_t)(mem + pkts + (i % NPKT) * PKT_SIZE);
		q[TX_Q].desc[i].len = PKT_SIZE;
		post_tx((uint16_t)i);
	}
	vioctl(VHOST_VSOCK_SET_GUEST_CID, &cid, "VHOST_VSOCK_SET_GUEST_CID");
	vioctl(VHOST_VSOCK_SET_RUNNING, &running, "VHOST_VSOCK_SET_RUNNING");
	kick(TX_Q);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "ready", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ready = NULL;
	int64_t deadline;
	long seconds = 5;
	uint64_t posted = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = strtol(optarg, NULL, 10);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			fputs("usage: vhostload --seconds N [--ready FILE]\n",
			      stderr);
			return 2;
		}
	}
	start_device();
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (!f)
			die("%s: %s", ready, strerror(errno));
		fprintf(f, "{\"pid\": %d, \"worker\": \"vhost-%d\"}\n",
			getpid(), getpid());
		fclose(f);
	}
	deadline = now_ns() + seconds * NS_PER_S;
	while (now_ns() < deadline) {
		struct queue *tx = &q[TX_Q];
		uint16_t used = __atomic_load_n(&tx->used->idx,
						__ATOMIC_ACQUIRE);

		/*
		 * Once the worker has consumed the whole ring, all of it goes
		 * back and is kicked: the worker runs for a long while, then
		 * sleeps once (as a real device's worker does between bursts;
		 * one that never sleeps would also hold up every RCU-tasks
		 * grace period, module unload's among them).
		 */
		if (used != tx->avail_idx)
			continue;
		while (tx->used_seen != used) {
			post_tx((uint16_t)tx->used->ring[tx->used_seen %
							 TX_QSIZE].id);
			tx->used_seen++;
			posted++;
		}
		kick(TX_Q);
	}
	printf("vhostload: %llu packets re-posted in %ld s\n",
	       (unsigned long long)posted, seconds);
	return 0;
}
