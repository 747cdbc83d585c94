// SPDX-License-Identifier: GPL-2.0
/*
 * Control commands (grammar in the uapi header): carrying them out, for
 * the debugfs control file and /dev/vcpuperf alike, and the debugfs
 * control file, whose reading gives back the active configuration in the
 * same grammar.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "vcpuperf.h"

static void vp_reject(struct vp_state *vp, int ret, const char *why)
{
	lockdep_assert_held(&vp->lock);
	vp->last_errno = ret;
	strscpy(vp->last_error, why, sizeof(vp->last_error));
	pr_warn_ratelimited("vcpuperf: command rejected (%s): %s\n",
			    vp_errno_name(ret), why);
}

/**
 * vp_control_apply() - parse and carry out one control command
 * @vp:		module state, lock not held
 * @buf:	the command bytes
 * @len:	their number
 *
 * A rejected command changes nothing; its reason is kept for the status
 * file and logged (rate-limited).
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vp_control_apply(struct vp_state *vp, const char *buf, size_t len)
{
	char err[VP_ERR_LEN] = "";
	struct vp_cmd *cmd;
	int ret;

	cmd = kvzalloc(sizeof(*cmd), GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	ret = vp_parse_cmd(buf, len, cmd, err, sizeof(err));

	mutex_lock(&vp->lock);
	if (vp->unloading) {
		ret = -ENODEV;
		strscpy(err, "module is unloading", sizeof(err));
	}
	if (ret)
		goto out;
	switch (cmd->op) {
	case VP_OP_ATTACH:
		ret = vp_attach(vp, cmd, err, sizeof(err));
		break;
	case VP_OP_DETACH:
		ret = vp_detach(vp, cmd, err, sizeof(err));
		break;
	case VP_OP_DETACH_ALL:
		vp_detach_all(vp, VCPUPERF_DETACH_COMMAND);
		break;
	case VP_OP_INTERVAL:
		vp->interval_ns = cmd->interval_ns;
		vp->grid_base = 0;
		break;
	case VP_OP_STOP:
		vp_detach_all(vp, VCPUPERF_DETACH_STOP);
		vp_emit_session_finished(vp);
		break;
	}
	if (ret == -ENOMEM && !err[0])
		strscpy(err, "out of memory", sizeof(err));
out:
	if (ret)
		vp_reject(vp, ret, err);
	else
		vp_sampler_kick(vp);
	mutex_unlock(&vp->lock);
	kvfree(cmd);
	return ret;
}

static void vp_show_events(struct seq_file *m,
			   const struct vcpuperf_event_desc *ev, u32 nr)
{
	u32 i;

	seq_puts(m, " events=");
	for (i = 0; i < nr; i++)
		seq_printf(m, "%s%s", i ? "," : "", ev[i].name);
}

static int vp_control_show(struct seq_file *m, void *unused)
{
	struct vp_state *vp = m->private;
	char dur[32];
	struct vp_group *g;
	struct vp_target *t;

	mutex_lock(&vp->lock);
	vp_format_duration(dur, sizeof(dur), vp->interval_ns);
	seq_printf(m, "interval %s\n", dur);
	list_for_each_entry(g, &vp->groups, node) {
		seq_printf(m, "attach %s=%d", vp_kind_name(g->kind), g->nr);
		vp_show_events(m, g->events, g->nr_events);
		seq_putc(m, '\n');
	}
	list_for_each_entry(t, &vp->targets, node) {
		if (t->group)
			continue;
		seq_printf(m, "attach tid=%d", t->tid);
		vp_show_events(m, t->events, t->nr_events);
		seq_putc(m, '\n');
	}
	mutex_unlock(&vp->lock);
	return 0;
}

static int vp_control_open(struct inode *inode, struct file *file)
{
	return vp_single_open(file, vp_control_show, inode->i_private);
}

/**
 * vp_control_write() - carry out one command written by userspace
 * @vp:		module state
 * @ubuf:	the command, one per write(), with or without a newline
 * @count:	its length
 *
 * Shared by the debugfs control file and /dev/vcpuperf.
 *
 * Return: @count, or a negative errno as for vp_control_apply() (-E2BIG
 * for a command over VCPUPERF_CMD_MAX bytes, -EFAULT).
 */
ssize_t vp_control_write(struct vp_state *vp, const char __user *ubuf,
			 size_t count)
{
	char *buf;
	int ret;

	if (count > VCPUPERF_CMD_MAX) {
		mutex_lock(&vp->lock);
		vp_reject(vp, -E2BIG, "command longer than the limit");
		mutex_unlock(&vp->lock);
		return -E2BIG;
	}
	buf = memdup_user(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = vp_control_apply(vp, buf, count);
	kfree(buf);
	return ret ? ret : count;
}

static ssize_t vp_control_file_write(struct file *file,
				     const char __user *ubuf, size_t count,
				     loff_t *ppos)
{
	struct seq_file *m = file->private_data;

	return vp_control_write(m->private, ubuf, count);
}

const struct file_operations vp_control_fops = {
	.open = vp_control_open,
	.read = seq_read,
	.write = vp_control_file_write,
	.llseek = seq_lseek,
	.release = vp_single_release,
};
