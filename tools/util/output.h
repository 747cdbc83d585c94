/* SPDX-License-Identifier: GPL-2.0 */
/*
 * output.c: the JSONL sink, the struct vc_sink whose callbacks are the
 * row writer (rows.h) and the lifecycle writer (lifecycle.h), and the
 * options they share.
 */
#ifndef _VC_OUTPUT_H
#define _VC_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "common.h"
#include "decode.h"

struct json_writer;

size_t vc_mod_letters(char *buf, size_t len, __u32 mods);

/**
 * struct vc_jsonl - the sink that writes JSONL
 * @sink:	its callbacks, for the decoder
 * @rows:	writer of sample rows
 * @events:	writer of lifecycle lines (may be @rows)
 * @mono_origin: subtracted from every t_mono_ns
 * @raw:	add the raw cumulative values to each row
 */
struct vc_jsonl {
	struct vc_sink sink;
	struct json_writer *rows;
	struct json_writer *events;
	__u64 mono_origin;
	bool raw;
};

void vc_jsonl_init(struct vc_jsonl *out, struct json_writer *rows,
		   struct json_writer *events, __u64 mono_origin, bool raw);

#endif /* _VC_OUTPUT_H */
