// SPDX-License-Identifier: GPL-2.0
/*
 * The QEMU processes of the host (--all-qemu), found by a scan of /proc: a
 * process whose executable's name begins with "qemu" or "kvm" (QEMU's own
 * names, and the kvm wrapper some distributions install), and which has a
 * vCPU thread, named "CPU <n>/KVM" or "CPU <n>/TCG" (QEMU started with
 * -name ...,debug-threads=on, as libvirt starts it).  Its VM identity is
 * read from its command line, as the module reads it (lib/).
 *
 * A scan reads /proc's directory and, for each process it has not seen,
 * the link of its executable; for each QEMU it knows, its start time (the
 * pid may have been given to another process) and, until it has one, its
 * threads' names.  A new QEMU is found by the first scan after it names a
 * vCPU thread; a scan costs a readlink() per process of the host and a
 * few reads per QEMU.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "qemus.h"
#include "readfile.h"

/* Bytes of a command line read for the VM identity, as the module reads. */
#define VC_CMDLINE_MAX	(16 * 1024)
/* Room for /proc/PID/stat: its comm, 52 numbers. */
#define VC_STAT_MAX	1024
/* Field of the start time in /proc/PID/stat, after the comm's ')'. */
#define VC_STAT_STARTTIME	20
#define VC_QEMUS_MIN	16
/* Other VMs whose names vc_vm_name_of() keeps. */
#define VC_VM_NAMES	64

/**
 * vc_qemus_init() - no QEMU known yet
 * @qs:		the set
 * @proc:	procfs ("/proc")
 * @match:	glob of the VM names to record, NULL for all
 */
void vc_qemus_init(struct vc_qemus *qs, const char *proc, const char *match)
{
	memset(qs, 0, sizeof(*qs));
	qs->proc = proc;
	qs->match = match;
}

/**
 * vc_qemus_free() - forget every QEMU
 * @qs:		the set
 */
void vc_qemus_free(struct vc_qemus *qs)
{
	free(qs->q);
	qs->q = NULL;
	qs->nr = 0;
	qs->cap = 0;
}

/* The start time of process @pid (/proc/PID/stat field 22), 0 if none. */
static unsigned long long vc_start_time(const char *proc, int pid)
{
	char path[PATH_MAX], buf[VC_STAT_MAX];
	unsigned long long v = 0;
	char *p;
	int field;

	snprintf(path, sizeof(path), "%s/%d/stat", proc, pid);
	if (vc_read_file(path, buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	for (field = 0; p && field < VC_STAT_STARTTIME; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* Is process @pid a QEMU, by the name of its executable? */
static bool vc_is_qemu(const char *proc, int pid)
{
	char path[PATH_MAX], exe[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/exe", proc, pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	base = strrchr(exe, '/');
	base = base ? base + 1 : exe;
	return !strncmp(base, "qemu", 4) || !strncmp(base, "kvm", 3);
}

/* Has process @pid a thread named as QEMU names its vCPU threads? */
static bool vc_has_vcpu(const char *proc, int pid)
{
	char path[PATH_MAX], comm[VCPUPERF_COMM_LEN + 2];
	struct dirent *de;
	bool found = false;
	DIR *d;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%d/task", proc, pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%d/task/%s/comm", proc, pid,
			 de->d_name);
		n = vc_read_file(path, comm, sizeof(comm));
		if (n <= 0)
			continue;
		if (comm[n - 1] == '\n')
			comm[n - 1] = '\0';
		found = vp_parse_vcpu(comm) >= 0;
	}
	closedir(d);
	return found;
}

/* The VM identity and episode name of @q, from its command line. */
static void vc_qemu_identify(const char *proc, struct vc_qemu *q)
{
	char path[PATH_MAX];
	char *args = malloc(VC_CMDLINE_MAX);
	ssize_t n;

	q->vm[0] = '\0';
	q->uuid[0] = '\0';
	if (args) {
		snprintf(path, sizeof(path), "%s/%d/cmdline", proc, q->pid);
		n = vc_read_file(path, args, VC_CMDLINE_MAX);
		if (n > 0)
			vp_qemu_identity(args, (size_t)n, q->vm, sizeof(q->vm),
					 q->uuid, sizeof(q->uuid));
		free(args);
	}
	if (q->vm[0])
		snprintf(q->name, sizeof(q->name), "%s", q->vm);
	else
		snprintf(q->name, sizeof(q->name), "qemu-%d", q->pid);
}

static struct vc_qemu *vc_qemus_find(struct vc_qemus *qs, int pid)
{
	size_t i;

	for (i = 0; i < qs->nr; i++)
		if (qs->q[i].pid == pid)
			return &qs->q[i];
	return NULL;
}

static struct vc_qemu *vc_qemus_add(struct vc_qemus *qs, int pid,
				    unsigned long long start)
{
	struct vc_qemu *q;
	size_t cap;

	if (qs->nr == qs->cap) {
		cap = qs->cap ? 2 * qs->cap : VC_QEMUS_MIN;
		q = realloc(qs->q, cap * sizeof(*q));
		if (!q)
			return NULL;
		qs->q = q;
		qs->cap = cap;
	}
	q = &qs->q[qs->nr++];
	memset(q, 0, sizeof(*q));
	q->pid = pid;
	q->start = start;
	q->state = VC_QEMU_WAITING;
	return q;
}

/* A QEMU waiting for a vCPU thread: found, or ignored by --match. */
static void vc_qemu_check(struct vc_qemus *qs, struct vc_qemu *q)
{
	if (!vc_has_vcpu(qs->proc, q->pid))
		return;
	vc_qemu_identify(qs->proc, q);
	if (qs->match && fnmatch(qs->match, q->name, 0))
		q->state = VC_QEMU_IGNORED;
	else
		q->state = VC_QEMU_FOUND;
}

/* Drop the QEMUs the last scan did not see (gone, or a new process). */
static void vc_qemus_sweep(struct vc_qemus *qs)
{
	size_t i, o = 0;

	for (i = 0; i < qs->nr; i++)
		if (qs->q[i].seen == qs->scans)
			qs->q[o++] = qs->q[i];
	qs->nr = o;
}

/* Drop entry @i, keeping the others in the order they were found. */
static void vc_qemus_drop(struct vc_qemus *qs, size_t i)
{
	memmove(&qs->q[i], &qs->q[i + 1], (qs->nr - i - 1) * sizeof(qs->q[0]));
	qs->nr--;
}

/**
 * vc_qemus_recheck() - check the QEMUs that had no vCPU thread yet
 * @qs:		the set
 *
 * Return: the QEMUs found (in VC_QEMU_FOUND), to be attached.
 */
int vc_qemus_recheck(struct vc_qemus *qs)
{
	int found = 0;
	size_t i;

	for (i = 0; i < qs->nr; i++) {
		if (qs->q[i].state == VC_QEMU_WAITING)
			vc_qemu_check(qs, &qs->q[i]);
		found += qs->q[i].state == VC_QEMU_FOUND;
	}
	return found;
}

/**
 * vc_qemus_exec() - process @pid ran exec()
 * @qs:		the set
 * @pid:	its pid
 *
 * A QEMU is added (waiting until it has a vCPU thread) unless the set
 * has it already; a process of the set that became something else is
 * dropped.
 */
void vc_qemus_exec(struct vc_qemus *qs, int pid)
{
	struct vc_qemu *q = vc_qemus_find(qs, pid);
	unsigned long long start;

	if (!vc_is_qemu(qs->proc, pid)) {
		if (q)
			vc_qemus_drop(qs, q - qs->q);
		return;
	}
	start = vc_start_time(qs->proc, pid);
	if (!start || (q && q->start == start))
		return;		/* gone meanwhile, or known */
	if (q)
		vc_qemus_drop(qs, q - qs->q);
	vc_qemus_add(qs, pid, start);
}

/**
 * vc_qemus_exit() - process @pid ended
 * @qs:		the set
 * @pid:	its pid (the module ends what it recorded of it by itself)
 */
void vc_qemus_exit(struct vc_qemus *qs, int pid)
{
	struct vc_qemu *q = vc_qemus_find(qs, pid);

	if (q)
		vc_qemus_drop(qs, q - qs->q);
}

/**
 * vc_qemus_scan() - look for QEMU processes
 * @qs:		the set
 *
 * A QEMU seen for the first time is added (waiting until it has a vCPU
 * thread); one that is gone, or whose pid another process has now, is
 * dropped.  The caller attaches those left in VC_QEMU_FOUND and marks
 * them VC_QEMU_ATTACHED.
 *
 * Return: the QEMUs found (in VC_QEMU_FOUND), or -errno when /proc
 * cannot be read.
 */
int vc_qemus_scan(struct vc_qemus *qs)
{
	unsigned long long start;
	struct vc_qemu *q;
	struct dirent *de;
	int pid;
	DIR *d;

	d = opendir(qs->proc);
	if (!d)
		return -errno;
	qs->scans++;
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = atoi(de->d_name);
		q = vc_qemus_find(qs, pid);
		if (!q && !vc_is_qemu(qs->proc, pid))
			continue;
		start = vc_start_time(qs->proc, pid);
		if (!start)
			continue;	/* gone meanwhile */
		if (q && q->start != start)
			q = NULL;	/* another process: left to the sweep */
		if (!q) {
			q = vc_qemus_add(qs, pid, start);
			if (!q)
				break;
		}
		q->seen = qs->scans;
	}
	closedir(d);
	vc_qemus_sweep(qs);
	return vc_qemus_recheck(qs);
}

/* The names vc_vm_name_of() read, the oldest replaced when full. */
static struct {
	__u32 pid;
	char vm[VCPUPERF_VM_NAME_LEN];
} vc_vm_names[VC_VM_NAMES];
static unsigned int vc_vm_names_next;

/**
 * vc_vm_name_of() - the VM name of a process, for sched_wait_vms
 * @pid:	a process id the module named as another VM's
 *
 * Its -name from /proc/PID/cmdline, read once per process and kept (a
 * VM's rows name the same few others again and again); NULL when it has
 * none or is gone (the row then says qemu-PID, as the episode files do).
 *
 * Return: the name, valid until the next call, or NULL.
 */
const char *vc_vm_name_of(__u32 pid)
{
	char path[PATH_MAX], uuid[VCPUPERF_UUID_LEN];
	unsigned int i;
	char *args;
	ssize_t n;

	for (i = 0; i < VC_VM_NAMES; i++)
		if (vc_vm_names[i].pid == pid)
			return vc_vm_names[i].vm[0] ? vc_vm_names[i].vm : NULL;
	args = malloc(VC_CMDLINE_MAX);
	if (!args)
		return NULL;
	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	n = vc_read_file(path, args, VC_CMDLINE_MAX);
	/* Gone: not kept, the pid may come back as another VM. */
	if (n <= 0) {
		free(args);
		return NULL;
	}
	i = vc_vm_names_next++ % VC_VM_NAMES;
	vc_vm_names[i].pid = pid;
	vp_qemu_identity(args, (size_t)n, vc_vm_names[i].vm,
			 sizeof(vc_vm_names[i].vm), uuid, sizeof(uuid));
	free(args);
	return vc_vm_names[i].vm[0] ? vc_vm_names[i].vm : NULL;
}
