/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vmscope release and ABI versions, shared by the kernel modules and
 * userspace so that both sides report and check the same numbers.
 */
#ifndef VMSCOPE_VERSION_H
#define VMSCOPE_VERSION_H

#define VMSCOPE_VERSION_STRING "0.1.0"

/*
 * The ABI between the modules and userspace (ioctls, mmap layout, record
 * format). A major bump means old userspace cannot talk to the module; a
 * minor bump only adds.
 */
#define VMSCOPE_ABI_MAJOR 1	/* 1.0: sessions with channels (ioctl.h) */
/* minor 1: kvm_exit details from the VMCB (events.h); 2: cpu_task records
 * at a guest session's start (events.def); 3: kvm_vcpu_wakeup and
 * irq_vector_entry records (events.def)
 */
#define VMSCOPE_ABI_MINOR 3

#endif /* VMSCOPE_VERSION_H */
