// SPDX-License-Identifier: GPL-2.0
/* The text exposition of the metrics store: see metrics_render.h. */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "metrics_render.h"

/* @ns as seconds, an exact decimal (no float rounding): 1500 -> 0.0000015 */
static void seconds(FILE *out, uint64_t ns)
{
	char frac[10];
	int l;

	fprintf(out, "%" PRIu64, ns / 1000000000u);
	if (!(ns % 1000000000u))
		return;
	snprintf(frac, sizeof(frac), "%09" PRIu64, ns % 1000000000u);
	for (l = 9; frac[l - 1] == '0'; l--)
		;
	fprintf(out, ".%.*s", l, frac);
}

/* A label value, escaped as the format wants (\\, \", \n). */
static void label_value(FILE *out, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(out, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void labels(FILE *out, const struct ms_entry *e)
{
	fputs("domain=\"", out);
	label_value(out, e->domain);
	fputs("\",uuid=\"", out);
	label_value(out, e->uuid);
	fputc('"', out);
}

/* A sample of domain @e up to its value: NAME{domain="..",uuid=".."EXTRA} */
static void sample(FILE *out, const char *name, const struct ms_entry *e, const char *extra)
{
	fprintf(out, "%s{", name);
	labels(out, e);
	fprintf(out, "%s} ", extra);
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void reason_labels(FILE *out, const struct ms_entry *e, const struct ol_mx_reason *r)
{
	labels(out, e);
	fputs(",reason=\"", out);
	label_value(out, r->name);
	fputc('"', out);
}

static void histogram(FILE *out, const struct ms_entry *e, const struct ol_mx_reason *r)
{
	const char *name = "vmscope_exit_latency_seconds";
	uint64_t cum = 0;

	for (int k = 1; k <= OL_MX_BUCKETS; k++) {
		cum += r->bucket[k - 1];
		fprintf(out, "%s_bucket{", name);
		reason_labels(out, e, r);
		fputs(",le=\"", out);
		seconds(out, (1ull << (2 * k)) - 1);
		fprintf(out, "\"} %" PRIu64 "\n", cum);
	}
	fprintf(out, "%s_bucket{", name);
	reason_labels(out, e, r);
	fprintf(out, ",le=\"+Inf\"} %" PRIu64 "\n%s_sum{", r->count, name);
	reason_labels(out, e, r);
	fputs("} ", out);
	seconds(out, r->sum_ns);
	fprintf(out, "\n%s_count{", name);
	reason_labels(out, e, r);
	fprintf(out, "} %" PRIu64 "\n", r->count);
}

/* The stall classes' label values, in the frame's order (metrics_frame.h) */
static const char *const stall_state[OL_MX_STALL_STATES] = { "running", "runnable" };
static const char *const stall_cause[OL_MX_STALL_CAUSES] = { "preempted", "blocked_in_host" };

static int by_domain(const void *a, const void *b)
{
	const struct ms_entry *const *x = a, *const *y = b;

	return strcmp((*x)->domain, (*y)->domain);
}

/* One sample per domain of a family of seconds: @off is the ol_msnap
 * field; @has, if not SIZE_MAX, the bool field without which the domain
 * has no sample (absent, not 0). */
static void per_domain_seconds_if(FILE *out, const struct ms_entry *const *e, size_t n,
				  const char *name, const char *extra, size_t off, size_t has)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t v;
		bool present = true;

		if (has != SIZE_MAX)
			memcpy(&present, (const char *)&e[i]->snap + has, sizeof(present));
		if (!present)
			continue;
		memcpy(&v, (const char *)&e[i]->snap + off, sizeof(v));
		sample(out, name, e[i], extra);
		seconds(out, v);
		fputc('\n', out);
	}
}

static void per_domain_seconds(FILE *out, const struct ms_entry *const *e, size_t n,
			       const char *name, const char *extra, size_t off)
{
	per_domain_seconds_if(out, e, n, name, extra, off, SIZE_MAX);
}

/* A family of one seconds sample per domain, no extra label: its header
 * and samples (per_domain_seconds_if's @off and @has). */
static void seconds_family(FILE *out, const struct ms_entry *const *e, size_t n,
			   const char *name, const char *type, const char *help, size_t off,
			   size_t has)
{
	family(out, name, type, help);
	per_domain_seconds_if(out, e, n, name, "", off, has);
}

/* A family of the daemon's own: one sample, no label. */
static void daemon_family(FILE *out, const char *name, const char *type, const char *help,
			  uint64_t v)
{
	family(out, name, type, help);
	fprintf(out, "%s %" PRIu64 "\n", name, v);
}

void mr_render(FILE *out, const struct ms_entry *entries, size_t n, uint64_t refused,
	       uint64_t bad_frames, uint64_t triggers_suppressed)
{
	static const struct {
		const char *state;
		size_t off;
	} states[] = {
		{ "guest", offsetof(struct ol_msnap, guest_ns) },
		{ "exit_kernel", offsetof(struct ol_msnap, kernel_ns) },
		{ "exit_user", offsetof(struct ol_msnap, user_ns) },
		{ "halted", offsetof(struct ol_msnap, halted_ns) },
	};
	const struct ms_entry *e[MS_MAX_DOMAINS];

	n = n < MS_MAX_DOMAINS ? n : MS_MAX_DOMAINS;
	for (size_t i = 0; i < n; i++)
		e[i] = &entries[i];
	qsort(e, n, sizeof(e[0]), by_domain);

	family(out, "vmscope_exits_total", "counter",
	       "VM exits completed (kvm_exit .. the vCPU's next kvm_entry), by exit reason.");
	for (size_t i = 0; i < n; i++)
		for (uint32_t r = 0; r < e[i]->snap.n_reasons; r++) {
			fputs("vmscope_exits_total{", out);
			reason_labels(out, e[i], &e[i]->snap.r[r]);
			fprintf(out, "} %" PRIu64 "\n", e[i]->snap.r[r].count);
		}
	family(out, "vmscope_exit_latency_seconds", "histogram",
	       "VM exit latency (kvm_exit .. kvm_entry) by exit reason; buckets 4^k-1 ns.");
	for (size_t i = 0; i < n; i++)
		for (uint32_t r = 0; r < e[i]->snap.n_reasons; r++)
			histogram(out, e[i], &e[i]->snap.r[r]);
	family(out, "vmscope_vcpu_seconds_total", "counter",
	       "vCPU time summed over the domain's vCPUs: in the guest, in exits handled "
	       "in the host kernel, in userspace exits, halted.");
	for (size_t s = 0; s < sizeof(states) / sizeof(states[0]); s++) {
		char extra[40];

		snprintf(extra, sizeof(extra), ",state=\"%s\"", states[s].state);
		per_domain_seconds(out, e, n, "vmscope_vcpu_seconds_total", extra, states[s].off);
	}
	seconds_family(out, e, n, "vmscope_vcpu_preempted_seconds_total", "counter",
		       "Time the domain's vCPU threads were preempted off their host CPU.",
		       offsetof(struct ol_msnap, preempted_ns), SIZE_MAX);
	seconds_family(out, e, n, "vmscope_guest_steal_seconds_total", "counter",
		       "Steal time the guest kernel accounted, summed over the domain's vCPUs "
		       "between their clock-sync readings; absent without two readings.",
		       offsetof(struct ol_msnap, steal_ns), offsetof(struct ol_msnap, has_steal));
	family(out, "vmscope_guest_stall_seconds_total", "counter",
	       "Time guest threads (not the idle one) were stalled, their vCPU thread off "
	       "its host CPU, by their state and its cause; absent without the guest's agent.");
	for (size_t i = 0; i < n; i++)
		for (int st = 0; st < OL_MX_STALL_STATES && e[i]->snap.has_stall; st++)
			for (int c = 0; c < OL_MX_STALL_CAUSES; c++) {
				char extra[64];

				snprintf(extra, sizeof(extra), ",state=\"%s\",cause=\"%s\"",
					 stall_state[st], stall_cause[c]);
				sample(out, "vmscope_guest_stall_seconds_total", e[i], extra);
				seconds(out, e[i]->snap.stall_ns[st][c]);
				fputc('\n', out);
			}
	family(out, "vmscope_events_lost_total", "counter",
	       "Events lost: ring buffer losses and records too late to order.");
	for (size_t i = 0; i < n; i++) {
		sample(out, "vmscope_events_lost_total", e[i], "");
		fprintf(out, "%" PRIu64 "\n", e[i]->snap.events_lost);
	}
	seconds_family(out, e, n, "vmscope_sync_bound_seconds", "gauge",
		       "Width of the host-guest clock alignment's bound at the domain's latest "
		       "guest record; absent without one.",
		       offsetof(struct ol_msnap, bound_ns), offsetof(struct ol_msnap, has_bound));
	family(out, "vmscope_triggers_total", "counter",
	       "Triggers admitted by the rate limit: an exit or a guest-thread stall over "
	       "its threshold.");
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			sample(out, "vmscope_triggers_total", e[i],
			       k ? ",kind=\"stall\"" : ",kind=\"exit\"");
			fprintf(out, "%" PRIu64 "\n", e[i]->triggers[k]);
		}
	family(out, "vmscope_snapshots_total", "counter",
	       "Snapshot windows written around the admitted triggers.");
	for (size_t i = 0; i < n; i++) {
		sample(out, "vmscope_snapshots_total", e[i], "");
		fprintf(out, "%" PRIu64 "\n", e[i]->snapshots);
	}
	daemon_family(out, "vmscoped_metrics_domains", "gauge",
		      "Domains whose series are served.", n);
	daemon_family(out, "vmscoped_metrics_refused_snapshots_total", "counter",
		      "Snapshots not served: their domain was beyond the 64 served.", refused);
	daemon_family(out, "vmscoped_metrics_bad_frames_total", "counter",
		      "Frames from recorders (snapshots, triggers) that did not parse (that feed "
		      "was closed).", bad_frames);
	daemon_family(out, "vmscoped_triggers_suppressed_total", "counter",
		      "Triggers refused by a domain's rate limit.", triggers_suppressed);
}
