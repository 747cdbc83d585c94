/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Attaching and detaching (attach.c): threads by tid, processes by pid, QEMU
 * processes by their vCPU threads, each on the authority of the file's
 * opener; and the threads that appear later in an attached process.
 */
#ifndef _VCPUPERF_ATTACH_H
#define _VCPUPERF_ATTACH_H

#include <linux/types.h>

#include "../lib/vcpuperf_lib.h"

struct cred;
struct pid;
struct pid_namespace;
struct task_struct;
struct vp_coll;
struct vp_group;

/**
 * struct vp_attach_req - what an attach command brings from outside the
 *			  collection's lock
 * @cred:	the authority it is made with: the credentials its file was
 *		opened with (the module's own: those of the task loading
 *		it), referenced
 * @vm_pid:	the process whose VM identity was read, referenced; NULL
 *		when none was (not qemu=, or no such process)
 * @vm:		its VM name, "" for none
 * @uuid:	its UUID, "" for none
 */
struct vp_attach_req {
	const struct cred *cred;
	struct pid *vm_pid;
	char vm[VCPUPERF_VM_NAME_LEN];
	char uuid[VCPUPERF_UUID_LEN];
};

void vp_attach_prepare(struct vp_attach_req *req, const struct cred *cred,
		       const struct vp_cmd *cmd);
void vp_attach_release(struct vp_attach_req *req);
int vp_attach(struct vp_coll *c, const struct vp_attach_req *req,
	      struct vp_cmd *cmd, char *err, size_t errlen);
int vp_detach(struct vp_coll *c, const struct vp_cmd *cmd, char *err,
	      size_t errlen);
void vp_detach_all(struct vp_coll *c, u32 reason);
void vp_forget_all(struct vp_coll *c);
void vp_scan_groups(struct vp_coll *c);
int vp_start_tasks(struct vp_coll *c, struct task_struct **tasks, u32 nr,
		   struct pid_namespace *ns, enum vcpuperf_target_kind kind,
		   u32 flags, struct vp_group *g,
		   const struct vcpuperf_event_desc *descs, u32 nr_events,
		   const struct cred *cred, bool announce);
bool vp_group_wants(struct vp_group *g, struct task_struct *t);

#endif /* _VCPUPERF_ATTACH_H */
