/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lifecycle.c: the JSONL sink's lifecycle callbacks, one JSON line per
 * record that is no sample (perf_started, ...), perf_seq_gap per gap.
 */
#ifndef _VC_LIFECYCLE_H
#define _VC_LIFECYCLE_H

#include <stdbool.h>

#include "common.h"

struct vc_jsonl;
struct vc_proc;
struct vc_sink;
struct vc_tid;

void vc_write_lifecycle(struct vc_sink *sink, const struct vcpuperf_rec *rec,
			const struct vc_tid *t, __u64 rows);
void vc_write_seq_gap(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      __u64 expected, bool explained);
void vc_write_who_partial(const struct vc_jsonl *out, const struct vc_tid *t,
			  const struct vcpuperf_sample *s, __u32 cause);
void vc_write_sched_partial(const struct vc_jsonl *out, const struct vc_tid *t,
			    const struct vcpuperf_sample *s);
void vc_write_vm_sched_stale(const struct vc_jsonl *out,
			     const struct vc_proc *p,
			     const struct vcpuperf_process_sample *s);
void vc_write_vm_finished(const struct vc_jsonl *out, const struct vc_proc *p,
			  const struct vcpuperf_process_sample *s);
void vc_write_attach_failed(const struct vc_jsonl *out, int pid,
			    const char *vm, const char *uuid, int err,
			    const char *reason);
void vc_write_process(struct vc_sink *sink, const struct vcpuperf_rec *rec,
		      const struct vc_proc *p);

#endif /* _VC_LIFECYCLE_H */
