/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One domain's metrics snapshot, as `vmscope record --metrics-fd` sends it
 * to vmscoped once per second of host time (README.md, "Metrics"): the
 * cumulative window of the online pipeline reduced to what /metrics
 * serves. Its frame is one SOCK_SEQPACKET message (the socket keeps the
 * boundaries); the daemon parses it as untrusted input (ol_msnap_parse,
 * fuzzed by fuzz-metrics-frame).
 *
 * Frame, little-endian, no padding:
 *   u32 magic "VMSM"  u16 version (2)  u16 flags (bit 0: has_bound,
 *       bit 1: has_steal, bit 2: has_stall)
 *   u32 n_reasons (<= OL_MX_REASONS)
 *   u64 seq end_ns guest_ns kernel_ns user_ns halted_ns preempted_ns
 *       events_lost bound_ns steal_ns stall_ns[2][2] (each 0 without its
 *       flag; stall_ns by [state][cause] as in struct ol_msnap)
 *   n_reasons times: u8 name length (1..OL_MX_NAME-1), the name (printable
 *       ASCII, unique in the frame), u64 count, u64 sum_ns,
 *       u64 bucket[OL_MX_BUCKETS] (their sum at most count)
 * and nothing after. No dependency beyond libc: the daemon links it alone.
 *
 * Version and length rule: the version fixes the layout (the head's
 * length, its fields, a reason's); any change of either bumps it, and a
 * parser reads its own version only. It checks the magic and the version
 * before any length, so a recorder and a daemon of different builds are
 * told apart by name ("frame version 1, this daemon reads 2"), never as a
 * frame cut short; then the frame's length must be exactly the head's
 * plus its reasons'. Version 1 (before the guest figures: no steal, no
 * stalls) is refused.
 */
#ifndef VMSCOPE_ONLINE_METRICS_FRAME_H
#define VMSCOPE_ONLINE_METRICS_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reason series per domain: the first OL_MX_REASONS - 1 reasons the
 * recording saw keep their names, every later one counts as "other". */
#define OL_MX_REASONS	31
#define OL_MX_OTHER	"other"
/* Finite latency buckets: bucket[k - 1] counts exits of [4^(k-1), 4^k) ns
 * ([0, 4) for k = 1), so a Prometheus bucket le = 4^k - 1 ns is exact
 * (analysis/hist.h: 4^k is one of its bucket edges). Longer exits count
 * only in count (+Inf). */
#define OL_MX_BUCKETS	16
#define OL_MX_NAME	48
#define OL_MX_MAGIC	0x4d534d56u	/* "VMSM" */
#define OL_MX_VERSION	2u
/* Guest-thread stall classes (analysis/sched.h, an_stall_state and
 * an_stall_cause): state 0 running, 1 runnable; cause 0 preempted by a
 * host task, 1 blocked in the host. */
#define OL_MX_STALL_STATES 2
#define OL_MX_STALL_CAUSES 2
/* the head's u64 fields: ten, then the stall times */
#define OL_MX_HEAD_U64	(10u + OL_MX_STALL_STATES * OL_MX_STALL_CAUSES)
#define OL_MX_HEAD	(12u + OL_MX_HEAD_U64 * 8u)
#define OL_MX_REASON_MAX (1u + (OL_MX_NAME - 1u) + (2u + OL_MX_BUCKETS) * 8u)
#define OL_MX_FRAME_MAX	(OL_MX_HEAD + OL_MX_REASONS * OL_MX_REASON_MAX)

struct ol_mx_reason {
	char name[OL_MX_NAME];
	uint64_t count, sum_ns;
	uint64_t bucket[OL_MX_BUCKETS];
};

struct ol_msnap {
	uint64_t seq;			/* 0, 1, ... per recording */
	uint64_t end_ns;		/* host time the window reaches */
	/* summed over the domain's vCPUs (analysis/walk.h, struct
	 * an_vcpu_time; sched.h: preempted) */
	uint64_t guest_ns, kernel_ns, user_ns, halted_ns, preempted_ns;
	uint64_t events_lost;		/* ring losses and records too late to order */
	bool has_bound;			/* no clock sample yet: no bound */
	uint64_t bound_ns;		/* width of the bound of the latest guest record */
	/* the guest's own steal, summed over its vCPUs' spans (steal.h);
	 * none without two readings of one vCPU */
	bool has_steal;
	uint64_t steal_ns;
	/* the guest threads' stalls, its idle thread's left out, by
	 * [state][cause] (OL_MX_STALL_*); none without the guest side */
	bool has_stall;
	uint64_t stall_ns[OL_MX_STALL_STATES][OL_MX_STALL_CAUSES];
	uint32_t n_reasons;
	struct ol_mx_reason r[OL_MX_REASONS];
};

/* @s into @buf (at least OL_MX_FRAME_MAX bytes): its length. */
size_t ol_msnap_encode(const struct ol_msnap *s, uint8_t *buf);

/* The frame @buf[@len] into @s: 0, or -1 with @why saying what is wrong. */
int ol_msnap_parse(const uint8_t *buf, size_t len, struct ol_msnap *s, char *why,
		   size_t whylen);

#endif
