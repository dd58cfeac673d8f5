// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: `vmscope merge` end to end on hostile streams. The
 * input becomes a trace folder (in /dev/shm): the synthetic session (1-2
 * VMs of 2 vCPUs, with or without the vCPU thread map), two host CPU
 * streams and each VM's two CPU streams. The records follow a guest clock
 * (drift and steps from the input): exchanges whose three records mostly
 * tell the truth (delays, seq, token, a missing guest record from the
 * input, so that they are accepted, contradict, replay), and hostile
 * records — sync_t2, sync_t3, kvm_write_tsc_offset, sched_switch,
 * kvm_exit on the host; sync_guest (in the 44-byte synthetic layout or, by
 * an input bit, ABI 0.4's with steal_ns and cpu at offset 64), sched_switch,
 * tick in the guests —
 * with fields from small sets near the bases, or raw. The metadata comes
 * last, its Summary listing the streams; then, by the input, one stream
 * file gets a flipped byte, is cut, or is deleted. Both passes run; the
 * merged trace is read back. Asserts, beyond no crash/leak/UB: damaged
 * input is always counted (never a merge that looks whole), the merged
 * trace's Summary says so and mr_open() refuses it unless told to accept
 * damage; an intact input's: every host event and every converted guest
 * event is in the merged trace exactly once, in non-decreasing time, each
 * with its origin; the merged stream ends clean and indexed; the counts
 * of the report add up; pass 2 read again as the walk reads a raw trace
 * (mg_p2_as_merged) gives exactly the items of the merged trace read back.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_input.h"
#include "merge.h"
#include "online.h"
#include "out.h"
#include "../tests/synth.h"
#include "vmscope_events.h"


static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

#define HB	1000000000000ull	/* host time base */
#define GB	5000000000000ull	/* guest time base */

/* Stream i: the host CPUs, then each VM's two CPUs. */
static void stream_name(int i, char *name, size_t len)
{
	if (i < 2)
		tf_trace_host_name(name, len, 0, (uint32_t)i);
	else
		tf_trace_guest_name(name, len, (uint32_t)(i - 2) / 2, (uint32_t)(i - 2) % 2);
}

/* Damage stream file @name after the fact: 1 a flipped byte, 2 cut, 3 gone. */
static void harm_stream(int dfd, const char *name, int how, uint16_t at)
{
	struct stat st;
	uint8_t b;
	int fd;

	if (how == 3) {
		ASSERT(unlinkat(dfd, name, 0) == 0);
		return;
	}
	fd = openat(dfd, name, O_RDWR);
	ASSERT(fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0);
	if (how == 1) {
		ASSERT(pread(fd, &b, 1, at % st.st_size) == 1);
		b ^= (uint8_t)(1 + at % 255);
		ASSERT(pwrite(fd, &b, 1, at % st.st_size) == 1);
	} else {
		ASSERT(ftruncate(fd, at % st.st_size) == 0);
	}
	close(fd);
}

/*
 * The online merge over the same trace: it ends, host time never goes
 * back, nothing is late (replay never stalls), it pairs as pass 1 did;
 * on intact input every host record once and every guest record once or
 * left out (no segment). Small queues, so that guest records are also
 * extrapolated and sync records missed behind a full queue.
 */
static void check_online(struct vr_trace *t, const struct mg_result *r2, bool damaged,
			 uint64_t host, uint64_t guest)
{
	struct om_opts o = { .cap = 16 };
	const struct om_stats *st;
	struct om_rec rec;
	struct om *m;
	char err[256];
	uint64_t prev = 0, h = 0, g = 0;
	int e;

	ASSERT(om_open(&m, t, &o, err, sizeof(err)) == 0);
	while ((e = om_next(m, &rec)) == 1) {
		ASSERT(rec.ts >= prev);
		prev = rec.ts;
		if (rec.kind == VR_EVENT && !rec.o.origin)
			h++;
		else if (rec.kind == VR_EVENT)
			g++;
	}
	ASSERT(e == 0);
	st = om_stats(m);
	ASSERT(st->late == 0);
	ASSERT(st->peak_held <= 16 && st->peak_queued <= 16);
	if (!damaged) {
		ASSERT(h == host && h == r2->n.host_events);
		ASSERT(g + st->unconverted == guest);
		if (!st->pull_full)	/* then the pairing saw what pass 1 saw */
			ASSERT(om_result(m)->pair->st.paired == r2->pair->st.paired);
	}
	om_close(m);
}

/* Pass 2 once more, each record as mg_p2_as_merged gives it (what the
 * walk reads of a raw trace: reports and exports of it) against the
 * merged trace read back: the same items, descriptors, payloads, origins
 * and losses, in the same order. Run last: it adds to @r's counts. */
static void check_as_merged(struct vr_trace *t, struct mg_result *r, const char *merged)
{
	struct vr_events *uev = NULL;
	struct mo_union u;
	struct mg_p2 *p2;
	struct mg_p2_rec rec;
	struct vr_item a, b;
	struct mo_origin ob;
	bool ha, hb;
	struct mr *m;
	char err[512];

	ASSERT(mo_union_build(&u, t, err, sizeof(err)) == 0);
	ASSERT(vr_events_from_pb(&uev, &u.table) == 0);
	ASSERT(mg_p2_open(&p2, t, r, err, sizeof(err)) == 0);
	ASSERT(mr_open(&m, merged, MR_ACCEPT_DAMAGE, err, sizeof(err)) == 0);
	const struct vr_events *mev = vr_trace_events(mr_trace(m), VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);

	for (;;) {
		int got = 0;

		while (!got && mg_p2_next(p2, &rec) == 1)
			got = mg_p2_as_merged(&rec, t, &u, uev, &a, &ha);
		if (!got) {
			ASSERT(mr_next(m, &b, &ob, &hb) == 0);
			break;
		}
		ASSERT(mr_next(m, &b, &ob, &hb) == 1);
		ASSERT(a.kind == b.kind && a.ts == b.ts && ha == hb);
		if (a.kind == VR_LOSS)
			ASSERT(a.events == b.events && a.loss_kind == b.loss_kind &&
			       a.first == b.first && !strcmp(a.text, b.text) &&
			       !memcmp(&rec.o, &ob, sizeof(ob)));
		if (a.kind != VR_EVENT)
			continue;
		ASSERT(a.desc - uev->desc == b.desc - mev->desc);
		ASSERT(a.size == b.size && !memcmp(a.payload, b.payload, a.size));
		ASSERT(!memcmp(&rec.o, &ob, sizeof(ob)));
	}
	mr_close(m);
	ASSERT(mg_p2_close(p2, err, sizeof(err)) == 0);
	vr_events_free(uev);
	mo_union_free(&u);
}

/* The input trace as it is written: its streams, clocks and event counts. */
struct gen {
	struct in *in;
	struct synth *s;
	struct synth_stream *w;
	int ns;			/* streams: 2 host CPUs, 2 per VM */
	uint64_t ts[6];		/* each stream's last record */
	uint64_t T;		/* host time of the next operation */
	int64_t ppm, goff;	/* the guest clock's drift and steps */
	uint64_t seq[2][2];	/* the next honest exchange's, per (vm, vCPU) */
	uint64_t host, guest;	/* events written */
};

/* An exchange of vCPU (vm, c) of stream @i: mostly the truth. */
static void gen_exchange(struct gen *gn, int i)
{
	struct in *in = gn->in;
	uint64_t *ts = gn->ts;
	uint32_t vm = (uint32_t)(i - 2) / 2, c = (uint32_t)(i - 2) % 2;
	int h = (int)(take(in, 1) & 1);
	uint64_t t2 = gn->T > ts[h] ? gn->T : ts[h], t3 = t2 + 300 + take(in, 1) * 10;
	int64_t d1 = (int64_t)take(in, 1) * 4 - 64, d2 = (int64_t)take(in, 1) * 4 - 64;
	uint64_t g1 = GB + (t2 - HB) + (uint64_t)((int64_t)(t2 - HB) / 1000000 * gn->ppm) +
		      (uint64_t)gn->goff - (uint64_t)d1;
	uint64_t g4 = g1 + (t3 - t2) + (uint64_t)d1 + (uint64_t)d2;
	uint64_t sq = take(in, 1) % 16 ? ++gn->seq[vm][c] : take(in, 1);
	uint64_t tok = take(in, 1) % 16 ? 7 : 8;
	int32_t tid = (int32_t)(1000 * (vm + 1) + 1 + c);
	struct vmscope_ev_sync_t2 e2 = { .t2 = t2, .token = tok, .seq = sq, .t1 = g1,
					 .guest_cpu = c, .tid = tid, .vcpu_id = c };
	struct vmscope_ev_sync_t3 e3 = { .t2 = t2, .t3 = t3, .token = tok, .seq = sq,
					 .tid = tid, .vcpu_id = c };
	struct synth_gsync eg = { .t1 = g1, .t4 = g4, .token = tok, .seq = sq, .cpu = c };

	synth_stream_rec(&gn->w[h], t2, VMSCOPE_EV_sync_t2, &e2, sizeof(e2));
	synth_stream_rec(&gn->w[h], t3, VMSCOPE_EV_sync_t3, &e3, sizeof(e3));
	ts[h] = t3;
	gn->host += 2;
	if (take(in, 1) % 16) {
		uint8_t b[72];

		ts[i] = g4 > ts[i] ? g4 : ts[i];
		synth_stream_rec(&gn->w[i], ts[i], SYNTH_GID_SYNC, b,
				 synth_gsync_bytes(gn->s, &eg, b));
		gn->guest++;
	}
}

/* A hostile record on host stream @i, of kind @k % 5. */
static void gen_host(struct gen *gn, int i, uint8_t k)
{
	struct in *in = gn->in;
	uint64_t *ts = gn->ts;
	struct synth_stream *w = gn->w;
	int32_t tid = (int32_t)(1000 * (1 + take(in, 1) % 2) + 1 + take(in, 1) % 2);

	ts[i] = gn->T > ts[i] ? gn->T : ts[i];
	switch (k % 5) {
	case 0: {
		struct vmscope_ev_sync_t2 e = {
			.t2 = ts[i], .token = val(in, 7, 1), .seq = val(in, 2, 2),
			.t1 = val(in, GB, 500), .guest_cpu = take(in, 1) % 3,
			.tid = tid, .vcpu_id = (uint32_t)take(in, 1) % 3 };
		synth_stream_rec(&w[i], ts[i], VMSCOPE_EV_sync_t2, &e, sizeof(e));
		break;
	}
	case 1: {
		struct vmscope_ev_sync_t3 e = {
			.t2 = ts[i] - val(in, 0, 300), .t3 = ts[i],
			.token = val(in, 7, 1), .seq = val(in, 2, 2), .tid = tid,
			.vcpu_id = (uint32_t)take(in, 1) % 3 };
		synth_stream_rec(&w[i], ts[i], VMSCOPE_EV_sync_t3, &e, sizeof(e));
		break;
	}
	case 2: {
		struct vmscope_ev_kvm_write_tsc_offset e = { .vcpu_id = 0 };
		synth_stream_rec(&w[i], ts[i], VMSCOPE_EV_kvm_write_tsc_offset, &e, sizeof(e));
		break;
	}
	case 3: {
		struct vmscope_ev_sched_switch e = { .next_pid = tid };
		synth_stream_rec(&w[i], ts[i], VMSCOPE_EV_sched_switch, &e, sizeof(e));
		break;
	}
	default: {
		struct vmscope_ev_kvm_exit e = { .vcpu_id = 1 };
		synth_stream_rec(&w[i], ts[i], VMSCOPE_EV_kvm_exit, &e, sizeof(e));
	}
	}
	gn->host++;
}

/* A hostile record on guest stream @i, of kind @k % 3, on the guest's clock. */
static void gen_guest(struct gen *gn, int i, uint8_t k)
{
	struct in *in = gn->in;
	uint64_t *ts = gn->ts;
	struct synth_stream *w = gn->w;
	uint64_t g = GB + (gn->T - HB) + (uint64_t)gn->goff;

	ts[i] = g > ts[i] ? g : ts[i];
	switch (k % 3) {
	case 0: {
		struct synth_gsync e = {
			.t1 = val(in, GB, 500), .token = val(in, 7, 1),
			.seq = val(in, 2, 2), .cpu = take(in, 1) % 8 ?
			(uint32_t)(i - 2) % 2 : (uint32_t)take(in, 1) };
		uint8_t b[72];

		e.t4 = e.t1 + val(in, 0, 200);
		e.steal_ns = gn->s->steal ? take(in, 1) : 0;
		synth_stream_rec(&w[i], ts[i], SYNTH_GID_SYNC, b, synth_gsync_bytes(gn->s, &e, b));
		break;
	}
	case 1: {
		struct synth_gswitch e = { .next_pid = (int32_t)take(in, 1) };
		synth_stream_rec(&w[i], ts[i], SYNTH_GID_SWITCH, &e, sizeof(e));
		break;
	}
	default: {
		uint32_t n = 1;
		synth_stream_rec(&w[i], ts[i], SYNTH_GID_TICK, &n, sizeof(n));
	}
	}
	gn->guest++;
}

/* Up to 2000 operations from the input over the open streams. */
static void gen_records(struct gen *gn)
{
	struct in *in = gn->in;

	for (int op = 0; op < 2000 && in->n; op++) {
		uint8_t k = (uint8_t)take(in, 1);
		int i = (int)(take(in, 1) % (uint64_t)gn->ns);

		gn->T += k & 0x80 ? take(in, 4) : (uint64_t)(k & 0x70) * 100;
		if (k % 8 == 0 && i >= 2)
			gen_exchange(gn, i);
		else if (k % 8 == 1)	/* the guest clock steps */
			gn->goff += (int64_t)take(in, 3) - (1 << 23);
		else if (i < 2)
			gen_host(gn, i, k);
		else
			gen_guest(gn, i, k);
	}
}

/* A damaged input's merged trace: marked, refused unless accepted. */
static void check_damaged(const char *out_path)
{
	const Vmscope__Trace__Summary *sum;
	struct mo_origin og;
	struct vr_item it;
	char err[256];
	struct mr *m;
	bool has;

	ASSERT(mr_open(&m, out_path, 0, err, sizeof(err)) == -EBADMSG);
	ASSERT(mr_open(&m, out_path, MR_ACCEPT_DAMAGE, err, sizeof(err)) == 0);
	sum = vr_trace_summary(mr_trace(m));
	ASSERT(sum && sum->input && sum->input->damaged);
	while (mr_next(m, &it, &og, &has) == 1)
		;
	ASSERT(mr_damage(m, err, sizeof(err)) == 1);
	mr_close(m);
}

/*
 * Clock-unreliable spans: each guest event in one at most, sorted, each a
 * span of host time, what flagged it said.
 */
static void check_spans(const struct mg_result *r, unsigned int n_vms, uint64_t guest)
{
	uint64_t in_spans = 0;

	for (size_t i = 0; i < r->spans.n; i++) {
		const struct mg_span *p = &r->spans.s[i];

		ASSERT(p->vm < n_vms && p->h_start <= p->h_end && p->seen);
		ASSERT(!(p->seen & ~(uint32_t)(MG_SEEN_SHORT | MG_SEEN_REPEAT | MG_SEEN_OFFLINE |
					       MG_SEEN_STEP)));
		if (i)
			ASSERT(p->vm > p[-1].vm || (p->vm == p[-1].vm && (p->cpu > p[-1].cpu ||
			       (p->cpu == p[-1].cpu && p->h_start >= p[-1].h_start))));
		in_spans += p->events;
	}
	ASSERT(in_spans == r->c.ev_unreliable && in_spans <= guest);
}

/*
 * An intact input's merged trace: the report's counts add up, every event
 * once in non-decreasing time with its origin, the spans in the session,
 * a clean indexed end.
 */
static void check_merged(const char *out_path, const struct mg_result *r, unsigned int n_vms,
			 uint64_t host, uint64_t guest)
{
	const Vmscope__Trace__SessionMetadata *ms;
	uint64_t n = 0, prev = 0;
	struct mo_origin og;
	struct vr_item it;
	char err[256];
	struct mr *m;
	size_t k = 0;
	bool has;

	ASSERT(r->n.host_events == host);
	ASSERT(r->n.guest_events + r->n.unconverted == guest);
	ASSERT(r->n.out_events == r->n.host_events + r->n.guest_events);
	ASSERT(r->n.bad == 0);
	ASSERT(r->c.exchanges + r->c.not_accepted <= guest);
	ASSERT(r->pair->st.host_pairs == r->pair->st.by_thread + r->pair->st.by_token +
	       r->pair->st.no_vm);
	check_spans(r, n_vms, guest);

	ASSERT(mr_open(&m, out_path, 0, err, sizeof(err)) == 0);
	ms = vr_trace_session(mr_trace(m));
	for (size_t v = 0; ms && v < ms->n_vms; v++)
		k += ms->vms[v]->n_clock_unreliable;
	ASSERT(k == r->spans.n);
	while (mr_next(m, &it, &og, &has) == 1) {
		ASSERT(it.kind == VR_EVENT);
		ASSERT(has);
		ASSERT(it.ts >= prev);
		ASSERT(og.origin <= n_vms);
		if (!og.origin)
			ASSERT(og.orig_ts == it.ts);
		prev = it.ts;
		n++;
	}
	ASSERT(n == r->n.out_events);
	ASSERT(mr_stats(m)->end.kind == TF_END_CLEAN && mr_stats(m)->has_index);
	ASSERT(mr_damage(m, err, sizeof(err)) == 0);
	mr_close(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct synth_stream w[6];
	struct in in = { data, size };
	struct synth s;
	char dir[64] = "/dev/shm/merge-fuzz-XXXXXX", in_path[96], out_path[96], err[256];
	struct gen gn = { .in = &in, .s = &s, .w = w, .ts = { HB, HB, GB, GB, GB, GB },
			  .T = HB };
	struct mg_opts o = { 0 };
	struct mg_result r;
	struct vr_trace *t;
	int dfd, damaged;
	uint8_t opt, harm;
	uint16_t harm_at;

	synth_defaults(&s, 1);
	s.n_vms = 1 + (unsigned int)(take(&in, 1) & 1);
	opt = (uint8_t)take(&in, 1);
	s.no_tid_map = opt & 1;
	s.steal = opt >> 1 & 1;	/* sync_guest in ABI 0.4's layout (cpu at 64) */
	s.H0 = HB;
	harm = (uint8_t)take(&in, 1);
	harm_at = (uint16_t)take(&in, 2);
	gn.ns = 2 + 2 * (int)s.n_vms;
	if (!mkdtemp(dir))
		return 0;
	snprintf(in_path, sizeof(in_path), "%s/in", dir);
	snprintf(out_path, sizeof(out_path), "%s/out", dir);
	ASSERT(tf_trace_create(in_path, &dfd) == 0);
	for (int i = 0; i < gn.ns; i++) {
		char name[64];

		stream_name(i, name, sizeof(name));
		ASSERT(synth_stream_open(&w[i], dfd, name, i < 2 ? VMSCOPE__TRACE__SIDE__SIDE_HOST :
					 VMSCOPE__TRACE__SIDE__SIDE_GUEST, (uint32_t)(i - 2) / 2,
					 i < 2 ? (uint32_t)i : (uint32_t)(i - 2) % 2) == 0);
	}
	/* a guest clock the exchanges mostly tell the truth about */
	gn.ppm = (int64_t)(take(&in, 1) % 201) - 100;
	gen_records(&gn);
	for (int i = 0; i < gn.ns; i++)
		ASSERT(synth_stream_close(&w[i]) == 0);
	ASSERT(synth_write_meta(&s, dfd) == 0);
	if (harm & 3) {
		char name[64];

		stream_name((harm >> 2) % gn.ns, name, sizeof(name));
		harm_stream(dfd, name, harm & 3, harm_at);
	}
	close(dfd);

	ASSERT(vr_trace_open(&t, in_path, err, sizeof(err)) == 0);
	ASSERT(mg_sync(t, &o, &r, err, sizeof(err)) == 0);
	ASSERT(mg_merge(t, out_path, &r, err, sizeof(err)) == 0);
	if (getenv("FUZZ_MERGE_REPORT"))	/* to see what an input does */
		mg_report(stderr, t, &r, MG_REPORT_ALL);
	damaged = vr_damage_count(vr_trace_damage(t)) != 0;
	ASSERT(!(harm & 3) || damaged);
	ASSERT(!r.n.bad || damaged);
	if (damaged)
		check_damaged(out_path);
	else
		check_merged(out_path, &r, s.n_vms, gn.host, gn.guest);
	check_online(t, &r, damaged, gn.host, gn.guest);
	check_as_merged(t, &r, out_path);
	mg_result_free(&r);
	vr_trace_close(t);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
