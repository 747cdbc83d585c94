/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record ring of a collection (ring.c): a bounded byte FIFO of whole
 * records, which it numbers.  Producers never block: a record that does not
 * fit is dropped and counted, and the next one that fits is preceded by a
 * dropped record; room is kept for lifecycle records and for the session's
 * end.  vp_ring.lock comes after vp_coll.lock (lock order: vcpuperf.h).
 */
#ifndef _VCPUPERF_RING_H
#define _VCPUPERF_RING_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "../lib/vcpuperf_lib.h"

/**
 * enum vp_rec_class - how much of the ring a record may use
 * @VP_REC_SAMPLE:	up to the lifecycle reserve
 * @VP_REC_LIFECYCLE:	into the reserve, short of the room kept for the
 *			session's end
 * @VP_REC_SESSION_END:	the session's finished record: the whole ring, so
 *			that it (and the dropped record before it) always
 *			fits and the reader reaches EOF
 */
enum vp_rec_class {
	VP_REC_SAMPLE,
	VP_REC_LIFECYCLE,
	VP_REC_SESSION_END,
};

/**
 * struct vp_ring - bounded byte FIFO of whole records
 * @lock:	protects every field but @buf's contents being copied out
 * @buf:	storage, @size bytes
 * @size:	capacity in bytes
 * @reserve:	bytes only lifecycle records may use, so that the records
 *		explaining the end of a collection are not crowded out by
 *		samples
 * @wr:		bytes ever written
 * @rd:		bytes ever consumed
 * @next_seq:	sequence number of the next record produced
 * @oldest_seq:	sequence number of the oldest record in the ring
 * @records:	records in the ring
 * @drops_pending: records lost since the last dropped record was queued
 * @drop_first_seq: first sequence number of those
 * @drops_total: records lost since the collection was created
 * @produced:	records queued since the collection was created
 * @ended:	the session's finished record is queued: EOF once drained
 * @defer_wake:	a sampling pass is queueing records: wake the reader once,
 *		at its end (written by producers under vp_coll.lock)
 * @wait:	readers wait here for data
 */
struct vp_ring {
	spinlock_t lock;	/* see @lock above */
	u8 *buf;
	size_t size;
	size_t reserve;
	u64 wr;
	u64 rd;
	u64 next_seq;
	u64 oldest_seq;
	u64 records;
	u64 drops_pending;
	u64 drop_first_seq;
	u64 drops_total;
	u64 produced;
	bool ended;
	bool defer_wake;
	wait_queue_head_t wait;
};

/**
 * struct vp_ring_stats - a consistent snapshot of a ring's counters
 * @size:	capacity in bytes
 * @used:	bytes queued
 * @records:	records queued
 * @produced:	records ever queued
 * @drops:	records ever dropped
 * @next_seq:	next sequence number
 */
struct vp_ring_stats {
	size_t size;
	u64 used;
	u64 records;
	u64 produced;
	u64 drops;
	u64 next_seq;
};

int vp_ring_init(struct vp_ring *ring, size_t size);
void vp_ring_free(struct vp_ring *ring);
u8 *vp_ring_buf_alloc(size_t size);
void vp_ring_buf_free(u8 *buf);
int vp_ring_move(struct vp_ring *ring, u8 **buf, size_t size);
int vp_ring_put(struct vp_ring *ring, struct vcpuperf_rec *rec,
		enum vp_rec_class cls);
size_t vp_ring_pop(struct vp_ring *ring, u8 *dst, size_t len);
bool vp_ring_empty(struct vp_ring *ring);
bool vp_ring_eof(struct vp_ring *ring);
void vp_ring_set_ended(struct vp_ring *ring, bool ended);
void vp_ring_defer_wake(struct vp_ring *ring, bool defer);
void vp_ring_wake(struct vp_ring *ring);
u64 vp_ring_first_seq(struct vp_ring *ring);
u64 vp_ring_drops(struct vp_ring *ring);
void vp_ring_stats(struct vp_ring *ring, struct vp_ring_stats *st);

#endif /* _VCPUPERF_RING_H */
