// SPDX-License-Identifier: GPL-2.0
/*
 * Counter arithmetic shared by vcpuperf.ko and vcpuperf-cat: the 128-bit
 * a * b / c of multiplex scaling, overflow-safe over the whole u64 range
 * without 128-bit division (the kernel has none).  The per-interval
 * deltas and the scaling that calls it are inline in vcpuperf_lib.h.
 */
#include "vcpuperf_lib.h"

#define VP_HALF_BITS	32
#define VP_LOW_MASK	0xffffffffULL

/* 64 x 64 -> 128 bit product in (*hi, *lo). */
static void vp_mul64(__u64 a, __u64 b, __u64 *hi, __u64 *lo)
{
	__u64 al = a & VP_LOW_MASK, ah = a >> VP_HALF_BITS;
	__u64 bl = b & VP_LOW_MASK, bh = b >> VP_HALF_BITS;
	__u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	__u64 mid = (ll >> VP_HALF_BITS) + (lh & VP_LOW_MASK) +
		    (hl & VP_LOW_MASK);

	*lo = (mid << VP_HALF_BITS) | (ll & VP_LOW_MASK);
	*hi = hh + (lh >> VP_HALF_BITS) + (hl >> VP_HALF_BITS) +
	      (mid >> VP_HALF_BITS);
}

/**
 * vp_mul_div() - a * b / c, rounded down, with a 128-bit intermediate
 * @a:		factor
 * @b:		factor
 * @c:		divisor, not zero
 * @overflow:	set when the quotient does not fit in 64 bits
 *
 * Return: the quotient, or ~0 on overflow.
 */
__u64 vp_mul_div(__u64 a, __u64 b, __u64 c, bool *overflow)
{
	__u64 hi, lo, q = 0;
	int bit;

	*overflow = false;
	vp_mul64(a, b, &hi, &lo);
	if (hi >= c) {
		*overflow = true;
		return ~0ULL;
	}
	if (!hi)
		return lo / c;
	/* Restoring division of (hi:lo) by c; hi < c keeps it in 64 bits. */
	for (bit = 63; bit >= 0; bit--) {
		bool carry = hi >> 63;

		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		if (carry || hi >= c) {
			hi -= c;
			q |= 1ULL << bit;
		}
	}
	return q;
}
