/* SPDX-License-Identifier: GPL-2.0 */
/*
 * readfile.c: a small file (a /proc or debugfs text file) read whole.
 */
#ifndef _VC_READFILE_H
#define _VC_READFILE_H

#include <sys/types.h>

ssize_t vc_read_file(const char *path, char *buf, size_t len);

#endif /* _VC_READFILE_H */
