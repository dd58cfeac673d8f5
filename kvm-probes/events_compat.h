/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace: the event table as an older ABI had it. Traces store their
 * descriptors and readers find fields by name, so a trace recorded with an
 * older module must read as before; tests and synthetic traces (gen-trace
 * --abi03, the merge and analysis tests) write such traces with these
 * descriptors. An older table is the current one without the fields added
 * since, later fields moved down, and the format it had.
 */
#ifndef VMSCOPE_KVM_PROBES_EVENTS_COMPAT_H
#define VMSCOPE_KVM_PROBES_EVENTS_COMPAT_H

#include <vmscope/events.h>

#include "vmscope_events.h"

/*
 * @out (VMSCOPE_NR_EVENTS entries): the compiled-in table as ABI 0.3 had
 * it (sync_guest without steal_ns, 64 bytes; no cpu_task, which 1.2
 * added), entries past it zeroed. The number of events 0.3 had, or -1
 * when the table no longer has what was added since (the lists in
 * events_compat.c are stale).
 */
int vmscope_events_abi03(struct vmscope_event_desc *out);

#endif
