// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite vcpuperf_ring: the record ring (module/ring.c): whole records
 * in order, exact fill up to the lifecycle reserve and the room kept for the
 * session's end, drops counted and reported by a dropped record, records
 * straddling the end of the buffer.
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "../../module/ring.h"
#include "../../module/vcpuperf.h"
#include "vpk.h"

/* ------------------------------------------------------------------ */
/* The ring                                                            */

#define VPK_RING	4096

/* A record of @size bytes whose payload encodes @tag. */
static void vpk_rec_fill(u8 *buf, u16 size, u32 tag)
{
	struct vcpuperf_rec *r = (struct vcpuperf_rec *)buf;
	u16 i;

	memset(buf, 0, size);
	r->type = VCPUPERF_REC_SAMPLE;
	r->size = size;
	r->tid = tag;
	for (i = sizeof(*r); i < size; i++)
		buf[i] = (u8)(tag * 7 + i);
}

static bool vpk_rec_check(const u8 *buf, u16 size, u32 tag)
{
	const struct vcpuperf_rec *r = (const struct vcpuperf_rec *)buf;
	u16 i;

	if (r->type != VCPUPERF_REC_SAMPLE || r->size != size || r->tid != tag)
		return false;
	for (i = sizeof(*r); i < size; i++)
		if (buf[i] != (u8)(tag * 7 + i))
			return false;
	return true;
}

static void vpk_ring_basic(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	u8 rec[64], out[256];
	u32 i;

	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	KUNIT_EXPECT_TRUE(test, vp_ring_empty(ring));
	KUNIT_EXPECT_FALSE(test, vp_ring_eof(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 1ULL);
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, sizeof(out)), (size_t)0);

	for (i = 0; i < 3; i++) {
		vpk_rec_fill(rec, sizeof(rec), i);
		KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec,
						  VP_REC_SAMPLE), 0);
		/* the caller's record carries its sequence number */
		KUNIT_EXPECT_EQ(test, ((struct vcpuperf_rec *)rec)->seq,
				(u64)i + 1);
	}
	KUNIT_EXPECT_FALSE(test, vp_ring_empty(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 1ULL);

	/* Only whole records: too small a buffer takes nothing. */
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, 63), (size_t)0);
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, 100), (size_t)64);
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out, 64, 0));
	KUNIT_EXPECT_EQ(test, ((struct vcpuperf_rec *)out)->seq, 1ULL);
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 2ULL);
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, sizeof(out)), (size_t)128);
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out, 64, 1));
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out + 64, 64, 2));
	KUNIT_EXPECT_EQ(test, ((struct vcpuperf_rec *)(out + 64))->seq, 3ULL);
	KUNIT_EXPECT_TRUE(test, vp_ring_empty(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), 4ULL);

	vp_ring_set_ended(ring, true);
	KUNIT_EXPECT_TRUE(test, vp_ring_eof(ring));
	vp_ring_set_ended(ring, false);
	KUNIT_EXPECT_FALSE(test, vp_ring_eof(ring));
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 0ULL);
}

#define DROP_SZ		sizeof(struct vcpuperf_dropped)
/* module/ring.c: room kept for the end of the session */
#define VPK_FINAL_RESERVE \
	(2 * (sizeof(struct vcpuperf_finished) + DROP_SZ))

/*
 * Exact fill: samples up to size - reserve, lifecycle records up to the
 * room kept for the session's end, which the session's finished record
 * (with the dropped record before it) always finds.
 */
static void vpk_ring_exact_fill(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	struct vcpuperf_dropped *drop;
	u8 rec[128];
	u8 *out;
	u32 i, n_life, n_samples = (VPK_RING - VPK_RING / 8) / 64;
	struct vcpuperf_finished fin;
	struct vcpuperf_rec *last;
	size_t got, used;

	out = kunit_kzalloc(test, VPK_RING, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	for (i = 0; i < n_samples; i++) {
		vpk_rec_fill(rec, 64, i);
		KUNIT_EXPECT_EQ_MSG(test,
				    vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
				    0, "sample %u", i);
	}
	/* Samples fill the ring up to the lifecycle reserve exactly. */
	KUNIT_EXPECT_EQ(test, ring->wr - ring->rd, (u64)(VPK_RING - VPK_RING / 8));
	vpk_rec_fill(rec, 64, 999);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 1ULL);
	/* Pop one sample: now the pending drop record must fit too. */
	KUNIT_EXPECT_EQ(test, vp_ring_pop(ring, out, 64), (size_t)64);
	used = VPK_RING - VPK_RING / 8 - 64;
	/*
	 * Lifecycle records fill the ring up to the room kept for the end of
	 * the session (its finished record and a dropped record, twice).
	 */
	n_life = (VPK_RING - VPK_FINAL_RESERVE - used - DROP_SZ) / 64;
	for (i = 0; i < n_life; i++) {
		vpk_rec_fill(rec, 64, n_samples + i);
		KUNIT_EXPECT_EQ_MSG(test,
				    vp_ring_put(ring, (void *)rec, VP_REC_LIFECYCLE),
				    0, "lifecycle %u", i);
	}
	used += DROP_SZ + 64 * n_life;
	KUNIT_EXPECT_EQ(test, ring->wr - ring->rd, (u64)used);
	/* One more lifecycle record does not fit: dropped and counted. */
	vpk_rec_fill(rec, 64, 1000);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_LIFECYCLE),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 2ULL);
	/* The session's finished record and its dropped record always fit. */
	memset(&fin, 0, sizeof(fin));
	fin.rec.type = VCPUPERF_REC_FINISHED;
	fin.rec.size = sizeof(fin);
	fin.rec.tid = 0;
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, &fin.rec, VP_REC_SESSION_END),
			0);
	used += DROP_SZ + sizeof(fin);
	KUNIT_EXPECT_EQ(test, ring->wr - ring->rd, (u64)used);
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_EXPECT_EQ(test, got, used);
	KUNIT_EXPECT_TRUE(test, vp_ring_empty(ring));
	/* Popped in order: samples, dropped, lifecycle records, dropped, end. */
	KUNIT_EXPECT_TRUE(test, vpk_rec_check(out, 64, 1));
	drop = (struct vcpuperf_dropped *)(out + (n_samples - 1) * 64);
	KUNIT_EXPECT_EQ(test, drop->rec.type, (u16)VCPUPERF_REC_DROPPED);
	KUNIT_EXPECT_EQ(test, drop->count, 1ULL);
	KUNIT_EXPECT_EQ(test, drop->first_seq, (u64)n_samples + 1);
	drop = (struct vcpuperf_dropped *)(out + used - sizeof(fin) - DROP_SZ);
	KUNIT_EXPECT_EQ(test, drop->rec.type, (u16)VCPUPERF_REC_DROPPED);
	KUNIT_EXPECT_EQ(test, drop->count, 1ULL);
	KUNIT_EXPECT_EQ(test, drop->total, 2ULL);
	last = (struct vcpuperf_rec *)(out + used - sizeof(fin));
	KUNIT_EXPECT_EQ(test, last->type, (u16)VCPUPERF_REC_FINISHED);
	KUNIT_EXPECT_EQ(test, last->tid, 0U);
}

/* Overflow: drops are counted and reported by a dropped record. */
static void vpk_ring_overflow(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	struct vcpuperf_dropped *drop;
	struct vcpuperf_rec *r;
	u8 rec[64];
	u8 *out;
	u32 i, n_samples = (VPK_RING - VPK_RING / 8) / 64;
	u64 last_seq = 0, seq;
	size_t got, off;

	out = kunit_kzalloc(test, VPK_RING, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, out);
	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	for (i = 0; i < n_samples + 5; i++) {
		vpk_rec_fill(rec, sizeof(rec), i);
		KUNIT_EXPECT_EQ_MSG(test,
				    vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
				    i < n_samples ? 0 : -ENOSPC, "put %u", i);
	}
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 5ULL);
	KUNIT_EXPECT_EQ(test, ring->drops_pending, 5ULL);
	KUNIT_EXPECT_EQ(test, ring->drop_first_seq, (u64)n_samples + 1);

	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_EXPECT_EQ(test, got, (size_t)n_samples * 64);
	for (off = 0, i = 0; off < got; off += 64, i++) {
		r = (struct vcpuperf_rec *)(out + off);
		KUNIT_EXPECT_TRUE(test, vpk_rec_check(out + off, 64, i));
		KUNIT_EXPECT_EQ(test, r->seq, (u64)i + 1);
		last_seq = r->seq;
	}
	/* Nothing queued but drops pending: a new reader starts at the gap. */
	KUNIT_EXPECT_EQ(test, vp_ring_first_seq(ring), (u64)n_samples + 1);

	vpk_rec_fill(rec, sizeof(rec), 4242);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE),
			0);
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_ASSERT_EQ(test, got, sizeof(*drop) + 64);
	drop = (struct vcpuperf_dropped *)out;
	KUNIT_EXPECT_EQ(test, drop->rec.type, (u16)VCPUPERF_REC_DROPPED);
	KUNIT_EXPECT_EQ(test, drop->rec.size, (u16)sizeof(*drop));
	KUNIT_EXPECT_EQ(test, drop->rec.tid, 0U);
	KUNIT_EXPECT_EQ(test, drop->count, 5ULL);
	KUNIT_EXPECT_EQ(test, drop->first_seq, last_seq + 1);
	KUNIT_EXPECT_EQ(test, drop->total, 5ULL);
	/* count equals the sequence numbers skipped before the dropped rec */
	KUNIT_EXPECT_EQ(test, drop->rec.seq - last_seq - 1, drop->count);
	KUNIT_EXPECT_NE(test, drop->rec.t_mono_ns, 0ULL);
	r = (struct vcpuperf_rec *)(out + sizeof(*drop));
	KUNIT_EXPECT_TRUE(test, vpk_rec_check((u8 *)r, 64, 4242));
	KUNIT_EXPECT_EQ(test, r->seq, drop->rec.seq + 1);
	KUNIT_EXPECT_EQ(test, ring->drops_pending, 0ULL);

	/* A second burst: total accumulates, count is per gap. */
	seq = r->seq;
	for (i = 0; i < n_samples + 2; i++) {
		vpk_rec_fill(rec, sizeof(rec), i);
		vp_ring_put(ring, (void *)rec, VP_REC_SAMPLE);
	}
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_EXPECT_EQ(test, got, (size_t)n_samples * 64);
	last_seq = ((struct vcpuperf_rec *)(out + got - 64))->seq;
	KUNIT_EXPECT_EQ(test, last_seq, seq + n_samples);
	vpk_rec_fill(rec, 64, 7);
	KUNIT_EXPECT_EQ(test, vp_ring_put(ring, (void *)rec, VP_REC_LIFECYCLE),
			0);
	got = vp_ring_pop(ring, out, VPK_RING);
	KUNIT_ASSERT_EQ(test, got, sizeof(*drop) + 64);
	KUNIT_EXPECT_EQ(test, drop->count, 2ULL);
	KUNIT_EXPECT_EQ(test, drop->total, 7ULL);
	KUNIT_EXPECT_EQ(test, drop->rec.seq - last_seq - 1, drop->count);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 7ULL);
	KUNIT_EXPECT_EQ(test, ring->produced, (u64)2 * n_samples + 4);
}

/* Records straddling the end of the buffer come out intact and in order. */
static void vpk_ring_wrap(struct kunit *test)
{
	struct vpk_ctx *ctx = test->priv;
	struct vp_ring *ring = &ctx->ring;
	u8 rec[136], out[512];
	u64 expect_seq = 1;
	u32 i, tag = 0, popped = 0;
	size_t got, off;

	KUNIT_ASSERT_EQ(test, vp_ring_init(ring, VPK_RING), 0);
	/* Sizes that do not divide the ring, three in flight at a time. */
	for (i = 0; i < 400; i++) {
		u16 size = sizeof(struct vcpuperf_rec) + 8 * (i % 14);

		vpk_rec_fill(rec, size, tag++);
		KUNIT_ASSERT_EQ_MSG(test, vp_ring_put(ring, (void *)rec,
						      VP_REC_SAMPLE),
				    0, "put %u", i);
		if (i % 3 != 2)
			continue;
		got = vp_ring_pop(ring, out, sizeof(out));
		KUNIT_ASSERT_GT(test, got, (size_t)0);
		for (off = 0; off < got; ) {
			struct vcpuperf_rec *r = (void *)(out + off);

			KUNIT_EXPECT_EQ(test, r->seq, expect_seq);
			KUNIT_EXPECT_TRUE_MSG(test,
					      vpk_rec_check(out + off, r->size,
							    popped),
					      "record %u", popped);
			expect_seq++;
			popped++;
			off += r->size;
		}
		KUNIT_EXPECT_EQ(test, off, got);
	}
	KUNIT_EXPECT_EQ(test, popped, 399U);
	KUNIT_EXPECT_GT(test, ring->wr, (u64)5 * VPK_RING);
	KUNIT_EXPECT_EQ(test, vp_ring_drops(ring), 0ULL);
}

static struct kunit_case vpk_ring_cases[] = {
	KUNIT_CASE(vpk_ring_basic),
	KUNIT_CASE(vpk_ring_exact_fill),
	KUNIT_CASE(vpk_ring_overflow),
	KUNIT_CASE(vpk_ring_wrap),
	{}
};

static struct kunit_suite vpk_ring_suite = {
	.name = "vcpuperf_ring",
	.init = vpk_init,
	.exit = vpk_exit,
	.test_cases = vpk_ring_cases,
};

kunit_test_suite(vpk_ring_suite);
