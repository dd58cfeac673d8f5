/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sync pairing: the three records of one clock-sync exchange, written by
 * different parties into different streams, joined into the exchanges the
 * sync/ library takes (struct vmscope_sync_exchange), per VM.
 *
 *   host sync_t2  (kvm_hypercall: t2, and the guest's register claims
 *                  token, seq, t1, guest cpu; the thread and vCPU)
 *   host sync_t3  (next kvm_entry of that thread: t2 again, t3)
 *   guest record  (sync_guest in the VM's own stream: t1, t4, token, seq,
 *                  cpu)
 *
 * t2 and t3 are joined exactly on (thread, t2): the host module writes the
 * t2 it paired into the t3 record. The host exchange goes to the VM whose
 * vCPU thread it ran on (the session's vCPU→thread map; when a VM has no
 * map, to the one VM whose guest records carry its token). It is then
 * joined with the VM's guest record of the same (guest cpu, seq, token).
 *
 * Everything here may be hostile: the register claims come from any guest
 * process, the guest records from the guest's stream, and a damaged trace
 * file can hold anything. Nothing is trusted for indexing; duplicates,
 * orphans and inconsistent host pairs are counted and never crash or
 * grow memory beyond the caller's cap. Deciding which exchanges to
 * believe is the sync library's job (vmscope_sync_add); this only joins.
 *
 * Memory: the records are kept until mp_pair() (O(exchanges), about 140
 * bytes each, not O(events)); mp_pair() frees the host halves.
 */
#ifndef VMSCOPE_MERGE_PAIR_H
#define VMSCOPE_MERGE_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmscope_sync.h"

#define MP_NO_VM	UINT32_MAX
/* mp_exchange.outcome before the sync run resolved it */
#define MP_UNRESOLVED	INT64_MIN

struct mp_t2 {
	uint64_t t2, token, seq, t1, guest_cpu;
	int32_t tid;
	uint32_t vcpu;
};

struct mp_t3 {
	uint64_t t2, t3, token, seq;
	int32_t tid;
	uint32_t vcpu;
};

struct mp_guest {
	uint32_t vm;		/* from the stream's origin (the collector's) */
	uint32_t cpu;
	uint64_t t1, t4, token, seq;
};

/* A joined exchange; x.cookie is its index in mp_vm.x. */
struct mp_exchange {
	struct vmscope_sync_exchange x;
	uint32_t guest_cpu;	/* claim, the join key */
	int32_t tid;
	int64_t outcome;	/* sync: segment id, or -1 - drop reason;
				 * MP_UNRESOLVED before the run */
};

/* A guest record after pairing, for the merge's lookups. */
struct mp_grec {
	uint32_t cpu;
	uint64_t seq, token, t1, t4;
	/* the host exchange believed for it (accepted), else the first
	 * paired one; n_host 0: none */
	uint32_t n_host;
	uint64_t t2, t3;
	int64_t outcome;	/* of that exchange */
};

struct mp_thread {
	int32_t tid;
	uint32_t vm, vcpu;
};

struct mp_vm {
	struct mp_exchange *x;	/* sorted by t2 after mp_pair() */
	size_t nx;
	struct mp_grec *g;	/* sorted by (cpu, seq, token, t1) */
	size_t ng;
	bool has_threads;	/* the session maps its vCPU threads */
};

struct mp_stats {
	uint64_t t2, t3, guest;		/* records given */
	uint64_t refused;		/* over the cap */
	uint64_t host_pairs;		/* t2 joined with t3 */
	uint64_t t2_alone, t3_alone;	/* the other host half is missing */
	uint64_t host_dup;		/* same (thread, t2) twice */
	uint64_t host_inconsistent;	/* t3's token/seq differ from t2's */
	uint64_t by_thread, by_token;	/* how host exchanges found their VM */
	uint64_t no_vm;			/* no VM: unknown thread and token */
	uint64_t paired;		/* host exchanges with a guest record */
	uint64_t host_only;		/* host exchanges without one */
	uint64_t guest_only;		/* guest records without host exchange */
	uint64_t guest_dup;		/* same (vm, cpu, seq, token) twice */
};

struct mp {
	uint32_t n_vms;
	size_t cap;			/* records of each kind kept, at most */
	struct mp_t2 *t2;
	size_t n2, c2;
	struct mp_t3 *t3;
	size_t n3, c3;
	struct mp_guest *g;
	size_t ng, cg;
	struct mp_thread *th;
	size_t nth, cth;
	struct mp_vm *vm;		/* [n_vms] */
	struct mp_stats st;
};

/* cap: records of each kind accepted (0: 64 M). 0 or -ENOMEM. */
int mp_init(struct mp *p, uint32_t n_vms, size_t cap);
void mp_free(struct mp *p);

/* The session's vCPU threads (vm < n_vms). 0 or -ENOMEM / -EINVAL. */
int mp_add_thread(struct mp *p, int32_t tid, uint32_t vm, uint32_t vcpu);

/* Records, in any order. 0, -ENOMEM, or -ENOSPC past the cap (counted). */
int mp_add_t2(struct mp *p, const struct mp_t2 *r);
int mp_add_t3(struct mp *p, const struct mp_t3 *r);
int mp_add_guest(struct mp *p, const struct mp_guest *r);

/* Join everything given; fills p->vm[*].x (by t2) and .g. 0 or -ENOMEM. */
int mp_pair(struct mp *p);

/* After the sync run set x[].outcome: fill each guest record's believed
 * exchange (accepted if any). */
void mp_resolve(struct mp *p);

/* The guest record (vm, cpu, seq, token, t1), or NULL. */
const struct mp_grec *mp_lookup(const struct mp *p, uint32_t vm, uint32_t cpu,
				uint64_t seq, uint64_t token, uint64_t t1);

/* Sort the threads given so far (mp_pair() does it too), for
 * mp_thread_vm() during the scan. */
void mp_sort_threads(struct mp *p);

/* The VM of a host thread, or MP_NO_VM; *vcpu set when found. */
uint32_t mp_thread_vm(const struct mp *p, int32_t tid, uint32_t *vcpu);

#endif
