// SPDX-License-Identifier: GPL-2.0
/*
 * Talking to the module through debugfs: control commands, the reason of
 * a rejected command from the status file, and advice on what to do when
 * the files cannot be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "vcpuperf-cat.h"

#define VC_DEBUGFS_MNT	"/sys/kernel/debug"
#define VC_MODULE_DIR	"/sys/module/vcpuperf"
#define VC_STATUS_MAX	(64U << 10)

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
			"CAP_PERFMON or CAP_SYS_ADMIN\n", path, strerror(err));
	else if (err == EBUSY && stream)
		fprintf(stderr, VC_NAME ": %s: another reader has the stream "
			"open\n", path);
	else
		fprintf(stderr, VC_NAME ": %s: %s\n", path, strerror(err));
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
	char path[4096];
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
		if (strncmp(line, "last_error:", 11))
			continue;
		line += 11;
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
