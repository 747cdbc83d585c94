# SPDX-License-Identifier: GPL-2.0
# libvpcat.a: vcpuperf-cat's library, the sources in this directory (as
# perf keeps its library in tools/perf/util/), and the one definition of
# what is in it.
#
# The stream decoder with its per-thread and per-process state, and the
# sinks it hands records to: the writers (JSON lines, rows, lifecycle
# lines, the Prometheus textfile, the episode files of a host-wide
# recording), with the lib/ code they share with the module.  What is in
# tools/ (the command line, the read loop, control, the host's QEMUs,
# main) is the program.
#
# Built once per kind of build, always from this list:
#   tools/Makefile  libvpcat.a, which vcpuperf-cat links (and the host
#                   tests in tests/tool/ run)
#   fuzz/Makefile   the same sources instrumented (clang, sanitizers) as
#                   fuzz/build/libvpcat.a, which every harness links
#
# Include this file; it sets, with paths relative to the including one:
#   VPCAT_DIR       this directory
#   VPCAT_SRCS      the library's sources here
#   VPCAT_LIB_SRCS  its sources in lib/ (compiled into the module too)
#   VPCAT_HDRS      the headers any of them includes
#   VPCAT_CPPFLAGS  the include path they (and the program) need

# this directory, "" when included from here
vpcat_pre := $(filter-out ./,$(dir $(lastword $(MAKEFILE_LIST))))

VPCAT_DIR := $(if $(vpcat_pre),$(vpcat_pre:%/=%),.)
VPCAT_SRCS := $(addprefix $(vpcat_pre),jsonl.c threads.c procs.c decode.c \
	output.c rows.c lifecycle.c prom.c tee.c episodes.c)
VPCAT_LIB_SRCS := $(wildcard $(vpcat_pre)../../lib/vcpuperf_*.c)
VPCAT_HDRS := $(wildcard $(vpcat_pre)*.h $(vpcat_pre)../../lib/*.h) \
	$(vpcat_pre)../../include/uapi/vcpuperf.h
VPCAT_CPPFLAGS := -I$(vpcat_pre)../../include -I$(vpcat_pre)../../lib \
	-I$(VPCAT_DIR)
