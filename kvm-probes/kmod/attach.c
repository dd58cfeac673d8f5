// SPDX-License-Identifier: GPL-2.0
/*
 * Finding tracepoints by name and attaching the probes (DESIGN.md,
 * "Attaching to KVM tracepoints from an out-of-tree module"):
 * - vmlinux tracepoints (sched_*) through for_each_kernel_tracepoint(), once
 *   at load;
 * - kvm.ko's through the tracepoint module notifier, which replays modules
 *   already loaded and then reports kvm coming and going, so the probes
 *   follow kvm whatever the load order.
 * We never reference a kvm.ko symbol, so this module loads without kvm.
 *
 * vmscope_ctl_lock serialises attach/detach with the control ioctl; probes
 * never take it.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include "core.h"

DEFINE_PER_CPU(struct vmscope_cpu, vmscope_cpu);
struct vmscope_filter vmscope_filter;
struct vmscope_rb_chan *vmscope_rec_chan;

static DEFINE_MUTEX(vmscope_ctl_lock);
static struct module *kvm_module;	/* non-NULL while kvm's probes are attached */
static bool sched_attached;
static bool want_exit_reason;	/* probing with kvm_exit details */
/*
 * The file whose VMSCOPE_CTL_UNTIL_CLOSE enable is in force, NULL when
 * probing is off or persistent. While it is set, only that file controls
 * probing (vmscope_probes_control()). Only compared, never dereferenced:
 * it is cleared by that file's release, so no other file can reuse its
 * address while it is set.
 */
static const void *ctl_owner;
static u64 attach_count, detach_count;

static void attach_one(struct vmscope_tp_probe *p, struct tracepoint *tp)
{
	int ret;

	if (p->tp || strcmp(p->name, tp->name))
		return;
	ret = tracepoint_probe_register_prio(tp, p->probe, NULL, p->prio);
	if (ret) {
		pr_warn("vmscope_host: cannot attach to %s: %d\n", p->name, ret);
		return;
	}
	p->tp = tp;
}

static void detach_one(struct vmscope_tp_probe *p)
{
	if (!p->tp)
		return;
	tracepoint_probe_unregister(p->tp, p->probe, NULL);
	p->tp = NULL;
}

static void attach_kvm(struct module *mod)
{
	unsigned int i, j;

	for (i = 0; i < mod->num_tracepoints; i++) {
		struct tracepoint *tp = tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);

		for (j = 0; j < vmscope_nr_tp_probes; j++)
			if (vmscope_tp_probes[j].in_kvm)
				attach_one(&vmscope_tp_probes[j], tp);
	}
	kvm_module = mod;
	attach_count++;
	pr_info("vmscope_host: attached to kvm's tracepoints\n");
}

static void detach_kvm(void)
{
	unsigned int j;

	/* Only without perf counters: they pin kvm (see exit_reason.c). */
	vmscope_exit_reason_stop();
	for (j = 0; j < vmscope_nr_tp_probes; j++)
		if (vmscope_tp_probes[j].in_kvm)
			detach_one(&vmscope_tp_probes[j]);
	kvm_module = NULL;
	detach_count++;
	pr_info("vmscope_host: detached from kvm's tracepoints\n");
}

/*
 * Counters for the exit reason are created outside the notifier, which
 * runs under the tracepoint module list lock, to keep perf's and ftrace's
 * locks out of that chain.
 */
static void exit_reason_workfn(struct work_struct *work)
{
	mutex_lock(&vmscope_ctl_lock);
	if (kvm_module && vmscope_filter.enabled && want_exit_reason)
		vmscope_exit_reason_start(kvm_module);
	mutex_unlock(&vmscope_ctl_lock);
}
static DECLARE_WORK(exit_reason_work, exit_reason_workfn);

static int vmscope_tp_module_notify(struct notifier_block *nb,
				    unsigned long state, void *data)
{
	struct tp_module *tp_mod = data;

	if (strcmp(tp_mod->mod->name, "kvm"))
		return NOTIFY_OK;
	if (state == MODULE_STATE_GOING)
		cancel_work_sync(&exit_reason_work);
	mutex_lock(&vmscope_ctl_lock);
	if (state == MODULE_STATE_COMING && !kvm_module) {
		attach_kvm(tp_mod->mod);
		if (vmscope_filter.enabled && want_exit_reason)
			schedule_work(&exit_reason_work);
	} else if (state == MODULE_STATE_GOING && kvm_module == tp_mod->mod) {
		detach_kvm();
	}
	mutex_unlock(&vmscope_ctl_lock);
	return NOTIFY_OK;
}

static struct notifier_block vmscope_tp_module_nb = {
	.notifier_call = vmscope_tp_module_notify,
};

static void attach_vmlinux_cb(struct tracepoint *tp, void *priv)
{
	unsigned int j;

	for (j = 0; j < vmscope_nr_tp_probes; j++)
		if (!vmscope_tp_probes[j].in_kvm)
			attach_one(&vmscope_tp_probes[j], tp);
}

int vmscope_probes_init(void)
{
	int ret;

	mutex_lock(&vmscope_ctl_lock);
	for_each_kernel_tracepoint(attach_vmlinux_cb, NULL);
	sched_attached = true;
	mutex_unlock(&vmscope_ctl_lock);
	ret = register_tracepoint_module_notifier(&vmscope_tp_module_nb);
	if (ret) {
		vmscope_probes_exit();
		return ret;
	}
	return 0;
}

void vmscope_probes_exit(void)
{
	unsigned int j;

	mutex_lock(&vmscope_ctl_lock);
	WRITE_ONCE(vmscope_filter.enabled, false);
	vmscope_exit_reason_stop();
	mutex_unlock(&vmscope_ctl_lock);
	/* Replays GOING for kvm if it is loaded: detaches its probes. */
	unregister_tracepoint_module_notifier(&vmscope_tp_module_nb);
	cancel_work_sync(&exit_reason_work);
	mutex_lock(&vmscope_ctl_lock);
	for (j = 0; j < vmscope_nr_tp_probes; j++)
		detach_one(&vmscope_tp_probes[j]);
	sched_attached = false;
	mutex_unlock(&vmscope_ctl_lock);
	/* No probe of ours may still run when our text goes away. */
	tracepoint_synchronize_unregister();
}

u64 vmscope_probes_attached(void)
{
	u64 bits = 0;
	unsigned int j;

	mutex_lock(&vmscope_ctl_lock);
	for (j = 0; j < vmscope_nr_tp_probes; j++)
		if (vmscope_tp_probes[j].tp)
			bits |= vmscope_tp_probes[j].events;
	mutex_unlock(&vmscope_ctl_lock);
	return bits;
}

u32 vmscope_probes_state(void)
{
	u32 state = 0;

	mutex_lock(&vmscope_ctl_lock);
	if (vmscope_filter.enabled)
		state |= VMSCOPE_STATE_ENABLED;
	if (kvm_module)
		state |= VMSCOPE_STATE_KVM_ATTACHED;
	if (sched_attached)
		state |= VMSCOPE_STATE_SCHED_ATTACHED;
	if (vmscope_exit_reason_active())
		state |= VMSCOPE_STATE_EXIT_REASON;
	mutex_unlock(&vmscope_ctl_lock);
	return state;
}

void vmscope_probes_attach_counts(u64 *attach, u64 *detach)
{
	mutex_lock(&vmscope_ctl_lock);
	*attach = attach_count;
	*detach = detach_count;
	mutex_unlock(&vmscope_ctl_lock);
}

static void reset_counters(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(&vmscope_cpu, cpu), 0, sizeof(struct vmscope_cpu));
	vmscope_sync_reset();
}

/* Under vmscope_ctl_lock; ctl already checked. */
static int control_locked(const struct vmscope_probe_ctl *ctl, u64 events,
			  const void *owner)
{
	unsigned int i;
	int ret = 0;

	/* Stop, let every running probe finish, then change what they read. */
	WRITE_ONCE(vmscope_filter.enabled, false);
	tracepoint_synchronize_unregister();
	if (ctl->flags & VMSCOPE_CTL_RESET)
		reset_counters();
	WRITE_ONCE(vmscope_filter.nr_pids, 0);
	for (i = 0; i < ctl->nr_pids; i++)
		WRITE_ONCE(vmscope_filter.pids[i], ctl->pids[i]);
	WRITE_ONCE(vmscope_filter.nr_pids, ctl->nr_pids);
	WRITE_ONCE(vmscope_filter.measure, !!(ctl->flags & VMSCOPE_CTL_MEASURE));
	WRITE_ONCE(vmscope_filter.events, events);

	want_exit_reason = (ctl->flags & VMSCOPE_CTL_ENABLE) &&
			   !(ctl->flags & VMSCOPE_CTL_NO_EXIT_REASON) &&
			   (events & BIT_ULL(VMSCOPE_EV_kvm_exit));
	if (!want_exit_reason)
		vmscope_exit_reason_stop();
	if (ctl->flags & VMSCOPE_CTL_ENABLE) {
		if (kvm_module && want_exit_reason) {
			ret = vmscope_exit_reason_start(kvm_module);
			if (ret)
				pr_warn("vmscope_host: kvm_exit reasons unavailable: %d\n",
					ret);
			ret = 0;	/* probing works without them */
		}
		WRITE_ONCE(vmscope_filter.enabled, true);
	}
	/* The owner's next control, even a persistent enable, ends the tie. */
	ctl_owner = (ctl->flags & VMSCOPE_CTL_ENABLE) &&
		    (ctl->flags & VMSCOPE_CTL_UNTIL_CLOSE) ? owner : NULL;
	return ret;
}

int vmscope_probes_control(const struct vmscope_probe_ctl *ctl,
			   const void *owner)
{
	unsigned int i;
	int ret;

	const u64 all = BIT_ULL(VMSCOPE_NR_EVENTS) - 1;
	u64 events = (ctl->flags & VMSCOPE_CTL_EVENTS) ? ctl->events : all;

	if (ctl->flags & ~(VMSCOPE_CTL_ENABLE | VMSCOPE_CTL_RESET |
			   VMSCOPE_CTL_NO_EXIT_REASON | VMSCOPE_CTL_MEASURE |
			   VMSCOPE_CTL_EVENTS | VMSCOPE_CTL_UNTIL_CLOSE) ||
	    ctl->nr_pids > VMSCOPE_MAX_PIDS || (events & ~all))
		return -EINVAL;
	for (i = 0; i < ctl->nr_pids; i++)
		if (ctl->pids[i] <= 0)
			return -EINVAL;

	mutex_lock(&vmscope_ctl_lock);
	/*
	 * An UNTIL_CLOSE enable belongs to its file: another file's control
	 * would replace its filter and event selection and end the tie, so
	 * that the owner's death no longer switches probing off. Refused,
	 * also a control that only asks for VMSCOPE_CTL_RESET: the counters
	 * are the owner's too (it reset them when it started, and its
	 * records are checked against "matched"), and zeroing them needs the
	 * probes stopped and quiesced (reset_counters() also clears the
	 * per-CPU exit scratch, the last-payload seqcounts and the sync
	 * slots), which would be a hole in the owner's recording. Readers
	 * that want counts over a window read the stats twice.
	 */
	if (ctl_owner && ctl_owner != owner)
		ret = -EBUSY;
	else
		ret = control_locked(ctl, events, owner);
	mutex_unlock(&vmscope_ctl_lock);
	return ret;
}

void vmscope_probes_release(const void *owner)
{
	/* what an explicit disable sends: every event, no filter */
	const struct vmscope_probe_ctl off = {};

	mutex_lock(&vmscope_ctl_lock);
	if (ctl_owner == owner)
		control_locked(&off, BIT_ULL(VMSCOPE_NR_EVENTS) - 1, NULL);
	mutex_unlock(&vmscope_ctl_lock);
}
