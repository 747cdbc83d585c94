/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rows.c: the JSONL sink's row callbacks, one row per sample record and
 * one per-VM row per process sample record.
 */
#ifndef _VC_ROWS_H
#define _VC_ROWS_H

#include <linux/types.h>

struct vc_proc;
struct vc_row;
struct vc_sink;
struct vc_tid;

void *vc_row_thread_start(struct vc_sink *sink, const struct vc_tid *t,
			  void *data);
void vc_row_thread_free(struct vc_sink *sink, void *data);
void *vc_row_process_start(struct vc_sink *sink, const struct vc_proc *p,
			   void *data);
void vc_row_process_free(struct vc_sink *sink, void *data);
void vc_rows_set_vm_namer(const char *(*namer)(__u32 pid));
void vc_write_row(struct vc_sink *sink, const struct vc_tid *t,
		  const struct vc_row *row);
void vc_write_vm_row(struct vc_sink *sink, const struct vc_proc *p,
		     const struct vc_row *row);

#endif /* _VC_ROWS_H */
