// SPDX-License-Identifier: GPL-2.0
/*
 * Who may count which thread.
 *
 * perf_event_create_kernel_counter() makes none of the checks
 * perf_event_open() makes.  Opening a vcpuperf file needs CAP_SYS_ADMIN
 * (chardev.c, files.c); a file, once open, may be used by any process it
 * is handed to (inherited across fork(), kept after dropping privileges,
 * passed over a Unix socket).  So each attach is checked again, when it is
 * carried out, against the credentials the file was opened with: the fd
 * carries the authority its opener had over each thread, never the
 * writer's, and never more.  That authority is what perf_event_open()
 * asks of its caller for a counter on another thread: the capability (as
 * at open), and the ptrace-style read access that perf_check_permission()
 * checks, made here with the exported primitives since ptrace_may_access()
 * is not exported: the same real uid and gid as the thread's, or
 * CAP_SYS_PTRACE in its user namespace, and CAP_SYS_PTRACE in the
 * namespace of its mm (of its exec state from Linux 7.2) when it is not
 * dumpable.  The LSM hooks perf_event_open()
 * calls (security_perf_event_open(), the ptrace access check) are not
 * exported either: an LSM's perf_event and ptrace rules do not apply.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/user_namespace.h>

#include "access.h"
#include "compat.h"

#if VP_HAVE_EXEC_STATE
#include <linux/sched/exec_state.h>

/*
 * The user namespace whose CAP_SYS_PTRACE a thread that is not dumpable
 * asks of a tracer, referenced; NULL when it is dumpable.
 */
static struct user_namespace *vp_undumpable_ns(struct task_struct *task)
{
	struct user_namespace *ns = NULL;
	struct task_exec_state *es;

	rcu_read_lock();
	es = rcu_dereference(task->exec_state);
	if (es && es->dumpable != TASK_DUMPABLE_OWNER)
		ns = get_user_ns(es->user_ns);
	rcu_read_unlock();
	return ns;
}
#else
static struct user_namespace *vp_undumpable_ns(struct task_struct *task)
{
	struct user_namespace *ns = NULL;
	struct mm_struct *mm;

	task_lock(task);
	mm = task->mm;
	if (mm && get_dumpable(mm) != SUID_DUMP_USER)
		ns = get_user_ns(mm->user_ns);
	task_unlock(task);
	return ns;
}
#endif

/* Has the opener of @file (NULL: the current task) @cap in @ns? */
static bool vp_opener_capable(const struct file *file,
			      struct user_namespace *ns, int cap)
{
	return file ? file_ns_capable(file, ns, cap) : ns_capable(ns, cap);
}

/* The real ids of @cred are the thread's @tcred, every one of them. */
static bool vp_same_ids(const struct cred *cred, const struct cred *tcred)
{
	return uid_eq(cred->uid, tcred->euid) &&
	       uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) &&
	       gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) &&
	       gid_eq(cred->gid, tcred->gid);
}

/**
 * vp_may_count() - may the opener of a file count a thread?
 * @file:	the file the command was written to; NULL for the module's
 *		own commands (its load-time parameters): the current task
 * @task:	the thread
 * @tid:	its id as the writer named it, for the reason
 * @err:	reason on failure
 * @errlen:	size of @err
 *
 * See the top of this file.
 *
 * Return: 0; -EPERM when the opener lacks CAP_SYS_ADMIN in the initial
 * user namespace; -EACCES when it could not trace the thread.
 */
int vp_may_count(const struct file *file, struct task_struct *task,
		 pid_t tid, char *err, size_t errlen)
{
	const struct cred *cred = file ? file->f_cred : current_cred();
	struct user_namespace *ns;
	const struct cred *tcred;
	bool ok;

	if (!vp_opener_capable(file, &init_user_ns, CAP_SYS_ADMIN)) {
		snprintf(err, errlen,
			 "the opener of this file has no CAP_SYS_ADMIN");
		return -EPERM;
	}
	tcred = get_task_cred(task);
	ok = vp_same_ids(cred, tcred) ||
	     vp_opener_capable(file, tcred->user_ns, CAP_SYS_PTRACE);
	put_cred(tcred);
	if (ok) {
		ns = vp_undumpable_ns(task);
		if (ns) {
			ok = vp_opener_capable(file, ns, CAP_SYS_PTRACE);
			put_user_ns(ns);
		}
	}
	if (!ok) {
		snprintf(err, errlen,
			 "thread %d: the opener of this file (uid %u) may not trace it (another user's, or not dumpable, and no CAP_SYS_PTRACE)",
			 tid, from_kuid(&init_user_ns, cred->uid));
		return -EACCES;
	}
	return 0;
}
