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

/*
 * KVM's TSC relation of each vCPU (guest TSC = (host TSC * ratio >>
 * frac_bits) + offset), from KVM's debugfs: VM_KVM_DEBUGFS/<pid>-<fd>/
 * vcpu<id>/tsc-offset, tsc-scaling-ratio and tsc-scaling-ratio-frac-bits
 * (the last two only where the CPU can scale: frac_bits 0 then). The
 * merge's TSC cross-check needs the offset of every vCPU it checks; KVM
 * writes it when it creates the vCPU, long before a recording starts, so
 * the trace's kvm_write_tsc_offset records alone would leave it unknown
 * on a host with a stable TSC.
 */
#define VM_KVM_DEBUGFS "/sys/kernel/debug/kvm"

struct vm_tsc {
	uint32_t vcpu_id;
	uint32_t frac_bits;
	uint64_t offset;	/* the kernel's s64, two's complement */
	uint64_t ratio;
};

struct vm_tscs {
	unsigned int n;
	struct vm_tsc v[VM_MAX_VCPUS];
};

/* Read the vCPUs of QEMU process @pid under @root (VM_KVM_DEBUGFS).
 * The number read, or -ENOENT (no such directory: debugfs not mounted,
 * or the process has no VM), -EEXIST (several VMs in the process: which
 * one is traced is unknown), other -errno. Unreadable or malformed files
 * leave that vCPU out. */
int vm_tsc_read(struct vm_tscs *out, pid_t pid, const char *root);

/*
 * The processes under @proc (a /proc) that hold a KVM VM: a file
 * descriptor of KVM_CREATE_VM's, which /proc/PID/fd shows as a link to
 * "anon_inode:kvm-vm" (QEMU's, and any other KVM user's). Their pids into
 * @pids in ascending order, at most @max of them. The number found (more
 * than @max: only @max stored), or -errno when @proc cannot be read. A
 * process whose fd folder cannot be read (gone meanwhile, or another
 * user's without root) is left out.
 */
#define VM_KVM_FD_LINK "anon_inode:kvm-vm"
int vm_find_kvm(const char *proc, pid_t *pids, unsigned int max);

/* Fill @vm from /proc/@pid. 0, or -errno (-ESRCH: no such process). */
int vm_from_pid(struct vm_desc *vm, pid_t pid);

/* The vsock CID on @pid's command line (what vm_from_pid finds): 0 when
 * none, or when it cannot be read. */
uint32_t vm_cid_of(pid_t pid);

/*
 * Add the "CPU n/KVM" threads of @vm->pid whose vCPU id @vm does not
 * have yet: a vCPU hot-plugged, or named, after vm_from_pid() read the
 * process (the recorder looks again every second). A known vCPU id keeps
 * its first thread. The number added, or -errno (-ESRCH: process gone).
 */
int vm_add_vcpus(struct vm_desc *vm);

/* Parse a QEMU command line (NUL-separated, @len bytes) for -name and
 * guest-cid=; exposed for the unit test. */
void vm_parse_cmdline(struct vm_desc *vm, const char *buf, size_t len);

#endif
