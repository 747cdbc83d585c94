/* SPDX-License-Identifier: GPL-2.0 */
/*
 * episodes.c: one JSONL file per VM run (--all-qemu --output-dir): a sink
 * that hands each record to the episode of its process, opened at the
 * process record and closed after the VM's perf_finished.
 */
#ifndef _VC_EPISODES_H
#define _VC_EPISODES_H

#include <stdbool.h>
#include <stdio.h>

#include "common.h"
#include "decode.h"
#include "jsonl.h"
#include "output.h"

struct vc_prom;

/**
 * struct vc_episode - one VM run's file
 * @pid:	the process whose records go here
 * @vm:		its VM's name, as its process record gave it
 * @uuid:	its VM's uuid, likewise
 * @path:	the file
 * @fp:		it, open
 * @w:		its writer: rows and lifecycle lines, in stream order
 * @out:	the JSONL sink writing to @w
 * @written_ns:	CLOCK_MONOTONIC of its last write (vc_episodes_flush())
 * @row_held:	a row has gone to @w
 * @row_out:	a row has been written to the file
 * @next:	the next open episode
 */
struct vc_episode {
	__u32 pid;
	char vm[VCPUPERF_VM_NAME_LEN + 1];
	char uuid[VCPUPERF_UUID_LEN + 1];
	char *path;
	FILE *fp;
	struct json_writer w;
	struct vc_jsonl out;
	__u64 written_ns;
	bool row_held;
	bool row_out;
	struct vc_episode *next;
};

/**
 * struct vc_episodes - the episode files of a host-wide recording
 * @sink:	the decoder's sink: each callback finds the record's
 *		episode and hands it to that episode's JSONL sink
 * @dir:	where the files go
 * @host:	the sink of what belongs to no VM (the session's end,
 *		drops and gaps, which also go to every open episode)
 * @mono_origin: as the JSONL sink's
 * @raw:	as the JSONL sink's
 * @prom:	the textfile every episode's rows go to, or NULL
 * @open:	the open episodes
 * @opened:	episodes opened so far
 * @err:	errno of the first failed open, write or close, 0 if none
 * @ending:	the recording is stopping (the loop sent stop): a final
 *		process sample from now on ends the recording of a VM, not
 *		the VM, whose textfile series stay
 */
struct vc_episodes {
	struct vc_sink sink;
	const char *dir;
	struct vc_jsonl *host;
	__u64 mono_origin;
	bool raw;
	struct vc_prom *prom;
	struct vc_episode *open;
	unsigned long opened;
	int err;
	bool ending;
};

void vc_episodes_init(struct vc_episodes *e, const char *dir,
		      struct vc_jsonl *host, __u64 mono_origin, bool raw,
		      struct vc_prom *prom);
int vc_episodes_flush(struct vc_episodes *e, __u64 now, bool all);
int vc_episodes_close_all(struct vc_episodes *e);
void vc_episodes_attach_failed(struct vc_episodes *e, int pid,
			       const char *name, const char *vm,
			       const char *uuid, int err, const char *reason);

#endif /* _VC_EPISODES_H */
