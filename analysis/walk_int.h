// SPDX-License-Identifier: GPL-2.0
/*
 * The walk's own state, shared by walk_open.c (opening a merged trace:
 * roles, session) and walk.c (the pass, the tables, the results).
 */
#ifndef VMSCOPE_ANALYSIS_WALK_INT_H
#define VMSCOPE_ANALYSIS_WALK_INT_H

#include "online.h"
#include "out.h"
#include "roles.h"
#include "walk.h"

struct gsym;
/* walk_syms.c: each VM's symbol table from the session (0, -ENOMEM,
 * -EINVAL with @err), and the symbol of an exit's RIP (AN_SYM_*). */
int an_walk_syms_load(struct an_walk *w, const Vmscope__Trace__SessionMetadata *s, char *err,
		      size_t errlen);
int32_t an_walk_sym_of(const struct an_walk *w, uint32_t vm, uint64_t rip);

enum role {
	R_NONE = 0,
	R_EXIT,		/* host kvm_exit */
	R_ENTRY,	/* host kvm_entry */
	R_USER,		/* host kvm_userspace_exit */
	R_HSWITCH,	/* host sched_switch */
	R_GSWITCH,	/* vmN:sched_switch */
	R_GWAKE,	/* vmN:sched_wakeup, vmN:sched_waking */
	R_GSYNC,	/* vmN:sync_guest */
	R_GTASK,	/* vmN:cpu_task: a CPU's task when the guest session began */
	R_PIO,		/* host kvm_pio, kvm_mmio, kvm_msr: an exit's detail */
	R_MMIO,
	R_MSR,
	R_WAKE,		/* host kvm_vcpu_wakeup: a halt's end */
	R_INJ,		/* host kvm_inj_virq: an interrupt injected */
	R_GVEC,		/* vmN:irq_vector_entry: a guest vector's handler */
	R_NPF,		/* host kvm_page_fault: a nested page fault's address */
};

/* The fields of the detail records (walk_detail.c). */
enum { D_PIO_WRITE, D_PIO_PORT, D_PIO_SIZE, D_PIO_N };
enum { D_MMIO_GPA, D_MMIO_TYPE, D_MMIO_LEN, D_MMIO_N };
enum { D_MSR_ECX, D_MSR_WRITE, D_MSR_N };
enum { D_NPF_ADDR, D_NPF_ERR, D_NPF_N };

enum { X_VCPU, X_REASON, X_RIP, X_ISA, X_VALID, X_N };
enum { K_NS, K_WAITED, K_VALID, K_N };	/* kvm_vcpu_wakeup */
enum { J_VECTOR, J_SOFT, J_REINJ, J_N };	/* kvm_inj_virq */
enum { S_PREV, S_STATE, S_NEXT, S_N };

struct switch_fields {
	struct mg_field f[S_N], prev_comm, next_comm, preempt;
	bool has_comm, has_preempt;
};

struct role_of {
	uint8_t role;
	uint32_t vm;
	const struct switch_fields *sw;	/* R_HSWITCH, R_GSWITCH */
	struct mg_field wake_pid, wake_cpu;	/* R_GWAKE */
	bool has_wake_cpu;
	struct mg_field steal;			/* R_GSYNC */
	bool has_steal;
	struct mg_field task_pid, task_comm;	/* R_GTASK */
	struct mg_field vector;			/* R_GVEC */
	bool has_task_comm;
};

enum vstate { V_UNKNOWN, V_GUEST, V_EXIT, V_USER };

struct vcpu {
	enum vstate st;
	uint64_t since, exit_ts, user_ts, rip;
	uint32_t reason;
	int32_t task, exit_task, exit_tid;
	struct an_detail detail, fault;	/* of the exit in progress */
	struct an_vcpu_time t;
	/* the last host switch that took its thread off its CPU asleep
	 * (0: none since the last loss), and its wake-up waiting for the
	 * next kvm_entry (when wake_on) */
	uint64_t block_ts;
	struct an_wakeup wake;
	bool wake_on;
	/* into its VM's clock-unreliable spans: exits, guest records */
	size_t span_x, span_g;
	bool span_init;
};

struct vm {
	char name[64];
	uint32_t n, cap;	/* vCPUs seen (index bound), allocated */
	struct vcpu *v;
	struct switch_fields sw;
	bool has_cpu_task;	/* its guest module records cpu_task */
	bool has_vector;	/* ... irq_vector_entry (ABI 1.3) */
	bool guest;		/* its vmN:sched_switch is in the table */
	struct gsym *sym;	/* its guest kernel's symbols, or NULL */
	uint64_t sym_dropped;	/* what the agent said of them */
	const char *sym_note;	/* (into the session) */
};

struct thread {			/* the session's vCPU thread map */
	int32_t tid;
	uint32_t vm, vcpu;
};

struct host_cpu {
	uint32_t vm, vcpu;	/* of the last kvm_exit here */
	bool valid;
};

struct reason {
	uint32_t isa, code;
	bool valid;
	char name[40];
};

#define TASK_HASH	(2 * AN_MAX_TASKS)

/* An event table and its events' roles: a merged trace has one (the
 * union), and so has a raw one read through the two passes (its records
 * as the merged trace gives them back); a raw trace merged online the
 * host's and one per VM (tab[1 + v], ev NULL when the VM has no guest
 * side). */
struct role_tab {
	const struct vr_events *ev;
	struct role_of *roles;	/* [ev->n] */
};

struct an_walk {
	struct mr *mr;			/* a merged trace, or */
	struct vr_trace *raw;		/* a raw one through */
	struct om *om;			/* the online merge, or */
	struct om_rec rec;		/* its current record */
	struct mg_result *mg;		/* `vmscope merge`'s two passes: pass 1's */
	struct mg_p2 *p2;		/* result, pass 2's records */
	struct mg_clock_vms cv;		/* the spans pass 1 found, */
	Vmscope__Trace__SessionMetadata sess2;	/* in the session as merged */
	struct mo_union uni;		/* and pass 2's records decoded with */
	struct vr_events *uev;		/* the merged trace's table (mg_p2_as_merged) */
	bool sides;			/* a table per side (tab[1 + v]), not one */
	bool fed;			/* an_walk_open_fed: guest tables may come later */
	char path[512];
	unsigned int flags;		/* mr_open's */
	char damage[1024];		/* an_walk_damage() */
	char note[256];			/* an_walk_note() */
	const struct vr_events *ev;	/* the merged table, or the host's */
	const Vmscope__Trace__ClockDesc *clock;
	struct role_tab *tab;		/* [ntab]: tab[0] is ev's */
	uint32_t ntab;
	struct mg_field fx[X_N], entry_vcpu;
	struct mg_field fpio[D_PIO_N], fmmio[D_MMIO_N], fmsr[D_MSR_N], fnpf[D_NPF_N];
	struct mg_field fwake[K_N];
	struct mg_field finj[J_N];
	struct switch_fields host_sw;
	uint32_t n_vms;
	struct vm *vm;
	struct thread *th;
	size_t nth;
	struct host_cpu *hc;
	uint32_t nhc;
	struct reason reason[AN_MAX_REASONS + 1];	/* + "other" */
	uint32_t nreason;
	struct an_task *task;		/* [AN_MAX_TASKS] */
	uint32_t ntask;
	int32_t task_hash[TASK_HASH];	/* index + 1, 0: empty */
	struct an_counts n;
	uint64_t first_ts, last_ts;
	bool any, stop;
	bool has_wakeup;		/* the table has kvm_vcpu_wakeup (ABI 1.3) */
	bool has_inj;			/* ... kvm_inj_virq */
	const Vmscope__Trace__SessionMetadata *sess;
};

/* struct thread by tid: the order of the vCPU thread map (qsort, bsearch). */
int an_walk_cmp_thread(const void *a, const void *b);

/* A detail record (@role R_PIO, R_MMIO, R_MSR, payload @p) of vCPU @v:
 * the detail of its exit in progress, when it has none yet; R_NPF its
 * fault, when the exit is a nested page fault. */
void an_walk_detail(struct an_walk *w, uint8_t role, const uint8_t *p, struct vcpu *v);

/* walk.c, for walk_run.c: one record as the pass takes it (the walk's,
 * then the record hook); at the end, the exits still open counted */
void an_walk_one(struct an_walk *w, const struct an_hooks *h, const struct vr_item *it,
		 const struct mo_origin *o, bool has_o);
void an_walk_count_open(struct an_walk *w, const struct an_hooks *h);

#endif
