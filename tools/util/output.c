// SPDX-License-Identifier: GPL-2.0
/*
 * The JSONL sink: the table of callbacks through which the decoder hands
 * its records to the row writer (rows.c) and the lifecycle writer
 * (lifecycle.c), and the options they share.
 */
#include "lifecycle.h"
#include "output.h"
#include "rows.h"

/**
 * vc_jsonl_init() - set up the JSONL sink
 * @out:	the sink; give &@out->sink to vc_dec_init()
 * @rows:	writer of sample rows
 * @events:	writer of lifecycle lines (may equal @rows)
 * @mono_origin: subtracted from every t_mono_ns written
 * @raw:	add cumulative raw values to each row
 */
void vc_jsonl_init(struct vc_jsonl *out, struct json_writer *rows,
		   struct json_writer *events, __u64 mono_origin, bool raw)
{
	memset(out, 0, sizeof(*out));
	out->sink.thread_start = vc_row_thread_start;
	out->sink.thread_free = vc_row_thread_free;
	out->sink.process_start = vc_row_process_start;
	out->sink.process_free = vc_row_process_free;
	out->sink.row = vc_write_row;
	out->sink.lifecycle = vc_write_lifecycle;
	out->sink.gap = vc_write_seq_gap;
	out->sink.process = vc_write_process;
	out->sink.process_row = vc_write_vm_row;
	out->rows = rows;
	out->events = events;
	out->mono_origin = mono_origin;
	out->raw = raw;
}

/**
 * vc_mod_letters() - perf's suffix letters of a set of modifiers
 * @buf:	output, NUL terminated
 * @len:	size of @buf (at least VP_NR_MODS + 1)
 * @mods:	VCPUPERF_MOD_* bits
 *
 * Return: the number of letters.
 */
size_t vc_mod_letters(char *buf, size_t len, __u32 mods)
{
	size_t n = 0;
	__u32 bit;

	for (bit = 1; bit <= VCPUPERF_MOD_ALL && n + 1 < len; bit <<= 1)
		if (mods & bit)
			buf[n++] = vp_mod_letter(bit);
	buf[n] = '\0';
	return n;
}
