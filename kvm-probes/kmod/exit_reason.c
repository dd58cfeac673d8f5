// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_exit details (exit reason, info1/2, interrupt info, error code) from
 * the kernel's own formatted trace record of kvm_exit.
 *
 * Why: since 5.16 kvm_exit's arguments are (vcpu, isa); KVM computes the
 * reason inside TP_fast_assign through kvm_x86_ops.get_exit_info, whose
 * data (the VMCB in struct vcpu_svm, the VMCS on Intel) is not in any
 * public header, and neither kvm_x86_ops nor that static call is exported.
 * The trace event's record is a supported, documented interface
 * (events/kvm/kvm_exit/format); a perf kernel counter on the tracepoint
 * gets it to us in the same tracepoint call, with no ftrace buffer.
 *
 * How: one counter per online CPU, PERF_TYPE_TRACEPOINT with the event id
 * of kvm.ko's kvm_exit trace event, sample period 1, PERF_SAMPLE_RAW. Its
 * overflow handler runs synchronously inside perf's own kvm_exit probe and
 * leaves the fields in this CPU's scratch; our kvm_exit probe is
 * registered at a lower priority, so it runs right after and consumes them.
 *
 * The record layout (struct vmscope_kvm_exit_raw) is the TP_STRUCT__entry of
 * the supported kernels (protos.h gates the version); at run time each
 * record must carry kvm_exit's event type and be large enough, else it is
 * ignored and counted as missed. tests/vm/tests/host-probes-exits.sh
 * compares these offsets with tracefs's format file.
 *
 * Cost: each counter holds a reference on kvm.ko (perf takes it), so kvm
 * cannot be unloaded while probing is on; kvm_amd can. See README.md for
 * the measured time per exit.
 */
#include <linux/cpu.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/trace_events.h>
#include "core.h"
#include "protos.h"

/* TP_STRUCT__entry of kvm_exit (arch/x86/kvm/trace.h, 6.1.192). */
struct vmscope_kvm_exit_raw {
	struct trace_entry ent;
	unsigned int exit_reason;
	unsigned long guest_rip;
	u32 isa;
	u64 info1;
	u64 info2;
	u32 intr_info;
	u32 error_code;
	unsigned int vcpu_id;
};
/* The offsets tracefs shows on x86-64 for this layout; the VM test checks. */
static_assert(offsetof(struct vmscope_kvm_exit_raw, exit_reason) == 8);
static_assert(offsetof(struct vmscope_kvm_exit_raw, guest_rip) == 16);
static_assert(offsetof(struct vmscope_kvm_exit_raw, info1) == 32);
static_assert(offsetof(struct vmscope_kvm_exit_raw, info2) == 40);
static_assert(offsetof(struct vmscope_kvm_exit_raw, intr_info) == 48);
static_assert(offsetof(struct vmscope_kvm_exit_raw, error_code) == 52);
static_assert(offsetof(struct vmscope_kvm_exit_raw, vcpu_id) == 56);

/*
 * One counter per online CPU, kept in step with CPU hotplug by a dynamic
 * cpuhp state that exists while exit reasons are on: its startup callback
 * creates the CPU's counter (also for a CPU that comes online later), its
 * teardown releases it. The callbacks run in the CPU's hotplug thread with
 * the hotplug lock held and take no lock of ours, so they cannot deadlock
 * with vmscope_exit_reason_start/stop (control lock, then hotplug lock
 * inside cpuhp_setup_state/cpuhp_remove_state).
 */
static struct perf_event **exit_events;	/* [nr_cpu_ids] */
static struct perf_event_attr exit_attr;
static u16 exit_event_type;
static int exit_hp_state = -1;
static bool exit_active;

static void vmscope_exit_overflow(struct perf_event *event,
				  struct perf_sample_data *data,
				  struct pt_regs *regs)
{
	struct vmscope_exit_scratch *x = this_cpu_ptr(&vmscope_cpu.exit);
	const struct vmscope_kvm_exit_raw *r;

	if (!data->raw || data->raw->frag.size < sizeof(*r))
		return;
	r = data->raw->frag.data;
	if (r->ent.type != exit_event_type)
		return;
	x->exit_reason = r->exit_reason;
	x->guest_rip = r->guest_rip;
	x->info1 = r->info1;
	x->info2 = r->info2;
	x->intr_info = r->intr_info;
	x->error_code = r->error_code;
	x->vcpu_id = r->vcpu_id;
	WRITE_ONCE(x->valid, true);
}

/* kvm_exit's trace event id, from the module's own list of trace events. */
static int kvm_exit_event_id(struct module *kvm)
{
	unsigned int i;

	for (i = 0; i < kvm->num_trace_events; i++) {
		struct trace_event_call *call = kvm->trace_events[i];
		const char *name = trace_event_name(call);

		if (name && !strcmp(name, "kvm_exit"))
			return call->event.type;
	}
	return -ENOENT;
}

bool vmscope_exit_reason_active(void)
{
	return READ_ONCE(exit_active);
}

static int exit_cpu_online(unsigned int cpu)
{
	struct perf_event *ev;

	ev = perf_event_create_kernel_counter(&exit_attr, cpu, NULL,
					      vmscope_exit_overflow, NULL);
	if (IS_ERR(ev)) {
		/* not fatal: this CPU's exits count as exit_reason_missed */
		pr_warn_ratelimited("vmscope_host: no kvm_exit counter on CPU %u: %ld\n",
				    cpu, PTR_ERR(ev));
		return 0;
	}
	WRITE_ONCE(exit_events[cpu], ev);
	return 0;
}

static int exit_cpu_offline(unsigned int cpu)
{
	struct perf_event *ev = exit_events[cpu];

	if (ev) {
		WRITE_ONCE(exit_events[cpu], NULL);
		perf_event_release_kernel(ev);
	}
	return 0;
}

/* Process context, with the probes' control lock held. */
int vmscope_exit_reason_start(struct module *kvm)
{
	unsigned int cpu, ok = 0;
	int id, ret;

	if (exit_events)
		return 0;
	id = kvm_exit_event_id(kvm);
	if (id < 0)
		return id;
	memset(&exit_attr, 0, sizeof(exit_attr));
	exit_attr.type = PERF_TYPE_TRACEPOINT;
	exit_attr.size = sizeof(exit_attr);
	exit_attr.config = id;
	exit_attr.sample_period = 1;
	exit_attr.sample_type = PERF_SAMPLE_RAW;
	exit_event_type = id;
	exit_events = kcalloc(nr_cpu_ids, sizeof(*exit_events), GFP_KERNEL);
	if (!exit_events)
		return -ENOMEM;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "vmscope_host/exit_reason",
				exit_cpu_online, exit_cpu_offline);
	if (ret < 0) {
		kfree(exit_events);
		exit_events = NULL;
		return ret;
	}
	exit_hp_state = ret;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		ok += !!exit_events[cpu];
	if (!ok) {
		vmscope_exit_reason_stop();
		return -ENODEV;
	}
	WRITE_ONCE(exit_active, true);
	return 0;
}

void vmscope_exit_reason_stop(void)
{
	if (!exit_events)
		return;
	WRITE_ONCE(exit_active, false);
	/* runs exit_cpu_offline() on every online CPU */
	cpuhp_remove_state(exit_hp_state);
	exit_hp_state = -1;
	kfree(exit_events);
	exit_events = NULL;
}
