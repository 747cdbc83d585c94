/* SPDX-License-Identifier: GPL-2.0 */
/*
 * loop.c: the read loop: signals, stop, polling, pacing, flushing, the
 * textfile and the live status line.
 */
#ifndef _VC_LOOP_H
#define _VC_LOOP_H

#include <stdbool.h>
#include <stdio.h>

#include "common.h"
#include "ringsize.h"

struct json_writer;
struct vc_decoder;
struct vc_episodes;
struct vc_host;
struct vc_prom;

/**
 * struct vc_loop - the read loop: its inputs, then its own state
 * @fd:		stream (non-blocking unless replayed)
 * @ctl:	where commands go, -1 when no stop is to be sent
 * @dir:	debugfs directory
 * @record:	copy of the raw bytes, or NULL
 * @deadline:	CLOCK_MONOTONIC ns to stop at, 0 for none
 * @d:		the decoder
 * @rows:	writer of its rows
 * @events:	writer of its lifecycle lines (may be @rows)
 * @flushed:	when the output was last written out
 * @stopping:	stop was sent: read on to the end of the stream
 * @stop_by:	give up waiting for the end of the stream at this time
 * @spurious:	reads in a row that found nothing after poll said ready
 * @paced:	the last wait was a paced sleep (no wake-up asked for)
 * @paced_empty: ... and the read after it found nothing
 * @slack_ns:	the timer slack set last for paced sleeps (0: the default)
 * @tick_ns:	the kernel's tick (a jiffy); 20 ms when it is not known
 * @prom:	the textfile to rewrite, or NULL
 * @prom_at:	when it was last written
 * @status:	show the live status line on standard error
 * @status_at:	when it was last shown
 * @started:	when the loop began
 * @ring:	the ring follows the stream's rate (see ringsize.c)
 * @host:	a host-wide recording to scan for QEMUs when due, or NULL
 * @eps:	its episode files, written out with the rest, or NULL
 */
struct vc_loop {
	int fd;
	int ctl;
	const char *dir;
	FILE *record;
	__u64 deadline;
	struct vc_decoder *d;
	struct json_writer *rows;
	struct json_writer *events;
	__u64 flushed;
	bool stopping;
	__u64 stop_by;
	int spurious;
	bool paced;
	bool paced_empty;
	__u64 slack_ns;
	__u64 tick_ns;
	struct vc_prom *prom;
	__u64 prom_at;
	bool status;
	__u64 status_at;
	__u64 started;
	struct vc_ring_auto ring;
	struct vc_host *host;
	struct vc_episodes *eps;
};

void vc_signals_setup(void);
__u64 vc_now_ns(void);
int vc_read_loop(struct vc_loop *l);

#endif /* _VC_LOOP_H */
