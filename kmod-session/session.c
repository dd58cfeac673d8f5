// SPDX-License-Identifier: GPL-2.0
/*
 * Capture sessions: 1..VMSCOPE_SESSION_CHANNELS channels, each one ring
 * buffer per possible CPU (vmalloc_user(), so it can be mapped) with its
 * own geometry and mode, published to the probes as a route (the channel
 * of each event id) through the module's vmscope_session_ops.publish
 * (session.h) while recording; up to its
 * max_sessions record at once, each in its own slot. Lifetime: the
 * starting file and every mapping hold a reference; the buffers are freed
 * with the last one. A mapping holds its file and so the module, so
 * unloading can never free buffers under a reader.
 *
 * Wake-ups are batched: on_deliver (writer context, maybe NMI) only queues
 * an irq_work that wakes poll() waiters; a delayed work flushes every CPU
 * each flush_ms so partly filled sub-buffers reach the reader too (every
 * buffer whose reader has taken all before the open sub-buffer).
 */
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <vmscope/version.h>
#include "session.h"

/* Serialises start/stop and guards vmscope_recording. */
static DEFINE_MUTEX(vmscope_sessions_lock);
/* The recording sessions by slot, NULL where free. */
static struct vmscope_session *vmscope_recording[VMSCOPE_HOST_SESSIONS];

/* Under vmscope_sessions_lock: a free slot, or -EBUSY. */
static int session_free_slot(void)
{
	unsigned int i;

	for (i = 0; i < vmscope_session_ops.max_sessions &&
		    i < ARRAY_SIZE(vmscope_recording); i++)
		if (!vmscope_recording[i])
			return i;
	return -EBUSY;
}

static void session_chan_free(struct vmscope_session_chan *c)
{
	unsigned int cpu;

	if (c->mem)
		for_each_possible_cpu(cpu)
			vfree(c->mem[cpu]);
	kfree(c->mem);
	kfree(c->chan.bufs);
	kfree(c->rb);
}

static void session_free(struct kref *ref)
{
	struct vmscope_session *s = container_of(ref, struct vmscope_session,
						 ref);
	unsigned int k;

	/* stopped already: no writer, no timer; a last wake may be queued */
	irq_work_sync(&s->wake_work);
	for (k = 0; k < ARRAY_SIZE(s->ch); k++)
		session_chan_free(&s->ch[k]);
	kfree(s);
}

/* Buffer @b (channel * nr_cpu_ids + cpu) of @s, or NULL. */
static struct vmscope_rb_buf *session_buf(struct vmscope_session *s, u32 b)
{
	u32 k = b / nr_cpu_ids, cpu = b % nr_cpu_ids;

	if (k >= s->cfg.nr_chans || !cpu_possible(cpu))
		return NULL;
	return s->ch[k].chan.bufs[cpu];
}

static u32 session_nr_bufs(const struct vmscope_session *s)
{
	return s->cfg.nr_chans * nr_cpu_ids;
}

void vmscope_session_put(struct vmscope_session *s)
{
	kref_put(&s->ref, session_free);
}

static void session_wake(struct irq_work *w)
{
	struct vmscope_session *s = container_of(w, struct vmscope_session,
						 wake_work);

	wake_up_interruptible(&s->wq);
}

/* Writer context (any, even NMI): irq_work_queue() is safe there. */
static void session_on_deliver(struct vmscope_rb_buf *buf, void *arg)
{
	struct vmscope_session *s = arg;

	irq_work_queue(&s->wake_work);
}

static void session_flush_local(void *buf)
{
	vmscope_rb_flush(buf);
}

/*
 * vmscope_rb_flush() acts as a writer, so it runs on the buffer's CPU; an
 * offline CPU has no writer left and is flushed from here. cpus_read_lock()
 * keeps the online state stable meanwhile.
 */
/*
 * @periodic: the switch timer's flush, skipped while the reader is behind
 * (vmscope_rb_reader_behind() says why); stop and VMSCOPE_IOC_FLUSH always
 * flush.
 */
static void session_flush_buf(struct vmscope_session *s, u32 b, bool periodic)
{
	struct vmscope_rb_buf *buf = session_buf(s, b);
	unsigned int cpu = b % nr_cpu_ids;

	if (!buf || (periodic && vmscope_rb_reader_behind(buf)))
		return;
	if (cpu_online(cpu))
		smp_call_function_single(cpu, session_flush_local, buf, 1);
	else
		vmscope_rb_flush(buf);
}

static void session_flush_all(struct vmscope_session *s, bool periodic)
{
	u32 b;

	mutex_lock(&s->flush_lock);
	cpus_read_lock();
	for (b = 0; b < session_nr_bufs(s); b++)
		session_flush_buf(s, b, periodic);
	cpus_read_unlock();
	mutex_unlock(&s->flush_lock);
}

static void session_flush_work(struct work_struct *w)
{
	struct vmscope_session *s = container_of(to_delayed_work(w),
						 struct vmscope_session,
						 flush_work);

	session_flush_all(s, true);
	schedule_delayed_work(&s->flush_work,
			      msecs_to_jiffies(s->cfg.flush_ms));
}

/* One channel's geometry: 0 means "default"; anything else in range. */
static int session_chan_cfg_check(struct vmscope_chan_cfg *c)
{
	if (!c->subbuf_shift)
		c->subbuf_shift = VMSCOPE_SESSION_SUBBUF_SHIFT_DEF;
	if (!c->nr_subbuf_shift)
		c->nr_subbuf_shift = VMSCOPE_SESSION_NR_SHIFT_DEF;
	if (c->subbuf_shift < VMSCOPE_SESSION_SUBBUF_SHIFT_MIN ||
	    c->subbuf_shift > VMSCOPE_SESSION_SUBBUF_SHIFT_MAX ||
	    c->nr_subbuf_shift < VMSCOPE_SESSION_NR_SHIFT_MIN ||
	    c->nr_subbuf_shift > VMSCOPE_SESSION_NR_SHIFT_MAX ||
	    c->mode > VMSCOPE_RB_MODE_FLIGHT)
		return -EINVAL;
	c->cpu_bytes = vmscope_rb_mem_bytes(c->subbuf_shift, c->nr_subbuf_shift,
					    PAGE_SIZE);
	c->ctrl_size = vmscope_rb_ctrl_bytes(c->nr_subbuf_shift, PAGE_SIZE);
	c->cpu_stride = PAGE_ALIGN(c->cpu_bytes);
	return 0;
}

/*
 * The whole session: each channel as above, channels >= 1 with disjoint
 * event sets that are not empty, at most VMSCOPE_SESSION_CPU_BYTES_MAX
 * per CPU in all; fills in the outputs (offsets, channel 0's events).
 */
static int session_cfg_check(struct vmscope_session_cfg *cfg)
{
	u64 taken = 0, per_cpu = 0, offset = 0;
	unsigned int k;
	int ret;

	if (!cfg->nr_chans)
		cfg->nr_chans = 1;
	if (!cfg->flush_ms)
		cfg->flush_ms = VMSCOPE_SESSION_FLUSH_MS_DEF;
	if (cfg->nr_chans > VMSCOPE_SESSION_CHANNELS || cfg->reserved ||
	    cfg->flush_ms < VMSCOPE_SESSION_FLUSH_MS_MIN ||
	    cfg->flush_ms > VMSCOPE_SESSION_FLUSH_MS_MAX)
		return -EINVAL;
	for (k = 0; k < VMSCOPE_SESSION_CHANNELS; k++) {
		struct vmscope_chan_cfg *c = &cfg->chan[k];

		if (k >= cfg->nr_chans) {
			memset(c, 0, sizeof(*c));
			continue;
		}
		ret = session_chan_cfg_check(c);
		if (ret)
			return ret;
		if (k) {
			if (!c->events || (c->events & taken))
				return -EINVAL;
			taken |= c->events;
		}
		per_cpu += c->cpu_bytes;
		c->offset = offset;
		offset += (u64)nr_cpu_ids * c->cpu_stride;
	}
	if (per_cpu > VMSCOPE_SESSION_CPU_BYTES_MAX)
		return -E2BIG;
	cfg->chan[0].events = ~taken;
	cfg->nr_cpu_ids = nr_cpu_ids;
	return 0;
}

/* Channel @c of @s as @cfg says; on failure session_free() cleans up. */
static int session_chan_alloc(struct vmscope_session *s,
			      struct vmscope_session_chan *c,
			      const struct vmscope_chan_cfg *cfg)
{
	unsigned int cpu;

	c->mem = kcalloc(nr_cpu_ids, sizeof(*c->mem), GFP_KERNEL);
	c->chan.bufs = kcalloc(nr_cpu_ids, sizeof(*c->chan.bufs), GFP_KERNEL);
	c->rb = kcalloc(nr_cpu_ids, sizeof(*c->rb), GFP_KERNEL);
	if (!c->mem || !c->chan.bufs || !c->rb)
		return -ENOMEM;
	c->chan.nr_bufs = nr_cpu_ids;
	/* every possible CPU, so that hotplug needs no allocation later */
	for_each_possible_cpu(cpu) {
		struct vmscope_rb_buf *b = &c->rb[cpu];

		c->mem[cpu] = vmalloc_user(cfg->cpu_stride);
		if (!c->mem[cpu])
			return -ENOMEM;
		if (vmscope_rb_init(b, c->mem[cpu], cfg->subbuf_shift,
				    cfg->nr_subbuf_shift, cfg->mode, cpu,
				    PAGE_SIZE))
			return -EINVAL;
		b->on_deliver = session_on_deliver;
		b->deliver_arg = s;
		c->chan.bufs[cpu] = b;
	}
	return 0;
}

/* Process context, no session lock: the allocations may sleep. */
static struct vmscope_session *session_alloc(struct vmscope_session_cfg *cfg)
{
	struct vmscope_session *s;
	unsigned int k, id;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	kref_init(&s->ref);
	s->cfg = *cfg;
	mutex_init(&s->read_lock);
	mutex_init(&s->flush_lock);
	init_waitqueue_head(&s->wq);
	init_irq_work(&s->wake_work, session_wake);
	INIT_DELAYED_WORK(&s->flush_work, session_flush_work);
	for (k = 0; k < cfg->nr_chans; k++) {
		if (session_chan_alloc(s, &s->ch[k], &cfg->chan[k])) {
			session_free(&s->ref);
			return NULL;
		}
		for (id = 0; id < VMSCOPE_RB_ROUTE_IDS; id++)
			if (cfg->chan[k].events & BIT_ULL(id))
				s->route.chan[id] = &s->ch[k].chan;
	}
	return s;
}

static long session_start(struct file *file, void __user *arg)
{
	struct vmscope_session_cfg cfg;
	struct vmscope_session *s;
	long ret;

	if (copy_from_user(&cfg, arg, sizeof(cfg)))
		return -EFAULT;
	ret = session_cfg_check(&cfg);
	if (ret)
		return ret;
	/* cheap early answer; rechecked under the lock below */
	if (READ_ONCE(file->private_data))
		return -EBUSY;
	mutex_lock(&vmscope_sessions_lock);
	ret = session_free_slot();
	mutex_unlock(&vmscope_sessions_lock);
	if (ret < 0)
		return ret;
	s = session_alloc(&cfg);
	if (!s)
		return -ENOMEM;
	mutex_lock(&vmscope_sessions_lock);
	ret = file->private_data ? -EBUSY : session_free_slot();
	if (ret < 0) {
		mutex_unlock(&vmscope_sessions_lock);
		vmscope_session_put(s);
		return ret;
	}
	s->slot = ret;
	ret = vmscope_session_ops.start ? vmscope_session_ops.start() : 0;
	if (ret) {
		mutex_unlock(&vmscope_sessions_lock);
		vmscope_session_put(s);
		return ret;
	}
	s->recording = true;
	vmscope_recording[s->slot] = s;
	/* the file's reference is the one kref_init() gave */
	WRITE_ONCE(file->private_data, s);
	vmscope_session_ops.publish(s->slot, file, &s->route);
	schedule_delayed_work(&s->flush_work, msecs_to_jiffies(cfg.flush_ms));
	mutex_unlock(&vmscope_sessions_lock);
	return copy_to_user(arg, &cfg, sizeof(cfg)) ? -EFAULT : 0;
}

/*
 * Stops recording (idempotent): no writer is left when it returns and
 * every CPU's partial sub-buffer has been delivered.
 */
static void session_stop(struct vmscope_session *s)
{
	mutex_lock(&vmscope_sessions_lock);
	if (!s->recording) {
		mutex_unlock(&vmscope_sessions_lock);
		return;
	}
	s->recording = false;
	vmscope_recording[s->slot] = NULL;
	vmscope_session_ops.publish(s->slot, NULL, NULL);
	if (vmscope_session_ops.stop)
		vmscope_session_ops.stop();
	mutex_unlock(&vmscope_sessions_lock);
	/* probes run with preemption off: this waits for every writer */
	synchronize_rcu();
	cancel_delayed_work_sync(&s->flush_work);
	session_flush_all(s, false);
	wake_up_interruptible(&s->wq);
}

static long session_get_subbuf(struct vmscope_session *s, void __user *arg)
{
	const struct vmscope_rb_subbuf_hdr *h;
	const struct vmscope_chan_cfg *k;
	struct vmscope_rb_subbuf_ref ref;
	struct vmscope_subbuf_req req;
	struct vmscope_rb_buf *buf;
	int ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	buf = session_buf(s, req.buf);
	if (!buf)
		return -EINVAL;
	mutex_lock(&s->read_lock);
	ret = vmscope_rb_get_subbuf(buf, &ref);
	mutex_unlock(&s->read_lock);
	if (ret)
		return ret;	/* -EAGAIN: none yet; -EBUSY: put the last one */
	h = ref.ptr;
	req.phys = ref.phys;
	req.seq = ref.seq;
	k = &s->cfg.chan[req.buf / nr_cpu_ids];
	req.offset = k->ctrl_size + ((u64)ref.phys << k->subbuf_shift);
	req.lost_before = h->lost_before;
	req.data_size = h->data_size;
	req.records = h->records;
	req.lost_total = vmscope_rb_lost(buf);
	return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : 0;
}

static long session_put_subbuf(struct vmscope_session *s, void __user *arg)
{
	struct vmscope_rb_buf *buf;
	u32 b;

	if (get_user(b, (u32 __user *)arg))
		return -EFAULT;
	buf = session_buf(s, b);
	if (!buf)
		return -EINVAL;
	mutex_lock(&s->read_lock);
	vmscope_rb_put_subbuf(buf);
	mutex_unlock(&s->read_lock);
	return 0;
}

static long session_flush_one(struct vmscope_session *s, void __user *arg)
{
	u32 b;

	if (get_user(b, (u32 __user *)arg))
		return -EFAULT;
	if (!session_buf(s, b))
		return -EINVAL;
	mutex_lock(&s->flush_lock);
	cpus_read_lock();
	session_flush_buf(s, b, false);
	cpus_read_unlock();
	mutex_unlock(&s->flush_lock);
	return 0;
}

/* Adds @s's counters of @cpu (every channel's buffer) to @st. */
static void session_rb_stats_add(struct vmscope_session *s,
				 struct vmscope_rb_stats *st)
{
	unsigned int k;

	st->active++;
	for (k = 0; k < s->cfg.nr_chans; k++) {
		struct vmscope_rb_ctrl *c = s->ch[k].chan.bufs[st->cpu]->ctrl;

		st->lost_full += READ_ONCE(c->lost_full);
		st->lost_too_big += READ_ONCE(c->lost_too_big);
		st->lost_overwritten += READ_ONCE(c->lost_overwritten);
		st->subbufs_delivered += READ_ONCE(c->subbufs_delivered);
		st->subbufs_overwritten += READ_ONCE(c->subbufs_overwritten);
	}
}

/*
 * Ring-buffer counters (`vmscope stats`): of the file's own session while
 * it records, else summed over every recording session.
 */
static long session_rb_stats(struct file *file, void __user *arg)
{
	struct vmscope_rb_stats st = { 0 };
	struct vmscope_session *own;
	unsigned int i;

	if (get_user(st.cpu, (u32 __user *)arg))
		return -EFAULT;
	if (st.cpu >= nr_cpu_ids || !cpu_possible(st.cpu))
		return -EINVAL;
	mutex_lock(&vmscope_sessions_lock);
	own = file->private_data;
	if (own && own->recording)
		session_rb_stats_add(own, &st);
	else
		for (i = 0; i < ARRAY_SIZE(vmscope_recording); i++)
			if (vmscope_recording[i])
				session_rb_stats_add(vmscope_recording[i], &st);
	mutex_unlock(&vmscope_sessions_lock);
	return copy_to_user(arg, &st, sizeof(st)) ? -EFAULT : 0;
}

long vmscope_session_ioctl(struct file *file, unsigned int cmd,
			   void __user *arg)
{
	struct vmscope_session *s = READ_ONCE(file->private_data);

	switch (cmd) {
	case VMSCOPE_IOC_SESSION_START:
		return session_start(file, arg);
	case VMSCOPE_IOC_GET_RB_STATS:
		return session_rb_stats(file, arg);
	case VMSCOPE_IOC_SESSION_STOP:
	case VMSCOPE_IOC_GEOMETRY:
	case VMSCOPE_IOC_GET_SUBBUF:
	case VMSCOPE_IOC_PUT_SUBBUF:
	case VMSCOPE_IOC_FLUSH:
		break;
	default:
		return -ENOTTY;
	}
	/* the rest need a session started on this file */
	if (!s)
		return -ENODATA;
	switch (cmd) {
	case VMSCOPE_IOC_SESSION_STOP:
		session_stop(s);
		return 0;
	case VMSCOPE_IOC_GEOMETRY:
		return copy_to_user(arg, &s->cfg, sizeof(s->cfg)) ? -EFAULT : 0;
	case VMSCOPE_IOC_GET_SUBBUF:
		return session_get_subbuf(s, arg);
	case VMSCOPE_IOC_PUT_SUBBUF:
		return session_put_subbuf(s, arg);
	default:
		return session_flush_one(s, arg);
	}
}

void vmscope_session_release(struct file *file)
{
	struct vmscope_session *s = file->private_data;

	if (!s)
		return;
	session_stop(s);
	vmscope_session_put(s);	/* mappings keep theirs */
}

/* Mirrors vmscope_rb_get_subbuf()'s test without taking anything. */
static bool session_buf_readable(struct vmscope_rb_buf *b)
{
	u64 r = READ_ONCE(b->rd_seq);
	/* pairs with the delivering writer's release, as in get_subbuf */
	u64 e = smp_load_acquire(&b->slots[r & b->n_mask]);
	s64 d = (s64)((VMSCOPE_RB_SLOT_TAG(e) - vmscope_rb_tag_of(r)) << 24)
		>> 24;

	return d > 0 || (d == 0 &&
			 VMSCOPE_RB_SLOT_STATE(e) == VMSCOPE_RB_SLOT_DELIVERED);
}

__poll_t vmscope_session_poll(struct file *file, poll_table *pt)
{
	struct vmscope_session *s = READ_ONCE(file->private_data);
	struct vmscope_rb_buf *buf;
	u32 b;

	if (!s)
		return EPOLLERR;
	poll_wait(file, &s->wq, pt);
	for (b = 0; b < session_nr_bufs(s); b++) {
		buf = session_buf(s, b);
		if (buf && session_buf_readable(buf))
			return EPOLLIN | EPOLLRDNORM;
	}
	return 0;
}

/* The control device: both modules' files are sessions (vmscope_session_ops). */
static int vmscope_session_dev_open(struct inode *inode, struct file *file)
{
	/* misc_open() left the miscdevice here; ours is the session */
	file->private_data = NULL;
	return 0;
}

static int vmscope_session_dev_release(struct inode *inode, struct file *file)
{
	/*
	 * The module's first (the host's probes off, as an orderly stop
	 * turns them off, when a recorder dies), then the session.
	 */
	if (vmscope_session_ops.release)
		vmscope_session_ops.release(file);
	vmscope_session_release(file);
	return 0;
}

static long vmscope_session_dev_ioctl(struct file *file, unsigned int cmd,
				      unsigned long arg)
{
	long ret = vmscope_session_ioctl(file, cmd, (void __user *)arg);

	if (ret != -ENOTTY)
		return ret;
	return vmscope_session_ops.ioctl(file, cmd, arg);
}

static const struct file_operations vmscope_session_fops = {
	.owner = THIS_MODULE,
	.open = vmscope_session_dev_open,
	.release = vmscope_session_dev_release,
	.poll = vmscope_session_poll,
	.mmap = vmscope_session_mmap,
	.unlocked_ioctl = vmscope_session_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice vmscope_session_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.fops = &vmscope_session_fops,
	.mode = 0600,	/* tracing is for root only */
};

int vmscope_session_dev_register(void)
{
	int ret;

	vmscope_session_dev.name = vmscope_session_ops.dev_name;
	ret = misc_register(&vmscope_session_dev);
	if (ret)
		pr_err("%s: cannot register /dev/%s: %d\n", KBUILD_MODNAME,
		       vmscope_session_ops.dev_name, ret);
	else
		pr_info("%s: version %s (ABI %d.%d) loaded\n", KBUILD_MODNAME,
			VMSCOPE_VERSION_STRING, VMSCOPE_ABI_MAJOR,
			VMSCOPE_ABI_MINOR);
	return ret;
}

void vmscope_session_dev_deregister(void)
{
	misc_deregister(&vmscope_session_dev);
}
