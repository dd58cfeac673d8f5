/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture sessions of /dev/vmscope-host: per-CPU ring buffers the probes
 * record into, read by userspace through mmap + the sub-buffer ioctls.
 */
#ifndef VMSCOPE_HOST_SESSION_H
#define VMSCOPE_HOST_SESSION_H

#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <vmscope/ioctl.h>
#include "../ringbuf/ringbuf.h"

struct vmscope_session {
	/* held by the file that started it and by every mapping */
	struct kref ref;
	struct vmscope_session_cfg cfg;
	struct vmscope_rb_chan chan;	/* bufs[cpu]: &rb[cpu] or NULL */
	struct vmscope_rb_buf *rb;
	void **mem;			/* vmalloc_user() block per CPU */
	bool recording;			/* under vmscope_sessions_lock */
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

/* mmap.c */
int vmscope_session_mmap(struct file *file, struct vm_area_struct *vma);

#endif
