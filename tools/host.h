/* SPDX-License-Identifier: GPL-2.0 */
/*
 * host.c: a host-wide recording (--all-qemu): scanning for QEMU processes
 * on a schedule and attaching each one found to the tool's collection.
 */
#ifndef _VC_HOST_H
#define _VC_HOST_H

#include <stdbool.h>

#include "common.h"
#include "procwatch.h"
#include "qemus.h"

struct vc_episodes;

/* How often new QEMUs are looked for, by default. */
#define VC_SCAN_DEFAULT_NS	VP_NS_PER_S

/**
 * struct vc_host - a host-wide recording
 * @qs:		the QEMU processes found
 * @pw:		the process events connector, when it listens
 * @scanned:	/proc has been scanned once (at the first look)
 * @eps:	the episode files (one attach that failed gets one)
 * @ctl:	the collection's descriptor, where attach commands go
 * @events:	--events, or NULL
 * @mods:	the mode options, as VCPUPERF_MOD_*
 * @flags:	VCPUPERF_ATTACH_* (--per-vm, --emulator-threads)
 * @period_ns:	time between two looks (a read of @pw, else a scan)
 * @next_ns:	CLOCK_MONOTONIC of the next look
 * @attached:	QEMUs attached
 * @failed:	QEMUs that could not be
 */
struct vc_host {
	struct vc_qemus qs;
	struct vc_procwatch pw;
	bool scanned;
	struct vc_episodes *eps;
	int ctl;
	const char *events;
	__u32 mods;
	__u32 flags;
	__u64 period_ns;
	__u64 next_ns;
	unsigned long attached;
	unsigned long failed;
};

void vc_host_init(struct vc_host *h, struct vc_episodes *eps, int ctl,
		  const char *events, __u32 mods, __u32 flags,
		  const char *match, __u64 period_ns);
void vc_host_free(struct vc_host *h);
int vc_host_scan(struct vc_host *h, __u64 now);

#endif /* _VC_HOST_H */
