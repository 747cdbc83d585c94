// SPDX-License-Identifier: GPL-2.0
/*
 * The stream file: one reader at a time reads the records, starting with
 * a header record.  read() blocks until records are queued (or returns
 * -EAGAIN with O_NONBLOCK), poll() reports readability, and read() returns
 * 0 (end of file) once the session's finished record has been read, as
 * trace_pipe does.
 */
#include <linux/capability.h>
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

/*
 * Clear the reader flag and wake module exit, all under the wait queue's
 * lock: exit takes that lock after seeing the flag clear, so it cannot
 * free the state while this function still touches it.
 */
static void vp_reader_gone(struct vp_state *vp)
{
	unsigned long flags;

	spin_lock_irqsave(&vp->reader_wait.lock, flags);
	atomic_set(&vp->reader_open, 0);
	wake_up_locked(&vp->reader_wait);
	spin_unlock_irqrestore(&vp->reader_wait.lock, flags);
}

static int vp_stream_open(struct inode *inode, struct file *file)
{
	struct vp_state *vp = inode->i_private;
	struct vp_reader *r;
	int ret;

	if (!capable(CAP_SYS_ADMIN))	/* as perf: see vp_control_open() */
		return -EPERM;
	if (atomic_cmpxchg(&vp->reader_open, 0, 1))
		return -EBUSY;
	if (READ_ONCE(vp->unloading)) {
		ret = -ENODEV;
		goto err_busy;
	}
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r) {
		ret = -ENOMEM;
		goto err_busy;
	}
	r->buf = kvmalloc(VP_READ_BUF, GFP_KERNEL);
	if (!r->buf) {
		ret = -ENOMEM;
		goto err_free;
	}
	r->vp = vp;
	vp_reader_header(r);
	file->private_data = r;
	return stream_open(inode, file);

err_free:
	kfree(r);
err_busy:
	vp_reader_gone(vp);
	return ret;
}

static ssize_t vp_stream_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	struct vp_reader *r = file->private_data;
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
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(ring->wait,
					       !vp_ring_empty(ring) ||
					       vp_ring_eof(ring));
		if (ret)
			return ret;
	}
	return copied;
}

static __poll_t vp_stream_poll(struct file *file, poll_table *wait)
{
	struct vp_reader *r = file->private_data;
	struct vp_ring *ring = &r->vp->ring;

	poll_wait(file, &ring->wait, wait);
	if (r->off < r->len || !vp_ring_empty(ring) || vp_ring_eof(ring))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

/*
 * The module does not pin itself while the stream is open (so that rmmod
 * can end a collection with a reader attached); instead module exit waits
 * for this release, which debugfs calls unconditionally.
 */
static int vp_stream_release(struct inode *inode, struct file *file)
{
	struct vp_reader *r = file->private_data;
	struct vp_state *vp = r->vp;

	kvfree(r->buf);
	kfree(r);
	vp_reader_gone(vp);
	return 0;
}

const struct file_operations vp_stream_fops = {
	.open = vp_stream_open,
	.read = vp_stream_read,
	.poll = vp_stream_poll,
	.release = vp_stream_release,
};
