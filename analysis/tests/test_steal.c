// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test `analysis-steal`: the guest's steal time next to the host's
 * preempted time over the same span (steal.h), on merged traces with a
 * known story written through merge's own writer (scen.h):
 *
 * One VM of two vCPUs (threads 1001, 1002) for one second. vCPU 0's thread
 * is taken off its host CPU again and again (runs 1-7 ms, then off for
 * 0.2-3 ms: three times in four preempted by a host task, else blocked
 * in the host), the first time before its first sync record and the last
 * time after its last one. Its guest CPU writes a sync_guest record every
 * 10 ms, also while the thread is off (as a clock alignment error of a
 * few µs would place one; the first one and the one where a span starts
 * again in `backwards` are), with a steal reading that grows with the story
 * (9/8 of the host's preempted time so far plus 1 µs per record). vCPU 1
 * is preempted once and writes one sync record.
 *
 * Expected values come from the story itself: the guest's steal over each
 * span is the difference of the story's readings at its ends, the host's
 * the overlap of the preempted intervals with it — not the cumulative
 * readings the analysis takes. Variants: plain; a loss in the middle (the
 * span splits at it); one guest reading that goes back (the span splits
 * there, the reading counted); the ABI 0.3 layout (no steal_ns: every
 * vCPU n/a, zero readings, and the host side read as in the plain trace).
 *
 * With an argument DIR it also leaves the plain and ABI 0.3 traces in
 * DIR/new and DIR/abi03 and the plain trace's expected values in
 * DIR/expect (cli/tests/report-steal-test.sh checks the command on them).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tracefmt/tests/util.h"
#include "out.h"
#include "sched.h"
#include "scen.h"
#include "steal.h"
#include "vmscope_events.h"
#include "walk.h"
#include "../../tests/lib/xorshift.h"

#define MS		1000000ull
#define T0		(SCEN_H0 + MS)
#define SPAN		(1000 * MS)
#define SYNC_EVERY	(10 * MS)
#define HOG		4242
#define MAX_OFF		1024
#define MAX_SYNC	128

enum variant { PLAIN, LOSS, BACKWARDS, ABI03 };

struct off { uint64_t start, end; bool preempted; };

struct story {
	struct off off[MAX_OFF];	/* vCPU 0's thread, in time order */
	unsigned int noff;
	uint64_t sync_ts[MAX_SYNC], steal[MAX_SYNC];	/* vCPU 0's records */
	unsigned int nsync;
	uint64_t loss_ts;		/* LOSS: between records loss_after and +1 */
	unsigned int loss_after, back_at;
	uint64_t preempted_ns;		/* whole trace, vCPU 0 */
	/* expected over the spans */
	uint64_t guest_ns, host_ns, blocked_ns, span_ns, spans;
};

static uint64_t rng = 0x853c49e6748fea9bull;

static uint64_t rnd(void)
{
	return vmscope_xorshift64(&rng);
}

/* The story's preempted (or blocked) time of vCPU 0 inside [a, b]. */
static uint64_t overlap_of(const struct story *s, uint64_t a, uint64_t b, bool preempted)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < s->noff; i++) {
		uint64_t x = s->off[i].start > a ? s->off[i].start : a;
		uint64_t y = s->off[i].end < b ? s->off[i].end : b;

		if (s->off[i].preempted == preempted && y > x)
			sum += y - x;
	}
	return sum;
}

static uint64_t overlap(const struct story *s, uint64_t a, uint64_t b)
{
	return overlap_of(s, a, b, true);
}

static bool inside_off(const struct story *s, uint64_t t)
{
	for (unsigned int i = 0; i < s->noff; i++)
		if (t >= s->off[i].start && t <= s->off[i].end)
			return true;
	return false;
}

static void make_story(struct story *s, enum variant var)
{
	uint64_t t = T0 + 6 * MS, last_sync;
	unsigned int first = 0;

	memset(s, 0, sizeof(*s));
	rng = 0x853c49e6748fea9bull;
	/* one time off before the first record, and one around it (T0 + 5 ms):
	 * the host side counts from the record on */
	s->off[s->noff++] = (struct off){ T0 + MS / 2, T0 + MS, true };
	s->off[s->noff++] = (struct off){ T0 + 4 * MS, T0 + 6 * MS, true };
	while (t < T0 + SPAN && s->noff < MAX_OFF - 1) {
		uint64_t run = MS + rnd() % (6 * MS), off = MS / 5 + rnd() % (28 * MS / 10);

		t += run;
		s->off[s->noff++] = (struct off){ t, t + off, rnd() % 4 != 0 };
		t += off;
	}
	for (unsigned int i = 0; i < s->noff; i++)
		if (s->off[i].preempted)
			s->preempted_ns += s->off[i].end - s->off[i].start;
	for (uint64_t ts = T0 + 5 * MS; ts < T0 + SPAN && s->nsync < MAX_SYNC; ts += SYNC_EVERY) {
		s->sync_ts[s->nsync] = ts;
		s->steal[s->nsync] = overlap(s, 0, ts) / 8 * 9 + 1000 * s->nsync;
		s->nsync++;
	}
	last_sync = s->sync_ts[s->nsync - 1];
	/* ... and one after the last (and after the others) */
	if (t < last_sync)
		t = last_sync;
	s->off[s->noff++] = (struct off){ t + MS, t + 2 * MS, true };
	s->preempted_ns += MS;
	if (var == LOSS) {
		/* a loss while no thread is off: nothing open to drop */
		s->loss_after = s->nsync / 2;
		s->loss_ts = s->sync_ts[s->loss_after] + 1000;
		while (inside_off(s, s->loss_ts))
			s->loss_ts += 1000;
	}
	if (var == BACKWARDS) {
		/* a record inside a preemption, so that the new span's host
		 * side starts inside it too */
		s->back_at = s->nsync / 3;
		while (s->back_at < s->nsync - 1 && !inside_off(s, s->sync_ts[s->back_at]))
			s->back_at++;
		s->steal[s->back_at] = s->steal[s->back_at - 1] - 1000;
	}
	/* the spans: split after a loss, and before a reading that went back */
	for (unsigned int i = 1; i <= s->nsync; i++) {
		bool end = i == s->nsync || (var == LOSS && i == s->loss_after + 1) ||
			   (var == BACKWARDS && i == s->back_at);

		if (!end)
			continue;
		s->guest_ns += s->steal[i - 1] - s->steal[first];
		s->host_ns += overlap(s, s->sync_ts[first], s->sync_ts[i - 1]);
		s->blocked_ns += overlap_of(s, s->sync_ts[first], s->sync_ts[i - 1], false);
		s->span_ns += s->sync_ts[i - 1] - s->sync_ts[first];
		s->spans++;
		first = i;
	}
}

/* ---- writing ---- */

struct rec {
	uint64_t ts;
	int kind;		/* 0 host switch away, 1 back, 2 sync, 3 loss, 4 entry */
	uint32_t vcpu;
	bool preempted;
	uint64_t steal;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static void host_switch(struct scen_out *o, const struct rec *r)
{
	struct vmscope_ev_sched_switch sw = { 0 };
	int32_t vt = (int32_t)(1001 + r->vcpu), other = r->preempted ? HOG : 0;
	struct mo_origin mo = { .orig_ts = r->ts, .cpu = 1 + r->vcpu, .origin = 0,
				.vcpu = MO_NONE };

	if (r->kind == 0) {
		sw.prev_pid = vt;
		sw.prev_tgid = 1000;
		sw.prev_state = r->preempted ? 0 : 1;
		sw.preempt = r->preempted;
		sw.next_pid = sw.next_tgid = other;
		mo.tid = vt;
	} else {
		sw.prev_pid = sw.prev_tgid = other;
		sw.next_pid = vt;
		sw.next_tgid = 1000;
		mo.tid = other;
	}
	snprintf(r->kind == 0 ? sw.prev_comm : sw.next_comm, 16, "CPU %u/KVM", r->vcpu);
	snprintf(r->kind == 0 ? sw.next_comm : sw.prev_comm, 16, "%s",
		 r->preempted ? "hog" : "swapper/1");
	scen_out_event(o, 0, VMSCOPE_EV_sched_switch, r->ts, &sw, sizeof(sw), &mo);
}

static void sync_rec(struct scen_out *o, const struct rec *r, bool abi03, uint64_t seq)
{
	struct mo_origin mo = { .orig_ts = r->ts, .cpu = r->vcpu, .tid = -1, .origin = 1,
				.vcpu = r->vcpu };
	struct vmscope_ev_sync_guest e = { .t1 = r->ts - 2000, .t4 = r->ts - 1000,
					   .token = 0x5eed, .seq = seq, .cpu = r->vcpu,
					   .steal_ns = r->steal };
	uint8_t old[64];

	if (!abi03) {
		scen_out_event(o, 1, VMSCOPE_EV_sync_guest, r->ts, &e, sizeof(e), &mo);
		return;
	}
	/* ABI 0.3: t1 .. tsc_b (56 bytes), cpu, missed */
	memcpy(old, &e, 56);
	memcpy(old + 56, &e.cpu, 4);
	memcpy(old + 60, &e.missed, 4);
	scen_out_event(o, 1, VMSCOPE_EV_sync_guest, r->ts, old, sizeof(old), &mo);
}

static int write_trace(const struct story *s, const char *dir, enum variant var)
{
	static struct rec r[2 * MAX_OFF + MAX_SYNC + 8];
	struct scen_out *o;
	size_t n = 0;
	int e;

	for (uint32_t v = 0; v < 2; v++)	/* the walk counts a vCPU from its first kvm record */
		r[n++] = (struct rec){ .ts = T0 + v, .kind = 4, .vcpu = v };
	for (unsigned int i = 0; i < s->noff; i++) {
		r[n++] = (struct rec){ s->off[i].start, 0, 0, s->off[i].preempted, 0 };
		r[n++] = (struct rec){ s->off[i].end, 1, 0, s->off[i].preempted, 0 };
	}
	for (unsigned int i = 0; i < s->nsync; i++)
		r[n++] = (struct rec){ .ts = s->sync_ts[i], .kind = 2, .steal = s->steal[i] };
	if (var == LOSS)
		r[n++] = (struct rec){ .ts = s->loss_ts, .kind = 3 };
	/* vCPU 1: preempted once for 5 ms, one sync record */
	r[n++] = (struct rec){ T0 + 100 * MS, 0, 1, true, 0 };
	r[n++] = (struct rec){ T0 + 105 * MS, 1, 1, true, 0 };
	r[n++] = (struct rec){ .ts = T0 + 200 * MS + 7, .kind = 2, .vcpu = 1, .steal = 5 * MS };
	qsort(r, n, sizeof(r[0]), cmp_rec);

	e = scen_out_open_abi(&o, dir, 1, 2, var == ABI03);
	if (e)
		return e;
	for (size_t i = 0; i < n; i++) {
		switch (r[i].kind) {
		case 0:
		case 1:
			host_switch(o, &r[i]);
			break;
		case 2:
			sync_rec(o, &r[i], var == ABI03, i + 1);
			break;
		case 3:
			scen_out_loss(o, r[i].ts);
			break;
		case 4: {
			struct vmscope_ev_kvm_entry en = { .vcpu_id = r[i].vcpu };
			struct mo_origin mo = { .orig_ts = r[i].ts, .cpu = 1 + r[i].vcpu,
						.tid = (int32_t)(1001 + r[i].vcpu), .origin = 0,
						.vcpu = r[i].vcpu };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, r[i].ts, &en, sizeof(en), &mo);
			break;
		}
		}
	}
	return scen_out_close(o);
}

/* ---- checking ---- */

static const char *const vname[] = { "plain", "loss", "backwards", "abi03" };

static void check(enum variant var, const char *keep)
{
	char dir[256], path[300], err[256];
	struct an_hooks h = { 0 };
	const struct an_sched_vcpu *v0, *v1;
	struct an_steal r0, r1;
	struct an_sched s;
	struct an_walk *w;
	struct story st;

	make_story(&st, var);
	if (keep) {
		snprintf(dir, sizeof(dir), "%s/%s", keep, var == ABI03 ? "abi03" : "new");
		CHECK(mkdir(dir, 0700) == 0);
	} else {
		int fd = tf_test_mkdir(dir, sizeof(dir));

		CHECK(fd >= 0);
		close(fd);
	}
	CHECK_EQ(write_trace(&st, dir, var), 0);
	snprintf(path, sizeof(path), "%s/merged", dir);
	CHECK_EQ(an_walk_open(&w, path, 0, err, sizeof(err)), 0);
	if (!w) {
		fprintf(stderr, "%s: %s\n", vname[var], err);
		return;
	}
	CHECK_EQ(an_sched_init(&s, w, 4), 0);
	an_sched_hooks(&s, &h);
	CHECK_EQ(an_walk_run(w, &h, err, sizeof(err)), 0);
	v0 = an_sched_vcpu(&s, 0, 0);
	v1 = an_sched_vcpu(&s, 0, 1);
	CHECK(v0 && v1);
	if (!v0 || !v1)
		goto out;
	an_steal_result(v0, &r0);
	an_steal_result(v1, &r1);
	/* the host side is read as the story has it, in every layout */
	CHECK_EQ(v0->preempted_ns, st.preempted_ns);
	CHECK_EQ(v1->preempted_ns, 5 * MS);
	/* vCPU 1: one reading is no span */
	CHECK(!r1.known);
	CHECK_EQ(r1.n, var == ABI03 ? 0 : 1);
	if (var == ABI03) {
		CHECK(!r0.known);
		CHECK_EQ(r0.n, 0);
		CHECK_EQ(r0.guest_ns, 0);
		goto out;
	}
	CHECK(r0.known);
	CHECK_EQ(r0.n, st.nsync);
	CHECK_EQ(r0.guest_ns, st.guest_ns);
	CHECK_EQ(r0.host_ns, st.host_ns);
	CHECK_EQ(r0.blocked_ns, st.blocked_ns);
	CHECK_EQ(r0.span_ns, st.span_ns);
	CHECK_EQ(r0.spans, st.spans);
	CHECK_EQ(r0.backwards, var == BACKWARDS ? 1 : 0);
	/* the story is not degenerate: time off outside the span, some inside */
	CHECK(st.host_ns > 50 * MS && st.host_ns < st.preempted_ns);
	printf("%-9s vCPU 0: guest steal %" PRIu64 " ns, host preempted in span %" PRIu64
	       " ns, span %" PRIu64 " ns in %" PRIu64 " piece(s), of %" PRIu64
	       " ns preempted in all\n", vname[var], r0.guest_ns, r0.host_ns, r0.span_ns,
	       r0.spans, st.preempted_ns);
	if (keep && var == PLAIN) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/expect", keep);
		f = fopen(path, "w");
		CHECK(f != NULL);
		if (f) {
			fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				r0.guest_ns, r0.host_ns, r0.blocked_ns, r0.span_ns, r0.n);
			fclose(f);
		}
	}
out:
	an_sched_free(&s);
	an_walk_close(w);
	if (!keep)
		tf_test_rmdir(dir);
}

int main(int argc, char **argv)
{
	const char *keep = argc > 1 ? argv[1] : NULL;

	check(PLAIN, keep);
	check(LOSS, NULL);
	check(BACKWARDS, NULL);
	check(ABI03, keep);
	return check_result("test_steal");
}
