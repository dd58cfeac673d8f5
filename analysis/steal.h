/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `report sched`, per vCPU: the steal time the guest kernel believed next
 * to what the host saw over the same span.
 *
 * The guest's side: each clock-sync record of an ABI 0.4 guest module
 * carries the steal time its CPU's kernel had accounted so far (steal_ns,
 * kernel_cpustat's CPUTIME_STEAL: /proc/stat's steal). The guest's steal
 * over a span is the difference between two such readings, so the span is
 * from the vCPU's first sync record to its last one.
 *
 * The host's side, over exactly that span: the vCPU thread's preempted
 * time (sched.h: off its host CPU while runnable), read as a running total
 * at each sync record (the time of the preemption in progress, if any,
 * included), so that the difference between two readings is the host's
 * preempted time between them; its blocked time likewise.
 *
 * A loss (walk.h) ends the span: the host side forgets an open preemption
 * there, so the two sides would no longer cover the same time. A new span
 * starts at the next sync record; the report adds the spans up. So does a
 * guest reading lower than the one before (it never should: kept apart,
 * counted). With fewer than two readings in a span there is nothing to
 * compare: without any span the result is "not known" (n/a), never 0 —
 * also for traces from guest modules before ABI 0.4, which lack steal_ns.
 *
 * What differs by design (analysis/README.md): the guest accounts steal at
 * its ticks from KVM's steal clock, which is the vCPU thread's run-queue
 * wait (sched_info run_delay) — also the wait after a wakeup from a
 * block in the host, which the host side here counts as blocked, not
 * preempted. So, but for a tick of accounting lag, the guest's steal lies
 * between the host's preempted time and its preempted plus blocked time
 * over the span.
 */
#ifndef VMSCOPE_ANALYSIS_STEAL_H
#define VMSCOPE_ANALYSIS_STEAL_H

#include <stdbool.h>
#include <stdint.h>

/* One vCPU's readings (in struct an_sched_vcpu). */
struct an_steal_vcpu {
	uint64_t n;			/* readings */
	uint64_t spans, backwards;	/* spans started; guest readings that went back */
	bool open;			/* a span is open: first and last below */
	uint64_t first_ts, first_steal, first_host, first_blocked;
	uint64_t last_ts, last_steal, last_host, last_blocked;
	uint64_t guest_ns, host_ns, blocked_ns, span_ns;	/* of the spans closed */
};

struct an_steal {
	bool known;		/* some span had two readings */
	uint64_t guest_ns;	/* the guest's steal over the spans */
	uint64_t host_ns;	/* the host's preempted time over the same spans */
	uint64_t blocked_ns;	/* and its time blocked in the host */
	uint64_t span_ns;	/* their length */
	uint64_t n, spans, backwards;
};

struct an_sched_vcpu;

/* A guest sync record of this vCPU at @ts with the guest's steal time
 * @steal_ns; the host's total is read from @v (sched.h). */
void an_steal_sample(struct an_sched_vcpu *v, uint64_t ts, uint64_t steal_ns);

/* A loss: the open span ends at its last reading. */
void an_steal_break(struct an_sched_vcpu *v);

/* The vCPU's result, the open span included. */
void an_steal_result(const struct an_sched_vcpu *v, struct an_steal *r);

#endif
