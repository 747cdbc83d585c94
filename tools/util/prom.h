/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prom.c: the node_exporter textfile (--textfile), counters summed from
 * the rows (a sink of the decoder's, beside the JSONL one: tee.h),
 * rewritten atomically.
 */
#ifndef _VC_PROM_H
#define _VC_PROM_H

#include <stdbool.h>

struct vc_sink;

/* The textfile's totals: opaque, prom.c's own. */
struct vc_prom;

struct vc_prom *vc_prom_new(const char *path);
void vc_prom_free(struct vc_prom *pr);
struct vc_sink *vc_prom_sink(struct vc_prom *pr);
int vc_prom_write(struct vc_prom *pr, bool up);
bool vc_prom_dirty(const struct vc_prom *pr);
void vc_prom_forget(struct vc_prom *pr, const char *vm, const char *uuid);

#endif /* _VC_PROM_H */
