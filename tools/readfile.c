// SPDX-License-Identifier: GPL-2.0
/*
 * A small text file read whole into a caller's buffer: the files of
 * /proc the host-wide recorder scans and the module's status file.  Such
 * files come in several read()s (seq_file pages), each possibly cut short
 * by a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "readfile.h"

/**
 * vc_read_file() - read a file into a buffer, NUL terminated
 * @path:	the file
 * @buf:	where it goes; at most @len - 1 bytes of it, then a NUL
 * @len:	size of @buf, at least 1
 *
 * Return: the bytes read (what is past @len - 1 is left unread), or
 * -errno when the file cannot be opened or read.
 */
ssize_t vc_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;
	int err;

	if (fd < 0)
		return -errno;
	while (got + 1 < len) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			close(fd);
			buf[got] = '\0';
			return -err;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return (ssize_t)got;
}
