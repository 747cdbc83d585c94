// SPDX-License-Identifier: GPL-2.0
/*
 * The reader of a collection's records: one at a time, starting with a
 * header record.  read() blocks until records are queued (or returns
 * -EAGAIN with O_NONBLOCK), poll() reports readability, and read() returns
 * 0 (end of file) once the session's finished record has been read, as
 * trace_pipe does.  It serves the debugfs stream file (the default
 * collection) and /dev/vcpuperf (the file's own collection).
 */
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ring.h"
#include "stream.h"
#include "vcpuperf.h"

/*
 * Records moved out of the ring per refill: a few dozen of the largest,
 * small enough to keep an idle collection cheap.
 */
#define VP_READ_BUF	(16 * 1024)

/**
 * struct vp_reader - the open stream
 * @coll:	the collection
 * @lock:	serialises read() of files that share the reader (dup(),
 *		fork()); protects every field below
 * @buf:	records taken from the ring, not yet copied to the reader
 * @len:	bytes in @buf
 * @off:	bytes of @buf already copied
 * @header_due:	the header record is still to be read: it is made at the
 *		first read, so that it describes the collection as it is
 *		then (its ring size, interval, first sequence number)
 */
struct vp_reader {
	struct vp_coll *coll;
	struct mutex lock;	/* see @lock above */
	u8 *buf;
	size_t len;
	size_t off;
	bool header_due;
};

static void vp_reader_header(struct vp_reader *r)
{
	struct vp_coll *c = r->coll;
	struct vcpuperf_header *h = (struct vcpuperf_header *)r->buf;

	memset(h, 0, sizeof(*h));
	h->rec.type = VCPUPERF_REC_HEADER;
	h->rec.size = sizeof(*h);
	h->rec.t_mono_ns = ktime_get_ns();
	h->rec.t_wall_ns = ktime_get_real_ns();
	h->magic = VCPUPERF_MAGIC;
	h->abi_version = VCPUPERF_ABI_VERSION;
	h->rec_size = sizeof(struct vcpuperf_rec);
	h->max_events = VCPUPERF_MAX_EVENTS;
	h->ring_bytes = READ_ONCE(c->ring.size);
	h->collection = c->id;
	h->next_seq = vp_ring_first_seq(&c->ring);
	h->interval_ns = READ_ONCE(c->interval_ns);
	r->len = sizeof(*h);
	r->off = 0;
}

/**
 * vp_reader_open() - claim the stream for one reader
 * @c:		the collection
 *
 * A collection has one reader at a time.  The first thing it reads is a
 * header record.
 *
 * Return: the reader, ERR_PTR(-EBUSY) if another reader has the stream,
 * ERR_PTR(-ENOMEM).
 */
struct vp_reader *vp_reader_open(struct vp_coll *c)
{
	struct vp_reader *r;

	if (atomic_cmpxchg(&c->reader_open, 0, 1))
		return ERR_PTR(-EBUSY);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto err_busy;
	r->buf = kvmalloc(VP_READ_BUF, GFP_KERNEL);
	if (!r->buf)
		goto err_free;
	r->coll = c;
	mutex_init(&r->lock);
	r->header_due = true;
	return r;

err_free:
	kfree(r);
err_busy:
	atomic_set_release(&c->reader_open, 0);
	return ERR_PTR(-ENOMEM);
}

/**
 * vp_reader_close() - give the stream up
 * @r:		the reader from vp_reader_open()
 *
 * Records it took from the ring but did not copy out are lost.
 */
void vp_reader_close(struct vp_reader *r)
{
	struct vp_coll *c = r->coll;

	kvfree(r->buf);
	kfree(r);
	atomic_set_release(&c->reader_open, 0);
}

/* vp_reader_read() with the reader's lock held. */
static ssize_t vp_reader_fill(struct vp_reader *r, char __user *ubuf,
			      size_t count, bool nonblock)
{
	struct vp_ring *ring = &r->coll->ring;
	size_t copied = 0;
	int ret;

	if (r->header_due) {
		vp_reader_header(r);
		r->header_due = false;
	}
	while (copied < count) {
		if (r->off < r->len) {
			size_t n = min(count - copied, r->len - r->off);

			if (copy_to_user(ubuf + copied, r->buf + r->off, n))
				return copied ? copied : -EFAULT;
			copied += n;
			r->off += n;
			continue;
		}
		r->off = 0;
		r->len = vp_ring_pop(ring, r->buf, VP_READ_BUF);
		if (r->len)
			continue;
		if (copied)
			break;
		if (vp_ring_eof(ring))
			return 0;
		if (nonblock)
			return -EAGAIN;
		ret = wait_event_interruptible(ring->wait,
					       !vp_ring_empty(ring) ||
					       vp_ring_eof(ring));
		if (ret)
			return ret;
	}
	return copied;
}

/**
 * vp_reader_read() - copy records to userspace
 * @r:		the reader
 * @ubuf:	destination
 * @count:	its size
 * @nonblock:	return -EAGAIN instead of waiting for records
 *
 * Return: bytes copied (records may be split across reads), 0 at end of
 * file (the session's finished record has been read), or a negative errno.
 */
ssize_t vp_reader_read(struct vp_reader *r, char __user *ubuf, size_t count,
		       bool nonblock)
{
	ssize_t ret;

	if (mutex_lock_interruptible(&r->lock))
		return -ERESTARTSYS;
	ret = vp_reader_fill(r, ubuf, count, nonblock);
	mutex_unlock(&r->lock);
	return ret;
}

/**
 * vp_reader_poll() - poll() for the stream
 * @r:		the reader
 * @file:	the file polled
 * @wait:	poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM when a read would not block, else 0.
 */
__poll_t vp_reader_poll(struct vp_reader *r, struct file *file,
			poll_table *wait)
{
	struct vp_ring *ring = &r->coll->ring;

	poll_wait(file, &ring->wait, wait);
	if (r->header_due || r->off < r->len || !vp_ring_empty(ring) ||
	    vp_ring_eof(ring))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}
