/* SPDX-License-Identifier: GPL-2.0 */
/*
 * qemus.c: the QEMU processes of the host (--all-qemu), found by a scan
 * of /proc or told by the process events connector: a qemu* (or kvm*)
 * executable with at least one vCPU thread ("CPU <n>/KVM", "CPU <n>/TCG"),
 * its VM identity from its command line.
 */
#ifndef _VC_QEMUS_H
#define _VC_QEMUS_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

/* What the scan made of a QEMU process. */
enum vc_qemu_state {
	VC_QEMU_WAITING,	/* no vCPU thread yet */
	VC_QEMU_FOUND,		/* ready: to be attached */
	VC_QEMU_ATTACHED,	/* attached (or tried: see the episode) */
	VC_QEMU_IGNORED,	/* its name does not match --match */
};

/**
 * struct vc_qemu - one QEMU process of the host
 * @pid:	its pid
 * @start:	its start time (/proc/PID/stat field 22): with @pid, the
 *		process, not whatever gets the pid later
 * @state:	enum vc_qemu_state
 * @seen:	the scan that last found it
 * @vm:		VM name from its command line, "" for none
 * @uuid:	its UUID, "" for none
 * @name:	@vm, or "qemu-PID" without one: its episodes' name
 */
struct vc_qemu {
	int pid;
	unsigned long long start;
	enum vc_qemu_state state;
	unsigned long seen;
	char vm[VCPUPERF_VM_NAME_LEN];
	char uuid[VCPUPERF_UUID_LEN];
	char name[VCPUPERF_VM_NAME_LEN];
};

/**
 * struct vc_qemus - the QEMU processes the scans found
 * @proc:	the procfs mount ("/proc")
 * @match:	--match glob of VM names, or NULL for every one
 * @q:		the processes
 * @nr:		entries used in @q
 * @cap:	entries allocated
 * @scans:	scans made
 */
struct vc_qemus {
	const char *proc;
	const char *match;
	struct vc_qemu *q;
	size_t nr;
	size_t cap;
	unsigned long scans;
};

void vc_qemus_init(struct vc_qemus *qs, const char *proc, const char *match);
void vc_qemus_free(struct vc_qemus *qs);
int vc_qemus_scan(struct vc_qemus *qs);
void vc_qemus_exec(struct vc_qemus *qs, int pid);
void vc_qemus_exit(struct vc_qemus *qs, int pid);
int vc_qemus_recheck(struct vc_qemus *qs);
const char *vc_vm_name_of(__u32 pid);

#endif /* _VC_QEMUS_H */
