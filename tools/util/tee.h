/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tee.c: two sinks as one, for the decoder (the JSONL rows, and the
 * Prometheus textfile beside them).
 */
#ifndef _VC_TEE_H
#define _VC_TEE_H

#include "decode.h"

/**
 * struct vc_tee - a sink that hands every record to two
 * @sink:	its callbacks, for the decoder
 * @first:	gets every record and keeps the per-thread data (its
 *		thread_start and thread_free are the only ones called)
 * @second:	gets what it has a callback for, after @first; a sink
 *		without per-thread data (thread_start and thread_free NULL)
 */
struct vc_tee {
	struct vc_sink sink;
	struct vc_sink *first;
	struct vc_sink *second;
};

void vc_tee_init(struct vc_tee *tee, struct vc_sink *first,
		 struct vc_sink *second);

#endif /* _VC_TEE_H */
