/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prom.c: the node_exporter textfile (--textfile), counters summed from
 * the rows, rewritten atomically.
 */
#ifndef _VC_PROM_H
#define _VC_PROM_H

#include <stdbool.h>

struct vc_proc;
struct vc_row;
struct vc_tid;

/* The textfile's totals: opaque, prom.c's own. */
struct vc_prom;

struct vc_prom *vc_prom_new(const char *path);
void vc_prom_free(struct vc_prom *pr);
void vc_prom_row(struct vc_prom *pr, const struct vc_tid *t,
		 const struct vc_row *row);
void vc_prom_vm_row(struct vc_prom *pr, const struct vc_proc *p,
		    const struct vc_row *row);
int vc_prom_write(struct vc_prom *pr, bool up);
bool vc_prom_dirty(const struct vc_prom *pr);
void vc_prom_forget(struct vc_prom *pr, const char *vm, const char *uuid);

#endif /* _VC_PROM_H */
