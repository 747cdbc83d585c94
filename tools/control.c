// SPDX-License-Identifier: GPL-2.0
/*
 * Talking to the module: opening its files (debugfs control and stream,
 * or /dev/vcpuperf when debugfs control cannot be used, e.g. under kernel
 * lockdown), control commands, the reason of a rejected command from the
 * status file, and advice on what to do when nothing can be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "vcpuperf-cat.h"

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
void vc_explain_missing(const char *dir)
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
void vc_explain_open(const char *path, int err, bool stream)
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

/* An open error after which the device may still work. */
static bool vc_try_device(int err)
{
	return err == ENOENT || err == ENOTDIR || err == EPERM ||
	       err == EACCES;
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

/**
 * vc_open_module() - open the module's stream and, if wanted, control
 * @dir:	the vcpuperf debugfs directory
 * @device:	the vcpuperf character device
 * @control:	commands will be sent (else only the stream is read)
 * @files:	the file descriptors and the stream's path, filled in
 *
 * Debugfs first: control opened for writing, then the stream.  When that
 * control file (or, with !@control, the stream) is missing or refused,
 * e.g. under lockdown=integrity, the device is used instead, opened for
 * reading and writing (or only reading), and a line on standard error
 * says so.  When neither works, both reasons are reported.
 *
 * Return: 0, or -1 after reporting the error.
 */
int vc_open_module(const char *dir, const char *device, bool control,
		   struct vc_files *files)
{
	char path[PATH_MAX], mode[64];
	int fd, err, derr;

	files->ctl = -1;
	snprintf(path, sizeof(path), "%s/%s", dir, control ? "control" :
		 "stream");
	snprintf(files->path, sizeof(files->path), "%s/stream", dir);
	fd = open(path, control ? O_WRONLY | O_CLOEXEC :
		  O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && !control) {
		files->stream = fd;
		return 0;
	}
	if (fd >= 0) {
		files->ctl = fd;
		files->stream = open(files->path,
				     O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (files->stream >= 0)
			return 0;
		vc_explain_open(files->path, errno, true);
		close(fd);
		return -1;
	}
	err = errno;
	if (!vc_try_device(err)) {
		vc_explain_open(path, err, !control);
		return -1;
	}

	fd = open(device, (control ? O_RDWR : O_RDONLY) | O_NONBLOCK |
		  O_CLOEXEC);
	if (fd >= 0) {
		if (err == EPERM && vc_lockdown(mode, sizeof(mode)))
			fprintf(stderr, VC_NAME ": %s: %s (kernel lockdown: "
				"%s); using %s\n", path, strerror(err), mode,
				device);
		else
			fprintf(stderr, VC_NAME ": %s: %s; using %s\n", path,
				strerror(err), device);
		snprintf(files->path, sizeof(files->path), "%s", device);
		files->stream = fd;
		if (control)
			files->ctl = fd;
		return 0;
	}
	derr = errno;
	vc_explain_debugfs(dir, path, err, !control);
	vc_explain_open(device, derr, true);
	return -1;
}

/**
 * vc_last_error() - the module's reason for the last rejected command
 * @dir:	the vcpuperf debugfs directory
 * @buf:	the text after "last_error:", trimmed
 * @len:	size of @buf
 *
 * Return: 0 if the status file has a last_error line, else -errno.
 */
int vc_last_error(const char *dir, char *buf, size_t len)
{
	char path[PATH_MAX];
	char *text, *line, *end;
	ssize_t n, got = 0;
	int fd, ret = -ENOENT;

	snprintf(path, sizeof(path), "%s/status", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	text = malloc(VC_STATUS_MAX + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (ssize_t)VC_STATUS_MAX) {
		n = read(fd, text + got, VC_STATUS_MAX - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
	}
	close(fd);
	text[got] = '\0';
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
 * vc_control() - write one command to the control file
 * @fd:		the control file
 * @dir:	the vcpuperf debugfs directory (for the status file)
 * @cmd:	the command, without newline
 *
 * On failure prints the errno name and the module's last_error.
 *
 * Return: 0 or -errno.
 */
int vc_control(int fd, const char *dir, const char *cmd)
{
	char why[512];
	size_t len = strlen(cmd);
	ssize_t n;
	int err;

	do {
		n = write(fd, cmd, len);
	} while (n < 0 && errno == EINTR);
	if (n == (ssize_t)len)
		return 0;
	err = n < 0 ? errno : EIO;
	fprintf(stderr, VC_NAME ": control command '%s' failed: %s (%s)",
		cmd, vp_errno_name(err), strerror(err));
	if (!vc_last_error(dir, why, sizeof(why)) && why[0] &&
	    strcmp(why, "none"))
		fprintf(stderr, ": %s", why);
	fputc('\n', stderr);
	return -err;
}
