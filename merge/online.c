// SPDX-License-Identifier: GPL-2.0
/* The online merge: see online.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_int.h"

void om_rec_item(const struct om_rec *r, struct vr_item *it)
{
	memset(it, 0, sizeof(*it));
	it->kind = r->kind;
	it->ts = r->ts;
	it->desc = r->desc;
	it->payload = r->payload;
	it->size = r->size;
	it->events = r->events;
	it->loss_kind = r->loss_kind;
	it->first = r->first;
	it->last = r->last;
}

/* The record @r as the item the sync handling reads: in its own time. */
void om_as_item(const struct om_rec *r, struct vr_item *it)
{
	om_rec_item(r, it);
	it->ts = r->o.orig_ts;
}

void om_to_rec(const struct vr_item *it, struct om_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = it->kind;
	r->o.orig_ts = it->ts;
	r->desc = it->desc;
	r->events = it->events;
	r->loss_kind = it->loss_kind;
	r->first = it->first;
	r->last = it->last;
	if (it->kind == VR_EVENT) {
		r->size = it->size < sizeof(r->payload) ? it->size : sizeof(r->payload);
		memcpy(r->payload, it->payload, r->size);
	}
}

/* Read guest stream @s's next usable record into its held queue: false at
 * its end or when the queue is full. */
static bool guest_read(struct om *m, struct ostream *s)
{
	struct vr_item it;

	while (s->s && !s->ended && s->n < m->cap) {
		if (vr_stream_next(s->s, &it) != 1) {
			s->ended = true;
			break;
		}
		if (it.kind == VR_BAD) {
			m->st.bad++;
			continue;
		}
		if (it.kind != VR_EVENT && it.kind != VR_LOSS && it.kind != VR_GAP)
			continue;
		om_to_rec(&it, &s->held[(s->head + s->n) % m->cap]);
		s->n++;
		if (s->n > m->st.peak_held)
			m->st.peak_held = s->n;
		return true;
	}
	return false;
}

/* The pairing's pull: the next sync_guest record of (vm, cpu), from the
 * records released early, then the held ones, then the stream. */
int om_pull(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out)
{
	struct om *m = user;
	struct ostream *s;
	struct vr_item it;
	uint32_t i;

	if (vm >= m->r.n_vms || cpu >= MP_MAX_CPUS || !m->gsrc[vm] || !(i = m->gsrc[vm][cpu]))
		return 0;
	s = &m->s[i - 1];
	if (s->e_n) {
		*out = s->early[s->e_head];
		s->e_head = (s->e_head + 1) % OM_EARLY;
		s->e_n--;
		return 1;
	}
	for (;;) {
		while (s->pulled < s->n) {
			om_as_item(&s->held[(s->head + s->pulled++) % m->cap], &it);
			if (mg_scan_guest_sync(&m->b, vm, &it, out))
				return 1;
		}
		if (s->n == m->cap && !s->ended) {
			/* the rest waits for records this one holds back */
			m->st.pull_full++;
			return 0;
		}
		if (!guest_read(m, s))
			return 0;
	}
}

/*
 * Host time of guest time @g of VM @vm, as pass 2 converts it (README.md,
 * "Which segment converts a guest event") with the segments known so far:
 * the last segment whose samples begin at or before @g (else the first),
 * moved on to the next while the result lies past its limit (a clock
 * change between its last sample and the next one's). 1 when @g lies
 * after every sample known (*@h extrapolated from the last segment),
 * 0 when samples on both sides bound it, -1 when no segment answers.
 */
static int to_host(const struct om *m, uint32_t vm, uint64_t g, uint64_t *h, uint64_t *width)
{
	const struct mt_vm *v = &m->r.mt.vm[vm];
	const struct vmscope_sync_segment *cur = m->finished ? NULL : vmscope_sync_current(v->ctx);
	const struct vmscope_sync_segment *s = NULL, *next;
	size_t i, at = v->nseg;	/* index of s when closed */
	uint64_t lo, hi, h2, lo2, hi2;
	int open, open2;

	if (cur && (!cur->n_samples || cur->failed))
		cur = NULL;
	for (i = 0; i < v->nseg; i++)
		if (!v->seg[i].failed && (!s || v->seg[i].g_first <= g)) {
			s = &v->seg[i];
			at = i;
		}
	if (cur && (!s || cur->g_first <= g)) {
		s = cur;
		at = v->nseg;
	}
	if (!s || (open = vmscope_sync_segment_locate(s, g, h, &lo, &hi)) < 0)
		return -1;
	while (g > s->g_last && at < v->nseg) {
		/* between its last sample and the next segment's first */
		for (i = at + 1; i < v->nseg && v->seg[i].failed; i++)
			;
		next = i < v->nseg ? &v->seg[i] : cur;
		if (!next || *h <= mt_limit(v, at, next) ||
		    (open2 = vmscope_sync_segment_locate(next, g, &h2, &lo2, &hi2)) < 0)
			break;
		s = next;
		at = i;
		*h = h2;
		lo = lo2;
		hi = hi2;
		open = open2;
	}
	*width = open ? UINT64_MAX : hi - lo;
	if (g <= s->g_last)
		return 0;
	/* past the last segment's samples; in a gap the next one bounds it */
	return at < v->nseg && (at + 1 < v->nseg || cur) ? 0 : 1;
}

/*
 * Convert the first held record of guest stream @i and queue it: 0 done
 * (or left out), 1 when it waits for a later sample (only without
 * @force).
 */
int om_convert(struct om *m, size_t i, bool force)
{
	struct ostream *s = &m->s[i];
	struct om_rec *r = &s->held[s->head];
	const struct mg_roles *ro = &m->b.vms[s->vm];
	uint64_t h = 0;
	int e, k;

	k = to_host(m, s->vm, r->o.orig_ts, &h, &r->bound_ns);
	if (!force && k)
		return 1;
	if (k >= 0) {
		r->extrapolated = k == 1;
		m->st.extrapolated += k == 1;
		r->o.origin = s->vm + 1;
		r->o.cpu = r->o.vcpu = s->cpu;
		r->o.tid = s->tid;
		if (r->kind == VR_EVENT && r->desc == ro->sw)
			s->tid = (int32_t)mg_get(&ro->f_sw_next, r->payload);
		e = wm_push(&m->wm, i, h, r);
		if (e == WM_LATE)
			m->st.late++;
		if (e < 0)
			return e;
	} else if (r->kind == VR_EVENT) {
		m->st.unconverted++;
	}
	if (s->pulled) {
		s->pulled--;
	} else {
		struct mp_guest x;
		struct vr_item it;

		/* a sync record the pairing has not asked for yet */
		om_as_item(r, &it);
		if (mg_scan_guest_sync(&m->b, s->vm, &it, &x)) {
			if (s->e_n == OM_EARLY) {
				s->e_head = (s->e_head + 1) % OM_EARLY;
				s->e_n--;
				m->st.pull_full++;
			}
			s->early[(s->e_head + s->e_n++) % OM_EARLY] = x;
		}
	}
	s->head = (s->head + 1) % m->cap;
	s->n--;
	return 0;
}

/* The host record next in host time: through the sync handling, queued. */
static int step_host(struct om *m)
{
	size_t i = m->host.e[0].idx;
	struct ostream *s = &m->s[i];
	const struct vr_item *it = &s->it;
	struct om_rec r;
	int e = 0;

	if (it->kind == VR_EVENT || it->kind == VR_LOSS || it->kind == VR_GAP) {
		om_to_rec(it, &r);
		r.o.cpu = s->cpu;
		r.o.tid = s->cpu < MP_MAX_CPUS ? m->b.host_tid[s->cpu] : -1;
		r.o.vcpu = MO_NONE;
		if (r.o.tid >= 0)
			mp_thread_vm(m->r.pair, r.o.tid, &r.o.vcpu);
		if (it->kind == VR_EVENT)
			mg_scan_host(&m->b, s->cpu, it);
		e = wm_push(&m->wm, i, it->ts, &r);
		if (e == WM_LATE) {
			m->st.late++;
			e = 0;
		}
	} else if (it->kind == VR_BAD) {
		m->st.bad++;
	}
	if (vr_stream_next(s->s, &s->it) == 1) {
		wm_advance(&m->wm, i, s->it.ts);
		mh_next(&m->host, s->it.ts, 0);
	} else {
		s->ended = true;
		wm_end(&m->wm, i);
		mh_next(&m->host, 0, 1);
	}
	return e < 0 ? e : 0;
}

/* The host side ended: every sample resolved, the segments final. */
void om_finish(struct om *m)
{
	if (m->finished)
		return;
	mp_finish(m->r.pair);
	mt_finish(&m->r.mt);
	m->finished = true;
}

/* Move on while the ordering stage waits for stream @b. 0 or -errno. */
static int feed(struct om *m, size_t b)
{
	struct ostream *s = &m->s[b];

	if (!s->guest)
		return m->host.n ? step_host(m) : -EIO;
	if (!s->n && !guest_read(m, s)) {
		wm_end(&m->wm, b);
		return 0;
	}
	if (!om_convert(m, b, m->finished))
		return 0;
	/* its record waits for a later sample: more host records, unless
	 * their queue is full (memory bound: extrapolate) or they ended */
	if (!m->host.n) {
		om_finish(m);
		return 0;
	}
	if (wm_full(&m->wm, m->host.e[0].idx))
		return om_convert(m, b, true);
	return step_host(m);
}

int om_next(struct om *m, struct om_rec *r)
{
	for (;;) {
		size_t i, b;
		uint64_t key;
		int e;

		switch (wm_pop(&m->wm, false, r, &i, &key)) {
		case WM_ITEM:
			r->ts = key;
			if (m->s[i].guest)
				m->st.guest++;
			else
				m->st.host++;
			return 1;
		case WM_DONE:
			om_finish(m);
			m->st.late = m->wm.st.late;
			m->st.peak_queued = m->wm.st.peak;
			return 0;
		case WM_WAIT:
			break;
		}
		b = wm_blocker(&m->wm);
		if (b == SIZE_MAX)
			return -EIO;	/* replay never declares a stream late */
		e = feed(m, b);
		if (e)
			return e;
	}
}

static int open_streams(struct om *m, char *err, size_t errlen)
{
	m->n = vr_trace_nr_streams(m->b.t);
	m->s = calloc(m->n ? m->n : 1, sizeof(*m->s));
	m->host.e = calloc(m->n ? m->n : 1, sizeof(*m->host.e));
	m->gsrc = calloc(m->r.n_vms ? m->r.n_vms : 1, sizeof(*m->gsrc));
	if (!m->s || !m->host.e || !m->gsrc)
		return -ENOMEM;
	if (wm_init(&m->wm, m->n, m->cap, sizeof(struct om_rec), 0))
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		struct ostream *s = &m->s[i];
		const struct vr_stream_stats *st;
		int e = mg_scan_stream_open(&s->s, m->b.t, i, err, errlen);

		if (e)
			return e;
		s->tid = -1;
		m->r.n.streams++;
		if (vr_stream_next(s->s, &s->it) != 1) {
			s->ended = true;
			wm_end(&m->wm, i);
			continue;
		}
		/* the origin is known once the first item is read */
		st = vr_stream_stats(s->s);
		s->cpu = st->origin.cpu;
		s->vm = st->origin.vm;
		if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_HOST) {
			m->host.e[m->host.n].key = s->it.ts;
			m->host.e[m->host.n++].idx = i;
			wm_advance(&m->wm, i, s->it.ts);
		} else if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST &&
			   s->vm < m->r.n_vms && s->cpu < MP_MAX_CPUS) {
			s->guest = true;
			s->held = calloc(m->cap, sizeof(*s->held));
			if (!s->held)
				return -ENOMEM;
			if (mg_scan_guest_stream(m->gsrc, s->vm, s->cpu, i))
				return -ENOMEM;
			/* its first record, held like the rest */
			if (s->it.kind == VR_EVENT || s->it.kind == VR_LOSS || s->it.kind == VR_GAP) {
				om_to_rec(&s->it, &s->held[0]);
				s->n = 1;
			} else if (s->it.kind == VR_BAD) {
				m->st.bad++;
			}
		} else {
			m->st.bad++;	/* a stream of no side or VM of the session */
			s->ended = true;
			wm_end(&m->wm, i);
		}
	}
	mh_build(&m->host);
	return 0;
}

int om_open(struct om **out, struct vr_trace *t, const struct om_opts *o, char *err,
	    size_t errlen)
{
	struct om *m = calloc(1, sizeof(*m));
	int e;

	*out = NULL;
	if (errlen)
		err[0] = 0;
	if (!m)
		return -ENOMEM;
	m->cap = o->cap ? o->cap : OM_CAP;
	/* accepted exchanges need nothing here: a guest record's segment is
	 * read from the transforms when it is converted */
	e = mg_scan_init(&m->b, t, &o->m, &m->r, om_pull, NULL, NULL);
	if (!e)
		e = open_streams(m, err, errlen);
	if (e) {
		if (!err[0])
			snprintf(err, errlen, "%s", strerror(-e));
		om_close(m);
		return e;
	}
	*out = m;
	return 0;
}

const struct mg_result *om_result(const struct om *m)
{
	return &m->r;
}

const struct om_stats *om_stats(const struct om *m)
{
	return &m->st;
}

void om_close(struct om *m)
{
	if (!m)
		return;
	for (size_t i = 0; m->s && i < m->n; i++) {
		vr_stream_close(m->s[i].s);
		free(m->s[i].held);
	}
	for (uint32_t v = 0; m->gsrc && v < m->r.n_vms; v++)
		free(m->gsrc[v]);
	free(m->gsrc);
	free(m->s);
	free(m->pre);
	free(m->host.e);
	wm_free(&m->wm);
	mg_scan_free(&m->b);
	mg_result_free(&m->r);
	free(m);
}
