// SPDX-License-Identifier: GPL-2.0
/*
 * The record stream: one reader at a time reads the records, starting with
 * a header record.  read() blocks until records are queued (or returns
 * -EAGAIN with O_NONBLOCK), poll() reports readability, and read() returns
 * 0 (end of file) once the session's finished record has been read, as
 * trace_pipe does.  The reader functions here serve both the debugfs
 * stream file, whose file operations are at the end, and /dev/vcpuperf
 * (chardev.c).
 */
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "vcpuperf.h"

/* Records moved out of the ring per refill. */
#define VP_READ_BUF	(64 * 1024)

/**
 * struct vp_reader - the open stream
 * @vp:		module state
 * @buf:	records taken from the ring, not yet copied to the reader
 * @len:	bytes in @buf
 * @off:	bytes of @buf already copied
 */
struct vp_reader {
	struct vp_state *vp;
	u8 *buf;
	size_t len;
	size_t off;
};

static void vp_reader_header(struct vp_reader *r)
{
	struct vp_state *vp = r->vp;
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
	h->ring_bytes = vp->ring.size;
	h->next_seq = vp_ring_first_seq(&vp->ring);
	h->interval_ns = READ_ONCE(vp->interval_ns);
	r->len = sizeof(*h);
	r->off = 0;
}

/**
 * vp_reader_open() - claim the stream for one reader
 * @vp:		module state
 *
 * There is one reader at a time, whichever file it reads through (the
 * debugfs stream file or /dev/vcpuperf).  The first thing it reads is a
 * header record.
 *
 * Return: the reader, ERR_PTR(-EBUSY) if another reader has the stream,
 * ERR_PTR(-ENOMEM).
 */
struct vp_reader *vp_reader_open(struct vp_state *vp)
{
	struct vp_reader *r;

	if (atomic_cmpxchg(&vp->reader_open, 0, 1))
		return ERR_PTR(-EBUSY);
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		goto err_busy;
	r->buf = kvmalloc(VP_READ_BUF, GFP_KERNEL);
	if (!r->buf)
		goto err_free;
	r->vp = vp;
	vp_reader_header(r);
	return r;

err_free:
	kfree(r);
err_busy:
	atomic_set_release(&vp->reader_open, 0);
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
	struct vp_state *vp = r->vp;

	kvfree(r->buf);
	kfree(r);
	atomic_set_release(&vp->reader_open, 0);
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
	struct vp_ring *ring = &r->vp->ring;
	size_t copied = 0;
	int ret;

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
	struct vp_ring *ring = &r->vp->ring;

	poll_wait(file, &ring->wait, wait);
	if (r->off < r->len || !vp_ring_empty(ring) || vp_ring_eof(ring))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static int vp_stream_open(struct inode *inode, struct file *file)
{
	struct vp_state *vp = inode->i_private;
	struct vp_reader *r;
	int ret;

	ret = vp_file_get(vp);
	if (ret)
		return ret;
	r = vp_reader_open(vp);
	if (IS_ERR(r)) {
		vp_file_put(vp);
		return PTR_ERR(r);
	}
	file->private_data = r;
	return stream_open(inode, file);
}

static ssize_t vp_stream_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	return vp_reader_read(file->private_data, ubuf, count,
			      file->f_flags & O_NONBLOCK);
}

static __poll_t vp_stream_poll(struct file *file, poll_table *wait)
{
	return vp_reader_poll(file->private_data, file, wait);
}

/* Module exit waits for this release (see files.c). */
static int vp_stream_release(struct inode *inode, struct file *file)
{
	struct vp_reader *r = file->private_data;
	struct vp_state *vp = r->vp;

	vp_reader_close(r);
	vp_file_put(vp);
	return 0;
}

const struct file_operations vp_stream_fops = {
	.open = vp_stream_open,
	.read = vp_stream_read,
	.poll = vp_stream_poll,
	.release = vp_stream_release,
};
