/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture sessions of /dev/vmscope-host and /dev/vmscope-guest: per-CPU
 * ring buffers the probes record into, read by userspace through mmap +
 * the sub-buffer ioctls. The same source is compiled into each module
 * (host-kmod/session.c, guest-kmod/session.c); what differs is in
 * struct vmscope_session_ops.
 */
#ifndef VMSCOPE_KMOD_SESSION_H
#define VMSCOPE_KMOD_SESSION_H

#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <vmscope/ioctl.h>
#include "../ringbuf/ringbuf.h"

/*
 * What the module around the session code provides; each module defines
 * one `vmscope_session_ops` (its session code is its own copy, so the
 * symbol is per module).
 */
struct vmscope_session_ops {
	/* sessions recording at once, 1..VMSCOPE_HOST_SESSIONS */
	unsigned int max_sessions;
	/*
	 * Where the module's probes find session @slot's channels (the one
	 * of each event id): published (with the file that owns it) before
	 * the session records, and unpublished (@route NULL), followed by
	 * synchronize_rcu(), before it flushes and frees (probes run with
	 * preemption disabled). Process context, under the session lock.
	 */
	void (*publish)(unsigned int slot, const void *owner,
			const struct vmscope_rb_route *route);
	/*
	 * Optional. start: process context, before the channel is published;
	 * an error fails SESSION_START. stop: process context, after the
	 * channel is unpublished and before the grace period that waits for
	 * the last writer.
	 */
	int (*start)(void);
	void (*stop)(void);
	/*
	 * The control device, /dev/@dev_name (root only; a file is a
	 * session): @ioctl answers the commands that are not the session's
	 * (-ENOTTY: none); @release, optional, runs before a file's session
	 * is released, @owner the file (as publish's).
	 */
	const char *dev_name;
	long (*ioctl)(struct file *file, unsigned int cmd, unsigned long arg);
	void (*release)(const void *owner);
};
extern const struct vmscope_session_ops vmscope_session_ops;

/* One channel of a session: a ring buffer per possible CPU. */
struct vmscope_session_chan {
	struct vmscope_rb_chan chan;	/* bufs[cpu]: &rb[cpu] or NULL */
	struct vmscope_rb_buf *rb;
	void **mem;			/* vmalloc_user() block per CPU */
};

struct vmscope_session {
	/* held by the file that started it and by every mapping */
	struct kref ref;
	struct vmscope_session_cfg cfg;
	/* [0, cfg.nr_chans); buffer b is ch[b / nr_cpu_ids], CPU b % nr_cpu_ids */
	struct vmscope_session_chan ch[VMSCOPE_SESSION_CHANNELS];
	struct vmscope_rb_route route;	/* what publish() hands the probes */
	bool recording;			/* under vmscope_sessions_lock */
	unsigned int slot;		/* its index among the recording ones */
	struct mutex read_lock;		/* the one reader: get/put */
	struct mutex flush_lock;	/* flushes from ioctl, timer, stop */
	wait_queue_head_t wq;
	struct irq_work wake_work;	/* queued by on_deliver */
	struct delayed_work flush_work;
};

/* session.c; each returns -ENOTTY for commands that are not its own */
long vmscope_session_ioctl(struct file *file, unsigned int cmd,
			   void __user *arg);
void vmscope_session_release(struct file *file);
__poll_t vmscope_session_poll(struct file *file, poll_table *pt);
void vmscope_session_put(struct vmscope_session *s);

/*
 * session.c: the module's control device (vmscope_session_ops.dev_name),
 * registered last at load (the module announced: version, ABI) and
 * deregistered first at unload.
 */
int vmscope_session_dev_register(void);
void vmscope_session_dev_deregister(void);

/* mmap.c */
int vmscope_session_mmap(struct file *file, struct vm_area_struct *vma);

#endif /* VMSCOPE_KMOD_SESSION_H */
