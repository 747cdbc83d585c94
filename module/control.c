// SPDX-License-Identifier: GPL-2.0
/*
 * Control commands (grammar in the uapi header): parsing one and carrying
 * it out on one collection, whichever file it was written to, and the
 * collection's configuration written back in the same grammar.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "attach.h"
#include "collection.h"
#include "control.h"
#include "record.h"
#include "sampler.h"
#include "vcpuperf.h"

/*
 * Carry out a parsed command; the collection's lock is held.  A ring
 * command's memory is in @rc, an attach's authority and VM identity in
 * @req.
 */
static int vp_control_do(struct vp_coll *c, const struct vp_attach_req *req,
			 struct vp_cmd *cmd, struct vp_ring_change *rc,
			 char *err, size_t errlen)
{
	switch (cmd->op) {
	case VP_OP_ATTACH:
		return vp_attach(c, req, cmd, err, errlen);
	case VP_OP_DETACH:
		return vp_detach(c, cmd, err, errlen);
	case VP_OP_DETACH_ALL:
		vp_detach_all(c, VCPUPERF_DETACH_COMMAND);
		return 0;
	case VP_OP_INTERVAL:
		vp_coll_set_interval(c, cmd->interval_ns);
		return 0;
	case VP_OP_RING:
		return vp_coll_set_ring(c, rc, err, errlen);
	case VP_OP_READ:
		c->read_mode = cmd->read_mode;
		return 0;
	case VP_OP_STOP:
		vp_detach_all(c, VCPUPERF_DETACH_STOP);
		vp_emit_session_finished(c);
		return 0;
	}
	snprintf(err, errlen, "unknown operation");
	return -EINVAL;
}

/**
 * vp_control_apply() - parse and carry out one control command
 * @c:		the collection, lock not held
 * @file:	the file it was written to, whose opener's authority an
 *		attach is checked against (access.c); NULL for the module's
 *		own commands
 * @buf:	the command bytes
 * @len:	their number
 *
 * A rejected command changes nothing; its reason is kept for the
 * collection's writers (vp_coll_last_error()) and logged (rate-limited).
 *
 * Return: 0 or a negative errno as documented in the uapi header.
 */
int vp_control_apply(struct vp_coll *c, const struct file *file,
		     const char *buf, size_t len)
{
	struct vp_ring_change rc = {};
	struct vp_attach_req *req;
	char err[VP_ERR_LEN] = "";
	struct vp_cmd *cmd;
	int ret;

	cmd = kvzalloc(sizeof(*cmd), GFP_KERNEL);
	req = kzalloc(sizeof(*req), GFP_KERNEL);
	if (!cmd || !req) {
		ret = -ENOMEM;
		goto out_free;
	}
	ret = vp_parse_cmd(buf, len, cmd, err, sizeof(err));
	/*
	 * What may wait outside the lock the sampler takes: a new ring's
	 * memory, a QEMU's command line.
	 */
	if (!ret && cmd->op == VP_OP_RING)
		ret = vp_coll_ring_prepare(c, &rc, cmd->ring_kb, err,
					   sizeof(err));
	if (!ret)
		vp_attach_prepare(req, file ? file->f_cred : current_cred(),
				  cmd);

	mutex_lock(&c->lock);
	if (c->ended) {
		ret = -ENODEV;
		strscpy(err, "the collection has ended", sizeof(err));
	}
	if (!ret)
		ret = vp_control_do(c, req, cmd, &rc, err, sizeof(err));
	if (ret == -ENOMEM && !err[0])
		strscpy(err, "out of memory", sizeof(err));
	if (ret)
		vp_coll_reject(c, ret, err);
	else
		vp_sampler_kick(c);
	mutex_unlock(&c->lock);
	vp_coll_ring_finish(c, &rc);
	vp_attach_release(req);
out_free:
	kfree(req);
	kvfree(cmd);
	return ret;
}

/**
 * vp_control_write() - carry out one command written by userspace
 * @c:		the collection
 * @file:	the file it was written to
 * @ubuf:	the command, one per write(), with or without a newline
 * @count:	its length
 *
 * Shared by the debugfs control file and /dev/vcpuperf.
 *
 * Return: @count, or a negative errno as for vp_control_apply() (-E2BIG
 * for a command over VCPUPERF_CMD_MAX bytes, -EFAULT).
 */
ssize_t vp_control_write(struct vp_coll *c, const struct file *file,
			 const char __user *ubuf, size_t count)
{
	char *buf;
	int ret;

	if (count > VCPUPERF_CMD_MAX) {
		mutex_lock(&c->lock);
		vp_coll_reject(c, -E2BIG, "command longer than the limit");
		mutex_unlock(&c->lock);
		return -E2BIG;
	}
	buf = memdup_user(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = vp_control_apply(c, file, buf, count);
	kfree(buf);
	return ret ? ret : count;
}

static void vp_show_events(struct seq_file *m,
			   const struct vcpuperf_event_desc *ev, u32 nr)
{
	u32 i;

	seq_puts(m, " events=");
	for (i = 0; i < nr; i++)
		seq_printf(m, "%s%s", i ? "," : "", ev[i].name);
}

static void vp_show_flags(struct seq_file *m, u32 flags)
{
	u32 f;

	for (f = 1; f & VCPUPERF_ATTACH_ALL; f <<= 1)
		if (flags & f)
			seq_printf(m, " %s", vp_attach_flag_word(f));
}

/**
 * vp_control_show() - write a collection's configuration as commands
 * @m:		the seq_file
 * @c:		the collection, lock not held
 *
 * Writing these lines to a new collection would configure it the same.
 */
void vp_control_show(struct seq_file *m, struct vp_coll *c)
{
	char dur[VP_DURATION_LEN];
	struct vp_group *g;
	struct vp_target *t;

	mutex_lock(&c->lock);
	vp_format_duration(dur, sizeof(dur), c->interval_ns);
	seq_printf(m, "ring %uK\n", c->ring_kb);
	seq_printf(m, "interval %s\n", dur);
	seq_printf(m, "read %s\n", vp_read_mode_name(c->read_mode));
	list_for_each_entry(g, &c->groups, node) {
		seq_printf(m, "attach %s=%d", vp_kind_name(g->kind), g->nr);
		vp_show_events(m, g->events, g->nr_events);
		vp_show_flags(m, g->flags);
		seq_putc(m, '\n');
	}
	list_for_each_entry(t, &c->targets, node) {
		if (t->group)
			continue;
		seq_printf(m, "attach tid=%d", t->tid);
		vp_show_events(m, t->events, t->nr_events);
		vp_show_flags(m, t->flags);
		seq_putc(m, '\n');
	}
	mutex_unlock(&c->lock);
}
