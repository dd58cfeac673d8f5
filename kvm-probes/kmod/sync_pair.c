// SPDX-License-Identifier: GPL-2.0
/*
 * Clock-sync pairing: t2 at the kvm_hypercall carrying VMSCOPE_SYNC_HC_NR,
 * t3 at the next kvm_entry of the same thread (docs/design.md, "Clock
 * alignment").
 *
 * The state between the two lives in a fixed table of slots hashed by
 * thread id, allocated with the module: probe context never allocates. A
 * slot is claimed with cmpxchg at t2 and released at t3 by the same thread,
 * so no slot is written by two CPUs at once; a thread that finds its slot
 * held by another thread drops that exchange and counts it (a collision of
 * two exchanges in flight within microseconds of each other).
 *
 * The hypercall's arguments are guest-controlled: recorded as claims,
 * never used to index anything.
 */
#include <linux/atomic.h>
#include <linux/hash.h>
#include "core.h"

#define SYNC_SLOT_BITS 8

struct vmscope_sync_slot {
	atomic_t owner;		/* thread id, 0 when free */
	u32 vcpu_id;
	u64 t2;
	u64 token;
	u64 seq;
};

static struct vmscope_sync_slot sync_slots[1 << SYNC_SLOT_BITS];
/* Slots in use: lets every kvm_entry skip the lookup when there are none. */
static atomic_t sync_pending = ATOMIC_INIT(0);
static atomic64_t sync_collisions = ATOMIC64_INIT(0);

static struct vmscope_sync_slot *sync_slot(pid_t tid)
{
	return &sync_slots[hash_32((u32)tid, SYNC_SLOT_BITS)];
}

void vmscope_sync_t2(struct vmscope_slots to, u64 t2, u64 tsc_a, u64 tsc_b,
		     u64 token, u64 seq, u64 t1, u64 guest_cpu, u32 vcpu_id)
{
	struct vmscope_sync_slot *s = sync_slot(current->pid);
	struct vmscope_ev_sync_t2 e;
	int old = atomic_cmpxchg(&s->owner, 0, current->pid);

	if (old && old != current->pid) {
		atomic64_inc(&sync_collisions);
		return;
	}
	/* A repeat before any entry (old == us) replaces the earlier claim. */
	s->t2 = t2;
	s->token = token;
	s->seq = seq;
	s->vcpu_id = vcpu_id;
	if (!old)
		atomic_inc(&sync_pending);

	memset(&e, 0, sizeof(e));
	e.t2 = t2;
	e.token = token;
	e.seq = seq;
	e.t1 = t1;
	e.guest_cpu = guest_cpu;
	e.tsc_a = tsc_a;
	e.tsc_b = tsc_b;
	e.tid = current->pid;
	e.vcpu_id = vcpu_id;
	VMSCOPE_EMIT_AT(to, sync_t2, e, t2);
}

void vmscope_sync_maybe_t3(u32 vcpu_id)
{
	struct vmscope_sync_slot *s;
	struct vmscope_ev_sync_t3 e;
	struct vmscope_slots to;
	u64 t3;

	if (likely(!atomic_read(&sync_pending)))
		return;
	s = sync_slot(current->pid);
	if (atomic_read(&s->owner) != current->pid)
		return;
	t3 = trace_clock_local();
	memset(&e, 0, sizeof(e));
	e.t2 = s->t2;
	e.t3 = t3;
	e.token = s->token;
	e.seq = s->seq;
	e.tid = current->pid;
	e.vcpu_id = vcpu_id;
	/* Release after reading: another thread may claim it right away. */
	atomic_set_release(&s->owner, 0);
	atomic_dec(&sync_pending);
	to = vmscope_probe_begin(VMSCOPE_EV_sync_t3, current->tgid);
	if (vmscope_slots_any(to))
		VMSCOPE_EMIT_AT(to, sync_t3, e, t3);
}

/* Only with probing stopped and probes quiesced (attach.c). */
void vmscope_sync_reset(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sync_slots); i++)
		atomic_set(&sync_slots[i].owner, 0);
	atomic_set(&sync_pending, 0);
	atomic64_set(&sync_collisions, 0);
}

u64 vmscope_sync_collisions(void)
{
	return atomic64_read(&sync_collisions);
}
