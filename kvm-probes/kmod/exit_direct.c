// SPDX-License-Identifier: GPL-2.0
/*
 * kvm_exit details read directly from the VMCB (AMD SVM), at the probe's
 * own cost, trusted only once they agree with KVM's own record.
 *
 * Where: KVM's TP_fast_assign for kvm_exit calls svm_get_exit_info(),
 * which reads to_svm(vcpu)->vmcb->control (arch/x86/kvm/svm/svm.c, 6.1):
 * exit_code, exit_info_1, exit_info_2, exit_int_info, and
 * exit_int_info_err when exit_int_info has both SVM_EXITINTINFO_VALID and
 * SVM_EXITINTINFO_VALID_ERR (else 0). struct vcpu_svm (svm.h, not in the
 * headers package) starts { struct kvm_vcpu vcpu; struct vmcb *vmcb; } in
 * every kernel from 5.10 to 6.12; struct kvm_vcpu (linux/kvm_host.h) and
 * struct vmcb (asm/svm.h, the architectural layout) are in the headers
 * package. So the offset of the vmcb pointer comes from a struct that
 * mirrors that head (offsetof, never a literal), the field offsets from
 * asm/svm.h (static_assert'ed to the APM's control area).
 *
 * Trust: (1) userspace reads the running kernel's BTF (vmlinux, kvm_amd)
 * and passes the offsets it finds (VMSCOPE_IOC_SET_EXIT_LAYOUT); any
 * difference from ours refuses direct mode, with the reason. (2)
 * Calibration: with the perf path on (exit_reason.c), every exit's direct
 * read is compared with KVM's own record, field by field; only after
 * VMSCOPE_EXIT_CALIB_EXITS exits of VMSCOPE_EXIT_CALIB_REASONS distinct
 * reasons with no difference does the probe switch to direct, and a work
 * item tears the perf counters down (kvm.ko no longer pinned). One
 * difference: perf for good (this module's life), counted and logged.
 * Calibration is per kvm_amd: a new kvm_amd (or kvm) is calibrated again.
 * (3) In direct mode, a value KVM cannot have (an exit code out of range,
 * a high word set other than SVM_EXIT_ERR) goes back to calibration.
 *
 * Probe context: bounded work, no allocation, no sleeping; the VMCB is
 * read with copy_from_kernel_nofault(), so even a wrong pointer cannot
 * oops (tested with the test-only parameter test_vmcb_skew).
 */
#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/trace_clock.h>
#include <linux/uaccess.h>
#include <asm/asm.h>
#include <asm/kvm_host.h>
#include <asm/svm.h>
#include <asm/vmx.h>
#include "core.h"
#include "exit_read.h"
#include "protos.h"

static bool exit_direct = true;
module_param(exit_direct, bool, 0644);
MODULE_PARM_DESC(exit_direct,
		 "read kvm_exit details from the VMCB once calibrated (0: perf counter only)");

/*
 * Test only: read the VMCB pointer this many bytes away from where it is,
 * to prove that calibration refuses a wrong read (and that nothing oopses).
 */
int vmscope_test_vmcb_skew;
module_param_named(test_vmcb_skew, vmscope_test_vmcb_skew, int, 0444);	/* at load only */
MODULE_PARM_DESC(test_vmcb_skew, "test only: skew the VMCB pointer's offset (bytes)");

int vmscope_exit_mode;		/* VMSCOPE_EXIT_MODE_*, read by the probes */

/* Everything below is written under the probes' control lock, unless said. */
static u32 exit_req;		/* VMSCOPE_EXIT_REQ_* of the slots on */
static bool exit_want;		/* some slot on wants exit details */
static bool layout_bad;		/* userspace's BTF disagrees with our layout */
static u32 layout_state;	/* VMSCOPE_EXIT_LAYOUT_* */
static char layout_why[VMSCOPE_EXIT_WHY_LEN];
static bool calib_failed;	/* a mismatch: perf for good (set by probes too) */
static bool verified;		/* calibrated for this kvm_amd (reset by probes too) */
static unsigned int amd_gen;	/* kvm_amd loads and unloads (notifier) */
static unsigned int calib_gen;	/* amd_gen when this calibration began */
static u64 direct_since;	/* trace clock when direct mode began */
static u64 n_calibrations;

/* Probe-side counters (atomics: every CPU's exits count towards one total). */
static atomic64_t n_compared = ATOMIC64_INIT(0);
static atomic64_t n_mismatch = ATOMIC64_INIT(0);
static atomic64_t n_fallback = ATOMIC64_INIT(0);
static unsigned long calib_reasons;	/* bit (reason % BITS_PER_LONG) per reason */
static unsigned long calib_kicked;	/* bit 0: the work item was queued */

/*
 * Intel VMX (UNVERIFIED on hardware: these machines are AMD-only; built,
 * and behind the same calibration). At trace_kvm_exit (vmx_vcpu_run()
 * right after the exit) the vCPU's VMCS is current on this CPU, so the
 * fields vmx_get_exit_info() returns (6.1, vmx.c) are read with vmread,
 * under an exception-table fixup as in KVM's vmx_ops.h: a vmread that
 * fails or faults makes the read fail, never an oops. KVM's own record
 * differs where KVM substitutes values (vmx->fail: reason 0xdead;
 * emulation_required: EXIT_REASON_INVALID_STATE): calibration then stays
 * on perf for good.
 */
static __always_inline int vmx_vmread(unsigned long field, unsigned long *val)
{
	unsigned long v;

	/* a fault lands on 2:, which takes the same way out as VMfail */
	asm_goto_output("1: vmread %[field], %[output]\n\t"
			"jna %l[fail]\n\t"
			"jmp 3f\n\t"
			"2: jmp %l[fail]\n\t"
			"3:\n\t"
			_ASM_EXTABLE(1b, 2b)
			: [output] "=r" (v)
			: [field] "r" (field)
			: "cc"
			: fail);
	*val = v;
	return 0;
fail:
	return -EFAULT;
}

static __always_inline int vmx_read(const struct kvm_vcpu *vcpu,
				    struct vmscope_exit_scratch *d)
{
	const u32 with_code = INTR_INFO_VALID_MASK | INTR_INFO_DELIVER_CODE_MASK;
	unsigned long reason, qual, idt = 0, intr = 0, err = 0, rip;

	if (vmx_vmread(VM_EXIT_REASON, &reason) ||
	    vmx_vmread(EXIT_QUALIFICATION, &qual))
		return -EFAULT;
	/* exactly vmx_get_exit_info() */
	if (!(reason & VMX_EXIT_REASONS_FAILED_VMENTRY)) {
		if (vmx_vmread(IDT_VECTORING_INFO_FIELD, &idt) ||
		    vmx_vmread(VM_EXIT_INTR_INFO, &intr))
			return -EFAULT;
		if (((u32)intr & with_code) == with_code &&
		    vmx_vmread(VM_EXIT_INTR_ERROR_CODE, &err))
			return -EFAULT;
	}
	/* kvm_rip_read(): the cache, else the VMCS */
	if (vcpu->arch.regs_avail & BIT(VCPU_REGS_RIP))
		rip = vcpu->arch.regs[VCPU_REGS_RIP];
	else if (vmx_vmread(GUEST_RIP, &rip))
		return -EFAULT;
	d->exit_reason = (u32)reason;
	d->info1 = qual;
	d->info2 = (u32)idt;
	d->intr_info = (u32)intr;
	d->error_code = (u32)err;
	d->guest_rip = rip;
	d->vcpu_id = vcpu->vcpu_id;
	return 0;
}

/* A basic exit reason the headers know, no reserved bit (SDM 24.9.1). */
static __always_inline bool vmx_possible(u32 reason)
{
	return (reason & 0xffff) <= EXIT_REASON_NOTIFY && !(reason & 0x47ff0000);
}

/* By isa: 0 and *d, or -EFAULT (a read that faults, an unknown isa). */
static __always_inline int exit_read(const struct kvm_vcpu *vcpu, u32 isa,
				     struct vmscope_exit_scratch *d, bool *possible)
{
	u32 hi = 0;
	int err;

	if (isa == VMSCOPE_KVM_ISA_SVM) {
		err = vmscope_svm_read(vcpu, d, &hi);
		*possible = !err && vmscope_svm_possible(d->exit_reason, hi);
	} else if (isa == VMSCOPE_KVM_ISA_VMX) {
		err = vmx_read(vcpu, d);
		*possible = !err && vmx_possible(d->exit_reason);
	} else {
		err = -EFAULT;
		*possible = false;
	}
	return err;
}

static void log_mismatch(const struct vmscope_exit_scratch *p,
			 const struct vmscope_exit_scratch *d, int err)
{
	if (err) {
		pr_warn_ratelimited("vmscope_host: exit reason: direct VMCB read failed (%d); KVM's record: reason %#x; staying on perf\n",
				    err, p->exit_reason);
		return;
	}
	pr_warn_ratelimited("vmscope_host: exit reason: direct read differs from KVM's record, staying on perf: KVM reason %#x info1 %#llx info2 %#llx intr_info %#x error_code %#x rip %#llx; VMCB reason %#x info1 %#llx info2 %#llx intr_info %#x error_code %#x rip %#llx\n",
			    p->exit_reason, p->info1, p->info2, p->intr_info,
			    p->error_code, p->guest_rip, d->exit_reason, d->info1,
			    d->info2, d->intr_info, d->error_code, d->guest_rip);
}

void vmscope_exit_compare(const struct kvm_vcpu *vcpu, u32 isa,
			  const struct vmscope_exit_scratch *p)
{
	int mode = READ_ONCE(vmscope_exit_mode);
	struct vmscope_exit_scratch d = {};
	bool possible;
	s64 n;
	int err;

	if (mode != VMSCOPE_EXIT_MODE_CALIBRATING &&
	    mode != VMSCOPE_EXIT_MODE_VERIFY)
		return;
	err = exit_read(vcpu, isa, &d, &possible);
	n = atomic64_inc_return(&n_compared);
	if (err || d.exit_reason != p->exit_reason || d.info1 != p->info1 ||
	    d.info2 != p->info2 || d.intr_info != p->intr_info ||
	    d.error_code != p->error_code || d.guest_rip != p->guest_rip) {
		atomic64_inc(&n_mismatch);
		WRITE_ONCE(calib_failed, true);
		log_mismatch(p, &d, err);
		if (cmpxchg(&vmscope_exit_mode, VMSCOPE_EXIT_MODE_CALIBRATING,
			    VMSCOPE_EXIT_MODE_PERF) == VMSCOPE_EXIT_MODE_CALIBRATING)
			vmscope_exit_kick();
		return;
	}
	if (mode != VMSCOPE_EXIT_MODE_CALIBRATING)
		return;
	if (!test_bit(d.exit_reason % BITS_PER_LONG, &calib_reasons))
		set_bit(d.exit_reason % BITS_PER_LONG, &calib_reasons);
	if (n >= VMSCOPE_EXIT_CALIB_EXITS &&
	    hweight_long(READ_ONCE(calib_reasons)) >= VMSCOPE_EXIT_CALIB_REASONS &&
	    !test_and_set_bit(0, &calib_kicked))
		vmscope_exit_kick();
}

bool vmscope_exit_direct_read(const struct kvm_vcpu *vcpu, u32 isa,
			      struct vmscope_exit_scratch *d)
{
	bool possible;

	if (!exit_read(vcpu, isa, d, &possible) && possible) {
		this_cpu_inc(vmscope_cpu.exit_direct);
		return true;
	}
	/* back to calibration, from process context */
	if (cmpxchg(&vmscope_exit_mode, VMSCOPE_EXIT_MODE_DIRECT,
		    VMSCOPE_EXIT_MODE_RECAL) == VMSCOPE_EXIT_MODE_DIRECT) {
		WRITE_ONCE(verified, false);
		atomic64_inc(&n_fallback);
		pr_info_ratelimited("vmscope_host: exit reason: an impossible or unreadable exit (reason %#x, isa %u): calibrating again\n",
				    d->exit_reason, isa);
		vmscope_exit_kick();
	}
	return false;
}

/* Under the control lock: perf off, no details. */
static void go_none(void)
{
	WRITE_ONCE(vmscope_exit_mode, VMSCOPE_EXIT_MODE_NONE);
	vmscope_exit_reason_stop();
}

/* Under the control lock: the perf path on, in @mode. */
static void go_perf(struct module *kvm, int mode)
{
	int was = READ_ONCE(vmscope_exit_mode);
	int ret = vmscope_exit_reason_start(kvm);

	if (ret) {	/* probing works without them */
		pr_warn("vmscope_host: kvm_exit reasons unavailable: %d\n", ret);
		WRITE_ONCE(vmscope_exit_mode, VMSCOPE_EXIT_MODE_NONE);
		return;
	}
	if (mode == VMSCOPE_EXIT_MODE_CALIBRATING ||
	    mode == VMSCOPE_EXIT_MODE_VERIFY) {
		atomic64_set(&n_compared, 0);
		atomic64_set(&n_mismatch, 0);
		WRITE_ONCE(calib_reasons, 0);
		WRITE_ONCE(calib_kicked, 0);
		calib_gen = READ_ONCE(amd_gen);
		smp_wmb();	/* the probes see the counters zero before the mode */
	}
	/* a restart for a new kvm_amd is still the same calibration */
	if (mode == VMSCOPE_EXIT_MODE_CALIBRATING && was != mode)
		n_calibrations++;
	WRITE_ONCE(vmscope_exit_mode, mode);
}

static void go_direct(void)
{
	direct_since = trace_clock_local();
	WRITE_ONCE(vmscope_exit_mode, VMSCOPE_EXIT_MODE_DIRECT);
	/* kvm.ko no longer pinned; exits from now on read the VMCB */
	vmscope_exit_reason_stop();
}

static bool calibration_done(void)
{
	return atomic64_read(&n_compared) >= VMSCOPE_EXIT_CALIB_EXITS &&
	       !atomic64_read(&n_mismatch) && !READ_ONCE(calib_failed) &&
	       hweight_long(READ_ONCE(calib_reasons)) >= VMSCOPE_EXIT_CALIB_REASONS &&
	       calib_gen == READ_ONCE(amd_gen);
}

/*
 * Under the control lock, process context: brings the source of the exit
 * details in line with what the slots want and what has been verified.
 * Idempotent; called when probing changes, from the work item the probes
 * and the kvm_amd notifier queue, and when kvm comes or goes.
 */
void vmscope_exit_src_sync(struct module *kvm)
{
	int mode = READ_ONCE(vmscope_exit_mode);
	bool direct_ok;

	if (!exit_want || !kvm) {
		go_none();
		return;
	}
	if (exit_req == VMSCOPE_EXIT_REQ_VERIFY) {
		if (mode != VMSCOPE_EXIT_MODE_VERIFY)
			go_perf(kvm, VMSCOPE_EXIT_MODE_VERIFY);
		return;
	}
	direct_ok = READ_ONCE(exit_direct) && !layout_bad &&
		    !READ_ONCE(calib_failed) && exit_req == VMSCOPE_EXIT_REQ_AUTO;
	if (!direct_ok) {
		if (mode != VMSCOPE_EXIT_MODE_PERF)
			go_perf(kvm, VMSCOPE_EXIT_MODE_PERF);
		return;
	}
	if (READ_ONCE(verified) && READ_ONCE(amd_gen) == calib_gen) {
		if (mode != VMSCOPE_EXIT_MODE_DIRECT)
			go_direct();
		return;
	}
	if (mode == VMSCOPE_EXIT_MODE_CALIBRATING && calibration_done()) {
		WRITE_ONCE(verified, true);
		pr_info("vmscope_host: exit reason: %lld exits of %u reasons read from the VMCB as KVM recorded them: direct mode\n",
			(long long)atomic64_read(&n_compared),
			(unsigned int)hweight_long(READ_ONCE(calib_reasons)));
		go_direct();
		return;
	}
	if (mode != VMSCOPE_EXIT_MODE_CALIBRATING || calib_gen != READ_ONCE(amd_gen))
		go_perf(kvm, VMSCOPE_EXIT_MODE_CALIBRATING);
	else
		WRITE_ONCE(calib_kicked, 0);	/* not yet: the probes ask again */
}

void vmscope_exit_src_want(bool want, u32 req)
{
	exit_want = want;
	exit_req = req;
}

bool vmscope_exit_src_on(void)
{
	return READ_ONCE(vmscope_exit_mode) != VMSCOPE_EXIT_MODE_NONE;
}

/* Under the control lock. */
int vmscope_exit_set_layout(const struct vmscope_exit_layout *l)
{
	static const struct vmscope_exit_layout ours = {
		.flags = VMSCOPE_EXIT_LAYOUT_SVM,
		.vcpu_svm_vcpu = offsetof(struct vmscope_svm_head, vcpu),
		.vcpu_svm_vmcb = offsetof(struct vmscope_svm_head, vmcb),
		.vcpu_svm_vmcb_size = sizeof(struct vmcb *),
		.vmcb_control = offsetof(struct vmcb, control),
		.exit_code = VMCB_CTL(exit_code),
		.exit_code_hi = VMCB_CTL(exit_code_hi),
		.exit_info_1 = VMCB_CTL(exit_info_1),
		.exit_info_2 = VMCB_CTL(exit_info_2),
		.exit_int_info = VMCB_CTL(exit_int_info),
		.exit_int_info_err = VMCB_CTL(exit_int_info_err),
	};
	static const struct { const char *name; size_t off; } f[] = {
#define F(x) { #x, offsetof(struct vmscope_exit_layout, x) }
		F(vcpu_svm_vcpu), F(vcpu_svm_vmcb), F(vcpu_svm_vmcb_size),
		F(vmcb_control), F(exit_code), F(exit_code_hi), F(exit_info_1),
		F(exit_info_2), F(exit_int_info), F(exit_int_info_err),
#undef F
	};
	unsigned int i;

	if (l->flags & ~VMSCOPE_EXIT_LAYOUT_SVM)
		return -EINVAL;
	layout_why[0] = 0;
	if (!(l->flags & VMSCOPE_EXIT_LAYOUT_SVM)) {
		/* no BTF: calibration alone decides */
		layout_state = VMSCOPE_EXIT_LAYOUT_NONE;
		layout_bad = false;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		u32 theirs = *(const u32 *)((const char *)l + f[i].off);
		u32 mine = *(const u32 *)((const char *)&ours + f[i].off);

		if (theirs != mine) {
			snprintf(layout_why, sizeof(layout_why),
				 "BTF %s %u, built for %u", f[i].name, theirs, mine);
			layout_state = VMSCOPE_EXIT_LAYOUT_MISMATCH;
			layout_bad = true;
			pr_info("vmscope_host: exit reason: direct mode refused: %s\n",
				layout_why);
			return 0;
		}
	}
	layout_state = VMSCOPE_EXIT_LAYOUT_MATCH;
	layout_bad = false;
	return 0;
}

/* Under the control lock. */
void vmscope_exit_get_mode(struct vmscope_exit_mode *m)
{
	int mode = READ_ONCE(vmscope_exit_mode);
	unsigned int cpu;

	memset(m, 0, sizeof(*m));
	m->mode = mode;
	m->layout = layout_state;
	m->compared = atomic64_read(&n_compared);
	m->mismatches = atomic64_read(&n_mismatch);
	m->reasons = hweight_long(READ_ONCE(calib_reasons));
	m->calibrations = n_calibrations;
	m->fallbacks = atomic64_read(&n_fallback);
	for_each_possible_cpu(cpu)
		m->direct_exits += READ_ONCE(per_cpu_ptr(&vmscope_cpu, cpu)->exit_direct);
	if (mode == VMSCOPE_EXIT_MODE_DIRECT)
		m->direct_since_ts = direct_since;
	m->calib_exits = VMSCOPE_EXIT_CALIB_EXITS;
	m->calib_reasons = VMSCOPE_EXIT_CALIB_REASONS;
	if (!READ_ONCE(exit_direct))
		m->refused = VMSCOPE_EXIT_REFUSED_DISABLED;
	else if (layout_bad)
		m->refused = VMSCOPE_EXIT_REFUSED_LAYOUT;
	else if (READ_ONCE(calib_failed))
		m->refused = VMSCOPE_EXIT_REFUSED_MISMATCH;
	else if (exit_req == VMSCOPE_EXIT_REQ_PERF)
		m->refused = VMSCOPE_EXIT_REFUSED_ASKED;
	if (m->refused == VMSCOPE_EXIT_REFUSED_LAYOUT)
		strscpy(m->why, layout_why, sizeof(m->why));
}

/*
 * kvm_amd (or kvm_intel) coming and going (its VMCB layout is its own): a
 * new one is calibrated again. No lock here: the work item does the rest.
 */
static int amd_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (strcmp(mod->name, "kvm_amd") && strcmp(mod->name, "kvm_intel"))
		return NOTIFY_OK;
	if (state == MODULE_STATE_GOING) {
		WRITE_ONCE(amd_gen, READ_ONCE(amd_gen) + 1);
		WRITE_ONCE(verified, false);
		/*
		 * No VM, so no exit, is left; no perf counter is made either
		 * (it would pin kvm on its way out): the next kvm_amd's load
		 * starts calibration.
		 */
		cmpxchg(&vmscope_exit_mode, VMSCOPE_EXIT_MODE_DIRECT,
			VMSCOPE_EXIT_MODE_RECAL);
	} else if (state == MODULE_STATE_LIVE) {
		WRITE_ONCE(amd_gen, READ_ONCE(amd_gen) + 1);
		WRITE_ONCE(verified, false);
		vmscope_exit_kick();
	}
	return NOTIFY_OK;
}

static struct notifier_block amd_nb = {
	.notifier_call = amd_notify,
};

int vmscope_exit_direct_init(void)
{
	return register_module_notifier(&amd_nb);
}

void vmscope_exit_direct_exit(void)
{
	unregister_module_notifier(&amd_nb);
}

/* kvm left: what was verified was for its kvm_amd. Under the control lock. */
void vmscope_exit_src_kvm_gone(void)
{
	WRITE_ONCE(verified, false);
	go_none();
}
