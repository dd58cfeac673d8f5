/* SPDX-License-Identifier: GPL-2.0 */
#ifndef VMSCOPE_GUEST_SYNC_EMITTER_H
#define VMSCOPE_GUEST_SYNC_EMITTER_H

#include <linux/types.h>

/* Both only when running on KVM; init may fail (cpuhp state exhausted). */
int vmscope_sync_emitter_init(bool on_kvm);
void vmscope_sync_emitter_exit(void);

/* The VMSCOPE_IOC_SYNC_EMITTER_* ioctls; -ENOTTY for any other cmd. */
long vmscope_sync_emitter_ioctl(unsigned int cmd, void __user *arg);

#endif
