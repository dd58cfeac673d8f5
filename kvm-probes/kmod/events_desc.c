// SPDX-License-Identifier: GPL-2.0
/*
 * The descriptor table built into vmscope_host.ko; the same source builds
 * into userspace's kvm_events library (meson), each from its own object.
 */
#include "../events_desc.c"
