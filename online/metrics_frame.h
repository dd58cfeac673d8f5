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
 *   u32 magic "VMSM"  u16 version (1)  u16 flags (bit 0: has_bound)
 *   u32 n_reasons (<= OL_MX_REASONS)
 *   u64 seq end_ns guest_ns kernel_ns user_ns halted_ns preempted_ns
 *       events_lost bound_ns (0 without has_bound)
 *   n_reasons times: u8 name length (1..OL_MX_NAME-1), the name (printable
 *       ASCII, unique in the frame), u64 count, u64 sum_ns,
 *       u64 bucket[OL_MX_BUCKETS] (their sum at most count)
 * and nothing after. No dependency beyond libc: the daemon links it alone.
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
#define OL_MX_VERSION	1u
#define OL_MX_HEAD	(12u + 9u * 8u)
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
	uint64_t bound_ns;
	uint32_t n_reasons;
	struct ol_mx_reason r[OL_MX_REASONS];
};

/* @s into @buf (at least OL_MX_FRAME_MAX bytes): its length. */
size_t ol_msnap_encode(const struct ol_msnap *s, uint8_t *buf);

/* The frame @buf[@len] into @s: 0, or -1 with @why saying what is wrong. */
int ol_msnap_parse(const uint8_t *buf, size_t len, struct ol_msnap *s, char *why,
		   size_t whylen);

#endif
