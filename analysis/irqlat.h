/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `report wake`, interrupt delivery: per VM and x86 vector, the time from
 * KVM's injection of an interrupt into a vCPU (host kvm_inj_virq) to the
 * guest entering that vector's handler on that vCPU (the guest's
 * irq_vector_entry: the x86 irq_vectors tracepoints, which fire for the
 * local APIC timer, the IPIs, irq_work and the APIC's error and spurious
 * vectors; device vectors have none, their guest handlers name a Linux
 * IRQ, not the vector).
 *
 * Matching: a vCPU has at most one injection waiting for its handler. A
 * Linux guest runs a vector's handler from the IDT with interrupts off
 * up to and past the tracepoint, and KVM injects only into a vCPU whose
 * interrupts are on, so the next injection into a vCPU comes after the
 * handler of the one before it has started. An injection is matched by
 * the first irq_vector_entry of its vector on its vCPU after it; it stays
 * unmatched, each counted by why, when: the vCPU's next injection comes
 * first (its handler's record is missing, or lies on the other side of
 * that injection in the merged timeline: the clock alignment's error),
 * told apart when that happens before the vCPU's first guest vector
 * record or after its last (the guest was not recording yet, or no
 * longer: an agent starts after the host's recording and stops before);
 * a loss or the trace's end comes first; its vector has no guest
 * tracepoint (AN_IRQ_TRACED), or the VM no guest records of vectors; it
 * is a soft interrupt (the guest's own INT n). A kvm_inj_virq with
 * `reinjected` of the vector waiting is that injection delivered again
 * (counted, not matched again): every record is matched, unmatched or a
 * reinjection. Guest handler entries without an injection waiting are
 * counted too (a loss, the clock's error, delivery KVM did not trace).
 *
 * Memory: a row per (VM, vector) seen, each with one histogram; a slot
 * per vCPU.
 */
#ifndef VMSCOPE_ANALYSIS_IRQLAT_H
#define VMSCOPE_ANALYSIS_IRQLAT_H

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"
#include "walk.h"

#define AN_IRQ_VECTORS	256		/* a vector above 255: row 256 */

/* Whether a Linux x86 guest records the handler entry of @vector. */
bool an_irq_traced(uint32_t vector);
/* Linux's name of a system vector ("LOCAL_TIMER"), or NULL. */
const char *an_irq_vector_name(uint32_t vector);

enum an_irq_miss {
	AN_IRQ_NEXT,		/* the vCPU's next injection came first */
	AN_IRQ_BEFORE,		/* ... before the vCPU's first guest vector record */
	AN_IRQ_AFTER,		/* ... after its last one */
	AN_IRQ_LOSS,		/* a loss came first */
	AN_IRQ_END,		/* the trace ended first */
	AN_IRQ_UNTRACED,	/* no guest tracepoint for its vector */
	AN_IRQ_NO_GUEST,	/* the VM has no guest vector records */
	AN_IRQ_SOFT,		/* a soft interrupt */
	AN_IRQ_MISS_N
};
extern const char *const an_irq_miss_names[AN_IRQ_MISS_N];

struct an_irq_row {
	bool seen;
	uint64_t injections;		/* kvm_inj_virq records */
	uint64_t matched;
	uint64_t unmatched[AN_IRQ_MISS_N];
	uint64_t reinjections;		/* of an injection waiting */
	uint64_t guest_unmatched;	/* handler entries without one */
	struct an_hist lat;		/* injection .. handler entry */
	/* the slowest matched one */
	uint32_t worst_vcpu;
	uint64_t worst_ts;		/* its injection, host time */
	int32_t worst_task;		/* the guest task then (walk task) */
};

struct an_irq_wait {
	bool on;
	uint32_t vector;
	uint64_t ts;
	bool guest_seen;	/* a guest vector record of this vCPU came */
	/* injections missed (AN_IRQ_NEXT) since its last guest vector record,
	 * by row: AN_IRQ_NEXT once another guest record comes, AN_IRQ_AFTER
	 * at the end (the guest stopped recording); NULL: none */
	uint64_t *tail;
};

struct an_irq_vm {
	struct an_irq_row *row;		/* [AN_IRQ_VECTORS + 1], or NULL */
	uint32_t n;			/* vCPU slots */
	struct an_irq_wait *wait;
};

struct an_irq {
	const struct an_walk *w;
	uint32_t n_vms;
	struct an_irq_vm *vm;
	bool oom;
};

int an_irq_init(struct an_irq *a, const struct an_walk *w);
void an_irq_free(struct an_irq *a);
void an_irq_inject(struct an_irq *a, const struct an_inject *j);
void an_irq_guest(struct an_irq *a, uint32_t vm, uint32_t cpu, uint64_t ts, uint32_t vector);
void an_irq_loss(struct an_irq *a);
void an_irq_end(struct an_irq *a);
/* The row of (@vm, @vector), or NULL when nothing was seen of it. */
const struct an_irq_row *an_irq_row(const struct an_irq *a, uint32_t vm, uint32_t vector);
uint64_t an_irq_unmatched(const struct an_irq_row *r);
/* The hooks of a walk that only matches interrupts (tests). */
void an_irq_hooks(struct an_irq *a, struct an_hooks *h);

#endif
