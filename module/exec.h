/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Threads that exec (exec.c): a target ends with reason exec when its
 * thread took another tid (an exec from a thread that is not the leader)
 * or perf ended its counters at an exec that changed its credentials, and
 * the thread is attached again on the target's authority.
 */
#ifndef _VCPUPERF_EXEC_H
#define _VCPUPERF_EXEC_H

struct vp_coll;
struct vp_group;
struct vp_target;

void vp_target_gone(struct vp_coll *c, struct vp_target *t);
void vp_targets_exec(struct vp_coll *c);
void vp_targets_exited_or_exec(struct vp_coll *c);
void vp_restarts_run(struct vp_coll *c);
void vp_restarts_drop(struct vp_coll *c, const struct vp_group *g);

#endif /* _VCPUPERF_EXEC_H */
