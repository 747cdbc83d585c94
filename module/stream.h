/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The record stream of a collection (stream.c): one reader at a time,
 * starting with a header record; read() blocks or gives -EAGAIN, poll(), and
 * end of file once the session's finished record has been read.
 */
#ifndef _VCPUPERF_STREAM_H
#define _VCPUPERF_STREAM_H

#include <linux/poll.h>
#include <linux/types.h>

struct file;
struct vp_coll;
struct vp_reader;

struct vp_reader *vp_reader_open(struct vp_coll *c);
void vp_reader_close(struct vp_reader *r);
ssize_t vp_reader_read(struct vp_reader *r, char __user *ubuf, size_t count,
		       bool nonblock);
__poll_t vp_reader_poll(struct vp_reader *r, struct file *file,
			poll_table *wait);

#endif /* _VCPUPERF_STREAM_H */
