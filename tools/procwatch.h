/* SPDX-License-Identifier: GPL-2.0 */
/*
 * procwatch.c: the kernel's process events connector (cn_proc), read by
 * --all-qemu to learn of new QEMUs without scanning /proc: a process's
 * exec and its end.
 */
#ifndef _VC_PROCWATCH_H
#define _VC_PROCWATCH_H

#include <stdbool.h>

/* What one process event says. */
enum vc_proc_what {
	VC_PROC_EXEC,		/* @pid ran exec() */
	VC_PROC_EXIT,		/* process @pid ended (its leader exited) */
};

/**
 * struct vc_procwatch - a listener on the process events connector
 * @fd:		its netlink socket, -1 when not listening
 * @listening:	the kernel counted it as a listener (IGNORE is owed)
 * @why:	why it is not listening, when it is not
 */
struct vc_procwatch {
	int fd;
	bool listening;
	char why[128];
};

int vc_procwatch_open(struct vc_procwatch *w);
void vc_procwatch_close(struct vc_procwatch *w);
int vc_procwatch_read(struct vc_procwatch *w,
		      void (*fn)(void *arg, enum vc_proc_what what, int pid),
		      void *arg);

#endif /* _VC_PROCWATCH_H */
