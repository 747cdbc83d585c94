/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version and configuration differences, all in one place.
 * Features are tested, not version numbers, wherever the kernel allows.
 */
#ifndef _VCPUPERF_COMPAT_H
#define _VCPUPERF_COMPAT_H

#include <linux/kconfig.h>

#if !IS_ENABLED(CONFIG_PERF_EVENTS)
#error "vcpuperf needs a kernel built with CONFIG_PERF_EVENTS"
#endif
#if !IS_ENABLED(CONFIG_DEBUG_FS)
#error "vcpuperf needs a kernel built with CONFIG_DEBUG_FS"
#endif

/* Tracepoints are resolved through the trace event files. */
#define VP_HAVE_TRACEPOINTS	IS_ENABLED(CONFIG_TRACING)

#endif /* _VCPUPERF_COMPAT_H */
