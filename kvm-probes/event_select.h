/* Userspace: turn a user's event list into the module's selection mask. */
#ifndef VMSCOPE_KVM_PROBES_EVENT_SELECT_H
#define VMSCOPE_KVM_PROBES_EVENT_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include <vmscope/events.h>

/*
 * Parses @list, comma-separated items each of which is an event name
 * ("kvm_exit"), a system name selecting all its events ("kvm", "sched",
 * "vmscope") or "all", against the @n descriptors @descs (the module's, so
 * the names are those it really has). Sets bit (1 << id) in *@mask for each
 * selected event. Empty items, unknown names and an empty selection are
 * errors: a typo must never silently record nothing. Returns 0, or -1 with
 * a reason in @why.
 */
int vmscope_events_select(const char *list, const struct vmscope_event_desc *descs,
			  unsigned int n, uint64_t *mask, char *why, size_t whylen);

#endif
