// SPDX-License-Identifier: GPL-2.0
/*
 * Probe control, counters and self-description for userspace: descriptors
 * of every event (from the compiled-in table), start/stop with a process
 * filter, per-CPU counters and the last payload of each event per CPU.
 */
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <vmscope/ioctl.h>
#include <vmscope/kernel/cpu_report.h>
#include "../kvm-probes/kmod/core.h"
#include "../kvm-probes/kmod/desc_ioctl.h"
#include "probe_ioctl.h"

/*
 * Both sizes of the struct (the command encodes it); the tail stays zero.
 * file: the issuer, whose release ends a VMSCOPE_CTL_UNTIL_CLOSE enable.
 */
static long probe_ctl(struct file *file, unsigned int cmd, void __user *arg)
{
	struct vmscope_probe_ctl ctl = {};

	if (copy_from_user(&ctl, arg, _IOC_SIZE(cmd)))
		return -EFAULT;
	if (cmd == VMSCOPE_IOC_PROBE_CTL_V1)
		ctl.flags &= ~VMSCOPE_CTL_EVENTS;
	return vmscope_probes_control(&ctl, file);
}

static long get_stats(void __user *arg)
{
	struct vmscope_probe_stats *st;
	struct vmscope_cpu *c;
	unsigned int i, cpu;
	long ret = 0;

	/* ~600 bytes: too large for the stack of an ioctl. */
	st = vmscope_ioctl_cpu_report(arg, sizeof(*st), &cpu);
	if (IS_ERR(st))
		return PTR_ERR(st);
	st->nr_cpu_ids = nr_cpu_ids;
	st->nr_events = VMSCOPE_NR_EVENTS;
	st->state = vmscope_probes_state();
	st->attached = vmscope_probes_attached();
	vmscope_probes_attach_counts(&st->attach_count, &st->detach_count);
	st->sync_collisions = vmscope_sync_collisions();
	/* Plain reads of another CPU's counters: each u64 is read whole. */
	c = per_cpu_ptr(&vmscope_cpu, cpu);
	st->exit_reason_missed = READ_ONCE(c->exit_reason_missed);
	st->exit_timing_n = READ_ONCE(c->exit_timing.n);
	st->exit_timing_gap_ns = READ_ONCE(c->exit_timing.gap_ns);
	st->exit_timing_probe_ns = READ_ONCE(c->exit_timing.probe_ns);
	st->entry_timing_n = READ_ONCE(c->entry_timing.n);
	st->entry_timing_gap_ns = READ_ONCE(c->entry_timing.gap_ns);
	st->entry_timing_probe_ns = READ_ONCE(c->entry_timing.probe_ns);
	for (i = 0; i < VMSCOPE_NR_EVENTS; i++) {
		st->seen[i] = READ_ONCE(c->seen[i]);
		st->matched[i] = READ_ONCE(c->matched[i]);
	}
	if (copy_to_user(arg, st, sizeof(*st)))
		ret = -EFAULT;
	kfree(st);
	return ret;
}

static long get_last(void __user *arg)
{
	struct vmscope_last_event *le;
	struct vmscope_last *l;
	unsigned int tries;
	long ret = 0;
	u64 seq;

	le = kzalloc(sizeof(*le), GFP_KERNEL);
	if (!le)
		return -ENOMEM;
	if (copy_from_user(le, arg, 2 * sizeof(u32))) {
		ret = -EFAULT;
		goto out;
	}
	if (le->cpu >= nr_cpu_ids || !cpu_possible(le->cpu) ||
	    le->event >= VMSCOPE_NR_EVENTS) {
		ret = -EINVAL;
		goto out;
	}
	l = per_cpu_ptr(&vmscope_cpu.last[le->event], le->cpu);
	/* Seqcount-style read: retry while the writer is mid-copy. */
	for (tries = 0; tries < 1000; tries++) {
		seq = READ_ONCE(l->seq);
		/* pairs with vmscope_emit()'s first smp_wmb(): seq before data */
		smp_rmb();
		le->timestamp = l->timestamp;
		memcpy(le->payload, l->payload, sizeof(le->payload));
		/* pairs with its second smp_wmb(): data before the seq recheck */
		smp_rmb();
		if (!(seq & 1) && READ_ONCE(l->seq) == seq)
			break;
	}
	if (tries == 1000) {
		ret = -EAGAIN;
		goto out;
	}
	le->seq = seq / 2;
	if (copy_to_user(arg, le, sizeof(*le)))
		ret = -EFAULT;
out:
	kfree(le);
	return ret;
}

static long get_session_counts(struct file *file, void __user *arg)
{
	struct vmscope_session_counts sc = { .nr_events = VMSCOPE_NR_EVENTS };
	long ret = vmscope_probes_session_counts(file, sc.handed,
						 VMSCOPE_MAX_EVENTS);

	if (ret)
		return ret;
	return copy_to_user(arg, &sc, sizeof(sc)) ? -EFAULT : 0;
}

static long set_exit_layout(void __user *arg)
{
	struct vmscope_exit_layout l;

	if (copy_from_user(&l, arg, sizeof(l)))
		return -EFAULT;
	if (l.reserved)
		return -EINVAL;
	return vmscope_probes_exit_layout(&l);
}

static long get_exit_mode(void __user *arg)
{
	struct vmscope_exit_mode m;

	vmscope_probes_exit_mode(&m);
	return copy_to_user(arg, &m, sizeof(m)) ? -EFAULT : 0;
}

long vmscope_probe_ioctl(struct file *file, unsigned int cmd, void __user *arg)
{
	switch (cmd) {
	case VMSCOPE_IOC_GET_EVENT_DESC:
		return vmscope_ioctl_get_event_desc(arg);
	case VMSCOPE_IOC_PROBE_CTL:
	case VMSCOPE_IOC_PROBE_CTL_V1:
		return probe_ctl(file, cmd, arg);
	case VMSCOPE_IOC_GET_STATS:
		return get_stats(arg);
	case VMSCOPE_IOC_GET_LAST:
		return get_last(arg);
	case VMSCOPE_IOC_GET_SESSION_COUNTS:
		return get_session_counts(file, arg);
	case VMSCOPE_IOC_SET_EXIT_LAYOUT:
		return set_exit_layout(arg);
	case VMSCOPE_IOC_GET_EXIT_MODE:
		return get_exit_mode(arg);
	default:
		return -ENOTTY;
	}
}
