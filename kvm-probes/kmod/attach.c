// SPDX-License-Identifier: GPL-2.0
/*
 * Finding tracepoints by name and attaching the probes from an out-of-tree
 * module:
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
#include <linux/percpu.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include "core.h"

DEFINE_PER_CPU(struct vmscope_cpu, vmscope_cpu);
struct vmscope_handed __percpu *vmscope_handed;
struct vmscope_cpu_waiting __percpu *vmscope_waiting;
struct vmscope_filter vmscope_filters[VMSCOPE_NR_SLOTS];
struct vmscope_slots vmscope_slots_on;
bool vmscope_measure;
struct vmscope_slots vmscope_event_slots[VMSCOPE_NR_EVENTS];
struct vmscope_slots vmscope_any_pid_slots;
struct vmscope_pid_index __rcu *vmscope_pid_index;
/* The published table and the one index_filters() fills next. */
static struct vmscope_pid_index pid_index[2];
static unsigned int pid_index_next;

static DEFINE_MUTEX(vmscope_ctl_lock);
static struct module *kvm_module;	/* non-NULL while kvm's probes are attached */
static bool sched_attached;
static bool want_exit_reason;	/* some slot on probes with kvm_exit details */
/*
 * Who controls each slot. A session slot: the file whose session records
 * there (vmscope_probes_session_start() to _stop()). The shared slot: the
 * file whose VMSCOPE_CTL_UNTIL_CLOSE enable is in force, NULL when shared
 * probing is off or persistent; while it is set, only that file controls
 * it. Only compared, never dereferenced: each is cleared before its file
 * is freed (session stop, or the file's release), so no other file can
 * reuse the address while it is set.
 */
static const void *slot_owner[VMSCOPE_NR_SLOTS];
/* What each slot asked for: VMSCOPE_CTL_MEASURE, and kvm_exit details. */
static bool slot_measure[VMSCOPE_NR_SLOTS];
static bool slot_exit_reason[VMSCOPE_NR_SLOTS];
static u32 slot_exit_req[VMSCOPE_NR_SLOTS];	/* VMSCOPE_EXIT_REQ_* */
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

	/*
	 * Only without perf counters: they pin kvm (see exit_reason.c).
	 * What was verified of the direct read was for this kvm's kvm_amd.
	 */
	vmscope_exit_src_kvm_gone();
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
 * locks out of that chain. The same work item moves the exit details
 * between the perf path and the direct read (exit_direct.c) when the
 * probes or the kvm_amd notifier ask.
 */
static void exit_reason_workfn(struct work_struct *work)
{
	mutex_lock(&vmscope_ctl_lock);
	vmscope_exit_src_sync(kvm_module);
	mutex_unlock(&vmscope_ctl_lock);
}
static DECLARE_WORK(exit_reason_work, exit_reason_workfn);

/* Any context (probes too): schedule_work() neither sleeps nor allocates. */
void vmscope_exit_kick(void)
{
	schedule_work(&exit_reason_work);
}

int vmscope_probes_exit_layout(const struct vmscope_exit_layout *l)
{
	int ret;

	mutex_lock(&vmscope_ctl_lock);
	ret = vmscope_exit_set_layout(l);
	if (!ret)
		vmscope_exit_src_sync(kvm_module);
	mutex_unlock(&vmscope_ctl_lock);
	return ret;
}

void vmscope_probes_exit_mode(struct vmscope_exit_mode *m)
{
	mutex_lock(&vmscope_ctl_lock);
	vmscope_exit_get_mode(m);
	mutex_unlock(&vmscope_ctl_lock);
}

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
		if (vmscope_slots_any(vmscope_slots_on) && want_exit_reason)
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

/* The probes' per-CPU data (alloc_percpu at load, with no probe attached). */
static void free_percpu_data(void)
{
	free_percpu(vmscope_handed);
	free_percpu(vmscope_waiting);
	vmscope_handed = NULL;
	vmscope_waiting = NULL;
}

int vmscope_probes_init(void)
{
	int ret;

	/* zeroed; read by the probes, so before any is attached */
	vmscope_handed = alloc_percpu(struct vmscope_handed);
	vmscope_waiting = alloc_percpu(struct vmscope_cpu_waiting);
	if (!vmscope_handed || !vmscope_waiting) {
		ret = -ENOMEM;
		goto free_data;
	}
	ret = vmscope_exit_direct_init();
	if (ret)
		goto free_data;
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

free_data:
	free_percpu_data();
	return ret;
}

void vmscope_probes_exit(void)
{
	unsigned int j;

	vmscope_exit_direct_exit();	/* no more kicks from kvm_amd */
	mutex_lock(&vmscope_ctl_lock);
	vmscope_slots_write(&vmscope_slots_on, (struct vmscope_slots){});
	vmscope_exit_src_want(false, VMSCOPE_EXIT_REQ_AUTO);
	vmscope_exit_src_sync(NULL);
	mutex_unlock(&vmscope_ctl_lock);
	/* Replays GOING for kvm if it is loaded: detaches its probes. */
	unregister_tracepoint_module_notifier(&vmscope_tp_module_nb);
	/* the probes' kicks end with the grace period (slots off) */
	tracepoint_synchronize_unregister();
	cancel_work_sync(&exit_reason_work);
	mutex_lock(&vmscope_ctl_lock);
	for (j = 0; j < vmscope_nr_tp_probes; j++)
		detach_one(&vmscope_tp_probes[j]);
	sched_attached = false;
	mutex_unlock(&vmscope_ctl_lock);
	/* No probe of ours may still run when our text goes away. */
	tracepoint_synchronize_unregister();
	free_percpu_data();
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
	if (vmscope_slots_any(vmscope_slots_on))
		state |= VMSCOPE_STATE_ENABLED;
	if (kvm_module)
		state |= VMSCOPE_STATE_KVM_ATTACHED;
	if (sched_attached)
		state |= VMSCOPE_STATE_SCHED_ATTACHED;
	if (vmscope_exit_src_on())
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

/*
 * Under vmscope_ctl_lock: makes @on the slots that probe, after setting
 * up what they need (kvm_exit's perf counters) and before tearing down
 * what none needs any more.
 */
static void slots_set_on(struct vmscope_slots on)
{
	bool measure = false, want = false;
	u32 req = VMSCOPE_EXIT_REQ_AUTO;
	unsigned int s;

	for_each_vmscope_slot(s, on) {
		measure |= slot_measure[s];
		want |= slot_exit_reason[s];
		if (slot_exit_reason[s])
			req = max(req, slot_exit_req[s]);
	}
	want_exit_reason = want;
	vmscope_exit_src_want(want, req);
	if (want)
		vmscope_exit_src_sync(kvm_module);
	WRITE_ONCE(vmscope_measure, measure);
	vmscope_slots_write(&vmscope_slots_on, on);
	if (!want)
		vmscope_exit_src_sync(kvm_module);
}

/*
 * Under vmscope_ctl_lock: @slot stops probing and, once every probe that
 * saw it on has returned, no CPU keeps a thread waiting for it. What it
 * set up stays for the caller's slots_set_on(): a slot that changes its
 * filter keeps kvm_exit's perf counters without a gap.
 */
static void slot_quiesce(unsigned int slot)
{
	unsigned int cpu;

	vmscope_slots_write(&vmscope_slots_on,
			    vmscope_slots_without(vmscope_slots_on, slot));
	tracepoint_synchronize_unregister();
	for_each_possible_cpu(cpu)
		memset(&per_cpu_ptr(vmscope_waiting, cpu)->slot[slot], 0,
		       sizeof(struct vmscope_waiters));
}

static void index_pid(struct vmscope_pid_index *x, pid_t tgid, unsigned int slot)
{
	u32 i = vmscope_pid_hash(tgid), n;

	for (n = 0; n < VMSCOPE_PID_TABLE; n++, i = (i + 1) & (VMSCOPE_PID_TABLE - 1)) {
		if (!x->e[i].tgid || x->e[i].tgid == tgid) {
			x->e[i].tgid = tgid;
			vmscope_slots_add(&x->e[i].slots, slot);
			return;
		}
	}
	WARN_ON_ONCE(1);	/* more pids than the table's static_assert allows */
}

/*
 * Under vmscope_ctl_lock, after a filter changed (core.h, "The filters
 * indexed"): the masks, then the table not in use filled and published.
 * Returns once no probe reads the other table, which the next call fills.
 */
static void index_filters(void)
{
	struct vmscope_pid_index *x = &pid_index[pid_index_next];
	struct vmscope_slots any = {};
	unsigned int s, id, i;

	memset(x, 0, sizeof(*x));
	for (id = 0; id < VMSCOPE_NR_EVENTS; id++) {
		struct vmscope_slots ev = {};

		for (s = 0; s < VMSCOPE_NR_SLOTS; s++)
			if (vmscope_filters[s].events & BIT_ULL(id))
				vmscope_slots_add(&ev, s);
		vmscope_slots_write(&vmscope_event_slots[id], ev);
	}
	for (s = 0; s < VMSCOPE_NR_SLOTS; s++) {
		const struct vmscope_filter *f = &vmscope_filters[s];

		if (!f->nr_pids)
			vmscope_slots_add(&any, s);
		for (i = 0; i < f->nr_pids && i < VMSCOPE_MAX_PIDS; i++)
			index_pid(x, f->pids[i], s);
	}
	vmscope_slots_write(&vmscope_any_pid_slots, any);
	rcu_assign_pointer(vmscope_pid_index, x);
	pid_index_next = !pid_index_next;
	synchronize_rcu();
}

/* Under vmscope_ctl_lock; ctl already checked. */
static int control_locked(unsigned int slot, const struct vmscope_probe_ctl *ctl,
			  u64 events, const void *owner)
{
	struct vmscope_filter *f = &vmscope_filters[slot];
	bool enable = ctl->flags & VMSCOPE_CTL_ENABLE;
	struct vmscope_slots on;
	unsigned int i;

	/* The counters are everyone's: reset only what no one else counts. */
	if ((ctl->flags & VMSCOPE_CTL_RESET) &&
	    vmscope_slots_any(vmscope_slots_without(vmscope_slots_on, slot)))
		return -EBUSY;
	/* Stop, let every running probe finish, then change what they read. */
	slot_quiesce(slot);
	if (ctl->flags & VMSCOPE_CTL_RESET)
		reset_counters();
	f->nr_pids = ctl->nr_pids;
	for (i = 0; i < ctl->nr_pids; i++)
		f->pids[i] = ctl->pids[i];
	f->events = events;
	index_filters();
	slot_measure[slot] = ctl->flags & VMSCOPE_CTL_MEASURE;
	slot_exit_reason[slot] = enable &&
				 !(ctl->flags & VMSCOPE_CTL_NO_EXIT_REASON) &&
				 (events & BIT_ULL(VMSCOPE_EV_kvm_exit));
	slot_exit_req[slot] = (ctl->flags & VMSCOPE_CTL_EXIT_VERIFY) ? VMSCOPE_EXIT_REQ_VERIFY :
			      (ctl->flags & VMSCOPE_CTL_EXIT_PERF) ? VMSCOPE_EXIT_REQ_PERF :
			      VMSCOPE_EXIT_REQ_AUTO;
	on = vmscope_slots_on;
	if (enable)
		vmscope_slots_add(&on, slot);
	slots_set_on(on);
	/* The owner's next control, even a persistent enable, ends the tie. */
	if (slot == VMSCOPE_SHARED_SLOT)
		slot_owner[slot] = enable && (ctl->flags & VMSCOPE_CTL_UNTIL_CLOSE) ?
				   owner : NULL;
	return 0;
}

/* Under vmscope_ctl_lock: @owner's session slot, else the shared one. */
static unsigned int slot_of(const void *owner)
{
	unsigned int s;

	for (s = 0; s < VMSCOPE_HOST_SESSIONS; s++)
		if (slot_owner[s] == owner)
			return s;
	return VMSCOPE_SHARED_SLOT;
}

int vmscope_probes_control(const struct vmscope_probe_ctl *ctl,
			   const void *owner)
{
	const u64 all = BIT_ULL(VMSCOPE_NR_EVENTS) - 1;
	u64 events = (ctl->flags & VMSCOPE_CTL_EVENTS) ? ctl->events : all;
	unsigned int i, slot;
	int ret;

	if (ctl->flags & ~(VMSCOPE_CTL_ENABLE | VMSCOPE_CTL_RESET |
			   VMSCOPE_CTL_NO_EXIT_REASON | VMSCOPE_CTL_MEASURE |
			   VMSCOPE_CTL_EVENTS | VMSCOPE_CTL_UNTIL_CLOSE |
			   VMSCOPE_CTL_EXIT_PERF | VMSCOPE_CTL_EXIT_VERIFY) ||
	    ctl->nr_pids > VMSCOPE_MAX_PIDS || (events & ~all))
		return -EINVAL;
	for (i = 0; i < ctl->nr_pids; i++)
		if (ctl->pids[i] <= 0)
			return -EINVAL;

	mutex_lock(&vmscope_ctl_lock);
	slot = slot_of(owner);
	/*
	 * Shared probing is refused while another file's UNTIL_CLOSE enable
	 * holds it, and while any session probes: it would change the
	 * module-wide counters a recording is checked against ("matched"),
	 * and zeroing them needs the probes quiesced (reset_counters() also
	 * clears the per-CPU exit scratch, the last-payload seqcounts and
	 * the sync slots), a hole in every recording. Readers that want
	 * counts over a window read the stats twice.
	 */
	if (slot == VMSCOPE_SHARED_SLOT &&
	    ((slot_owner[slot] && slot_owner[slot] != owner) ||
	     vmscope_slots_any(vmscope_slots_without(vmscope_slots_on, slot))))
		ret = -EBUSY;
	else
		ret = control_locked(slot, ctl, events, owner);
	mutex_unlock(&vmscope_ctl_lock);
	return ret;
}

void vmscope_probes_release(const void *owner)
{
	/* what an explicit disable sends: every event, no filter */
	const struct vmscope_probe_ctl off = {};

	mutex_lock(&vmscope_ctl_lock);
	if (slot_owner[VMSCOPE_SHARED_SLOT] == owner)
		control_locked(VMSCOPE_SHARED_SLOT, &off,
			       BIT_ULL(VMSCOPE_NR_EVENTS) - 1, NULL);
	mutex_unlock(&vmscope_ctl_lock);
}

void vmscope_probes_session_start(unsigned int slot, const void *owner,
				  const struct vmscope_rb_route *route)
{
	unsigned int cpu;

	mutex_lock(&vmscope_ctl_lock);
	/*
	 * Off since its last session's stop, but a probe that saw it on
	 * then may still be about to read its channel: after this grace
	 * period none is, so none writes a record of the last session into
	 * this one's buffers. Its filter is written by the owner's first
	 * control, after another one.
	 */
	tracepoint_synchronize_unregister();
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(vmscope_handed, cpu)->n[slot], 0,
		       sizeof(per_cpu_ptr(vmscope_handed, cpu)->n[slot]));
	slot_owner[slot] = owner;
	WRITE_ONCE(vmscope_filters[slot].route, route);
	mutex_unlock(&vmscope_ctl_lock);
}

int vmscope_probes_session_counts(const void *owner, u64 *handed, unsigned int n)
{
	unsigned int cpu, id, slot;

	mutex_lock(&vmscope_ctl_lock);
	slot = slot_of(owner);
	if (slot == VMSCOPE_SHARED_SLOT) {
		mutex_unlock(&vmscope_ctl_lock);
		return -ENODATA;
	}
	/* plain reads of other CPUs' counters: each u64 is read whole */
	for (id = 0; id < n && id < VMSCOPE_NR_EVENTS; id++) {
		handed[id] = 0;
		for_each_possible_cpu(cpu)
			handed[id] += READ_ONCE(per_cpu_ptr(vmscope_handed, cpu)->n[slot][id]);
	}
	mutex_unlock(&vmscope_ctl_lock);
	return 0;
}

void vmscope_probes_session_stop(unsigned int slot)
{
	mutex_lock(&vmscope_ctl_lock);
	slots_set_on(vmscope_slots_without(vmscope_slots_on, slot));
	WRITE_ONCE(vmscope_filters[slot].route, NULL);
	slot_owner[slot] = NULL;
	mutex_unlock(&vmscope_ctl_lock);
}
