/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `report wake`, halt polling: per vCPU, what its halts cost and how they
 * ended, from the host's kvm_vcpu_wakeup records (the walk's wakeup hook,
 * walk.h struct an_wakeup): KVM's halted time, the wake-ups that polling
 * caught against those after which the vCPU thread slept, the time spent
 * polling, and the time from the wake-up to the vCPU's next kvm_entry.
 *
 * Memory: one record per vCPU seen (at most AN_MAX_VCPUS per VM), each
 * with one histogram; nothing grows with the trace's length.
 */
#ifndef VMSCOPE_ANALYSIS_HALT_H
#define VMSCOPE_ANALYSIS_HALT_H

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"
#include "walk.h"

struct an_halt_vcpu {
	bool seen;
	uint64_t wakeups;
	uint64_t polled, slept;		/* waited 0 / 1 */
	uint64_t invalid;		/* valid 0 (s390 only) */
	uint64_t halted_ns;		/* sum of KVM's halt times */
	uint64_t poll_ns;		/* time polling, where known */
	uint64_t poll_unknown;		/* slept, no switch to sleep seen in the halt */
	struct an_hist entry;		/* wake-up .. next kvm_entry */
	uint64_t entry_unknown;		/* a loss or the end came first */
};

struct an_halt_vm {
	uint32_t n;			/* vCPU index bound */
	struct an_halt_vcpu *v;
};

struct an_halt {
	const struct an_walk *w;
	uint32_t n_vms;
	struct an_halt_vm *vm;
	bool oom;			/* some wake-ups not counted */
};

int an_halt_init(struct an_halt *a, const struct an_walk *w);
void an_halt_free(struct an_halt *a);
/* One wake-up (the walk's wakeup hook calls this; an_halt_hooks sets it). */
void an_halt_add(struct an_halt *a, const struct an_wakeup *k);
void an_halt_hooks(struct an_halt *a, struct an_hooks *h);
/* The wake-ups counted, over every vCPU. */
uint64_t an_halt_total(const struct an_halt *a);
/* vCPU @vcpu of @vm, or NULL when it had no wake-up. */
const struct an_halt_vcpu *an_halt_vcpu(const struct an_halt *a, uint32_t vm, uint32_t vcpu);

#endif
