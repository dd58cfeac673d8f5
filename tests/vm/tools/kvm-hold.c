/*
 * kvm-hold: create one KVM VM with an in-kernel irqchip and one vCPU that
 * never runs, and keep them until killed.
 *
 * Why (tests/vm/README.md, "Known TCG defect"): KVM flips static keys when
 * VMs and vCPUs come and go, and each flip live-patches jump labels in hot
 * code. Under QEMU's multi-threaded TCG a test-host vCPU intermittently
 * keeps executing a stale translation of a patched site (an int3 that
 * memory no longer holds) and loops in the int3 handler forever. Seen at:
 * - preempt_notifier_key (finish_task_switch): on while any VM exists;
 * - apic_sw_disabled (__apic_accept_irq and the APIC paths): on while any
 *   vCPU's local APIC is software-disabled, as at every vCPU's reset until
 *   its guest enables the APIC, so every guest boot flips it;
 * - apic_hw_disabled: likewise for a hardware-disabled APIC.
 * Holding a VM, and a vCPU whose APIC is both software-disabled (its reset
 * state, never changed since it never runs) and hardware-disabled (set
 * below), keeps all three keys on for the test host's life: they are
 * patched once, at a quiet moment, and guests' starts, boots and stops
 * only move their counts.
 *
 * The same defect strikes the tracepoints vmscope probes: attaching the
 * first or second probe to a tracepoint, and detaching down to one or
 * none, rewrites its static call (and the first flips its static key) in
 * the traced code, e.g. in __schedule (seen at rmmod of vmscope_host).
 * With two other probes attached for the test host's life, vmscope's
 * probes come and go as the third and only swap the probe array: no code
 * is patched. Each TRACEPOINT argument ("system:name") gets one of them
 * here, perf's (a counting perf event, opened disabled: its probe runs and
 * finds no active event); vmlib.sh's host_prepare_kvm adds the other,
 * ftrace's, by enabling the event in a tracefs instance that records
 * nothing.
 *
 * usage: kvm-hold [TRACEPOINT...]
 * Prints "ready" on stdout once all of it exists; exits 1 with a message
 * if a step fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MSR_IA32_APICBASE	0x1b
#define APIC_BASE_DISABLED	0xfee00100ULL	/* default base, BSP, not enabled */

static int step(int ret, const char *what)
{
	if (ret < 0) {
		fprintf(stderr, "kvm-hold: %s: %s\n", what, strerror(errno));
		exit(1);
	}
	return ret;
}

/* hold_tracepoint "system:name": attach perf's probe to it, keep the fd */
static void hold_tracepoint(const char *tp)
{
	struct perf_event_attr attr;
	char path[256];
	const char *colon = strchr(tp, ':');
	long long id;
	FILE *f;

	if (!colon || snprintf(path, sizeof(path), "/sys/kernel/tracing/events/%.*s/%s/id",
			       (int)(colon - tp), tp, colon + 1) >= (int)sizeof(path)) {
		fprintf(stderr, "kvm-hold: not a tracepoint (system:name): %s\n", tp);
		exit(1);
	}
	f = fopen(path, "r");
	if (!f || fscanf(f, "%lld", &id) != 1) {
		fprintf(stderr, "kvm-hold: %s: cannot read its id\n", path);
		exit(1);
	}
	fclose(f);
	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.size = sizeof(attr);
	attr.config = (unsigned long long)id;
	attr.disabled = 1;
	/* pid -1, cpu 0: system-wide on CPU 0; the probe is per tracepoint */
	step((int)syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC),
	     tp);
}

int main(int argc, char **argv)
{
	struct kvm_msrs *msrs;
	int kvm, vm, vcpu;

	kvm = step(open("/dev/kvm", O_RDWR | O_CLOEXEC), "/dev/kvm");
	vm = step(ioctl(kvm, KVM_CREATE_VM, 0), "KVM_CREATE_VM");
	step(ioctl(vm, KVM_CREATE_IRQCHIP, 0), "KVM_CREATE_IRQCHIP");
	vcpu = step(ioctl(vm, KVM_CREATE_VCPU, 0), "KVM_CREATE_VCPU");
	/* struct kvm_msrs ends in a flexible array: one entry after it */
	msrs = calloc(1, sizeof(*msrs) + sizeof(msrs->entries[0]));
	if (!msrs) {
		fprintf(stderr, "kvm-hold: out of memory\n");
		return 1;
	}
	msrs->nmsrs = 1;
	msrs->entries[0].index = MSR_IA32_APICBASE;
	msrs->entries[0].data = APIC_BASE_DISABLED;
	if (step(ioctl(vcpu, KVM_SET_MSRS, msrs), "KVM_SET_MSRS(APIC_BASE)") != 1) {
		fprintf(stderr, "kvm-hold: KVM refused to disable the APIC\n");
		return 1;
	}
	for (int i = 1; i < argc; i++)
		hold_tracepoint(argv[i]);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
