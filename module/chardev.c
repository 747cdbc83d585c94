// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/vcpuperf: every open() creates a collection owned by that open
 * file.  write() takes one command for it (the grammar of the uapi
 * header), read() and poll() give its record stream, the
 * VCPUPERF_IOC_LAST_ERROR ioctl the reason of its last rejected command.
 * dup() and fork() share the file and so the collection; its last close
 * (the owner killed included) destroys the collection: every counter is
 * released and nothing is left.  Root only (mode 0600, CAP_SYS_ADMIN).
 *
 * An open file pins the module (.owner), as every file of a driver does:
 * rmmod fails with EBUSY ("in use") while a recording runs, whoever holds
 * its descriptor, and never waits for userspace.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "chardev.h"
#include "collection.h"
#include "control.h"
#include "access.h"
#include "stream.h"
#include "vcpuperf.h"

/**
 * struct vp_dev_file - an open /dev/vcpuperf
 * @coll:	the file's collection
 * @reader:	its reader, if the file was opened for reading, else NULL
 */
struct vp_dev_file {
	struct vp_coll *coll;
	struct vp_reader *reader;
};

static int vp_dev_open(struct inode *inode, struct file *file)
{
	/* misc_open() leaves the miscdevice in ->private_data. */
	struct vp_module *mod = container_of(file->private_data,
					     struct vp_module, misc);
	struct vp_dev_file *df;
	int ret;

	ret = vp_may_open();
	if (ret)
		return ret;
	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df)
		return -ENOMEM;
	df->coll = vp_coll_create(mod, false);
	if (IS_ERR(df->coll)) {
		ret = PTR_ERR(df->coll);
		if (ret == -EUSERS)
			pr_warn_ratelimited("open refused: %u collections open, the limit (max_collections)\n",
					    mod->max_collections);
		else if (ret == -ENOSPC)
			pr_warn_ratelimited("open refused: no room for a %u KiB ring within ring_total_kb=%llu\n",
					    mod->ring_kb, mod->ring_total_kb);
		goto err_free;
	}
	if (file->f_mode & FMODE_READ) {
		df->reader = vp_reader_open(df->coll);
		if (IS_ERR(df->reader)) {
			ret = PTR_ERR(df->reader);
			goto err_coll;
		}
	}
	file->private_data = df;
	return stream_open(inode, file);

err_coll:
	vp_coll_destroy(df->coll);
err_free:
	kfree(df);
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

	return vp_control_write(df->coll, file, ubuf, count);
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

static long vp_dev_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct vp_dev_file *df = file->private_data;
	struct vcpuperf_error e;

	switch (cmd) {
	case VCPUPERF_IOC_LAST_ERROR:
		vp_coll_last_error(df->coll, &e);
		if (copy_to_user((void __user *)arg, &e, sizeof(e)))
			return -EFAULT;
		return 0;
	default:
		return -ENOTTY;
	}
}

/* The last reference is gone: destroy the collection. */
static int vp_dev_release(struct inode *inode, struct file *file)
{
	struct vp_dev_file *df = file->private_data;

	if (df->reader)
		vp_reader_close(df->reader);
	vp_coll_destroy(df->coll);
	kfree(df);
	return 0;
}

static const struct file_operations vp_dev_fops = {
	.owner = THIS_MODULE,
	.open = vp_dev_open,
	.read = vp_dev_read,
	.write = vp_dev_write,
	.poll = vp_dev_poll,
	.unlocked_ioctl = vp_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.release = vp_dev_release,
};

/**
 * vp_chardev_register() - create /dev/vcpuperf
 * @mod:	the module, ready for opens
 *
 * Return: 0 or a negative errno from misc_register().
 */
int vp_chardev_register(struct vp_module *mod)
{
	mod->misc.minor = MISC_DYNAMIC_MINOR;
	mod->misc.name = KBUILD_MODNAME;
	mod->misc.fops = &vp_dev_fops;
	mod->misc.mode = 0600;
	return misc_register(&mod->misc);
}

/**
 * vp_chardev_unregister() - remove /dev/vcpuperf
 * @mod:	the module
 *
 * Called by module exit, when no file is open: each pins the module.
 */
void vp_chardev_unregister(struct vp_module *mod)
{
	misc_deregister(&mod->misc);
}
