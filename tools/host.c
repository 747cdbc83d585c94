// SPDX-License-Identifier: GPL-2.0
/*
 * A host-wide recording (--all-qemu): every scan period the read loop
 * asks for a look for new QEMUs (qemus.c): the first look, and every
 * look where the kernel's process events cannot be had (procwatch.c), is
 * a scan of /proc; the others read the execs and process ends the kernel
 * queued since and check the new QEMUs only.  Each QEMU found is attached
 * to the tool's one collection with the command --qemu PID would send
 * (the same events, modes and flags), and the module from then on samples
 * it, picks up its later vCPU threads and ends it when it exits, as for
 * --qemu.  An attach the module refuses (the opener's authority, its
 * limits: at most VCPUPERF_MAX_GROUPS processes and max_targets threads
 * per collection) gets an episode file of its own that says why
 * (perf_attach_failed); the others go on.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "control.h"
#include "episodes.h"
#include "host.h"

/**
 * vc_host_init() - set up a host-wide recording
 * @h:		the recording
 * @eps:	its episode files
 * @ctl:	the collection's descriptor
 * @events:	--events, or NULL for the default set
 * @mods:	the mode options (VCPUPERF_MOD_*)
 * @flags:	VCPUPERF_ATTACH_* of each attach
 * @match:	--match glob, or NULL
 * @period_ns:	--scan-interval, 0 for VC_SCAN_DEFAULT_NS
 *
 * The first look is due at once.
 */
void vc_host_init(struct vc_host *h, struct vc_episodes *eps, int ctl,
		  const char *events, __u32 mods, __u32 flags,
		  const char *match, __u64 period_ns)
{
	memset(h, 0, sizeof(*h));
	vc_qemus_init(&h->qs, "/proc", match);
	h->eps = eps;
	h->ctl = ctl;
	h->events = events;
	h->mods = mods;
	h->flags = flags;
	h->period_ns = period_ns ? period_ns : VC_SCAN_DEFAULT_NS;
	h->pw.fd = -1;
}

/**
 * vc_host_free() - release what the recording holds
 * @h:		the recording
 */
void vc_host_free(struct vc_host *h)
{
	vc_procwatch_close(&h->pw);
	vc_qemus_free(&h->qs);
}

/* Attach QEMU @q: 0, or -1 when it could not be (said in its episode). */
static int vc_host_attach(struct vc_host *h, struct vc_qemu *q)
{
	char ids[sizeof("2147483647")], why[VCPUPERF_ERR_LEN];
	static char cmd[VCPUPERF_CMD_MAX + 1];
	int n, err;

	q->state = VC_QEMU_ATTACHED;
	snprintf(ids, sizeof(ids), "%d", q->pid);
	n = vp_build_attach(cmd, sizeof(cmd), VCPUPERF_TARGET_QEMU, ids,
			    h->events, h->mods);
	n = vp_build_attach_flags(cmd, sizeof(cmd), n, h->flags);
	if (n < 0)
		return -1;	/* checked at start: cannot happen */
	err = vc_command(h->ctl, NULL, cmd, why, sizeof(why));
	if (!err) {
		h->attached++;
		return 0;
	}
	/* Gone between the scan and the attach: no VM to speak of. */
	if (err == ESRCH && kill(q->pid, 0) && errno == ESRCH)
		return 0;
	h->failed++;
	vc_episodes_attach_failed(h->eps, q->pid, q->name, q->vm, q->uuid,
				  err, why);
	return -1;
}

/* One process event from the kernel. */
static void vc_host_event(void *arg, enum vc_proc_what what, int pid)
{
	struct vc_host *h = arg;

	if (what == VC_PROC_EXEC)
		vc_qemus_exec(&h->qs, pid);
	else
		vc_qemus_exit(&h->qs, pid);
}

/*
 * The new QEMUs by the kernel's process events: how many are ready, or -1
 * when /proc has to be scanned instead.
 */
static int vc_host_events(struct vc_host *h)
{
	int n;

	if (h->pw.fd < 0 || !h->scanned)
		return -1;
	n = vc_procwatch_read(&h->pw, vc_host_event, h);
	if (n == -ENOBUFS)
		return -1;	/* events lost: the scan sees what they said */
	if (n < 0) {
		fprintf(stderr, VC_NAME ": process events connector: %s; "
			"scanning /proc every --scan-interval from now on\n",
			strerror(-n));
		vc_procwatch_close(&h->pw);
		return -1;
	}
	return vc_qemus_recheck(&h->qs);
}

/**
 * vc_host_scan() - look for new QEMUs and attach them
 * @h:		the recording
 * @now:	CLOCK_MONOTONIC now; the next look is due a period later
 *
 * The first look starts listening to the kernel's process events (or
 * says on stderr why it cannot), then scans /proc for the QEMUs already
 * running.
 *
 * Return: 0, or -1 when /proc cannot be read (said on stderr).
 */
int vc_host_scan(struct vc_host *h, __u64 now)
{
	size_t i;
	int found;

	if (!h->scanned && vc_procwatch_open(&h->pw))
		fprintf(stderr, VC_NAME ": process events connector: %s; "
			"scanning /proc every --scan-interval instead\n",
			h->pw.why);
	h->next_ns = now + h->period_ns;
	found = vc_host_events(h);
	if (found < 0) {
		found = vc_qemus_scan(&h->qs);
		h->scanned = true;
	}
	if (found < 0) {
		fprintf(stderr, VC_NAME ": scanning %s: %s\n", h->qs.proc,
			strerror(-found));
		return -1;
	}
	for (i = 0; i < h->qs.nr && found; i++) {
		if (h->qs.q[i].state != VC_QEMU_FOUND)
			continue;
		vc_host_attach(h, &h->qs.q[i]);
		found--;
	}
	return 0;
}
