// SPDX-License-Identifier: GPL-2.0
/*
 * The descriptor table (kvm-probes/events.def) built into vmscope_guest.ko,
 * from its own object (see session.c for why).
 */
#include "../kvm-probes/events_desc.c"
