/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procs.c: the decoder's per-process state, from a process record (the
 * VM identity of a QEMU, the events of its whole-process totals) through
 * its process samples, interpreted as a thread's samples are.
 */
#ifndef _VC_PROCS_H
#define _VC_PROCS_H

#include <stdbool.h>

#include "common.h"
#include "jsonl.h"
#include "threads.h"

struct vc_sink;

/**
 * struct vc_proc - what the decoder knows about one attached process
 * @pid:	process id, as its records carry it
 * @kind:	VCPUPERF_TARGET_PID or VCPUPERF_TARGET_QEMU
 * @flags:	VCPUPERF_ATTACH_* it was attached with
 * @nr_events:	events of its process samples
 * @threads:	threads given process counters at attach
 * @comm:	its leader's name, NUL terminated
 * @vm:		VM name from QEMU's -name, "" if none
 * @uuid:	VM UUID from QEMU's -uuid, "" if none
 * @vm_json:	@vm as a JSON value (quoted and escaped, or null), made
 *		once here instead of escaped again in every row
 * @uuid_json:	@uuid the same way
 * @ev:		the events of its process samples
 * @prev:	previous cumulative counts of its process samples
 * @sched:	its threads' scheduler figures so far, summed
 * @have_prev_t: @prev_t_mono is valid
 * @prev_t_mono: t_mono_ns of the previous process sample
 * @ratios:	operands of ipc and cache_miss_rate among @ev
 * @rows:	per-VM rows written since its process record
 * @gen:	a number no earlier process record had: what was made from
 *		this entry (a row segment with @vm_json) is good while it holds
 * @sink_data:	the sink's own data for the process (its per-VM row keys),
 *		kept across a reset: the sink remakes it from what it was
 * @next:	the next process the decoder knows
 *
 * Only procs.c changes these; a process record for a pid seen before
 * resets its entry in place (threads keep pointing at it).
 */
/* A string of up to N bytes as a JSON value: quoted, escaped, or null. */
#define VC_PROC_JSON_LEN(n)	((n) * VC_JSON_ESC_MAX + 3)

struct vc_proc {
	__u32 pid;
	__u32 kind;
	__u32 flags;
	__u32 nr_events;
	__u32 threads;
	char comm[VCPUPERF_COMM_LEN + 1];
	char vm[VCPUPERF_VM_NAME_LEN + 1];
	char uuid[VCPUPERF_UUID_LEN + 1];
	char vm_json[VC_PROC_JSON_LEN(VCPUPERF_VM_NAME_LEN)];
	char uuid_json[VC_PROC_JSON_LEN(VCPUPERF_UUID_LEN)];
	struct vcpuperf_event_desc ev[VCPUPERF_MAX_EVENTS];
	struct vcpuperf_count prev[VCPUPERF_MAX_EVENTS];
	struct vc_sched sched;
	bool have_prev_t;
	__u64 prev_t_mono;
	struct vc_ratios ratios;
	__u64 rows;
	__u64 gen;
	void *sink_data;
	struct vc_proc *next;
};

struct vc_proc *vc_proc_find(struct vc_proc *procs, __u32 pid);
struct vc_proc *vc_proc_start(struct vc_proc **procs,
			      const struct vcpuperf_process *r,
			      struct vc_sink *sink);
void vc_proc_sample(struct vc_proc *p,
		    const struct vcpuperf_process_sample *s,
		    struct vc_row *row);
void vc_procs_free(struct vc_proc **procs, struct vc_sink *sink);

#endif /* _VC_PROCS_H */
