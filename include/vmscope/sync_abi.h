/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The clock-sync hypercall convention between vmscope_guest.ko (which issues
 * it) and vmscope_host.ko (which sees it at KVM's kvm_hypercall tracepoint).
 *
 * KVM's own hypercall numbers (KVM_HC_*) are small integers; KVM answers any
 * number it does not define with -KVM_ENOSYS after firing kvm_hypercall, so
 * a 32-bit magic far above them costs one exit and changes nothing in the
 * guest. The number fits in 32 bits so that it survives KVM's truncation of
 * nr for 32-bit callers.
 *
 * Everything in these registers is guest-controlled: any guest process can
 * execute vmcall/vmmcall with the same number (KVM fires the tracepoint
 * before its CPL check). The host treats them as claims to be verified.
 */
#ifndef VMSCOPE_SYNC_ABI_H
#define VMSCOPE_SYNC_ABI_H

/* "VMSC" in ASCII. */
#define VMSCOPE_SYNC_HC_NR 0x564d5343UL

/*
 * Register use (kvm_hypercall4(nr, a0, a1, a2, a3)):
 *   a0 (rbx) session token
 *   a1 (rcx) sequence number
 *   a2 (rdx) t1, the guest trace clock just before the hypercall
 *   a3 (rsi) guest CPU number
 */

/* KVM's answer to a hypercall number it does not know (-KVM_ENOSYS). */
#define VMSCOPE_KVM_ENOSYS 1000

#endif /* VMSCOPE_SYNC_ABI_H */
