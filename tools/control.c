// SPDX-License-Identifier: GPL-2.0
/*
 * Talking to the module: opening a collection (the tool's own on
 * /dev/vcpuperf, or the module's default one through debugfs), control
 * commands, the reason of a rejected command, and advice on what to do
 * when nothing can be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common.h"
#include "control.h"
#include "readfile.h"

/* A reason: status's last_error is an errno name, ": " and the reason. */
#define VC_REASON_LEN	(VCPUPERF_ERR_LEN + 32)

#define VC_DEBUGFS_MNT	"/sys/kernel/debug"
#define VC_MODULE_DIR	"/sys/module/vcpuperf"
#define VC_STATUS_MAX	(64U << 10)
#define VC_LOCKDOWN	"/sys/kernel/security/lockdown"

/* The line of the status file that gives the last rejected command's why */
static const char vc_last_error_key[] = "last_error:";

/* Is a debugfs mounted on @mnt, according to /proc/mounts? */
static bool vc_debugfs_mounted(const char *mnt)
{
	char line[1024], dev[256], dir[512], type[64];
	bool found = false;
	FILE *fp = fopen("/proc/mounts", "r");

	if (!fp)
		return true;	/* cannot tell: do not claim it is not */
	while (fgets(line, sizeof(line), fp)) {
		if (sscanf(line, "%255s %511s %63s", dev, dir, type) != 3)
			continue;
		if (!strcmp(type, "debugfs") && !strcmp(dir, mnt)) {
			found = true;
			break;
		}
	}
	fclose(fp);
	return found;
}

/**
 * vc_explain_missing() - say why the vcpuperf debugfs directory is missing
 * @dir:	the directory that was looked for
 *
 * Debugfs not mounted, then module not loaded, then a plain message.
 */
static void vc_explain_missing(const char *dir)
{
	size_t n = strlen(VC_DEBUGFS_MNT);

	if (!strncmp(dir, VC_DEBUGFS_MNT, n) &&
	    (dir[n] == '/' || !dir[n]) && !vc_debugfs_mounted(VC_DEBUGFS_MNT)) {
		fprintf(stderr, VC_NAME ": %s: debugfs is not mounted: "
			"mount -t debugfs none " VC_DEBUGFS_MNT "\n", dir);
		return;
	}
	if (access(VC_MODULE_DIR, F_OK)) {
		fprintf(stderr, VC_NAME ": %s: module not loaded: modprobe "
			"vcpuperf (or insmod vcpuperf.ko)\n", dir);
		return;
	}
	fprintf(stderr, VC_NAME ": %s: no such directory although the "
		"module is loaded (wrong --debugfs?)\n", dir);
}

/**
 * vc_explain_open() - report a failed open of a vcpuperf file
 * @path:	the file
 * @err:	positive errno of open()
 * @stream:	it is the stream file (EBUSY means another reader)
 */
static void vc_explain_open(const char *path, int err, bool stream)
{
	if (err == EACCES || err == EPERM)
		fprintf(stderr, VC_NAME ": %s: %s: need root with "
			"CAP_SYS_ADMIN\n", path, strerror(err));
	else if (err == EBUSY && stream)
		fprintf(stderr, VC_NAME ": %s: another reader has the stream "
			"open\n", path);
	else
		fprintf(stderr, VC_NAME ": %s: %s\n", path, strerror(err));
}

/*
 * The active kernel lockdown mode ("integrity", "confidentiality") into
 * @buf, or false if there is none or it cannot be told.
 */
static bool vc_lockdown(char *buf, size_t len)
{
	char text[128], *lb, *rb;
	ssize_t n;
	int fd;

	fd = open(VC_LOCKDOWN, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return false;
	text[n] = '\0';
	lb = strchr(text, '[');
	rb = lb ? strchr(lb, ']') : NULL;
	if (!rb)
		return false;
	*rb = '\0';
	if (!strcmp(lb + 1, "none"))
		return false;
	snprintf(buf, len, "%s", lb + 1);
	return true;
}

/* A module parameter's value as text, or "?" when it cannot be read. */
static const char *vc_module_param(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), VC_MODULE_DIR "/parameters/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, len - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return "?";
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* Report why the debugfs file @path could not be opened (@err). */
static void vc_explain_debugfs(const char *dir, const char *path, int err,
			       bool stream)
{
	char mode[64];

	if (err == ENOENT && access(dir, F_OK))
		vc_explain_missing(dir);
	else if (err == EPERM && vc_lockdown(mode, sizeof(mode)))
		fprintf(stderr, VC_NAME ": %s: %s: kernel lockdown (%s) "
			"refuses writable debugfs files\n", path,
			strerror(err), mode);
	else
		vc_explain_open(path, err, stream);
}

/* Open the debugfs files of the module's default collection. */
static int vc_open_debugfs(const char *dir, bool control,
			   struct vc_files *files)
{
	char path[PATH_MAX];
	int fd;

	snprintf(files->path, sizeof(files->path), "%s/stream", dir);
	if (control) {
		snprintf(path, sizeof(path), "%s/control", dir);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			vc_explain_debugfs(dir, path, errno, false);
			return -1;
		}
		files->ctl = fd;
	}
	files->stream = open(files->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (files->stream >= 0)
		return 0;
	vc_explain_debugfs(dir, files->path, errno, true);
	if (files->ctl >= 0)
		close(files->ctl);
	files->ctl = -1;
	return -1;
}

/* Say why /dev/vcpuperf could not be opened (@err), with the limit hit. */
static void vc_explain_device(const char *device, int err)
{
	char buf[32];

	if (err == EUSERS)
		fprintf(stderr, VC_NAME ": %s: too many collections open "
			"(the module's max_collections is %s)\n", device,
			vc_module_param("max_collections", buf, sizeof(buf)));
	else if (err == ENOSPC)
		fprintf(stderr, VC_NAME ": %s: no room for another ring "
			"(the module's ring_total_kb is %s)\n", device,
			vc_module_param("ring_total_kb", buf, sizeof(buf)));
	else
		vc_explain_open(device, err, false);
}

/**
 * vc_open_module() - open a collection: the tool's own, or the default one
 * @dir:	the vcpuperf debugfs directory
 * @device:	the vcpuperf character device
 * @control:	the tool attaches (else it only reads the default
 *		collection, --no-attach)
 * @files:	the file descriptors and the stream's path, filled in
 *
 * To attach, the tool opens its own collection on the device (read and
 * write on one descriptor): several tools then record independently.
 * Without the device (a module too old to have it, or no device node) it
 * falls back to the module's default collection through debugfs, and a
 * line on standard error says so.  Without @control it reads the default
 * collection's debugfs stream.
 *
 * Return: 0, or -1 after reporting the error.
 */
int vc_open_module(const char *dir, const char *device, bool control,
		   struct vc_files *files)
{
	int fd, err;

	files->ctl = -1;
	files->stream = -1;
	if (!control)
		return vc_open_debugfs(dir, false, files);

	fd = open(device, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		snprintf(files->path, sizeof(files->path), "%s", device);
		files->stream = fd;
		files->ctl = fd;
		return 0;
	}
	err = errno;
	if (err != ENOENT && err != ENXIO && err != ENODEV) {
		vc_explain_device(device, err);
		return -1;
	}
	if (vc_open_debugfs(dir, true, files)) {
		/* Both reasons: the device's, and debugfs' (said above). */
		fprintf(stderr, VC_NAME ": %s: %s\n", device, strerror(err));
		return -1;
	}
	fprintf(stderr, VC_NAME ": %s: %s; using the module's default "
		"collection in %s\n", device, strerror(err), dir);
	return 0;
}

/**
 * vc_last_error() - the module's reason for the last rejected command
 * @dir:	the vcpuperf debugfs directory
 * @buf:	the text after "last_error:", trimmed
 * @len:	size of @buf
 *
 * Return: 0 if the status file has a last_error line, else -errno.
 */
static int vc_last_error(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	char *text, *line, *end;
	ssize_t got;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "%s/status", dir);
	text = malloc(VC_STATUS_MAX + 1);
	if (!text)
		return -ENOMEM;
	got = vc_read_file(path, text, VC_STATUS_MAX + 1);
	if (got < 0) {
		free(text);
		return (int)got;
	}
	for (line = text; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = '\0';
		if (strncmp(line, vc_last_error_key,
			    sizeof(vc_last_error_key) - 1))
			continue;
		line += sizeof(vc_last_error_key) - 1;
		while (*line == ' ' || *line == '\t')
			line++;
		snprintf(buf, len, "%s", line);
		ret = 0;
		break;
	}
	free(text);
	return ret;
}

/**
 * vc_command() - write one command to a collection, saying nothing
 * @fd:		the device, or the debugfs control file
 * @dir:	the vcpuperf debugfs directory (for the status file), or
 *		NULL for no reason through debugfs
 * @cmd:	the command, without newline
 * @why:	the reason for a failure, "" when there is none: the
 *		collection's own (VCPUPERF_IOC_LAST_ERROR) on the device, the
 *		default collection's last_error from the status file
 *		through debugfs
 * @len:	size of @why, at least 1
 *
 * Return: 0, or the positive errno of the write.
 */
int vc_command(int fd, const char *dir, const char *cmd, char *why,
	       size_t len)
{
	struct vcpuperf_error e;
	size_t n = strlen(cmd);
	ssize_t got;
	int err;

	why[0] = '\0';
	do {
		got = write(fd, cmd, n);
	} while (got < 0 && errno == EINTR);
	if (got == (ssize_t)n)
		return 0;
	err = got < 0 ? errno : EIO;
	/* The device tells the reason to its own writer only. */
	if (!ioctl(fd, VCPUPERF_IOC_LAST_ERROR, &e)) {
		if (e.error)
			snprintf(why, len, "%s", e.reason);
	} else if (dir && (vc_last_error(dir, why, len) || !strcmp(why,
								   "none"))) {
		why[0] = '\0';
	}
	return err;
}

/**
 * vc_control() - write one command to a collection
 * @fd:		the device, or the debugfs control file
 * @dir:	the vcpuperf debugfs directory (for the status file)
 * @cmd:	the command, without newline
 *
 * On failure prints the errno name and the reason (vc_command()).
 *
 * Return: 0 or -errno.
 */
int vc_control(int fd, const char *dir, const char *cmd)
{
	char why[VC_REASON_LEN];
	int err = vc_command(fd, dir, cmd, why, sizeof(why));

	if (!err)
		return 0;
	fprintf(stderr, VC_NAME ": control command '%s' failed: %s (%s)",
		cmd, vp_errno_name(err), strerror(err));
	if (why[0])
		fprintf(stderr, ": %s", why);
	fputc('\n', stderr);
	return -err;
}
