// SPDX-License-Identifier: GPL-2.0
/*
 * The process events connector (drivers/connector/cn_proc.c) for
 * --all-qemu.  Without it a host-wide recording scans /proc every scan
 * period: a readlink() for every process of the host and a read of the
 * stat file of every QEMU, whether anything started or not.  With it the
 * kernel sends a message when a process execs or ends, and the recording
 * reads what queued once a period: one recv() when nothing happened.
 *
 * The kernel sends every listener every process event of the host (forks,
 * execs, exits of every thread, uid and comm changes); a classic BPF
 * filter on the socket keeps only execs, the ends of processes (an exit
 * whose pid is its tgid) and the connector's acknowledgements, so that a
 * busy host does not fill the socket between two reads.  If it fills all
 * the same (ENOBUFS), the caller scans /proc once.
 *
 * Listening needs CAP_NET_ADMIN in the initial user and pid namespaces
 * (the kernel does not answer a request from another namespace); where it
 * is refused, @why says so and the caller scans.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"
#include "procwatch.h"

/*
 * How long to wait for the kernel's answer to LISTEN (it answers at once;
 * an emulated machine can be slow).
 */
#define VC_PW_ACK_MS		2000
/* Socket buffer: room for thousands of filtered events between reads. */
#define VC_PW_RCVBUF		(1024 * 1024)
/* One read: many messages of a cn_msg and a proc_event each. */
#define VC_PW_BUF		(64 * 1024)

/* Offsets into one message: netlink header, connector header, event. */
#define VC_PW_EV		(NLMSG_HDRLEN + sizeof(struct cn_msg))
#define VC_PW_OFF(member)	(VC_PW_EV + offsetof(struct proc_event, member))

/* The message sent to start listening. */
struct vc_pw_listen {
	struct nlmsghdr nl;
	struct cn_msg cn;
	__u32 op;
} __attribute__((packed));

/* A LISTEN or IGNORE request (@op) carrying @ack. */
static void vc_pw_request(struct vc_pw_listen *req, __u32 op, __u32 ack)
{
	memset(req, 0, sizeof(*req));
	req->nl.nlmsg_len = sizeof(*req);
	req->nl.nlmsg_type = NLMSG_DONE;
	req->cn.id.idx = CN_IDX_PROC;
	req->cn.id.val = CN_VAL_PROC;
	req->cn.ack = ack;
	req->cn.len = sizeof(req->op);
	req->op = op;
}

/*
 * Keep execs, acknowledgements and the exit of a thread group's leader.
 * A socket filter's absolute loads read big-endian, hence htonl() on the
 * constants; pid and tgid are compared as loaded.
 */
static struct sock_filter vc_pw_code[] = {
	/* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, VC_PW_OFF(what)),
	/* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 7, 0),	/* EXEC */
	/* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 6, 0),	/* NONE */
	/* 3 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 4),	/* EXIT */
	/* 4 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 VC_PW_OFF(event_data.exit.process_pid)),
	/* 5 */ BPF_STMT(BPF_MISC | BPF_TAX, 0),
	/* 6 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 VC_PW_OFF(event_data.exit.process_tgid)),
	/* 7 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 1, 0),
	/* 8 */ BPF_STMT(BPF_RET | BPF_K, 0),
	/* 9 */ BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
};

/*
 * The connector header and event of message @nh into @cn and @ev; false
 * for a message too short to hold them.  The event is copied: it is not
 * 8-byte aligned in the message.
 */
static bool vc_pw_event(struct nlmsghdr *nh, struct cn_msg **cn,
			struct proc_event *ev)
{
	if (nh->nlmsg_len < VC_PW_EV + sizeof(*ev))
		return false;
	*cn = NLMSG_DATA(nh);
	memcpy(ev, (*cn)->data, sizeof(*ev));
	return true;
}

static int vc_pw_fail(struct vc_procwatch *w, const char *what, int err)
{
	snprintf(w->why, sizeof(w->why), "%s: %s", what, strerror(err));
	vc_procwatch_close(w);
	return -err;
}

/*
 * Wait for the kernel's answer to our LISTEN: 0 or its error.  The answer
 * goes to every listener; ours carries @ack, our request's ack plus one
 * (its seq is not ours on every kernel: 6.1 sends its own).
 */
static int vc_pw_ack(struct vc_procwatch *w, __u32 ack)
{
	static char buf[VC_PW_BUF] __attribute__((aligned(8)));
	struct pollfd pfd = { .fd = w->fd, .events = POLLIN };
	struct proc_event ev;
	struct nlmsghdr *nh;
	struct cn_msg *cn;
	ssize_t n;
	int r;

	for (;;) {
		r = poll(&pfd, 1, VC_PW_ACK_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return vc_pw_fail(w, "poll", errno);
		if (!r)
			return vc_pw_fail(w, "no answer to LISTEN (another "
					  "pid or user namespace?)", ETIMEDOUT);
		n = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return vc_pw_fail(w, "recv", errno);
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (!vc_pw_event(nh, &cn, &ev) ||
			    ev.what != PROC_EVENT_NONE || cn->ack != ack)
				continue;
			if (ev.event_data.ack.err)
				return vc_pw_fail(w, "LISTEN",
						  ev.event_data.ack.err);
			w->listening = true;
			return 0;
		}
	}
}

/**
 * vc_procwatch_open() - listen to the kernel's process events
 * @w:		the listener
 *
 * Return: 0, or -errno with @w->why saying what failed (@w->fd is then
 * -1).
 */
int vc_procwatch_open(struct vc_procwatch *w)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = CN_IDX_PROC,
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(vc_pw_code),
		.filter = vc_pw_code,
	};
	struct vc_pw_listen req;
	int rcvbuf = VC_PW_RCVBUF;

	w->why[0] = '\0';
	w->listening = false;
	vc_pw_code[1].k = htonl(PROC_EVENT_EXEC);
	vc_pw_code[2].k = htonl(PROC_EVENT_NONE);
	vc_pw_code[3].k = htonl(PROC_EVENT_EXIT);
	w->fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
		       NETLINK_CONNECTOR);
	if (w->fd < 0)
		return vc_pw_fail(w, "socket(NETLINK_CONNECTOR)", errno);
	if (setsockopt(w->fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog,
		       sizeof(prog)))
		return vc_pw_fail(w, "SO_ATTACH_FILTER", errno);
	/* a smaller buffer only means an earlier rescan */
	setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)))
		return vc_pw_fail(w, "bind", errno);
	vc_pw_request(&req, PROC_CN_MCAST_LISTEN, (__u32)getpid());
	/* the connector's kernel socket is in the initial namespace only */
	if (send(w->fd, &req, sizeof(req), 0) < 0)
		return vc_pw_fail(w, errno == ECONNREFUSED ?
				  "send LISTEN (not the host's network "
				  "namespace?)" : "send LISTEN", errno);
	return vc_pw_ack(w, req.cn.ack + 1);
}

/**
 * vc_procwatch_close() - stop listening
 * @w:		the listener (nothing happens if it is not listening)
 *
 * The kernel counts its listeners and stops making messages at none; a
 * closed socket counts as one until IGNORE is sent, so a listener that
 * was counted sends it first.
 */
void vc_procwatch_close(struct vc_procwatch *w)
{
	struct vc_pw_listen req;

	if (w->fd < 0)
		return;
	if (w->listening) {
		vc_pw_request(&req, PROC_CN_MCAST_IGNORE, 0);
		send(w->fd, &req, sizeof(req), MSG_DONTWAIT);
		w->listening = false;
	}
	close(w->fd);
	w->fd = -1;
}

/**
 * vc_procwatch_read() - what the kernel sent since the last read
 * @w:		the listener
 * @fn:		called for each event, in the order sent
 * @arg:	@fn's first argument
 *
 * Return: the events passed to @fn; -ENOBUFS when the socket overflowed
 * and events were lost (the caller scans /proc instead); another -errno
 * when the socket failed.
 */
int vc_procwatch_read(struct vc_procwatch *w,
		      void (*fn)(void *arg, enum vc_proc_what what, int pid),
		      void *arg)
{
	static char buf[VC_PW_BUF] __attribute__((aligned(8)));
	struct proc_event ev;
	struct nlmsghdr *nh;
	struct cn_msg *cn;
	int events = 0;
	ssize_t n;

	for (;;) {
		n = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? events : -errno;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, n);
		     nh = NLMSG_NEXT(nh, n)) {
			if (!vc_pw_event(nh, &cn, &ev))
				continue;
			switch (ev.what) {
			case PROC_EVENT_EXEC:
				fn(arg, VC_PROC_EXEC,
				   ev.event_data.exec.process_tgid);
				events++;
				break;
			case PROC_EVENT_EXIT:
				if (ev.event_data.exit.process_pid !=
				    ev.event_data.exit.process_tgid)
					break;
				fn(arg, VC_PROC_EXIT,
				   ev.event_data.exit.process_tgid);
				events++;
				break;
			default:
				break;
			}
		}
	}
}
