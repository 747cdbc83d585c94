// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/vcpuperf/: the module's default collection (the one of
 * the load-time parameters) through control (commands; reading gives its
 * configuration back in the same grammar) and stream (its records, one
 * reader at a time), and status, which lists every collection.
 *
 * An open file pins the module (.owner): rmmod fails with EBUSY while one
 * is open, and no file can outlive the module's code.
 */
#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/seq_file.h>

#include "control.h"
#include "debugfs.h"
#include "access.h"
#include "status.h"
#include "stream.h"
#include "vcpuperf.h"

/* A seq_file for CAP_SYS_ADMIN; its private data is the module. */
static int vp_single_open(struct inode *inode, struct file *file,
			  int (*show)(struct seq_file *, void *))
{
	int ret;

	ret = vp_may_open();
	if (ret)
		return ret;
	return single_open(file, show, inode->i_private);
}

static int vp_control_file_show(struct seq_file *m, void *unused)
{
	struct vp_module *mod = m->private;

	vp_control_show(m, mod->dflt);
	return 0;
}

static int vp_control_open(struct inode *inode, struct file *file)
{
	return vp_single_open(inode, file, vp_control_file_show);
}

static ssize_t vp_control_file_write(struct file *file,
				     const char __user *ubuf, size_t count,
				     loff_t *ppos)
{
	struct vp_module *mod = file_inode(file)->i_private;

	return vp_control_write(mod->dflt, file, ubuf, count);
}

static const struct file_operations vp_control_fops = {
	.owner = THIS_MODULE,
	.open = vp_control_open,
	.read = seq_read,
	.write = vp_control_file_write,
	.llseek = seq_lseek,
	.release = single_release,
};

static int vp_status_open(struct inode *inode, struct file *file)
{
	return vp_single_open(inode, file, vp_status_show);
}

static const struct file_operations vp_status_fops = {
	.owner = THIS_MODULE,
	.open = vp_status_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static int vp_stream_open(struct inode *inode, struct file *file)
{
	struct vp_module *mod = inode->i_private;
	struct vp_reader *r;
	int ret;

	ret = vp_may_open();
	if (ret)
		return ret;
	r = vp_reader_open(mod->dflt);
	if (IS_ERR(r))
		return PTR_ERR(r);
	file->private_data = r;
	return stream_open(inode, file);
}

static ssize_t vp_stream_read(struct file *file, char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	return vp_reader_read(file->private_data, ubuf, count,
			      file->f_flags & O_NONBLOCK);
}

static __poll_t vp_stream_poll(struct file *file, poll_table *wait)
{
	return vp_reader_poll(file->private_data, file, wait);
}

static int vp_stream_release(struct inode *inode, struct file *file)
{
	vp_reader_close(file->private_data);
	return 0;
}

static const struct file_operations vp_stream_fops = {
	.owner = THIS_MODULE,
	.open = vp_stream_open,
	.read = vp_stream_read,
	.poll = vp_stream_poll,
	.release = vp_stream_release,
};

/**
 * vp_debugfs_init() - create /sys/kernel/debug/vcpuperf/
 * @mod:	the module, with its default collection
 *
 * Return: 0, or the error of debugfs_create_dir().
 */
int vp_debugfs_init(struct vp_module *mod)
{
	mod->dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(mod->dir))
		return PTR_ERR(mod->dir);
	debugfs_create_file("control", 0600, mod->dir, mod, &vp_control_fops);
	debugfs_create_file("stream", 0400, mod->dir, mod, &vp_stream_fops);
	debugfs_create_file("status", 0400, mod->dir, mod, &vp_status_fops);
	return 0;
}

/**
 * vp_debugfs_exit() - remove /sys/kernel/debug/vcpuperf/
 * @mod:	the module; no file is open (each pins the module)
 */
void vp_debugfs_exit(struct vp_module *mod)
{
	debugfs_remove_recursive(mod->dir);
}
