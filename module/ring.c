// SPDX-License-Identifier: GPL-2.0
/*
 * The record ring: a bounded byte FIFO of whole records with the
 * collection's sequence numbers.  Producers never block: a record that does not fit is
 * counted as dropped (its sequence number is consumed) and the next record
 * that fits is preceded by a dropped record covering the gap exactly.
 */
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/vmalloc.h>

#include "ring.h"

/*
 * A ring is allocated by the task that opens its collection, or that
 * writes its ring command: charged to that task's memory cgroup.
 */
#define VP_RING_GFP	GFP_KERNEL_ACCOUNT

/* Share of the ring kept for lifecycle records: 1/VP_RESERVE_DIV. */
#define VP_RESERVE_DIV	8

/*
 * Kept from lifecycle records too, for the session's finished record and
 * the dropped record before it (twice: stop, then unload): the record that
 * ends the session, reports the last drops and leads to EOF always fits.
 */
#define VP_FINAL_RESERVE \
	(2 * (sizeof(struct vcpuperf_finished) + sizeof(struct vcpuperf_dropped)))

static size_t vp_ring_limit(const struct vp_ring *ring, enum vp_rec_class cls)
{
	switch (cls) {
	case VP_REC_SESSION_END:
		return ring->size;
	case VP_REC_LIFECYCLE:
		return ring->size - VP_FINAL_RESERVE;
	default:
		return ring->size - ring->reserve;
	}
}

/**
 * vp_ring_init() - allocate an empty ring
 * @ring:	the ring
 * @size:	capacity in bytes, a multiple of 8
 *
 * Return: 0 or -ENOMEM.
 */
int vp_ring_init(struct vp_ring *ring, size_t size)
{
	memset(ring, 0, sizeof(*ring));
	ring->buf = __vmalloc(size, VP_RING_GFP | __GFP_ZERO);
	if (!ring->buf)
		return -ENOMEM;
	ring->size = size;
	ring->reserve = size / VP_RESERVE_DIV;
	ring->next_seq = 1;
	ring->oldest_seq = 1;
	spin_lock_init(&ring->lock);
	init_waitqueue_head(&ring->wait);
	return 0;
}

/**
 * vp_ring_free() - release the ring's memory
 * @ring:	the ring, with no reader left
 */
void vp_ring_free(struct vp_ring *ring)
{
	vfree(ring->buf);
	ring->buf = NULL;
}

/* Copy @len bytes to the circular @buf of @size bytes at position @pos. */
static void vp_circ_put(u8 *buf, size_t size, u64 pos, const void *src,
			size_t len)
{
	size_t off = pos % size;
	size_t first = min(len, size - off);

	memcpy(buf + off, src, first);
	memcpy(buf, (const u8 *)src + first, len - first);
}

/* Copy @len bytes from the circular @buf of @size bytes at position @pos. */
static void vp_circ_get(const u8 *buf, size_t size, u64 pos, void *dst,
			size_t len)
{
	size_t off = pos % size;
	size_t first = min(len, size - off);

	memcpy(dst, buf + off, first);
	memcpy((u8 *)dst + first, buf, len - first);
}

static void vp_ring_copy_in(struct vp_ring *ring, const void *src, size_t len)
{
	vp_circ_put(ring->buf, ring->size, ring->wr, src, len);
	ring->wr += len;
}

static void vp_ring_copy_out(struct vp_ring *ring, u64 pos, void *dst,
			     size_t len)
{
	vp_circ_get(ring->buf, ring->size, pos, dst, len);
}

/* Do the records queued fit in a ring of @size bytes, below its reserve? */
static bool vp_ring_fits(const struct vp_ring *ring, size_t size)
{
	return ring->wr - ring->rd <= size / VP_RESERVE_DIV * (VP_RESERVE_DIV - 1);
}

/* Bytes copied between two chances to reschedule while resizing. */
#define VP_RESIZE_CHUNK	(1024 * 1024)

/**
 * vp_ring_buf_alloc() - storage for a ring of another size
 * @size:	capacity in bytes, a multiple of 8
 *
 * Allocated before the collection's lock is taken: a vmalloc() of
 * megabytes takes milliseconds, in which the sampler would wait.
 *
 * Return: the buffer, for vp_ring_move() or vp_ring_buf_free(); NULL.
 */
u8 *vp_ring_buf_alloc(size_t size)
{
	return __vmalloc(size, VP_RING_GFP);
}

/**
 * vp_ring_buf_free() - free a ring's storage
 * @buf:	from vp_ring_buf_alloc() or vp_ring_move(), or NULL
 *
 * Called with no lock held: unmapping megabytes takes milliseconds too.
 */
void vp_ring_buf_free(u8 *buf)
{
	vfree(buf);
}

/**
 * vp_ring_move() - move the ring to a buffer of another size
 * @ring:	the ring
 * @buf:	in: the new buffer, @size bytes (vp_ring_buf_alloc()); out,
 *		on success: the old one, for vp_ring_buf_free() once the
 *		caller's locks are dropped
 * @size:	the new capacity in bytes, a multiple of 8
 *
 * The records queued move along, at the same positions, so sequence
 * numbers and the reader carry on as if nothing happened.  Producers must
 * be excluded by the caller (they run under the collection's lock); the
 * reader may go on.  The copy, of the records queued (what the reader has
 * not read yet: little while it keeps up), is made outside the ring's lock
 * and in chunks with a chance to reschedule between them: only the reader
 * can change the ring meanwhile, and it only consumes, so the copied span
 * [rd at the start, wr) still holds every record queued when the new
 * buffer takes over, under the lock.
 *
 * Return: 0, or -EBUSY when the records queued would take more than the
 * new ring's room for samples (then *@buf is left as it was).
 */
int vp_ring_move(struct vp_ring *ring, u8 **buf, size_t size)
{
	u8 *to_buf = *buf, *old;
	unsigned long flags;
	size_t n, old_size;
	u64 pos, wr;

	spin_lock_irqsave(&ring->lock, flags);
	if (!vp_ring_fits(ring, size)) {
		spin_unlock_irqrestore(&ring->lock, flags);
		return -EBUSY;
	}
	pos = ring->rd;
	wr = ring->wr;
	old = ring->buf;
	old_size = ring->size;
	spin_unlock_irqrestore(&ring->lock, flags);
	/* Spans contiguous in both buffers, so no bounce buffer. */
	for (; pos < wr; pos += n) {
		size_t from = pos % old_size, to = pos % size;

		n = min3((size_t)(wr - pos), old_size - from, size - to);
		n = min_t(size_t, n, VP_RESIZE_CHUNK);
		memcpy(to_buf + to, old + from, n);
		cond_resched();
	}
	spin_lock_irqsave(&ring->lock, flags);
	ring->buf = to_buf;
	ring->size = size;
	ring->reserve = size / VP_RESERVE_DIV;
	spin_unlock_irqrestore(&ring->lock, flags);
	*buf = old;
	return 0;
}

/**
 * vp_ring_put() - queue one record, assigning its sequence number
 * @ring:	the ring
 * @rec:	the record; rec->size bytes, rec->seq is set here
 * @cls:	how much of the ring it may use
 *
 * Never sleeps.  Wakes the reader.
 *
 * Return: 0, or -ENOSPC when the record was dropped (and counted).
 */
int vp_ring_put(struct vp_ring *ring, struct vcpuperf_rec *rec,
		enum vp_rec_class cls)
{
	size_t limit = vp_ring_limit(ring, cls);
	struct vcpuperf_dropped drop;
	unsigned long flags;
	size_t need;
	int ret = 0;

	spin_lock_irqsave(&ring->lock, flags);
	need = rec->size;
	if (ring->drops_pending)
		need += sizeof(drop);
	if (ring->wr - ring->rd + need > limit) {
		if (!ring->drops_pending)
			ring->drop_first_seq = ring->next_seq;
		ring->drops_pending++;
		ring->drops_total++;
		ring->next_seq++;
		ret = -ENOSPC;
		goto out;
	}
	if (!ring->records)
		ring->oldest_seq = ring->next_seq;
	if (ring->drops_pending) {
		memset(&drop, 0, sizeof(drop));
		drop.rec.type = VCPUPERF_REC_DROPPED;
		drop.rec.size = sizeof(drop);
		drop.rec.seq = ring->next_seq++;
		drop.rec.t_mono_ns = ktime_get_ns();
		drop.rec.t_wall_ns = ktime_get_real_ns();
		drop.count = ring->drops_pending;
		drop.first_seq = ring->drop_first_seq;
		drop.total = ring->drops_total;
		vp_ring_copy_in(ring, &drop, sizeof(drop));
		ring->records++;
		ring->produced++;
		ring->drops_pending = 0;
	}
	rec->seq = ring->next_seq++;
	vp_ring_copy_in(ring, rec, rec->size);
	ring->records++;
	ring->produced++;
out:
	spin_unlock_irqrestore(&ring->lock, flags);
	if (!ret && !READ_ONCE(ring->defer_wake))
		vp_ring_wake(ring);
	return ret;
}

/**
 * vp_ring_defer_wake() - batch the reader's wake-ups
 * @ring:	the ring
 * @defer:	true: queue without waking; false: wake now and from here on
 *
 * A sampling pass queues many records: its reader is woken once, at the
 * end.  Producers call this under the collection's lock.
 */
void vp_ring_defer_wake(struct vp_ring *ring, bool defer)
{
	WRITE_ONCE(ring->defer_wake, defer);
	if (!defer)
		vp_ring_wake(ring);
}

/**
 * vp_ring_wake() - wake the reader, if one is waiting
 * @ring:	the ring
 */
void vp_ring_wake(struct vp_ring *ring)
{
	if (wq_has_sleeper(&ring->wait))
		wake_up_interruptible_poll(&ring->wait, EPOLLIN | EPOLLRDNORM);
}

/**
 * vp_ring_pop() - move whole records out of the ring
 * @ring:	the ring
 * @dst:	destination
 * @len:	its size; at least VP_MAX_REC_SIZE to make progress
 *
 * Only whole records are consumed, so a reader that goes away in the
 * middle of a record never leaves the next reader out of step.
 *
 * Return: bytes copied to @dst, 0 when the ring is empty.
 */
size_t vp_ring_pop(struct vp_ring *ring, u8 *dst, size_t len)
{
	unsigned long flags;
	size_t done = 0;

	spin_lock_irqsave(&ring->lock, flags);
	while (ring->records) {
		struct vcpuperf_rec hdr;

		vp_ring_copy_out(ring, ring->rd, &hdr, sizeof(hdr));
		if (WARN_ON_ONCE(hdr.size < sizeof(hdr) ||
				 hdr.size > ring->wr - ring->rd)) {
			/* Cannot happen; resynchronise by emptying. */
			ring->rd = ring->wr;
			ring->records = 0;
			break;
		}
		if (done + hdr.size > len)
			break;
		vp_ring_copy_out(ring, ring->rd, dst + done, hdr.size);
		ring->rd += hdr.size;
		ring->records--;
		ring->oldest_seq = hdr.seq + 1;
		done += hdr.size;
	}
	spin_unlock_irqrestore(&ring->lock, flags);
	return done;
}

/**
 * vp_ring_empty() - nothing to read now
 * @ring:	the ring
 *
 * Return: true when no record is queued.
 */
bool vp_ring_empty(struct vp_ring *ring)
{
	unsigned long flags;
	bool empty;

	spin_lock_irqsave(&ring->lock, flags);
	empty = !ring->records;
	spin_unlock_irqrestore(&ring->lock, flags);
	return empty;
}

/**
 * vp_ring_eof() - the session ended and everything was read
 * @ring:	the ring
 *
 * Return: true when a reader should see end of file.
 */
bool vp_ring_eof(struct vp_ring *ring)
{
	unsigned long flags;
	bool eof;

	spin_lock_irqsave(&ring->lock, flags);
	eof = ring->ended && !ring->records;
	spin_unlock_irqrestore(&ring->lock, flags);
	return eof;
}

/**
 * vp_ring_set_ended() - mark or clear the end of a session
 * @ring:	the ring
 * @ended:	true once the session's finished record is queued
 */
void vp_ring_set_ended(struct vp_ring *ring, bool ended)
{
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	ring->ended = ended;
	spin_unlock_irqrestore(&ring->lock, flags);
	vp_ring_wake(ring);
}

/**
 * vp_ring_first_seq() - sequence number a new reader will see first
 * @ring:	the ring
 *
 * Return: the oldest queued record's number; with nothing queued, the
 * first lost record's number if records are being dropped, else the next
 * number to be assigned.
 */
u64 vp_ring_first_seq(struct vp_ring *ring)
{
	unsigned long flags;
	u64 seq;

	spin_lock_irqsave(&ring->lock, flags);
	if (ring->records)
		seq = ring->oldest_seq;
	else if (ring->drops_pending)
		seq = ring->drop_first_seq;
	else
		seq = ring->next_seq;
	spin_unlock_irqrestore(&ring->lock, flags);
	return seq;
}

/**
 * vp_ring_stats() - a consistent snapshot of the ring's counters
 * @ring:	the ring
 * @st:		filled in
 */
void vp_ring_stats(struct vp_ring *ring, struct vp_ring_stats *st)
{
	unsigned long flags;

	spin_lock_irqsave(&ring->lock, flags);
	st->size = ring->size;
	st->used = ring->wr - ring->rd;
	st->records = ring->records;
	st->produced = ring->produced;
	st->drops = ring->drops_total;
	st->next_seq = ring->next_seq;
	spin_unlock_irqrestore(&ring->lock, flags);
}

/**
 * vp_ring_drops() - records lost since the ring was made
 * @ring:	the ring
 *
 * Return: the total.
 */
u64 vp_ring_drops(struct vp_ring *ring)
{
	unsigned long flags;
	u64 n;

	spin_lock_irqsave(&ring->lock, flags);
	n = ring->drops_total;
	spin_unlock_irqrestore(&ring->lock, flags);
	return n;
}
