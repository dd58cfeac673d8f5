/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * vmscope sync: guest→host clock transform with a guaranteed error bound.
 *
 * Model: host time h = a*g + b for guest time g, within one segment.
 * Every hypercall exchange (see include/vmscope/sync_abi.h) gives
 *   t1 (guest, before) → t2 (host, kvm_hypercall):  t2 >= a*t1 + b
 *   t3 (host, kvm_entry) → t4 (guest, after):       t3 <= a*t4 + b
 * The lines (a, b) satisfying all accepted constraints form a convex set;
 * everything this library reports is an exact property of that set (see
 * README.md for the method and the numeric argument).
 *
 * Pure C11: no I/O, no global state. vmscope_sync_new() allocates once;
 * the per-sample path does not allocate.
 */
#ifndef VMSCOPE_SYNC_H
#define VMSCOPE_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Vertices kept per hull. Honest data needs a handful (the hulls are
 * pruned to the part that can still bind); the cap bounds memory and time
 * against hostile input. Evicting a vertex only loosens the bound. */
#define VMSCOPE_SYNC_HULL_CAP 32

/* Largest |t - origin| (ns) a segment accepts: 2^61 ns, about 73 years.
 * It keeps every intermediate product of the exact arithmetic in __int128. */
#define VMSCOPE_SYNC_MAX_SPAN ((int64_t)1 << 61)

/* Largest drift prior accepted by the configuration (10%). */
#define VMSCOPE_SYNC_MAX_PPM 100000u

/* An exact rational slope num/den, den > 0, |num|,|den| < 2^63. */
struct vmscope_sync_ratio {
	int64_t num;
	int64_t den;
};

/* A point in rebased coordinates: g = t_guest - g0, u = (t_host - h0) - g. */
struct vmscope_sync_point {
	int64_t g;
	int64_t u;
};

struct vmscope_sync_hull {
	uint32_t n;
	struct vmscope_sync_point v[VMSCOPE_SYNC_HULL_CAP];
};

enum vmscope_sync_verdict {
	VMSCOPE_SYNC_EMPTY = 0,       /* no samples */
	VMSCOPE_SYNC_FAILED,          /* constraints contradict: no line */
	VMSCOPE_SYNC_APPROXIMATE,     /* bounded only with the drift prior,
	                               * one direction only, or too few points */
	VMSCOPE_SYNC_ACCURATE,        /* data bound drift and offset on both
	                               * sides */
};

/*
 * One segment: a set of constraints that admits at least one line (unless
 * verdict is FAILED) and everything needed to answer queries exactly.
 * Writing h' = h - h0, g' = g - g0, d = a - 1, the feasible lines are
 * h' = g' + d*g' + b with d in [dmin, dmax] and, for that d,
 * max_Q(u - d*g) <= b <= min_P(u - d*g).
 */
struct vmscope_sync_segment {
	uint64_t id;          /* 0, 1, 2... in a stream context */
	uint64_t g0, h0;      /* origin: t1 and t2 of the first sample */
	uint32_t ppm;         /* drift prior: |a - 1| <= ppm * 1e-6 */
	bool failed;          /* a constraint was rejected as infeasible */
	struct vmscope_sync_ratio dmin, dmax;  /* exact feasible range of d */
	struct vmscope_sync_hull p;  /* guest→host points, lower hull */
	struct vmscope_sync_hull q;  /* host→guest points, upper hull */
	uint64_t n_samples;   /* exchanges (or one-way points) accepted */
	uint64_t n_p, n_q;    /* one-way constraints accepted per direction */
	uint64_t evictions;   /* hull vertices dropped at the cap */
	uint64_t g_first, g_last;  /* guest-time span of accepted samples */
	uint64_t h_first, h_last;  /* host-time span */
	int64_t min_rtt;      /* min over exchanges of (t4-t1)-(t3-t2), ns;
	                       * INT64_MAX when none */
	/* Set when the segment closes. Ended by a detected clock change: the
	 * host time (t3) of the last recent sample that contradicts the next
	 * segment; samples after it also fit the next segment, so guest
	 * events between here and the next segment's h_first belong to
	 * either. Ended any other way: h_last. */
	uint64_t h_certain_end;
	/* The central estimate's line (vmscope_sync_segment_estimate), set
	 * with the hulls it comes from: est_d the midpoint of [dmin, dmax],
	 * est_b the middle of that slope's offset interval (0 while a hull
	 * is empty, when the estimate does not use them). */
	long double est_d, est_b;
};

/* Floating summary of a segment, for reports. The exact answers are from
 * vmscope_sync_segment_bound(). */
struct vmscope_sync_summary {
	enum vmscope_sync_verdict verdict;
	long double a_min, a_max;   /* drift a = 1 + d */
	long double a_est;
	/* Offset at the origin: h - h0 = a*(g - g0) + b0. */
	long double b0_min, b0_max, b0_est;
	bool drift_from_data_lo, drift_from_data_hi;  /* not the prior */
	uint64_t width_ns;          /* max bound width over the sample span;
	                             * UINT64_MAX when unbounded */
	uint64_t n_samples;
	uint32_t hull_p, hull_q;
};

/* ---- Segment: the exact convex-hull core (no hostile-input policy). ---- */

/* Start an empty segment with origin (g0, h0) and drift prior ppm
 * (1..VMSCOPE_SYNC_MAX_PPM). */
void vmscope_sync_segment_init(struct vmscope_sync_segment *s, uint64_t g0,
			       uint64_t h0, uint32_t ppm);

enum vmscope_sync_add_result {
	VMSCOPE_SYNC_ADDED = 0,
	VMSCOPE_SYNC_INFEASIBLE = 1,  /* would leave no line; not added */
	VMSCOPE_SYNC_RANGE = 2,       /* too far from the origin; not added */
};

/* Add one two-way exchange. On INFEASIBLE or RANGE the segment is
 * unchanged. Requires t4 >= t1 and t3 >= t2 (else RANGE). */
enum vmscope_sync_add_result
vmscope_sync_segment_add(struct vmscope_sync_segment *s, uint64_t t1,
			 uint64_t t2, uint64_t t3, uint64_t t4);

/* One-way constraints: guest send g → host receive h (h >= a*g + b), and
 * host send h → guest receive g (h <= a*g + b). */
enum vmscope_sync_add_result
vmscope_sync_segment_add_g2h(struct vmscope_sync_segment *s, uint64_t g,
			     uint64_t h);
enum vmscope_sync_add_result
vmscope_sync_segment_add_h2g(struct vmscope_sync_segment *s, uint64_t h,
			     uint64_t g);

/*
 * The guaranteed interval of host time for guest time g: every line that
 * satisfies the accepted constraints maps g into [*lo, *hi] (exact, rounded
 * outward to whole ns; saturated to [0, UINT64_MAX]). Returns 0 when both
 * ends are bounded, 1 when one end is unbounded (it is set to 0 or
 * UINT64_MAX), -1 when the segment is empty or failed or g is out of range.
 */
int vmscope_sync_segment_bound(const struct vmscope_sync_segment *s,
			       uint64_t g, uint64_t *lo, uint64_t *hi);

/* Central estimate of host time for guest time g: the feasible line at the
 * midpoint of the drift range and the middle of its offset interval,
 * clamped into the bound. Returns -1 like vmscope_sync_segment_bound(). */
int vmscope_sync_segment_estimate(const struct vmscope_sync_segment *s,
				  uint64_t g, uint64_t *h);

/* Both of the above from one evaluation of the hulls (a converter needs
 * the estimate and the bound of every record): *h as the estimate, *lo
 * and *hi as the bound; returns what vmscope_sync_segment_bound() does. */
int vmscope_sync_segment_locate(const struct vmscope_sync_segment *s,
				uint64_t g, uint64_t *h, uint64_t *lo,
				uint64_t *hi);

void vmscope_sync_segment_summary(const struct vmscope_sync_segment *s,
				  uint32_t min_samples,
				  struct vmscope_sync_summary *out);

/* Offline fit of one line through all exchanges, no rejection: the result
 * is FAILED (segment.failed) if any exchange contradicts the others. Input
 * order does not matter. Returns the number of exchanges added. */
struct vmscope_sync_exchange;
size_t vmscope_sync_fit(const struct vmscope_sync_exchange *x, size_t n,
			uint32_t ppm, struct vmscope_sync_segment *out);

/* ---- Stream context: hostile-input policy and piecewise segments. ---- */

/*
 * One exchange as the caller joined it: the host record of a sync
 * hypercall (token, seq, t1 claim from the registers; t2, t3 measured by
 * the host) and, when found, the guest agent's record of the same call.
 */
struct vmscope_sync_exchange {
	uint64_t cookie;      /* caller's tag, echoed in on_sample */
	uint32_t vcpu;        /* vCPU index known to the host (trusted) */
	uint64_t token;       /* hypercall a0 (guest claim) */
	uint64_t seq;         /* hypercall a1 (guest claim) */
	uint64_t t1_claim;    /* hypercall a2 (guest claim) */
	uint64_t t2, t3;      /* host clock (trusted) */
	bool guest_valid;     /* the guest record below was found */
	uint64_t guest_seq;   /* seq in the guest record */
	uint64_t t1, t4;      /* guest clock from the guest record */
};

enum vmscope_sync_drop {
	VMSCOPE_SYNC_DROP_VCPU = 0,  /* vcpu >= configured count */
	VMSCOPE_SYNC_DROP_TOKEN,     /* wrong session token */
	VMSCOPE_SYNC_DROP_UNPAIRED,  /* no guest record */
	VMSCOPE_SYNC_DROP_MISMATCH,  /* guest record disagrees with registers */
	VMSCOPE_SYNC_DROP_MALFORMED, /* t4 < t1, t3 < t2, or absurd span */
	VMSCOPE_SYNC_DROP_RTT,       /* guest round trip shorter than host's */
	VMSCOPE_SYNC_DROP_REPLAY,    /* seq not increasing on this vCPU */
	VMSCOPE_SYNC_DROP_OUTLIER,   /* contradicts the consensus */
	VMSCOPE_SYNC_DROP_OVERFLOW,  /* pending buffer full */
	VMSCOPE_SYNC_DROP_NREASONS
};

const char *vmscope_sync_drop_name(enum vmscope_sync_drop r);

struct vmscope_sync_config {
	uint32_t ppm;          /* drift prior, default 1000 (0 = default) */
	uint32_t n_vcpus;      /* vCPUs tracked for seq checks (>= 1) */
	bool check_token;      /* drop samples whose token != token */
	uint64_t token;
	/* Samples that must agree before the segment is trusted, or before a
	 * run of samples contradicting it is taken as a clock change rather
	 * than forgeries (>= 2; 0 = default 4). */
	uint32_t confirm;
	/* Close a segment when its host-time span would exceed this
	 * (0 = never). */
	uint64_t max_segment_ns;
	void *user;
	/* Each sample's fate, exactly once: the segment id (>= 0) that
	 * accepted it, or -1 - reason. */
	void (*on_sample)(void *user, uint64_t cookie, int64_t outcome);
	/* A finished segment (valid only during the call). */
	void (*on_segment)(void *user, const struct vmscope_sync_segment *s);
};

struct vmscope_sync_stats {
	uint64_t submitted;
	uint64_t accepted;
	uint64_t dropped[VMSCOPE_SYNC_DROP_NREASONS];
	uint64_t segments;        /* segments emitted */
	uint64_t breaks_explicit;
	uint64_t breaks_detected; /* contradiction confirmed by consensus */
	uint64_t breaks_span;
	uint64_t discarded_segments;  /* too short, then contradicted */
};

struct vmscope_sync;

/* NULL on bad config or allocation failure. */
struct vmscope_sync *vmscope_sync_new(const struct vmscope_sync_config *cfg);
void vmscope_sync_free(struct vmscope_sync *ctx);

/* Feed one exchange (in host-time order, ideally). */
void vmscope_sync_add(struct vmscope_sync *ctx,
		      const struct vmscope_sync_exchange *x);

/* Explicit break (kvm_write_tsc_offset, guest clock step): close the
 * current segment. reset_seq forgets per-vCPU sequence numbers (new guest
 * session). */
void vmscope_sync_break(struct vmscope_sync *ctx, bool reset_seq);

/* End of input: resolve pending samples, emit the last segment. */
void vmscope_sync_finish(struct vmscope_sync *ctx);

/* The segment being built (may be empty). */
const struct vmscope_sync_segment *
vmscope_sync_current(const struct vmscope_sync *ctx);

void vmscope_sync_get_stats(const struct vmscope_sync *ctx,
			    struct vmscope_sync_stats *out);

/* Offline: run n exchanges through a fresh context (same policy). */
int vmscope_sync_run(const struct vmscope_sync_config *cfg,
		     const struct vmscope_sync_exchange *x, size_t n,
		     struct vmscope_sync_stats *stats);

/* ---- Independent cross-check from the TSC relation. ---- */

/*
 * KVM: guest_tsc = ((host_tsc * ratio) >> frac_bits) + offset (mod 2^64),
 * as written by kvm_write_tsc_offset (ratio = 1 << frac_bits without TSC
 * scaling). Each side's clock is ns = ref_ns + ((tsc - ref_tsc) * mult
 * >> shift) over the interval considered (the kernel clocksource
 * conversion), given by one paired (ns, tsc) reading and mult/shift.
 */
struct vmscope_sync_tsc {
	uint64_t ratio;
	uint32_t frac_bits;
	uint64_t offset;
	uint64_t host_ref_ns, host_ref_tsc;
	uint32_t host_mult, host_shift;
	uint64_t guest_ref_ns, guest_ref_tsc;
	uint32_t guest_mult, guest_shift;
};

/* Host time for guest time g under the TSC relation (rounded to nearest).
 * Returns -1 on a degenerate relation or overflow. */
int vmscope_sync_tsc_g2h(const struct vmscope_sync_tsc *t, uint64_t g,
			 uint64_t *h);

struct vmscope_sync_tsc_check {
	uint64_t h_tsc;       /* TSC-derived host time */
	uint64_t h_est;       /* hull central estimate */
	uint64_t lo, hi;      /* hull guaranteed interval */
	int64_t diff_ns;      /* h_tsc - h_est (saturated) */
	bool within;          /* lo <= h_tsc <= hi */
};

/* Compare at guest time g. Returns -1 when either side cannot answer. */
int vmscope_sync_tsc_check(const struct vmscope_sync_segment *s,
			   const struct vmscope_sync_tsc *t, uint64_t g,
			   struct vmscope_sync_tsc_check *out);

#ifdef __cplusplus
}
#endif

#endif /* VMSCOPE_SYNC_H */
