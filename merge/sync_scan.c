// SPDX-License-Identifier: GPL-2.0
/* Pass 1 of the merge: pairing and transforms (see merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "merge.h"
#include "roles.h"
#include "util_clock.h"


struct ssrc {
	struct vr_stream *s;
	struct vr_item it;	/* the current item, when have */
	bool have, guest;
	uint32_t vm, cpu;
};

struct scan {
	struct vr_trace *t;
	struct mg_result *r;
	struct mg_roles host, *vms;
	struct ssrc *src;
	size_t n;
	uint32_t **gsrc;	/* [vm][cpu]: 1 + index of that guest stream */
	struct mh heap;		/* the host streams by time */
	/* [MP_MAX_CPUS]: thread each host CPU runs (sched_switch), -1 when
	 * unknown; per CPU, not per stream: a CPU's records may lie in
	 * several streams (session channels) */
	int32_t *host_tid;
	enum mg_tsc_breaks tsc_mode;
	uint64_t *tsc_last;	/* [n_vms + 1]: last write per VM, [n_vms]: unknown VM */
	bool *tsc_seen;
	struct mp_tsc_off **offs;	/* [n_vms][MP_MAX_CPUS]: by vCPU id */
	const char *spill_dir;
	int spill_errno;	/* the first failure of a temporary file */
};

/* A temporary file for accepted exchanges, its name gone at once. */
static FILE *spill_open(struct scan *c)
{
	char path[4096];
	FILE *f = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/vmscope-merge-XXXXXX", c->spill_dir);
	fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
		f = fdopen(fd, "w+");
		if (!f)
			close(fd);
	}
	if (!f && !c->spill_errno)
		c->spill_errno = errno;
	return f;
}

/* Write out what stdio still holds of each temporary file (rewind() in
 * pass 2 would flush it and forget a failure). */
static void spill_flush(struct scan *c)
{
	struct mg_result *r = c->r;

	for (uint32_t v = 0; r->acc && v < r->n_vms; v++)
		for (uint32_t k = 0; r->acc[v] && k < MP_MAX_CPUS; k++)
			if (r->acc[v][k] && (fflush(r->acc[v][k]) || ferror(r->acc[v][k])) &&
			    !c->spill_errno)
				c->spill_errno = errno ? errno : EIO;
}

/* Both TSC readings of a record, when its layout has them. */
static struct mp_tsc tsc_of(bool has, const struct mg_field f[2], const uint8_t *p)
{
	struct mp_tsc t = { 0 };

	if (has) {
		t.a = mg_get(&f[0], p);
		t.b = mg_get(&f[1], p);
		t.valid = true;
	}
	return t;
}

/* The offset KVM last wrote for vCPU @vcpu of @vm, if known. */
static struct mp_tsc_off offset_of(const struct scan *c, uint32_t vm, uint64_t vcpu)
{
	struct mp_tsc_off none = { 0 };

	if (vm >= c->r->n_vms || vcpu >= MP_MAX_CPUS || !c->offs[vm])
		return none;
	return c->offs[vm][vcpu];
}

/* A kvm_write_tsc_offset of @vm (MP_NO_VM: unknown, so that vCPU's
 * offset is unknown in every VM). */
static void offset_write(struct scan *c, uint32_t vm, uint64_t vcpu, uint64_t off,
			 uint64_t ts)
{
	if (vcpu >= MP_MAX_CPUS)
		return;
	for (uint32_t v = 0; v < c->r->n_vms; v++) {
		struct mp_tsc_off *o;

		if (vm != MP_NO_VM && v != vm)
			continue;
		if (!c->offs[v] && !(c->offs[v] = calloc(MP_MAX_CPUS, sizeof(**c->offs)))) {
			c->r->err = -ENOMEM;
			return;
		}
		o = &c->offs[v][vcpu];
		o->off = off;
		o->ts = ts;
		o->valid = vm != MP_NO_VM;	/* the ratio stays: set at creation */
	}
}

/* The recorder's reading of KVM's TSC relation at the start. */
static void offsets_from_session(struct scan *c, const Vmscope__Trace__SessionMetadata *s)
{
	for (uint32_t v = 0; v < c->r->n_vms; v++)
		for (size_t i = 0; i < s->vms[v]->n_tsc; i++) {
			const Vmscope__Trace__VcpuTsc *t = s->vms[v]->tsc[i];

			offset_write(c, v, t->vcpu_id, t->offset, 0);
			if (t->vcpu_id < MP_MAX_CPUS && c->offs[v] && t->frac_bits &&
			    t->frac_bits < 64 && t->ratio) {
				c->offs[v][t->vcpu_id].ratio = t->ratio;
				c->offs[v][t->vcpu_id].frac_bits = t->frac_bits;
			}
		}
}

/* The next item of @s; false at its end. */
static bool advance(struct ssrc *s)
{
	s->have = vr_stream_next(s->s, &s->it) == 1;
	return s->have;
}

static int pull(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out)
{
	struct scan *c = user;
	const struct mg_roles *ro = &c->vms[vm];
	struct ssrc *s;
	uint32_t i;

	if (vm >= c->r->n_vms || cpu >= MP_MAX_CPUS || !c->gsrc[vm] ||
	    !(i = c->gsrc[vm][cpu]) || !ro->guest)
		return 0;
	s = &c->src[i - 1];
	for (; s->have; advance(s)) {
		const uint8_t *p = s->it.payload;

		if (s->it.kind != VR_EVENT || s->it.desc != ro->guest)
			continue;
		out->cpu = (uint32_t)mg_get(&ro->f_g[G_CPU], p);
		out->t1 = mg_get(&ro->f_g[G_T1], p);
		out->t4 = mg_get(&ro->f_g[G_T4], p);
		out->token = mg_get(&ro->f_g[G_TOKEN], p);
		out->seq = mg_get(&ro->f_g[G_SEQ], p);
		out->tsc = tsc_of(ro->g_has_tsc, ro->f_g_tsc, p);
		c->r->n.sync_records++;
		advance(s);
		return 1;
	}
	return 0;
}

static void emit(void *user, uint32_t vm, const struct mp_exchange *x)
{
	struct scan *c = user;

	c->r->vm_exchanges[vm]++;
	c->r->vm_paired[vm] += x->x.guest_valid;
	mt_add(&c->r->mt, vm, x);
}

/* Spill exchange @x of @vm with outcome @seg (mg_acc) to its CPU's file. */
static void spill(struct scan *c, uint32_t vm, const struct mp_exchange *x, int64_t seg)
{
	struct mg_result *r = c->r;
	struct mg_acc a = { .seq = x->x.seq, .token = x->x.token, .t1 = x->x.t1,
			    .t2 = x->x.t2, .t3 = x->x.t3, .t4 = x->x.t4, .seg = seg,
			    .h_tsc = x->h_tsc, .g_tsc = x->g_tsc, .off = x->off };
	FILE **f;

	if (x->guest_cpu >= MP_MAX_CPUS)
		return;
	if (!r->acc[vm]) {
		r->acc[vm] = calloc(MP_MAX_CPUS, sizeof(*r->acc[vm]));
		if (!r->acc[vm]) {
			r->err = -ENOMEM;
			return;
		}
	}
	f = &r->acc[vm][x->guest_cpu];
	if (!*f && !(*f = spill_open(c))) {
		r->err = -c->spill_errno;
		return;
	}
	if (fwrite(&a, sizeof(a), 1, *f) != 1) {
		if (!c->spill_errno)
			c->spill_errno = errno ? errno : EIO;
		r->err = -c->spill_errno;
	}
}

static void accept(void *user, uint32_t vm, const struct mp_exchange *x, int64_t seg)
{
	struct mg_result *r = ((struct scan *)user)->r;

	spill(user, vm, x, seg);
	r->n.acc_records++;
}

/* Drops that say something of the guest's clock go to pass 2 too, so
 * that clock.c and the causality check see them at their sync record. */
static void drop(void *user, uint32_t vm, const struct mp_exchange *x, int reason)
{
	struct mg_result *r = ((struct scan *)user)->r;

	if (reason == MT_DROP_SHORT || reason == VMSCOPE_SYNC_DROP_RTT) {
		r->spans.dropped_short++;
	} else if (reason == VMSCOPE_SYNC_DROP_OUTLIER ||
		   reason == VMSCOPE_SYNC_DROP_OVERFLOW) {
		r->spans.dropped_offline++;
	} else {
		return;
	}
	spill(user, vm, x, -1 - (int64_t)reason);
}

static void host_item(struct scan *c, struct ssrc *s)
{
	const struct mg_roles *ro = &c->host;
	const struct vr_item *it = &s->it;
	struct mg_result *r = c->r;
	const uint8_t *p = it->payload;

	if (it->kind != VR_EVENT)
		return;
	if (it->desc == ro->t2) {
		const struct mg_field *f = ro->f_t2;
		struct mp_t2 x = {
			.t2 = mg_get(&f[T2_T2], p), .token = mg_get(&f[T2_TOKEN], p),
			.seq = mg_get(&f[T2_SEQ], p), .t1 = mg_get(&f[T2_T1], p),
			.guest_cpu = mg_get(&f[T2_CPU], p),
			.tid = (int32_t)mg_get(&f[T2_TID], p),
			.vcpu = (uint32_t)mg_get(&f[T2_VCPU], p),
			.tsc = tsc_of(ro->t2_has_tsc, ro->f_t2_tsc, p),
		};
		uint32_t vm = mp_thread_vm(r->pair, x.tid, NULL);

		if (vm == MP_NO_VM && r->n_vms == 1)
			vm = 0;
		x.off = offset_of(c, vm, x.vcpu);
		if (x.tsc.valid) {
			struct mg_tsc_rate *k = &r->host_rate;
			uint64_t mid = x.tsc.a + (x.tsc.b - x.tsc.a) / 2;

			if (!k->n++) {
				k->ns0 = x.t2;
				k->tsc0 = mid;
			}
			k->ns1 = x.t2;
			k->tsc1 = mid;
		}
		mp_t2(r->pair, &x);
		r->n.sync_records++;
	} else if (it->desc == ro->t3) {
		const struct mg_field *f = ro->f_t3;
		struct mp_t3 x = {
			.t2 = mg_get(&f[T3_T2], p), .t3 = mg_get(&f[T3_T3], p),
			.token = mg_get(&f[T3_TOKEN], p), .seq = mg_get(&f[T3_SEQ], p),
			.tid = (int32_t)mg_get(&f[T3_TID], p),
			.vcpu = (uint32_t)mg_get(&f[T3_VCPU], p),
		};
		mp_t3(r->pair, &x);
		r->n.sync_records++;
	} else if (it->desc == ro->tsc) {
		/* KVM writes a vCPU's TSC offset in that vCPU's thread (vCPU
		 * creation, MSR writes), the thread sched_switch last put on
		 * this CPU. Unknown thread: the one VM, or every VM (a break
		 * only splits a segment, it cannot make a bound wrong). */
		int32_t tid = s->cpu < MP_MAX_CPUS ? c->host_tid[s->cpu] : -1;
		uint32_t vm = tid >= 0 ? mp_thread_vm(r->pair, tid, NULL) : MP_NO_VM;

		uint32_t k;

		if (vm != MP_NO_VM)
			r->n.tsc_by_thread++;
		else if (r->n_vms == 1)
			vm = 0;
		r->n.tsc_writes++;
		k = vm == MP_NO_VM ? r->n_vms : vm;
		if (c->tsc_mode == MG_TSC_ALL ||
		    (c->tsc_mode == MG_TSC_AUTO &&
		     (!c->tsc_seen[k] || it->ts - c->tsc_last[k] >= MG_TSC_QUIET_NS))) {
			mt_break(&r->mt, it->ts, vm);
			r->n.tsc_breaks++;
		}
		c->tsc_seen[k] = true;
		c->tsc_last[k] = it->ts;
		if (ro->tsc_has_next)
			offset_write(c, vm, mg_get(&ro->f_tsc_vcpu, p),
				     mg_get(&ro->f_tsc_next, p), it->ts);
	} else if (it->desc == ro->sw) {
		if (s->cpu < MP_MAX_CPUS)
			c->host_tid[s->cpu] = (int32_t)mg_get(&ro->f_sw_next, p);
	}
}

static int open_all(struct scan *c, char *err, size_t errlen)
{
	struct mg_result *r = c->r;

	c->n = vr_trace_nr_streams(c->t);
	c->src = calloc(c->n ? c->n : 1, sizeof(*c->src));
	c->heap.e = calloc(c->n ? c->n : 1, sizeof(*c->heap.e));
	c->gsrc = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c->gsrc));
	c->host_tid = malloc(MP_MAX_CPUS * sizeof(*c->host_tid));
	if (!c->src || !c->heap.e || !c->gsrc || !c->host_tid)
		return -ENOMEM;
	for (uint32_t cpu = 0; cpu < MP_MAX_CPUS; cpu++)
		c->host_tid[cpu] = -1;
	for (size_t i = 0; i < c->n; i++) {
		struct ssrc *s = &c->src[i];
		const struct vr_stream_stats *st;
		int e = vr_stream_open(&s->s, c->t, i);

		if (e) {
			snprintf(err, errlen, "%s: %s", vr_trace_stream_name(c->t, i), strerror(-e));
			return e;
		}
		r->n.streams++;
		if (!advance(s))
			continue;
		/* the origin is known once the first item is read */
		st = vr_stream_stats(s->s);
		s->cpu = st->origin.cpu;
		s->vm = st->origin.vm;
		if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_HOST) {
			c->heap.e[c->heap.n].key = s->it.ts;
			c->heap.e[c->heap.n++].idx = i;
		} else if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST &&
			   s->vm < r->n_vms && s->cpu < MP_MAX_CPUS) {
			s->guest = true;
			if (!c->gsrc[s->vm] &&
			    !(c->gsrc[s->vm] = calloc(MP_MAX_CPUS, sizeof(**c->gsrc))))
				return -ENOMEM;
			if (!c->gsrc[s->vm][s->cpu])	/* the first stream of a CPU */
				c->gsrc[s->vm][s->cpu] = (uint32_t)i + 1;
		}
	}
	return 0;
}

static void scan_free(struct scan *c)
{
	for (size_t i = 0; c->src && i < c->n; i++)
		vr_stream_close(c->src[i].s);
	for (uint32_t v = 0; c->gsrc && v < c->r->n_vms; v++)
		free(c->gsrc[v]);
	free(c->gsrc);
	free(c->host_tid);
	free(c->src);
	free(c->heap.e);
	free(c->vms);
	free(c->tsc_last);
	free(c->tsc_seen);
	for (uint32_t v = 0; c->offs && v < c->r->n_vms; v++)
		free(c->offs[v]);
	free(c->offs);
}

int mg_sync(struct vr_trace *t, const struct mg_opts *o, struct mg_result *r,
	    char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	struct scan c = { .t = t, .r = r, .spill_dir = o->spill_dir ? o->spill_dir : "/tmp" };
	double t0 = util_mono_s();
	int e;

	if (errlen)
		err[0] = 0;
	memset(r, 0, sizeof(*r));
	r->n_vms = s ? (uint32_t)s->n_vms : 0;
	r->spill_dir = c.spill_dir;
	r->pair = malloc(sizeof(*r->pair));
	r->acc = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->acc));
	r->vm_exchanges = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->vm_exchanges));
	r->vm_paired = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->vm_paired));
	c.vms = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c.vms));
	c.tsc_mode = o->tsc_breaks;
	c.tsc_last = calloc(r->n_vms + 1, sizeof(*c.tsc_last));
	c.tsc_seen = calloc(r->n_vms + 1, sizeof(*c.tsc_seen));
	c.offs = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c.offs));
	r->tsc = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->tsc));
	e = !r->pair || !r->acc || !r->vm_exchanges || !r->vm_paired || !c.vms ||
	    !c.tsc_last || !c.tsc_seen || !c.offs || !r->tsc ? -ENOMEM : 0;
	if (!e && mp_init(r->pair, r->n_vms, pull, emit, &c)) {
		free(r->pair);
		r->pair = NULL;
		e = -ENOMEM;
	}
	if (!e)
		e = mt_init(&r->mt, r->n_vms, &o->sync, accept, &c);
	if (!e)
		r->mt.drop = drop;
	mg_roles_init(&c.host, vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0));
	for (uint32_t v = 0; v < r->n_vms && !e; v++) {
		const Vmscope__Trace__VmInfo *vi = s->vms[v];

		mg_roles_init(&c.vms[v], vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, v));
		for (size_t k = 0; k < vi->n_vcpus && !e; k++)
			e = mp_add_thread(r->pair, vi->vcpus[k]->tid, v, vi->vcpus[k]->vcpu);
	}
	if (!e) {
		mp_sort_threads(r->pair);
		offsets_from_session(&c, s);
		e = r->err ? r->err : open_all(&c, err, errlen);
	}
	if (!e) {
		mh_build(&c.heap);
		while (c.heap.n && !r->err && !r->pair->err) {
			struct ssrc *h = &c.src[c.heap.e[0].idx];

			host_item(&c, h);
			mh_next(&c.heap, h->it.ts, !advance(h));
		}
		mp_finish(r->pair);
		e = mt_finish(&r->mt);
		spill_flush(&c);
		if (!e)
			e = r->err ? r->err : r->pair->err;
		if (c.spill_errno) {
			snprintf(err, errlen, "a temporary file in %s (TMPDIR): %s", c.spill_dir,
				 strerror(c.spill_errno));
			e = e ? e : -c.spill_errno;
		}
		if (!e)
			mg_tsc_check(r);
		if (!e)
			e = mg_clock_scan(t, r);
	}
	scan_free(&c);
	r->time.sync = util_mono_s() - t0;
	if (e && !err[0])
		snprintf(err, errlen, "%s", strerror(-e));
	return e;
}

uint64_t mg_violations(const struct mg_result *r)
{
	return r->c.viol_t1 + r->c.viol_t4 + r->c.viol_before + r->c.viol_after;
}

void mg_result_free(struct mg_result *r)
{
	for (uint32_t v = 0; r->acc && v < r->n_vms; v++) {
		for (uint32_t c = 0; r->acc[v] && c < MP_MAX_CPUS; c++)
			if (r->acc[v][c])
				fclose(r->acc[v][c]);
		free(r->acc[v]);
	}
	free(r->acc);
	mt_free(&r->mt);
	if (r->pair)
		mp_free(r->pair);
	free(r->pair);
	free(r->vm_exchanges);
	free(r->vm_paired);
	free(r->tsc);
	free(r->spans.s);
	memset(r, 0, sizeof(*r));
}
