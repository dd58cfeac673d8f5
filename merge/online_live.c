// SPDX-License-Identifier: GPL-2.0
/*
 * The online merge fed by a live source (online.h, om_live_*): the same
 * pairing, transforms, conversion and ordering as om_next's, with records
 * pushed as the source gets them instead of read ahead from files.
 * README.md, "The online merge", "Fed".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online_int.h"

#define HOST 0		/* the host's stream: records already in host-time order */

static size_t gstream(const struct om *m, uint32_t vm, uint32_t cpu)
{
	return 1 + (size_t)vm * m->gcpus + cpu;
}

int om_live_open(struct om **out, struct vr_trace *t, const struct om_opts *o,
		 uint32_t guest_cpus, uint64_t lag_ns, om_emit_fn *emit, void *ctx,
		 char *err, size_t errlen)
{
	struct om *m = calloc(1, sizeof(*m));
	int e;

	*out = NULL;
	if (errlen)
		err[0] = 0;
	if (!m || !emit || !guest_cpus || guest_cpus > MP_MAX_CPUS) {
		free(m);
		return m ? -EINVAL : -ENOMEM;
	}
	m->live = true;
	m->emit = emit;
	m->ctx = ctx;
	m->cap = o->cap ? o->cap : OM_CAP;
	m->gcpus = guest_cpus;
	m->lag_ns = lag_ns;
	e = mg_scan_init(&m->b, t, &o->m, &m->r, om_pull, NULL, NULL);
	if (!e) {
		m->r.pair->live = true;
		m->n = 1 + (size_t)m->r.n_vms * guest_cpus;
		m->s = calloc(m->n, sizeof(*m->s));
		m->gsrc = calloc(m->r.n_vms ? m->r.n_vms : 1, sizeof(*m->gsrc));
		m->pre = calloc(m->cap, sizeof(*m->pre));
		/* the queues are fixed here; a guest CPU's pages are
		 * touched only once it delivers */
		e = m->s && m->gsrc && m->pre ? wm_init(&m->wm, m->n, m->cap,
							sizeof(struct om_rec), 0) : -ENOMEM;
	}
	for (size_t i = 1; !e && i < m->n; i++) {
		struct ostream *s = &m->s[i];

		s->guest = true;
		s->vm = (uint32_t)((i - 1) / guest_cpus);
		s->cpu = (uint32_t)((i - 1) % guest_cpus);
		s->tid = -1;
		e = mg_scan_guest_stream(m->gsrc, s->vm, s->cpu, i);
		/* a guest the metadata has (its agent said hello): its
		 * vCPUs' streams waited for from the start; others not
		 * until their agent connects or they deliver */
		if (vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, s->vm) &&
		    s->cpu < vr_trace_session(t)->vms[s->vm]->n_vcpus)
			s->connected = true;
		else
			wm_late(&m->wm, i);
	}
	if (e) {
		snprintf(err, errlen, "%s", strerror(-e));
		om_close(m);
		return e;
	}
	*out = m;
	return 0;
}

/* The least record, the streams holding it back declared late: room in
 * a full queue. 0, or the consumer's non-zero. */
static int scan_one(struct om *m);
static bool gate_open(const struct om *m, const struct om_rec *r);

static int release_forced(struct om *m)
{
	struct om_rec r;
	uint64_t key;
	size_t i;

	/* the host's waiting records first, past their gate: the host is
	 * never declared late for records it has */
	while (m->pre_n && !wm_full(&m->wm, HOST)) {
		int e;

		if (!gate_open(m, &m->pre[m->pre_head]))
			m->st.gate_timeouts++;
		e = scan_one(m);
		if (e)
			return e;
	}
	if (wm_pop(&m->wm, true, &r, &i, &key) != WM_ITEM)
		return 0;
	r.ts = key;
	if (m->s[i].guest)
		m->st.guest++;
	else
		m->st.host++;
	return m->emit(m->ctx, &r);
}

/*
 * Whether host record @r may go through the sync handling now. A
 * sync_t2 names the guest CPU and seq of its exchange; its sync_t3 (the
 * next entry of that thread) has the pairing look for the guest's record,
 * and a record not there yet would leave the exchange unpaired. So a t2
 * waits until that guest CPU delivered a sync record of that seq or a
 * later one, unless the guest is not connected.
 */
static bool gate_open(const struct om *m, const struct om_rec *r)
{
	const struct mg_roles *ro = &m->b.host;
	const struct ostream *s;
	uint64_t cpu, seq;
	uint32_t vm;

	if (r->kind != VR_EVENT || !ro->t2 || r->desc != ro->t2)
		return true;
	vm = mp_thread_vm(m->r.pair, (int32_t)mg_get(&ro->f_t2[T2_TID], r->payload), NULL);
	if (vm == MP_NO_VM && m->r.n_vms == 1)
		vm = 0;
	cpu = mg_get(&ro->f_t2[T2_CPU], r->payload);
	seq = mg_get(&ro->f_t2[T2_SEQ], r->payload);
	if (vm >= m->r.n_vms || cpu >= m->gcpus)
		return true;
	s = &m->s[gstream(m, vm, (uint32_t)cpu)];
	return !s->connected || (s->any_seq && s->seq >= seq);
}

/* The first waiting host record through the sync handling, queued. */
static int scan_one(struct om *m)
{
	struct om_rec *r = &m->pre[m->pre_head];
	uint32_t cpu = r->o.cpu;
	struct vr_item it;
	int e;

	r->o.tid = cpu < MP_MAX_CPUS ? m->b.host_tid[cpu] : -1;
	r->o.vcpu = MO_NONE;
	if (r->o.tid >= 0)
		mp_thread_vm(m->r.pair, r->o.tid, &r->o.vcpu);
	if (r->kind == VR_EVENT) {
		om_as_item(r, &it);
		mg_scan_host(&m->b, cpu, &it);
	}
	e = wm_push(&m->wm, HOST, r->o.orig_ts, r);
	if (e == WM_LATE) {
		m->st.late++;
		e = 0;
	}
	m->pre_head = (m->pre_head + 1) % m->cap;
	m->pre_n--;
	return e;
}

/* Host records through the sync handling while they may go (the gate,
 * else its time bound, a full queue or the end) and their queue has room. */
static int scan_ready(struct om *m)
{
	while (m->pre_n && !wm_full(&m->wm, HOST)) {
		const struct om_rec *r = &m->pre[m->pre_head];
		int e;

		if (!m->input_ended && m->pre_n < m->cap && !gate_open(m, r)) {
			if (m->newest - r->o.orig_ts <= m->lag_ns)
				break;
			m->st.gate_timeouts++;
		}
		e = scan_one(m);
		if (e)
			return e;
	}
	if (m->input_ended && !m->pre_n && !m->finished) {
		wm_end(&m->wm, HOST);
		om_finish(m);
	}
	return 0;
}

/* Guest stream @i's frontier is @lag_ns behind the newest host record
 * (one that delivered nothing yet: from the first host record, since the
 * sources started together). */
static bool lagging(const struct om *m, size_t i)
{
	uint64_t f = m->wm.s[i].mark;

	if (f < m->first_host)
		f = m->first_host;
	return m->any_host && m->newest > f && m->newest - f > m->lag_ns;
}

/* The ordering stage waits for a stream: move it on if the input allows.
 * 1 when something changed, 0 when more input is needed, -errno. */
static int unblock(struct om *m)
{
	size_t b = wm_blocker(&m->wm);
	struct ostream *s;
	bool force;
	int k;

	if (b == SIZE_MAX || b == HOST)
		return 0;	/* scan_ready took what it could */
	s = &m->s[b];
	force = m->finished || !s->connected || wm_full(&m->wm, HOST) || m->pre_n == m->cap ||
		lagging(m, b);
	if (s->n) {
		k = om_convert(m, b, force);
		if (k == -ENOSPC) {
			k = release_forced(m);
			return k ? k : 1;
		}
		return k < 0 ? k : !k;	/* 1: waits for a later sample */
	}
	if (m->input_ended) {
		wm_end(&m->wm, b);
		return 1;
	}
	if (force || lagging(m, b)) {
		wm_late(&m->wm, b);
		return 1;
	}
	return 0;
}

/* Release what can be released; 0 when more input is needed. */
static int pump(struct om *m)
{
	for (;;) {
		struct om_rec r;
		uint64_t key;
		size_t i;
		int e = scan_ready(m);

		if (e)
			return e;
		switch (wm_pop(&m->wm, false, &r, &i, &key)) {
		case WM_ITEM:
			r.ts = key;
			if (m->s[i].guest)
				m->st.guest++;
			else
				m->st.host++;
			e = m->emit(m->ctx, &r);
			if (e)
				return e;
			continue;
		case WM_DONE:
			m->st.late = m->wm.st.late;
			m->st.peak_queued = m->wm.st.peak;
			return 0;
		case WM_WAIT:
			break;
		}
		e = unblock(m);
		if (e <= 0)
			return e;
	}
}

int om_live_host(struct om *m, uint32_t cpu, const struct vr_item *it)
{
	struct om_rec *r;
	int e;

	if (m->input_ended)
		return -EINVAL;
	if (m->pre_n == m->cap) {
		e = pump(m);
		if (e)
			return e;
		if (m->pre_n == m->cap)
			return -ENOSPC;	/* cannot happen: a full pre is scanned */
	}
	r = &m->pre[(m->pre_head + m->pre_n) % m->cap];
	om_to_rec(it, r);
	r->o.cpu = cpu;
	m->pre_n++;
	if (!m->any_host)
		m->first_host = it->ts;
	if (!m->any_host || it->ts > m->newest)
		m->newest = it->ts;
	m->any_host = true;
	return pump(m);
}

int om_live_host_until(struct om *m, uint64_t ts)
{
	int e;

	if (m->input_ended)
		return -EINVAL;
	if (!m->any_host)
		return 0;
	/* host time has reached @ts: the gate's and the guests' time bounds
	 * count from it */
	if (ts > m->newest)
		m->newest = ts;
	e = pump(m);
	/* records still at the gate keep their own times: the host's
	 * stream moves on only once none waits */
	if (e || m->pre_n)
		return e;
	wm_advance(&m->wm, HOST, ts);
	return pump(m);
}

uint64_t om_live_frontier(const struct om *m)
{
	return wm_frontier(&m->wm);
}

int om_live_guest(struct om *m, uint32_t vm, uint32_t cpu, const struct vr_item *it)
{
	const struct mg_roles *ro;
	struct ostream *s;
	size_t i;
	int e;

	if (m->input_ended)
		return -EINVAL;
	if (vm >= m->r.n_vms || cpu >= m->gcpus) {
		m->st.left_out++;
		return 1;
	}
	i = gstream(m, vm, cpu);
	s = &m->s[i];
	if (!s->held && !(s->held = calloc(m->cap, sizeof(*s->held))))
		return -ENOMEM;
	s->connected = true;
	while (s->n == m->cap) {
		/* the memory bound: the oldest converted with what it has */
		e = om_convert(m, i, true);
		if (e == -ENOSPC)
			e = release_forced(m);
		if (e < 0 || e > 0)
			return e;
	}
	om_to_rec(it, &s->held[(s->head + s->n) % m->cap]);
	s->n++;
	/* records to convert: the others wait for them */
	wm_wait(&m->wm, i);
	if (s->n > m->st.peak_held)
		m->st.peak_held = s->n;
	ro = &m->b.vms[vm];
	if (it->kind == VR_EVENT && ro->guest && it->desc == ro->guest) {
		uint64_t seq = mg_get(&ro->f_g[G_SEQ], it->payload);

		if (!s->any_seq || seq > s->seq)
			s->seq = seq;
		s->any_seq = true;
	}
	return pump(m);
}

void om_live_guest_table(struct om *m, uint32_t vm, const struct vr_events *ev,
			 uint32_t ncpus)
{
	if (vm >= m->r.n_vms)
		return;
	mg_roles_init(&m->b.vms[vm], ev);
	for (uint32_t c = 0; c < ncpus && c < m->gcpus; c++) {
		m->s[gstream(m, vm, c)].connected = true;
		wm_wait(&m->wm, gstream(m, vm, c));
	}
}

int om_live_gone(struct om *m, uint32_t vm)
{
	for (uint32_t c = 0; vm < m->r.n_vms && c < m->gcpus; c++)
		m->s[gstream(m, vm, c)].connected = false;
	return m->input_ended ? 0 : pump(m);
}

int om_live_end(struct om *m)
{
	m->input_ended = true;
	for (size_t i = 1; i < m->n; i++)
		m->s[i].connected = false;
	return pump(m);
}
