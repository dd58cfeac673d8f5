/*
 * kvm-hold: create one empty KVM VM and keep it until killed.
 *
 * Why (tests/vm/README.md, "Known TCG defect"): creating the first VM on a
 * host enables the kernel's preempt_notifier_key, and destroying the last
 * one disables it; each change live-patches a jump label in
 * finish_task_switch(), run by every context switch. Under QEMU's
 * multi-threaded TCG, a test-host vCPU intermittently keeps executing a
 * stale translation of that site (an int3 that memory no longer holds) and
 * loops in the int3 handler forever: RCU stalls, soft lockups, a hung test.
 * Holding one VM for the test host's whole life patches that site once, at
 * a quiet moment, instead of at every guest start and stop.
 *
 * Prints "ready" on stdout once the VM exists; exits 1 with a message if
 * it cannot be created.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(void)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	int vm;

	if (kvm < 0) {
		fprintf(stderr, "kvm-hold: /dev/kvm: %s\n", strerror(errno));
		return 1;
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fprintf(stderr, "kvm-hold: KVM_CREATE_VM: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
