// SPDX-License-Identifier: GPL-2.0
/*
 * The read loop: read the stream and feed the decoder until EOF; on
 * SIGINT, SIGTERM or the end of --duration send stop and read on to the
 * end of the stream; write the output out when the stream runs dry, and
 * at least every VC_FLUSH_MAX_NS while it does not.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "control.h"
#include "decode.h"
#include "episodes.h"
#include "host.h"
#include "jsonl.h"
#include "loop.h"
#include "prom.h"
#include "ringsize.h"

#define VC_STOP_TIMEOUT_NS	(10 * VP_NS_PER_S)	/* EOF after stop */
#define VC_POLL_MAX_MS		1000
/*
 * Output is written out whenever the stream runs dry, and at least this
 * often while it does not: a reader that is always behind (a slow disk, a
 * busy host) still lands its rows within a second.
 */
#define VC_FLUSH_MAX_NS		VP_NS_PER_S
/*
 * A stream without poll support always says it is ready: after this many
 * empty reads in a row, sleep VC_IDLE_SLEEP_NS before polling again.
 */
#define VC_SPURIOUS_MAX		2
#define VC_IDLE_SLEEP_NS	(5 * VP_NS_PER_MS)
/*
 * Paced reads: the records of a pass are read at the next grid point (at
 * most VC_PACE_LAG_MAX_NS after theirs), when the sampler wakes for its
 * next pass.  The sleep may end up to a tick (a jiffy) later, at most
 * VC_PACE_SLACK_DIV of an interval, as the sampler's may in lazy mode:
 * the kernel then ends it in an interrupt that comes anyway (the
 * sampler's own, or the scheduler tick) instead of one of its own, and
 * on the sampler's CPU the reader runs in the same preemption of a guest
 * as the pass: one switch of a vCPU thread per grid point for both, not
 * two.  Not more than a tick: the kernel runs a timer after its earliest
 * time only in an interrupt that finds no timer before it in the order of
 * their latest times still to come, and the tick re-arms itself a tick
 * ahead, so a sleep that may end later than that ends at the last tick
 * before its latest time, away from the pass (measured on the arm64
 * bed, 8 vCPU threads: with up to 20 ms of slack each paced wake
 * preempted a vCPU thread of its own, 50 switches more in 2 s at 10 ms
 * and 75 in 15 s at 100 ms; with a tick, none).
 */
#define VC_PACE_LAG_MAX_NS	VP_NS_PER_S
#define VC_PACE_SLACK_DIV	2
/* The tick, when clock_getres() does not give it. */
#define VC_TICK_UNKNOWN_NS	(20 * VP_NS_PER_MS)
/*
 * A paced wake reads the records of every pass since the last one, and
 * comes at most every whole number of intervals that makes at most this
 * long, on the multiples of it: each wake's own cost (the wake-up, the
 * switch, the poll, the read, the flush) is shared by several passes,
 * and every vcpuperf-cat of the host at an interval that divides it
 * wakes at the same instants.  A row is so written at most this long
 * (or one interval, if longer) and one interval after its grid point:
 * output lands within about a second, as when the reader is behind
 * (VC_FLUSH_MAX_NS).  Only while the ring follows the stream and its
 * rate is measured (ringsize.c), and never longer than a
 * VC_PACE_RING_DIV-th of the stream the ring holds: a ring of --ring's
 * size, or one the module would not grow, is read every interval.
 */
#define VC_PACE_PERIOD_MAX_NS	(500 * VP_NS_PER_MS)
#define VC_PACE_RING_DIV	4
/*
 * A host-wide recording's look for new QEMUs waits for the next paced
 * read unless that is more than this share of --scan-interval late.
 */
#define VC_HOST_LATE_DIV	2
/*
 * The textfile is rewritten when the stream runs dry (after each
 * sampling pass) and while it does not, but never more often than this.
 */
#define VC_TEXTFILE_MIN_NS	(100 * VP_NS_PER_MS)
/* The live status line is redrawn at most this often. */
#define VC_STATUS_NS		(VP_NS_PER_S / 2)

/* What the loop does after a step. */
enum vc_step {
	VC_STEP_ON,		/* go on reading */
	VC_STEP_DONE,		/* the stream ended: exit 0 */
	VC_STEP_FAILED,		/* stop reading: exit 1 (a message is out) */
};

static volatile sig_atomic_t vc_signals;

static void vc_on_signal(int sig)
{
	(void)sig;
	vc_signals++;
}

/**
 * vc_signals_setup() - SIGINT and SIGTERM end the run; SIGPIPE is ignored
 */
void vc_signals_setup(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = vc_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/**
 * vc_now_ns() - CLOCK_MONOTONIC in nanoseconds
 *
 * Return: the time.
 */
__u64 vc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * VP_NS_PER_S + (__u64)ts.tv_nsec;
}

/* The live status line: rows, drops, elapsed time; @last ends it. */
static void vc_status(struct vc_loop *l, __u64 now, bool last)
{
	const struct vc_stats *st = &l->d->stats;
	__u64 ms = (now - l->started) / VP_NS_PER_MS;

	if (!l->status || (!last && now - l->status_at < VC_STATUS_NS))
		return;
	l->status_at = now;
	fprintf(stderr, "\r" VC_NAME ": %llu rows, %llu per-VM rows, %llu "
		"dropped, %llu.%llu s\033[K%s",
		(unsigned long long)st->rows,
		(unsigned long long)st->proc_rows,
		(unsigned long long)st->drops, ms / 1000, ms % 1000 / 100,
		last ? "\n" : "");
}

/* Rewrite the textfile if rows came and it was not just written. */
static void vc_textfile(struct vc_loop *l, __u64 now)
{
	if (!l->prom || !vc_prom_dirty(l->prom) ||
	    now - l->prom_at < VC_TEXTFILE_MIN_NS)
		return;
	vc_prom_write(l->prom, true);
	l->prom_at = now;
}

static void vc_flush_all(struct vc_loop *l, __u64 now)
{
	json_flush(l->rows);
	if (l->events != l->rows)
		json_flush(l->events);
	if (l->record)
		fflush(l->record);
	if (l->eps)
		vc_episodes_flush(l->eps, now, l->stopping);
	l->flushed = now;
}

/* A signal or the deadline: send stop once; a second signal gives up. */
static enum vc_step vc_check_stop(struct vc_loop *l, __u64 now)
{
	if (!l->stopping && (vc_signals ||
			     (l->deadline && now >= l->deadline))) {
		if (l->ctl < 0)
			return VC_STEP_DONE;	/* no-attach / replay */
		l->stopping = true;
		if (l->eps)
			l->eps->ending = true;
		vc_signals = 0;
		l->stop_by = now + VC_STOP_TIMEOUT_NS;
		vc_control(l->ctl, l->dir, "stop");
	} else if (l->stopping && vc_signals) {
		fprintf(stderr, VC_NAME ": interrupted again before the end "
			"of the stream: output is incomplete\n");
		return VC_STEP_FAILED;
	} else if (l->stopping && now >= l->stop_by) {
		fprintf(stderr, VC_NAME ": no end of stream %llu s after "
			"stop: output may be incomplete\n",
			VC_STOP_TIMEOUT_NS / VP_NS_PER_S);
		return VC_STEP_FAILED;
	}
	return VC_STEP_ON;
}

/* @n bytes arrived at @buf: copy them to --record and decode them. */
static enum vc_step vc_consume(struct vc_loop *l, const void *buf, size_t n,
			       __u64 now)
{
	l->spurious = 0;
	l->paced = false;
	l->paced_empty = false;
	if (l->stopping)
		l->stop_by = vc_now_ns() + VC_STOP_TIMEOUT_NS;
	if (l->record && fwrite(buf, 1, n, l->record) != n) {
		fprintf(stderr, VC_NAME ": writing --record file: %s\n",
			strerror(errno));
		return VC_STEP_FAILED;
	}
	if (vc_dec_commit(l->d, n))
		return VC_STEP_FAILED;
	if (!l->stopping)
		vc_ring_auto(&l->ring, l->d, l->ctl, l->dir, n, now);
	if (l->rows->err || l->events->err || (l->eps && l->eps->err))
		return VC_STEP_FAILED;	/* reported by the caller */
	if (now - l->flushed >= VC_FLUSH_MAX_NS)
		vc_flush_all(l, now);
	vc_textfile(l, now);
	vc_status(l, now, false);
	return VC_STEP_ON;
}

/*
 * While a collection samples, sleep on our own timer until the grid point
 * after the one whose records are due (see VC_PACE_LAG_MAX_NS), the next
 * multiple of the pace's period (VC_PACE_PERIOD_MAX_NS), instead of
 * waiting to be woken: a wake-up from the sampler costs a switch of a
 * thread that runs (a guest's, on a busy host) and across CPUs an
 * interrupt, which vcpuperf is there to save.  True when it slept; false
 * when the grid is unknown, the run is ending, or the last paced wake
 * found nothing (then poll() waits to be woken, once).
 */
static bool vc_pace(struct vc_loop *l, __u64 now)
{
	struct vc_decoder *d = l->d;
	__u64 due, lag, slack, period;
	struct timespec ts;

	if (l->ctl < 0 || l->stopping || !d->grid_ns || !d->interval_ns ||
	    l->paced_empty)
		return false;
	lag = d->interval_ns;
	if (lag > VC_PACE_LAG_MAX_NS)
		lag = VC_PACE_LAG_MAX_NS;
	period = vc_ring_hold_ns(&l->ring, d) / VC_PACE_RING_DIV;
	if (period > VC_PACE_PERIOD_MAX_NS)
		period = VC_PACE_PERIOD_MAX_NS;
	period = period / d->interval_ns * d->interval_ns ?: d->interval_ns;
	due = d->grid_ns + d->interval_ns + lag;
	due = (due + period - 1) / period * period;
	while (due <= now)
		due += period;
	if (l->deadline && due > l->deadline)
		due = l->deadline;
	if (l->host &&
	    due > l->host->next_ns + l->host->period_ns / VC_HOST_LATE_DIV)
		due = l->host->next_ns;
	slack = d->interval_ns / VC_PACE_SLACK_DIV;
	if (slack > l->tick_ns)
		slack = l->tick_ns;
	if (slack != l->slack_ns &&
	    !prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0))
		l->slack_ns = slack;
	ts.tv_sec = (time_t)(due / VP_NS_PER_S);
	ts.tv_nsec = (long)(due % VP_NS_PER_S);
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	l->paced = true;
	return true;
}

/* The stream ran dry: write the output out and wait for more. */
static enum vc_step vc_wait(struct vc_loop *l, __u64 now)
{
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };
	int timeout = VC_POLL_MAX_MS;

	vc_flush_all(l, now);
	vc_textfile(l, now);
	vc_status(l, now, false);
	/* A paced wake that found nothing: be woken this time. */
	l->paced_empty = l->paced;
	l->paced = false;
	if (vc_pace(l, now))
		return VC_STEP_ON;
	if (!l->stopping && l->deadline) {
		__u64 left = l->deadline > now ? l->deadline - now : 0;

		if (left / VP_NS_PER_MS < (__u64)timeout)
			timeout = (int)(left / VP_NS_PER_MS) + 1;
	}
	if (!l->stopping && l->host) {
		__u64 left = l->host->next_ns > now ? l->host->next_ns - now : 0;

		if (left / VP_NS_PER_MS < (__u64)timeout)
			timeout = (int)(left / VP_NS_PER_MS) + 1;
	}
	if (++l->spurious > VC_SPURIOUS_MAX) {
		struct timespec ts = { 0, VC_IDLE_SLEEP_NS };

		nanosleep(&ts, NULL);
	}
	if (poll(&pfd, 1, timeout) < 0 && errno != EINTR) {
		fprintf(stderr, VC_NAME ": poll: %s\n", strerror(errno));
		return VC_STEP_FAILED;
	}
	return VC_STEP_ON;
}

/* One read() of the stream, and what follows from it. */
static enum vc_step vc_read_once(struct vc_loop *l, __u64 now)
{
	size_t room;
	void *buf = vc_dec_space(l->d, &room);
	ssize_t n = read(l->fd, buf, room);

	if (n > 0)
		return vc_consume(l, buf, (size_t)n, now);
	if (n == 0)
		return vc_dec_end(l->d) ? VC_STEP_FAILED : VC_STEP_DONE;
	if (errno == EINTR)
		return VC_STEP_ON;
	if (errno == EAGAIN)
		return vc_wait(l, now);
	fprintf(stderr, VC_NAME ": reading stream: %s\n", strerror(errno));
	return VC_STEP_FAILED;
}

/**
 * vc_read_loop() - read until EOF, a fatal decode error or an interruption
 * @l:		what to read, where it goes, when to stop
 *
 * Return: 0, or 1 when the run failed (a message is out).
 */
int vc_read_loop(struct vc_loop *l)
{
	struct timespec res;
	enum vc_step step;

	l->flushed = vc_now_ns();
	l->started = l->flushed;
	l->status_at = l->flushed;
	l->prom_at = 0;
	l->stop_by = 0;
	l->stopping = false;
	l->spurious = 0;
	l->paced = false;
	l->paced_empty = false;
	/* A coarse clock's resolution is the kernel's tick. */
	l->tick_ns = VC_TICK_UNKNOWN_NS;
	if (!clock_getres(CLOCK_MONOTONIC_COARSE, &res) && !res.tv_sec &&
	    res.tv_nsec > 0)
		l->tick_ns = (__u64)res.tv_nsec;
	do {
		__u64 now = vc_now_ns();

		step = vc_check_stop(l, now);
		/* A host-wide recording looks for new QEMUs when due. */
		if (step == VC_STEP_ON && l->host && !l->stopping &&
		    now >= l->host->next_ns && vc_host_scan(l->host, now))
			step = VC_STEP_FAILED;
		if (step == VC_STEP_ON)
			step = vc_read_once(l, now);
	} while (step == VC_STEP_ON);
	if (l->prom && vc_prom_write(l->prom, false))
		step = VC_STEP_FAILED;
	vc_status(l, vc_now_ns(), true);
	return step == VC_STEP_FAILED;
}
