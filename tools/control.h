/* SPDX-License-Identifier: GPL-2.0 */
/*
 * control.c: talking to the module: opening a collection (the device or
 * debugfs), control commands, the reason of a rejected command, advice
 * when nothing can be opened.
 */
#ifndef _VC_CONTROL_H
#define _VC_CONTROL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* The module's files where they are by default (--debugfs, --device). */
#define VC_DEBUGFS_DIR	"/sys/kernel/debug/vcpuperf"
#define VC_DEVICE	"/dev/vcpuperf"

/**
 * struct vc_files - the module's files the tool uses
 * @stream:	the record stream (non-blocking)
 * @ctl:	where commands go, -1 if none; equals @stream for the device
 * @path:	the stream's path, for messages
 */
struct vc_files {
	int stream;
	int ctl;
	char path[PATH_MAX];
};

int vc_open_module(const char *dir, const char *device, bool control,
		   struct vc_files *files);
int vc_command(int fd, const char *dir, const char *cmd, char *why,
	       size_t len);
int vc_control(int fd, const char *dir, const char *cmd);

#endif /* _VC_CONTROL_H */
