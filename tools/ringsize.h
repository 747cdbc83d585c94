/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ringsize.c: the collection's ring follows the stream's rate (unless
 * --ring was given).
 */
#ifndef _VC_RINGSIZE_H
#define _VC_RINGSIZE_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

struct vc_decoder;

/**
 * struct vc_ring_auto - grow the collection's ring with the stream's rate
 * @on:		the tool owns the collection and no --ring was given
 * @window_at:	start of the current rate window (0: none yet)
 * @window_bytes: bytes read since @window_at
 * @rate:	bytes per second over the last window (0: none measured yet)
 */
struct vc_ring_auto {
	bool on;
	__u64 window_at;
	__u64 window_bytes;
	__u64 rate;
};

void vc_ring_auto(struct vc_ring_auto *r, struct vc_decoder *d, int ctl,
		  const char *dir, size_t n, __u64 now);
__u64 vc_ring_hold_ns(const struct vc_ring_auto *r,
		      const struct vc_decoder *d);

#endif /* _VC_RINGSIZE_H */
