// SPDX-License-Identifier: GPL-2.0
/*
 * The descriptor table (kvm-probes/events.def) built into vmscope_guest.ko,
 * from its own object (see ringbuf/kmod/ for why).
 */
#include "../kvm-probes/events_desc.c"
