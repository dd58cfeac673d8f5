/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the collector knows about a traced VM without libvirt: from
 * /proc/PID of its QEMU process, its name (-name), vsock CID
 * (guest-cid= of a vhost-vsock device) and vCPU threads (QEMU names
 * them "CPU n/KVM" with -name ...,debug-threads=on, which libvirt sets).
 */
#ifndef VMSCOPE_COLLECTOR_VMS_H
#define VMSCOPE_COLLECTOR_VMS_H

#include <stdint.h>
#include <sys/types.h>

#define VM_MAX_VCPUS 512

struct vm_desc {
	pid_t pid;
	char name[64];
	uint32_t cid;			/* 0: none found */
	unsigned int nvcpus;
	uint32_t vcpu[VM_MAX_VCPUS];
	int32_t tid[VM_MAX_VCPUS];
};

/* Fill @vm from /proc/@pid. 0, or -errno (-ESRCH: no such process). */
int vm_from_pid(struct vm_desc *vm, pid_t pid);

/* Parse a QEMU command line (NUL-separated, @len bytes) for -name and
 * guest-cid=; exposed for the unit test. */
void vm_parse_cmdline(struct vm_desc *vm, const char *buf, size_t len);

#endif
