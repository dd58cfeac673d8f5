/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sync pairing, streaming: the three records of one clock-sync exchange,
 * written by different parties into different streams, joined into the
 * exchanges the sync/ library takes (struct vmscope_sync_exchange).
 *
 *   host sync_t2  (kvm_hypercall: t2, and the guest's register claims
 *                  token, seq, t1, guest cpu; the thread and vCPU)
 *   host sync_t3  (next kvm_entry of that thread: t2 again, t3)
 *   guest record  (sync_guest in the VM's stream of that CPU: t1, t4,
 *                  token, seq, cpu)
 *
 * The caller gives the host records in host-time order (a merge of the
 * host streams). A t2 waits in a per-thread slot until its thread's t3
 * (the host module writes the t2 it paired into the t3 record, so the
 * join is exact). The exchange then goes to the VM whose vCPU thread it
 * ran on (the session's vCPU→thread map; for VMs without a map, the one
 * whose guest records hold its (seq, token)), and is joined with the guest
 * record of the same (guest cpu, seq, token), which this pulls from the
 * caller's reader of that VM's CPU stream into a small window: both
 * sides come in seq order for honest records, so the record is at the
 * window's front or just behind it.
 *
 * Everything here may be hostile (the register claims come from any guest
 * process, the guest records from the guest's stream, a damaged file can
 * hold anything): nothing is trusted for indexing; orphans, duplicates,
 * inconsistent host pairs and full tables are counted. Memory is fixed:
 * MP_THREADS pending slots, one window of MP_WIN records per guest CPU
 * stream used, the vCPU thread map. Deciding which exchanges to believe is
 * the sync library's job; this only joins.
 */
#ifndef VMSCOPE_MERGE_PAIR_H
#define VMSCOPE_MERGE_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmscope_sync.h"

#define MP_NO_VM	UINT32_MAX
#define MP_THREADS	4096	/* host threads with a t2 in flight */
#define MP_PROBE	32	/* slots searched per thread */
#define MP_WIN		64	/* guest records held per guest CPU */
#define MP_MAX_CPUS	4096	/* guest CPUs per VM */

/* One side's TSC readings just before (a) and after (b) its clock read
 * of the exchange (t2 on the host, t1 in the guest), when its record
 * carries them: the TSC cross-check's input (tsc_check.c). */
struct mp_tsc {
	uint64_t a, b;
	bool valid;
};

/* The TSC offset KVM had programmed for the exchange's vCPU when its t2
 * came: the latest kvm_write_tsc_offset of that VM and vCPU before it,
 * or the recorder's reading at the start (VmInfo.tsc, ts 0), and the
 * host time of that write; the scaling ratio when the recorder read one
 * (frac_bits 0: none known, taken as no scaling). */
struct mp_tsc_off {
	uint64_t off, ts, ratio;
	uint32_t frac_bits;
	bool valid;
};

struct mp_t2 {
	uint64_t t2, token, seq, t1, guest_cpu;
	int32_t tid;
	uint32_t vcpu;
	struct mp_tsc tsc;
	struct mp_tsc_off off;
};

struct mp_t3 {
	uint64_t t2, t3, token, seq;
	int32_t tid;
	uint32_t vcpu;
};

struct mp_guest {
	uint32_t cpu;
	uint64_t t1, t4, token, seq;
	struct mp_tsc tsc;
};

/* A joined exchange. */
struct mp_exchange {
	struct vmscope_sync_exchange x;
	uint32_t guest_cpu;	/* the claim, the join key */
	int32_t tid;
	struct mp_tsc h_tsc, g_tsc;	/* host at t2, guest at t1 */
	struct mp_tsc_off off;
};

/* The next guest sync record of VM @vm's stream of CPU @cpu: 1, or 0 when
 * there is none (left, or no such stream). */
typedef int (*mp_pull_fn)(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out);
/* A host exchange attributed to VM @vm, joined or not (x->x.guest_valid),
 * in the order of the t3 records. */
typedef void (*mp_emit_fn)(void *user, uint32_t vm, const struct mp_exchange *x);

struct mp_stats {
	uint64_t t2, t3;		/* host records given */
	uint64_t host_pairs;		/* t2 joined with t3 */
	uint64_t t2_alone, t3_alone;	/* the other host half is missing */
	uint64_t host_inconsistent;	/* t3's token/seq differ from t2's */
	uint64_t threads_full;		/* no pending slot for a thread */
	uint64_t by_thread, by_token;	/* how host exchanges found their VM */
	uint64_t no_vm;			/* no VM: unknown thread and key */
	uint64_t paired;		/* host exchanges with a guest record */
	uint64_t host_only;		/* host exchanges without one */
	uint64_t guest;			/* guest records read */
	uint64_t guest_only;		/* guest records no exchange matched */
	uint64_t guest_dup;		/* same (cpu, seq, token) in a window */
	uint64_t guest_wrong_cpu;	/* a record claiming another CPU */
};

struct mp_thread {
	int32_t tid;
	uint32_t vm, vcpu;
};

struct mp_slot {
	bool used;
	struct mp_t2 r;
};

struct mp_wrec {
	struct mp_guest g;
	uint32_t n_host;	/* exchanges joined with it */
};

struct mp_win {
	struct mp_wrec r[MP_WIN];	/* ring, oldest at head */
	unsigned int head, n;
	bool ended;
};

struct mp_vm {
	bool has_threads;	/* the session maps its vCPU threads */
	struct mp_win **win;	/* [MP_MAX_CPUS], allocated when used */
};

struct mp {
	uint32_t n_vms;
	void *user;
	mp_pull_fn pull;
	mp_emit_fn emit;
	struct mp_thread *th;
	size_t nth, cth;
	struct mp_slot slot[MP_THREADS];
	struct mp_vm *vm;		/* [n_vms] */
	struct mp_stats st;
	int err;			/* -ENOMEM seen */
	/* the pull's 0 means "not there yet" (a live source), not the
	 * stream's end: the window is not closed for later exchanges */
	bool live;
};

/* 0 or -ENOMEM. @p is large (the slots): allocate it. */
int mp_init(struct mp *p, uint32_t n_vms, mp_pull_fn pull, mp_emit_fn emit, void *user);
void mp_free(struct mp *p);

/* The session's vCPU threads (vm < n_vms), all before the first record;
 * then mp_sort_threads(). 0, -ENOMEM or -EINVAL. */
int mp_add_thread(struct mp *p, int32_t tid, uint32_t vm, uint32_t vcpu);
void mp_sort_threads(struct mp *p);
/* The VM of a host thread, or MP_NO_VM; *vcpu set when found. */
uint32_t mp_thread_vm(const struct mp *p, int32_t tid, uint32_t *vcpu);

/* Host records, in host-time order. */
void mp_t2(struct mp *p, const struct mp_t2 *r);
void mp_t3(struct mp *p, const struct mp_t3 *r);

/* End of the host records: t2 still waiting are alone; guest records
 * read but never matched are counted. */
void mp_finish(struct mp *p);

#endif
