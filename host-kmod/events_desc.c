// SPDX-License-Identifier: GPL-2.0
/*
 * The descriptor table (kvm-probes/events.def) built into vmscope_host.ko,
 * from this module's own object (see session.c for why); the same source
 * builds into userspace's kvm_events library (meson).
 */
#include "../kvm-probes/events_desc.c"
