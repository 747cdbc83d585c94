// SPDX-License-Identifier: GPL-2.0
/*
 * The ring follows the stream: a collection of many threads at a short
 * interval produces more records per second than the module's default
 * ring holds for long, and a reader that stalls (a busy host, a slow
 * disk) then loses records.  Unless --ring was given, vcpuperf-cat
 * measures the rate at which its stream arrives and, when the ring holds
 * less than VC_RING_HOLD_S seconds of it, asks its own collection for a
 * bigger one (the "ring" command keeps the records queued).  The ring
 * only grows, up to VC_RING_AUTO_MAX_KB; if the module refuses (its
 * ring_total_kb is used up), the module's reason and one line on what it
 * means are printed once and the run goes on with the ring it has.
 */
#include <stdio.h>

#include "common.h"
#include "control.h"
#include "decode.h"
#include "ringsize.h"

/* Seconds of the stream the ring should hold. */
#define VC_RING_HOLD_S		2
/* Rate windows: at least this long (a few passes at short intervals). */
#define VC_RING_WINDOW_NS	(250 * VP_NS_PER_MS)
/* Never ask for more than this (KiB): 64 MiB. */
#define VC_RING_AUTO_MAX_KB	(64U * 1024U)
/*
 * One part in VC_RING_RESERVE_DIV of the ring is kept for lifecycle
 * records (module/ring.c): samples get the rest.
 */
#define VC_RING_RESERVE_DIV	8
#define VC_KIB			1024ULL

/* Smallest power of two KiB, at least VCPUPERF_RING_MIN_KB, >= @kb. */
static __u64 vc_ring_round(__u64 kb)
{
	__u64 r = VCPUPERF_RING_MIN_KB;

	while (r < kb)
		r <<= 1;
	return r;
}

/**
 * vc_ring_auto() - account @n bytes read and grow the ring if it is short
 * @r:		the state (@r->on false: nothing to do)
 * @d:		the decoder (its header gave the ring size)
 * @ctl:	the collection's control fd
 * @dir:	debugfs directory, for messages
 * @n:		bytes just read
 * @now:	CLOCK_MONOTONIC ns
 */
void vc_ring_auto(struct vc_ring_auto *r, struct vc_decoder *d, int ctl,
		  const char *dir, size_t n, __u64 now)
{
	char cmd[sizeof("ring ") + 24];
	__u64 rate, want_kb, have_kb;

	if (!r->on || !d->have_header || ctl < 0)
		return;
	if (!r->window_at) {
		r->window_at = now;	/* the header and what came with it */
		r->window_bytes = 0;
		return;
	}
	r->window_bytes += n;
	if (now - r->window_at < VC_RING_WINDOW_NS)
		return;
	rate = r->window_bytes * VP_NS_PER_S / (now - r->window_at);
	r->window_at = now;
	r->window_bytes = 0;
	r->rate = rate;

	want_kb = rate * VC_RING_HOLD_S / VC_KIB;
	want_kb += want_kb / (VC_RING_RESERVE_DIV - 1);
	want_kb = vc_ring_round(want_kb);
	if (want_kb > VC_RING_AUTO_MAX_KB)
		want_kb = VC_RING_AUTO_MAX_KB;
	have_kb = d->ring_bytes / VC_KIB;
	if (want_kb <= have_kb)
		return;
	snprintf(cmd, sizeof(cmd), "ring %lluK", (unsigned long long)want_kb);
	if (vc_control(ctl, dir, cmd)) {
		fprintf(stderr, VC_NAME ": the stream comes at %llu KiB/s and "
			"the ring stays at %llu KiB: a stall of the reader "
			"longer than %llu ms drops records (they are counted); "
			"--ring sets its size\n",
			(unsigned long long)(rate / VC_KIB),
			(unsigned long long)have_kb,
			(unsigned long long)(rate ? d->ring_bytes * 1000 / rate :
					     0));
		r->on = false;
		return;
	}
	d->ring_bytes = want_kb * VC_KIB;
}

/**
 * vc_ring_hold_ns() - how long a stream the ring holds at the rate measured
 * @r:		the state
 * @d:		the decoder (the ring's size)
 *
 * Return: nanoseconds of the stream the samples' part of the ring holds
 * at the last window's rate; 0 while none was measured, or when the ring
 * does not follow the stream.
 */
__u64 vc_ring_hold_ns(const struct vc_ring_auto *r,
		      const struct vc_decoder *d)
{
	__u64 bytes = d->ring_bytes - d->ring_bytes / VC_RING_RESERVE_DIV;

	if (!r->on || !r->rate)
		return 0;
	return bytes / r->rate * VP_NS_PER_S +
	       bytes % r->rate * VP_NS_PER_S / r->rate;
}
