// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vcpuperf: the control commands and the record stream on one misc
 * character device, root only (mode 0600), for kernels whose debugfs
 * refuses writable files (lockdown=integrity).  write() takes one command
 * as the debugfs control file does; read() and poll() give the record
 * stream as the debugfs stream file does, under the same single-reader
 * rule: opening for reading (O_RDONLY, O_RDWR) claims the stream,
 * O_WRONLY only sends commands.
 *
 * Like the debugfs files the device has no .owner (see files.c): rmmod
 * ends a collection whose reader holds the device open, after the reader
 * has read to end of file and closed it.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/slab.h>

#include "vcpuperf.h"

/**
 * struct vp_dev_file - an open /dev/vcpuperf
 * @vp:		module state
 * @reader:	the stream, if the file was opened for reading, else NULL
 */
struct vp_dev_file {
	struct vp_state *vp;
	struct vp_reader *reader;
};

static int vp_dev_open(struct inode *inode, struct file *file)
{
	/* misc_open() leaves the miscdevice in ->private_data. */
	struct vp_state *vp = container_of(file->private_data,
					   struct vp_state, misc);
	struct vp_dev_file *df;
	int ret;

	ret = vp_file_get(vp);
	if (ret)
		return ret;
	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df) {
		ret = -ENOMEM;
		goto err_put;
	}
	df->vp = vp;
	if (file->f_mode & FMODE_READ) {
		df->reader = vp_reader_open(vp);
		if (IS_ERR(df->reader)) {
			ret = PTR_ERR(df->reader);
			goto err_free;
		}
	}
	file->private_data = df;
	return stream_open(inode, file);

err_free:
	kfree(df);
err_put:
	vp_file_put(vp);
	return ret;
}

static ssize_t vp_dev_read(struct file *file, char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct vp_dev_file *df = file->private_data;

	/* The VFS only reads files opened for reading: they have a reader. */
	return vp_reader_read(df->reader, ubuf, count,
			      file->f_flags & O_NONBLOCK);
}

static ssize_t vp_dev_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	struct vp_dev_file *df = file->private_data;

	return vp_control_write(df->vp, ubuf, count);
}

static __poll_t vp_dev_poll(struct file *file, poll_table *wait)
{
	struct vp_dev_file *df = file->private_data;
	__poll_t mask = 0;

	/* A command never waits for room. */
	if (file->f_mode & FMODE_WRITE)
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (df->reader)
		mask |= vp_reader_poll(df->reader, file, wait);
	return mask;
}

/* Module exit waits for this release (see files.c). */
static int vp_dev_release(struct inode *inode, struct file *file)
{
	struct vp_dev_file *df = file->private_data;
	struct vp_state *vp = df->vp;

	if (df->reader)
		vp_reader_close(df->reader);
	kfree(df);
	vp_file_put(vp);
	return 0;
}

static const struct file_operations vp_dev_fops = {
	.open = vp_dev_open,
	.read = vp_dev_read,
	.write = vp_dev_write,
	.poll = vp_dev_poll,
	.release = vp_dev_release,
};

/**
 * vp_chardev_register() - create /dev/vcpuperf
 * @vp:		module state, ready for opens
 *
 * Return: 0 or a negative errno from misc_register().
 */
int vp_chardev_register(struct vp_state *vp)
{
	vp->misc.minor = MISC_DYNAMIC_MINOR;
	vp->misc.name = "vcpuperf";
	vp->misc.fops = &vp_dev_fops;
	vp->misc.mode = 0600;
	return misc_register(&vp->misc);
}

/**
 * vp_chardev_unregister() - remove /dev/vcpuperf
 * @vp:		module state
 *
 * Files already open keep working until they are released; module exit
 * waits for that in vp_files_wait().
 */
void vp_chardev_unregister(struct vp_state *vp)
{
	misc_deregister(&vp->misc);
}
