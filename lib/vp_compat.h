/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Environment shim for code compiled both into vcpuperf.ko and into the
 * userspace tool.  Shared sources include only this header and the uapi
 * header; everything else they need is provided here for both sides.
 */
#ifndef _VCPUPERF_VP_COMPAT_H
#define _VCPUPERF_VP_COMPAT_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/perf_event.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <linux/perf_event.h>
#ifndef ENOTSUPP
#define ENOTSUPP	524	/* kernel-internal, seen from perf PMUs */
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
#endif

#endif /* _VCPUPERF_VP_COMPAT_H */
