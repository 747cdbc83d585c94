/* SPDX-License-Identifier: GPL-2.0 */
/*
 * options.c: the command line, --help, and the checks made before any
 * I/O, down to the attach command the module will be sent.
 */
#ifndef _VC_OPTIONS_H
#define _VC_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"

/**
 * struct vc_opts - the command line
 * @kind:	VCPUPERF_TARGET_* of --qemu, --pid or --tid; 0 for none
 * @ids:	its argument
 * @no_attach:	--no-attach
 * @events:	--events, or NULL
 * @interval:	--interval as given, or NULL
 * @ring:	--ring as given, or NULL
 * @read:	--read as given, or NULL
 * @mods:	keyword modifiers (guest_only ...) as VCPUPERF_MOD_*
 * @duration_ns: --duration, 0 for none
 * @out:	-o, or NULL for stdout
 * @events_out:	--events-out, or NULL for inline
 * @raw:	--raw
 * @mono_origin: --mono-origin
 * @dir:	--debugfs
 * @device:	--device
 * @replay:	--replay
 * @record:	--record
 * @flags:	VCPUPERF_ATTACH_* of --per-vm and --emulator-threads
 * @textfile:	--textfile, or NULL
 * @quiet:	-q: no live status line
 * @all_qemu:	--all-qemu (@kind is then VCPUPERF_TARGET_QEMU, @ids NULL)
 * @output_dir:	--output-dir, or NULL
 * @match:	--match, or NULL
 * @scan_ns:	--scan-interval, 0 for the default
 * @kvm_exits:	--kvm-exits (@events then has the named KVM events)
 */
struct vc_opts {
	enum vcpuperf_target_kind kind;
	const char *ids;
	bool no_attach;
	const char *events;
	const char *interval;
	const char *ring;
	const char *read;
	__u32 mods;
	__u64 duration_ns;
	const char *out;
	const char *events_out;
	bool raw;
	__u64 mono_origin;
	const char *dir;
	const char *device;
	const char *replay;
	const char *record;
	__u32 flags;
	const char *textfile;
	bool quiet;
	bool all_qemu;
	const char *output_dir;
	const char *match;
	__u64 scan_ns;
	bool kvm_exits;
};

int vc_parse_args(int argc, char **argv, struct vc_opts *o);
int vc_validate(const struct vc_opts *o, char *attach, size_t len,
		__u64 *interval_ns);

#endif /* _VC_OPTIONS_H */
