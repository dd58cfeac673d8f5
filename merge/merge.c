// SPDX-License-Identifier: GPL-2.0
/* Pass 2 of the merge: the k-way merge and the causality check (merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "heap.h"
#include "out.h"
#include "roles.h"
#include "scan.h"
#include "util_clock.h"

/* Recent events of a guest CPU: the one just before an exchange's t1 is
 * among them unless more than this many events fall between t1 and the
 * sync record (none do: the record is written right after t4). */
#define MG_RING 8

struct src {
	struct vr_stream *s;
	const struct mg_roles *ro;
	const struct mt_vm *vmt;	/* guest: its VM's transform */
	uint32_t vm;			/* guest: VM index */
	bool guest, done;
	struct vr_item it;		/* the peeked item */
	uint64_t key;			/* its host time */
	int32_t tid;			/* thread on this CPU (sched_switch): guest,
					 * or a host CPU beyond host_tid's table */
	const struct vmscope_sync_segment *seg;
	bool seg_from_sync;
	/* accepted exchanges of this CPU from pass 1, ordered by seq */
	struct mg_accq acc;
	bool acc_init;
	bool has_x;			/* the peeked sync record's exchange */
	struct mg_acc x;
	struct mg_span_walk spans;	/* this stream's clock-unreliable spans */
	struct { uint64_t g, out; } ring[MG_RING];
	unsigned int nring, pos;
	bool after;
	uint64_t after_g, after_t3;
	/* the same after a dropped exchange (clock evidence) */
	bool uafter;
	uint64_t uafter_g, uafter_t3;
};

/* Pass 2 as a source of records (merge.h): mg_merge writes them, the
 * analysis reads them without a file. */
struct mg_p2 {
	struct vr_trace *t;
	struct mg_result *r;
	struct mg_roles host, *vms;
	bool pending;			/* the heap's top was handed out: advance it */
	struct src *src;
	size_t n;
	struct mh heap;
	uint64_t last_out;
	/* [MP_MAX_CPUS]: thread each host CPU runs, -1 when unknown; per
	 * CPU, as a CPU's records may lie in several streams (channels) */
	int32_t *host_tid;
};

/* Where the thread that @s's CPU runs is kept. */
static int32_t *cpu_tid(struct mg_p2 *c, struct src *s, const struct vr_stream_stats *st)
{
	if (!s->guest && st->origin.cpu < MP_MAX_CPUS)
		return &c->host_tid[st->origin.cpu];
	return &s->tid;
}

static bool conv(struct src *s, uint64_t g, uint64_t *h)
{
	if (!s->seg_from_sync && (!s->seg || g > s->seg->g_last))
		s->seg = mt_segment_for(s->vmt, g);
	return mt_convert(s->vmt, &s->seg, g, h);
}

/* Read the next item of @s worth merging and its host time. */
static void peek(struct mg_p2 *c, struct src *s)
{
	struct mg_result *r = c->r;

	while (!s->done) {
		struct vr_item *it = &s->it;
		const struct vr_stream_stats *st;

		if (vr_stream_next(s->s, it) != 1) {
			s->done = true;
			return;
		}
		st = vr_stream_stats(s->s);
		s->guest = st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST;
		if (s->guest) {
			if (st->origin.vm >= r->n_vms) {
				r->n.bad++;
				continue;
			}
			s->vm = st->origin.vm;
			s->vmt = &r->mt.vm[s->vm];
			s->ro = &c->vms[s->vm];
		} else {
			s->ro = &c->host;
		}
		if (it->kind == VR_BAD) {
			r->n.bad++;
			continue;
		}
		if (it->kind != VR_EVENT && it->kind != VR_LOSS && it->kind != VR_GAP)
			continue;
		s->has_x = false;
		if (!s->guest) {
			s->key = it->ts;
			return;
		}
		if (!s->acc_init) {
			s->acc_init = true;
			mg_span_walk_init(&s->spans, &r->spans, (size_t)(s - c->src));
			mg_accq_init(&s->acc, r->acc[s->vm] && st->origin.cpu < MP_MAX_CPUS ?
					      r->acc[s->vm][st->origin.cpu] : NULL);
		}
		if (it->kind == VR_EVENT && it->desc == s->ro->guest) {
			const struct mg_field *f = s->ro->f_g;
			const uint8_t *p = it->payload;

			s->has_x = mg_accq_find(&s->acc, mg_get(&f[G_SEQ], p), mg_get(&f[G_TOKEN], p),
					    mg_get(&f[G_T1], p), &s->x);
			if (s->has_x) {
				const struct vmscope_sync_segment *g = mt_segment(s->vmt, s->x.seg);

				if (g) {
					s->seg = g;
					s->seg_from_sync = true;
				}
			}
		}
		if (conv(s, it->ts, &s->key))
			return;
		if (it->kind == VR_EVENT)
			r->n.unconverted++;
	}
}

/* An event checked against a hypercall where no bound is claimed: on
 * the wrong side by @by ns when @wrong. */
static void unclaimed(struct mg_causality *k, bool wrong, uint64_t by)
{
	k->unrel_checked++;
	if (wrong) {
		k->unrel_viol++;
		if (by > k->unrel_worst_ns)
			k->unrel_worst_ns = by;
	}
}

/* The latest earlier event of @s's CPU at or before the exchange's t1
 * lands at or before its t2: counted as a claim, or only reported. */
static void check_before(struct mg_causality *k, const struct src *s, bool claimed)
{
	for (unsigned int i = 0; i < s->nring; i++) {
		unsigned int j = (s->pos + MG_RING - 1 - i) % MG_RING;
		uint64_t out = s->ring[j].out;

		if (s->ring[j].g > s->x.t1)
			continue;
		if (claimed) {
			k->ev_before++;
			k->viol_before += out > s->x.t2;
		} else {
			unclaimed(k, out > s->x.t2, out - s->x.t2);
		}
		return;
	}
}

/* Causality at a guest item about to be written at host time @out. */
static void causality(struct mg_p2 *c, struct src *s, uint64_t out)
{
	struct mg_causality *k = &c->r->c;
	const struct vr_item *it = &s->it;
	uint64_t h1, h4;

	if (s->after && it->ts >= s->after_g) {
		k->ev_after++;
		if (out < s->after_t3)
			k->viol_after++;
	}
	if (s->uafter && it->ts >= s->uafter_g)
		unclaimed(k, out < s->uafter_t3, s->uafter_t3 - out);
	if (it->desc == s->ro->guest)
		s->uafter = false;
	if (it->desc == s->ro->guest && s->has_x && s->x.seg < 0) {
		/* a hypercall the host saw, in a span clock.c flagged */
		check_before(k, s, false);
		s->uafter = true;
		s->uafter_g = s->x.t4;
		s->uafter_t3 = s->x.t3;
	}
	if (it->desc == s->ro->guest) {
		/* through the exchange's own segment */
		const struct vmscope_sync_segment *sg =
			s->has_x ? mt_segment(s->vmt, s->x.seg) : NULL;
		uint64_t t4 = mg_get(&s->ro->f_g[G_T4], it->payload);
		bool span_before = false, span_after = false;

		if (s->has_x && s->x.seg >= 0)
			mg_span_walk_at(&s->spans, &s->x, &span_before, &span_after);
		if (!sg || vmscope_sync_segment_estimate(sg, s->x.t1, &h1) ||
		    vmscope_sync_segment_estimate(sg, t4, &h4)) {
			k->not_accepted++;
		} else {
			k->exchanges++;
			k->viol_t1 += h1 > s->x.t2;
			k->viol_t4 += h4 < s->x.t3;
			/* an accepted exchange ending a span or inside one
			 * (before), starting one or inside (after): the
			 * events of the interval on that side are the
			 * span's, for which no bound is claimed */
			k->span_exchanges += span_before;
			check_before(k, s, !span_before);
			s->after = !span_after;
			s->uafter = span_after;
			if (span_after) {
				s->uafter_g = t4;
				s->uafter_t3 = s->x.t3;
			} else {
				s->after_g = t4;
				s->after_t3 = s->x.t3;
			}
		}
	}
	s->ring[s->pos].g = it->ts;
	s->ring[s->pos].out = out;
	s->pos = (s->pos + 1) % MG_RING;
	if (s->nring < MG_RING)
		s->nring++;
}

/* The record of stream @idx, as the merged trace has it. */
static void emit(struct mg_p2 *c, size_t idx, struct mg_p2_rec *rec)
{
	struct src *s = &c->src[idx];
	const struct vr_item *it = &s->it;
	const struct vr_stream_stats *st = vr_stream_stats(s->s);
	struct mg_result *r = c->r;
	uint64_t out = s->key;
	int32_t *tid = cpu_tid(c, s, st);
	struct mo_origin *o = &rec->o;

	if (out < c->last_out) {
		out = c->last_out;
		r->n.clamped++;
	}
	c->last_out = out;
	rec->it = *it;
	rec->ts = out;
	rec->st = st;
	if (it->kind == VR_LOSS || it->kind == VR_GAP) {
		/* the origin of the LossRecord write_rec writes: its stream's */
		r->n.losses += it->kind == VR_LOSS;
		r->n.gaps += it->kind == VR_GAP;
		mo_origin_of_stream(&st->origin, o);
		return;
	}
	o->orig_ts = it->ts;
	o->cpu = st->origin.cpu;
	o->tid = *tid;
	if (s->guest) {
		o->origin = s->vm + 1;
		o->vcpu = o->cpu;
		r->n.guest_events++;
		causality(c, s, out);
	} else {
		o->origin = 0;
		o->vcpu = MO_NONE;
		if (*tid >= 0)
			mp_thread_vm(r->pair, *tid, &o->vcpu);
		r->n.host_events++;
	}
	if (it->desc == s->ro->sw)	/* the switch is the previous thread's */
		*tid = (int32_t)mg_get(&s->ro->f_sw_next, it->payload);
}

int mg_p2_next(struct mg_p2 *c, struct mg_p2_rec *rec)
{
	if (c->pending) {
		struct src *s = &c->src[c->heap.e[0].idx];

		peek(c, s);
		mh_next(&c->heap, s->key, s->done);
		c->pending = false;
	}
	if (!c->heap.n)
		return 0;
	emit(c, c->heap.e[0].idx, rec);
	c->pending = true;
	return 1;
}

/* The LossRecord the merged trace holds for a loss or gap @it. */
static void loss_of(const struct vr_item *it, int *kind, uint64_t *events, uint64_t *subbufs,
		    const char **detail)
{
	if (it->kind == VR_LOSS) {
		/* a rise of the ring buffer's own counter has no kind (0),
		 * which a LossRecord may not carry: readers would refuse the
		 * frame and the loss with it */
		*kind = it->loss_kind ? it->loss_kind :
			VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD;
		*events = it->events;
		*subbufs = 0;
		*detail = it->text ? it->text : "";
	} else {
		*kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_SEQ_GAP;
		*events = 0;
		*subbufs = it->last - it->first + 1;
		*detail = "sub-buffers skipped";
	}
}

/* Write @rec into the merged trace. */
static int write_rec(struct mo *out, struct vr_trace *t, struct mg_result *r,
		     const struct mg_p2_rec *rec)
{
	const struct vr_item *it = &rec->it;
	uint64_t events, subbufs;
	const char *detail;
	int id, kind;

	if (it->kind == VR_LOSS || it->kind == VR_GAP) {
		loss_of(it, &kind, &events, &subbufs, &detail);
		return mo_loss(out, &rec->st->origin, kind, events, subbufs, rec->ts, detail);
	}
	id = mo_id(out, t, rec->o.origin, it->desc);
	if (id < 0) {
		r->n.bad++;
		return 0;
	}
	r->n.out_events++;
	return mo_event(out, id, rec->ts, it->payload, it->size, &rec->o);
}

int mg_p2_as_merged(const struct mg_p2_rec *rec, struct vr_trace *t, const struct mo_union *u,
		    const struct vr_events *uev, struct vr_item *it, bool *has_o)
{
	const char *detail;
	int id, kind;

	*it = rec->it;
	it->ts = rec->ts;	/* the time the merged trace has */
	*has_o = false;
	if (it->kind == VR_LOSS || it->kind == VR_GAP) {
		/* what the reader makes of the LossRecord write_rec writes */
		loss_of(&rec->it, &kind, &it->events, &it->first, &detail);
		it->kind = VR_LOSS;
		it->loss_kind = kind;
		it->last = 0;
		it->text = detail;
		/* and the origin write_rec gives it: its stream's (rec->o) */
		it->has_loss_origin = true;
		it->loss_origin = rec->st->origin;
		*has_o = true;
		return 1;
	}
	id = mo_union_id(u, t, rec->o.origin, it->desc);
	if (id < 0)
		return 0;	/* write_rec leaves it out */
	if (vr_events_index(uev, (unsigned int)id) != id) {
		/* written, but not decodable with the merged table */
		memset(it, 0, sizeof(*it));
		it->kind = VR_BAD;
		it->ts = rec->ts;
		it->text = "undecodable with the merged table";
		return 1;
	}
	it->desc = &uev->desc[id];
	*has_o = true;
	return 1;
}

void mg_p2_input(const struct mg_p2 *c, uint64_t *lost, uint64_t *gaps)
{
	*lost = *gaps = 0;
	for (size_t i = 0; i < c->n; i++) {
		*lost += vr_stream_stats(c->src[i].s)->lost_events;
		*gaps += vr_stream_stats(c->src[i].s)->gap_subbufs;
	}
}

int mg_clock_vms(const Vmscope__Trace__SessionMetadata *ss, const struct mg_result *r,
		     struct mg_clock_vms *cv)
{
	size_t n = r->spans.n, k = 0;

	if (!ss || !ss->n_vms || !n)
		return 0;
	cv->vms = calloc(ss->n_vms, sizeof(*cv->vms));
	cv->vi = calloc(ss->n_vms, sizeof(*cv->vi));
	cv->pp = calloc(n, sizeof(*cv->pp));
	cv->sp = calloc(n, sizeof(*cv->sp));
	if (!cv->vms || !cv->vi || !cv->pp || !cv->sp)
		return -ENOMEM;
	for (size_t v = 0; v < ss->n_vms; v++) {
		cv->vi[v] = *ss->vms[v];
		cv->vi[v].n_clock_unreliable = 0;
		cv->vi[v].clock_unreliable = &cv->pp[k];
		/* spans are sorted by VM */
		for (; k < n && r->spans.s[k].vm == v; k++) {
			const struct mg_span *m = &r->spans.s[k];
			Vmscope__Trace__ClockSpan *p = &cv->sp[k];

			vmscope__trace__clock_span__init(p);
			p->cpu = m->cpu;
			p->host_start_ns = m->h_start;
			p->host_end_ns = m->h_end;
			p->seen = m->seen;
			p->guest_events = m->events;
			cv->pp[k] = p;
			cv->vi[v].n_clock_unreliable++;
		}
		cv->vms[v] = &cv->vi[v];
	}
	return 0;
}

void mg_clock_vms_free(struct mg_clock_vms *cv)
{
	free(cv->vms);
	free(cv->vi);
	free(cv->pp);
	free(cv->sp);
	memset(cv, 0, sizeof(*cv));
}

int mg_p2_open(struct mg_p2 **out, struct vr_trace *t, struct mg_result *r,
	       char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *ss = vr_trace_session(t);
	struct mg_p2 *c = calloc(1, sizeof(*c));
	int e = 0;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->t = t;
	c->r = r;
	c->n = vr_trace_nr_streams(t);
	c->src = calloc(c->n ? c->n : 1, sizeof(*c->src));
	c->heap.e = calloc(c->n ? c->n : 1, sizeof(*c->heap.e));
	c->vms = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c->vms));
	c->host_tid = malloc(MP_MAX_CPUS * sizeof(*c->host_tid));
	if (!c->src || !c->heap.e || !c->vms || !c->host_tid) {
		e = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (uint32_t cpu = 0; cpu < MP_MAX_CPUS; cpu++)
		c->host_tid[cpu] = -1;
	mg_roles_init(&c->host, vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0));
	for (uint32_t v = 0; v < r->n_vms && ss; v++)
		mg_roles_init(&c->vms[v], vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, v));
	for (size_t i = 0; i < c->n; i++) {
		c->src[i].tid = -1;
		e = mg_scan_stream_open(&c->src[i].s, t, i, err, errlen);
		if (e)
			goto fail;
	}
	for (size_t i = 0; i < c->n; i++) {
		peek(c, &c->src[i]);
		if (!c->src[i].done) {
			c->heap.e[c->heap.n].key = c->src[i].key;
			c->heap.e[c->heap.n++].idx = i;
		}
	}
	mh_build(&c->heap);
	*out = c;
	return 0;
fail:
	mg_p2_close(c, NULL, 0);
	return e;
}

int mg_p2_close(struct mg_p2 *c, char *err, size_t errlen)
{
	int e = 0;

	if (!c)
		return 0;
	for (size_t i = 0; c->src && i < c->n; i++)
		if (c->src[i].acc.err && !e) {
			if (errlen)
				snprintf(err, errlen, "reading back a temporary file in %s: %s",
					 c->r->spill_dir, strerror(EIO));
			e = -EIO;
		}
	for (size_t i = 0; c->src && i < c->n; i++)
		vr_stream_close(c->src[i].s);
	free(c->src);
	free(c->heap.e);
	free(c->vms);
	free(c->host_tid);
	free(c);
	return e;
}

int mg_merge(struct vr_trace *t, const char *out, struct mg_result *r,
	     char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *ss = vr_trace_session(t);
	struct mg_clock_vms cv = { 0 };
	struct mg_p2 *c = NULL;
	struct mg_p2_rec rec;
	struct mo *mo = NULL;
	uint64_t lost, gaps;
	int e, e2;

	if (errlen)
		err[0] = 0;
	e = mg_p2_open(&c, t, r, err, errlen);
	if (!e)
		e = mg_clock_vms(ss, r, &cv);
	if (!e)
		e = mo_create_vms(&mo, out, t, cv.vms, err, errlen);
	if (e)
		goto out;
	double t0 = util_mono_s();

	while (!e && mg_p2_next(c, &rec) == 1)
		e = write_rec(mo, t, r, &rec);
	mg_p2_input(c, &lost, &gaps);
	e2 = mg_p2_close(c, err, e ? 0 : errlen);
	c = NULL;
	if (!e)
		e = e2;
	/* every input stream has ended: its damage, losses and gaps go into
	 * the merged trace's own account */
	mo_input(mo, t, lost, gaps);
	e2 = mo_close(mo, &r->n.chunks);
	r->time.merge = util_mono_s() - t0;
	if (!e)
		e = e2;
	if (e && !err[0])
		snprintf(err, errlen, "%s/%s: %s", out, MO_STREAM, strerror(-e));
	r->merged = !e;
out:
	mg_p2_close(c, NULL, 0);
	mg_clock_vms_free(&cv);
	return e;
}
