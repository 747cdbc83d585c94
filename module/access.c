// SPDX-License-Identifier: GPL-2.0
/*
 * Who may open a vcpuperf file, and who may count which thread.
 *
 * perf_event_create_kernel_counter() makes none of the checks
 * perf_event_open() makes.  Opening a vcpuperf file needs CAP_SYS_ADMIN
 * (vp_may_open()); a file, once open, may be used by any process it
 * is handed to (inherited across fork(), kept after dropping privileges,
 * passed over a Unix socket).  So each attach is checked again, when it is
 * carried out, against the credentials the file was opened with: the fd
 * carries the authority its opener had over each thread, never the
 * writer's, and never more.
 *
 * The collection keeps those credentials and checks every thread it
 * begins to count on the opener's behalf against them, each under the
 * thread's exec_update_lock until its counters exist: a thread found later
 * in an attached process, and a thread whose counters perf ended at an
 * exec that changed its credentials (perf's own guard: begin_new_exec()
 * calls perf_event_exit_task() for a setuid program), before it is counted
 * again.
 *
 * That authority is what perf_event_open() asks of its caller for a
 * counter on another thread: the capability (as at open), and the
 * ptrace-style read access that perf_check_permission() checks, made here
 * with the exported primitives since ptrace_may_access() is not exported:
 * the same real uid and gid as the thread's, or CAP_SYS_PTRACE in its user
 * namespace, and CAP_SYS_PTRACE in the namespace of its mm (of its exec
 * state from Linux 7.2) when it is not dumpable.  The LSM hooks
 * perf_event_open() calls (security_perf_event_open(), the ptrace access
 * check) are not exported either: an LSM's perf_event and ptrace rules do
 * not apply.
 */
#include <linux/capability.h>
#include <linux/cred.h>
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

/**
 * vp_may_open() - may the current task open a vcpuperf file?
 *
 * Kernel counters bypass perf_event_paranoid and perf's ptrace-style
 * checks, so opening any vcpuperf file needs what perf_event_open() needs
 * to count any thread at the strictest setting: Debian's
 * perf_event_paranoid=3 (its default) wants CAP_SYS_ADMIN, and CAP_PERFMON
 * is not enough there.  The sysctl is not exported to modules, so
 * CAP_SYS_ADMIN is required whatever its value.
 *
 * Return: 0, or -EPERM without the capability.
 */
int vp_may_open(void)
{
	return capable(CAP_SYS_ADMIN) ? 0 : -EPERM;
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
 * vp_may_count() - may an opener count a thread?
 * @cred:	the authority: the credentials the file was opened with (or,
 *		for the module's own commands, those of the task loading it),
 *		kept by the collection for every attach it makes on that
 *		opener's behalf, scans included
 * @task:	the thread
 * @tid:	its id as the writer named it, for the reason
 * @err:	reason on failure, or NULL
 * @errlen:	size of @err
 *
 * See the top of this file.  The capabilities are those of @cred, checked
 * by the kernel's own capability test (with the LSM's capable hook) while
 * @cred stands in for the current task's credentials: this runs in the
 * writer of a command or in a collection's sampler, neither of which is
 * the opener.  The caller holds the thread's exec_update_lock from this
 * check until its counters exist, as perf_event_open() does, so that an
 * exec cannot change the thread's credentials in between.
 *
 * Return: 0; -EPERM when @cred lacks CAP_SYS_ADMIN in the initial user
 * namespace; -EACCES when it could not trace the thread.
 */
int vp_may_count(const struct cred *cred, struct task_struct *task,
		 pid_t tid, char *err, size_t errlen)
{
	struct user_namespace *ns;
	const struct cred *tcred, *old;
	int ret = 0;
	bool ok;

	old = override_creds(cred);
	if (!ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN)) {
		ret = -EPERM;
		goto out;
	}
	tcred = get_task_cred(task);
	ok = vp_same_ids(cred, tcred) ||
	     ns_capable_noaudit(tcred->user_ns, CAP_SYS_PTRACE);
	put_cred(tcred);
	if (ok) {
		ns = vp_undumpable_ns(task);
		if (ns) {
			ok = ns_capable_noaudit(ns, CAP_SYS_PTRACE);
			put_user_ns(ns);
		}
	}
	if (!ok)
		ret = -EACCES;
out:
	revert_creds(old);
	if (ret == -EPERM && err)
		snprintf(err, errlen,
			 "the opener of this file has no CAP_SYS_ADMIN");
	else if (ret && err)
		snprintf(err, errlen,
			 "thread %d: the opener of this file (uid %u) may not trace it (another user's, or not dumpable, and no CAP_SYS_PTRACE)",
			 tid, from_kuid(&init_user_ns, cred->uid));
	return ret;
}
