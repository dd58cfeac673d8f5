/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A synthetic trace written through tracefmt the way the collector writes
 * one: host streams per host CPU (kvm_exit/kvm_entry fillers, the host
 * module's sync_t2/sync_t3 records, a kvm_write_tsc_offset at a guest
 * clock step) and guest streams per VM and CPU (sched_switch and tick
 * fillers, sync_guest records), from simulated clocks: host h = H0 + tau,
 * guest g = G + a*tau (+ a step), asymmetric exponential delays. Forged
 * exchanges of four kinds are mixed in. Every stream is generated on its
 * own in time order from deterministic per-exchange randomness, so the
 * generator needs O(1) memory at any size (the benchmark writes 10 M
 * events with it).
 */
#ifndef VMSCOPE_MERGE_SYNTH_H
#define VMSCOPE_MERGE_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#include "common.pb-c.h"
#include "tracefmt.h"

enum synth_forge {
	SF_NONE = 0,
	SF_TOKEN,	/* an unprivileged process: wrong token, no guest record */
	SF_MISMATCH,	/* the next seq of a vCPU with a t1 claim that differs */
	SF_REPLAY,	/* an earlier exchange's registers again */
	SF_WILD,	/* valid everything, guest times 10 ms off (lying guest
			 * kernel): an outlier */
	SF_NKINDS
};

struct synth {
	uint64_t seed;
	unsigned int n_vms, vcpus, host_cpus;
	uint64_t period_ns;	/* per vCPU between exchanges */
	uint64_t duration_ns;
	uint64_t host_gap_ns;	/* between host filler events per CPU */
	uint64_t guest_gap_ns;	/* between guest filler events per CPU */
	unsigned int forge_every; /* every n-th exchange forged (0: none) */
	bool step;		/* VM 0: guest clock step + tsc offset write
				 * at half time */
	bool no_tid_map;	/* session without vCPU threads */
	bool host_switch;	/* host sched_switch to the vCPU thread before
				 * its sync records and the tsc offset write */
	bool tsc_storm;		/* host CPU 1: VM 1's vCPU 0 thread rewrites
				 * its TSC offset every 100 us without a
				 * clock change (a host with an unstable TSC) */
	bool real_guest_table;	/* guests use the real event table (the
				 * module's GUEST and BOTH events) instead
				 * of the synthetic one (analysis tests) */
	bool walkable;		/* records the analysis reads (implies
				 * real_guest_table and steal): each host
				 * CPU's fillers are exit/entry pairs of one
				 * vCPU (the host's thread decides the VM)
				 * with three exit reasons; the guests'
				 * records are the real sched_switch (tasks
				 * 100..103), softirq_entry and sync_guest */
	bool stalls;		/* with walkable: every 23rd filler slot of a
				 * host CPU whose vCPU thread is in the guest
				 * takes that thread off its CPU for 40-200 us
				 * (preempted by host task 9001 + CPU 3 times
				 * in 4, else blocked: switched to the idle
				 * task), no exit meanwhile; and the guests'
				 * sync records carry a steal reading that
				 * grows by 15 us per exchange; each guest
				 * CPU v switches its own tasks 100 (v + 1).. */
	bool details;		/* with walkable: NPF exits instead of CPUID,
				 * each with a kvm_page_fault in one of a few
				 * pages (adjacent ones, some with a kvm_mmio),
				 * and each IOIO exit with a kvm_pio (four ports,
				 * in and out, 1, 2 or 4 bytes) at its kvm_exit's
				 * time: what `report exits --by port|mmio|npf`
				 * and the regions group */
	bool guest_abi03;	/* with real_guest_table: as ABI 0.3 had it
				 * (sync_guest without steal_ns) */
	bool last_vm_no_agent;	/* the session's last VM has no guest event
				 * table (no agent connected; metadata only) */
	bool steal;		/* the synthetic sync_guest laid out as ABI 0.4's:
				 * t1 t4 token seq ret tsc_a tsc_b steal_ns cpu
				 * missed (72 bytes, cpu at 64) */
	bool tsc;		/* TSC readings in the sync records: host TSC
				 * = tsc0 + 2.5 ticks/ns, each VM's TSC = host
				 * TSC + its offset, written once per vCPU at
				 * the start (not with step) */
	int64_t tsc_lie;	/* ticks added to the guests' TSC readings
				 * (a relation the check must refuse) */
	uint64_t skew_ns;	/* VM 0 with step: this much more delay on the
				 * way in before the step and on the way back
				 * after it, so that the two segments' estimates
				 * are biased in opposite directions and a
				 * stream's converted times go back at the
				 * change (the merge clamps them) */
	bool tsc_session;	/* with tsc: the offsets in the session's
				 * VmInfo.tsc (the recorder's reading)
				 * instead of initial writes */
	bool keep_channel;	/* host sync and TSC-offset records in a
				 * second stream per host CPU (channel 1,
				 * host-ch1-cpuN.vtf) as `record --keep`
				 * writes them; host switches 1 ns before
				 * what follows them */
	uint64_t freeze_ns;	/* VM 0's CPU 0: its clock stands still this
				 * long from tau_freeze, at the value it
				 * reaches at the end (ahead of the truth) */
	uint64_t tau_freeze;
	uint64_t ustep_ns;	/* VM 0: its clock steps forward this much at
				 * tau_ustep, no kvm_write_tsc_offset */
	uint64_t tau_ustep;
	uint64_t flips;		/* with ustep_ns: VM 0's clock is ahead only in
				 * this many windows of flip_ns from tau_ustep,
				 * one window apart, and after each stands
				 * still until the truth catches up (a
				 * relation that flips back and forth) */
	uint64_t flip_ns;
	bool losses;		/* every stream: 17 records lost before its 4th
				 * chunk, a sub-buffer missing before its 7th
				 * (sequence number skipped, no record gone) */
	uint64_t short_k;	/* VM 0's CPU 0: its exchange k (> 0) spends
				 * 100 us in the host and 10 ns less in the
				 * guest (inside the library's drift prior) */
	/* derived, filled by synth_write */
	uint64_t H0, G0[4], tsc0, tsc_off[4];
	double drift[4];	/* a - 1 per VM */
	int64_t step_ns;
	uint64_t tau_step;
	uint64_t n_host_events, n_guest_events, n_forged[SF_NKINDS];
	uint64_t n_exchanges;	/* honest ones */
};

/* Defaults for a small trace. */
void synth_defaults(struct synth *s, uint64_t seed);

/* Write the trace folder @path (must not exist). 0 or negative errno. */
int synth_write(struct synth *s, const char *path);

struct mg_opts;
struct mg_result;
struct vr_trace;

/*
 * The start of every merge test: @s written to @path, opened into *@t
 * (NULL when it cannot be) and merge's pass 1 run with @o into @r. 0, or
 * the first failure's negative errno (@err says which but for the write).
 */
int synth_write_sync(struct synth *s, const char *path, const struct mg_opts *o,
		     struct vr_trace **t, struct mg_result *r, char *err, size_t errlen);

/* True host time of guest time @g of VM @vm (for checks). */
long double synth_g2h(const struct synth *s, unsigned int vm, uint64_t g);

/* The guest event names the synthetic guest table uses. */
#define SYNTH_GUEST_TICK	"tick"

/* ---- building blocks, for hand-made traces (the fuzz target) ---- */

/* The synthetic guest table's ids and payloads. */
#define SYNTH_GID_SWITCH	20
#define SYNTH_GID_TICK		21
#define SYNTH_GID_SYNC		22

struct synth_gsync {		/* 44 bytes stored; 64 with tsc; steal: see synth_gsync_bytes */
	uint64_t t1, t4, token, seq;
	int64_t ret;
	uint32_t cpu, missed;
	uint64_t tsc_a, tsc_b;
	uint64_t steal_ns;
};

/* @g as @s's sync_guest stores it, into @out (72 bytes); its size. */
uint16_t synth_gsync_bytes(const struct synth *s, const struct synth_gsync *g, uint8_t *out);

struct synth_gswitch {
	int32_t prev_pid, next_pid;
};

/* metadata.vtf for @s (its n_vms, vcpus, no_tid_map; H0 as start), its
 * Summary listing the stream files already in @dfd. */
int synth_write_meta(struct synth *s, int dfd);

/* A stream file written as the collector does: header, then chunks of
 * up to 64 KiB of records (timestamps must not decrease). */
struct synth_stream {
	struct tf_writer *w;
	Vmscope__Trace__Origin o;
	uint8_t recs[64 << 10];
	size_t len;
	uint32_t n;
	uint64_t begin, prev, seq;
	uint64_t lost;		/* its chunks' lost_before */
	bool losses;		/* synth.losses */
	int err;
};

int synth_stream_open(struct synth_stream *w, int dfd, const char *name, int side,
		      uint32_t vm, uint32_t cpu);
/* The same for channel @chan of a host session. */
int synth_stream_open_chan(struct synth_stream *w, int dfd, const char *name, int side,
			   uint32_t vm, uint32_t cpu, uint32_t chan);
void synth_stream_rec(struct synth_stream *w, uint64_t ts, unsigned int id, const void *p,
		      uint16_t size);
int synth_stream_close(struct synth_stream *w);

#endif
