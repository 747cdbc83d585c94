/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every part of vcpuperf-cat shares: its name in messages, its exit
 * codes, and two helpers the kernel has and userspace does not.  Each
 * other header of tools/ is one layer's interface and is named after the
 * file that implements it (docs/architecture.md, "Source map").
 */
#ifndef _VC_COMMON_H
#define _VC_COMMON_H

#include <stddef.h>

#include "vcpuperf_lib.h"

#define VC_NAME		"vcpuperf-cat"

/* Exit codes. */
#define VC_EXIT_OK	0
#define VC_EXIT_RUNTIME	1
#define VC_EXIT_USAGE	2

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

#ifndef container_of
#define container_of(ptr, type, member)					\
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#endif /* _VC_COMMON_H */
