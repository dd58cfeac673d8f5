// SPDX-License-Identifier: GPL-2.0
/* Pass 1 of the merge: the sync records of every stream (see merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "merge.h"
#include "roles.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct breaks {
	struct mt_break *b;
	size_t n, c;
};

static int add_break(struct breaks *b, uint64_t ts, uint32_t vm, size_t cap)
{
	if (b->n == b->c) {
		size_t nc = b->c ? 2 * b->c : 64;
		void *n;

		if (b->n >= cap)
			return -ENOSPC;
		n = realloc(b->b, nc * sizeof(*b->b));
		if (!n)
			return -ENOMEM;
		b->b = n;
		b->c = nc;
	}
	b->b[b->n].ts = ts;
	b->b[b->n].vm = vm;
	b->n++;
	return 0;
}

static int host_event(struct mg_result *r, const struct mg_roles *ro,
		      const struct vr_item *it, int32_t *tid, struct breaks *br,
		      size_t cap)
{
	const uint8_t *p = it->payload;
	int e = 0;

	if (it->desc == ro->t2) {
		const struct mg_field *f = ro->f_t2;
		struct mp_t2 x = {
			.t2 = mg_get(&f[T2_T2], p), .token = mg_get(&f[T2_TOKEN], p),
			.seq = mg_get(&f[T2_SEQ], p), .t1 = mg_get(&f[T2_T1], p),
			.guest_cpu = mg_get(&f[T2_CPU], p),
			.tid = (int32_t)mg_get(&f[T2_TID], p),
			.vcpu = (uint32_t)mg_get(&f[T2_VCPU], p),
		};
		e = mp_add_t2(&r->pair, &x);
		r->n.sync_records++;
	} else if (it->desc == ro->t3) {
		const struct mg_field *f = ro->f_t3;
		struct mp_t3 x = {
			.t2 = mg_get(&f[T3_T2], p), .t3 = mg_get(&f[T3_T3], p),
			.token = mg_get(&f[T3_TOKEN], p), .seq = mg_get(&f[T3_SEQ], p),
			.tid = (int32_t)mg_get(&f[T3_TID], p),
			.vcpu = (uint32_t)mg_get(&f[T3_VCPU], p),
		};
		e = mp_add_t3(&r->pair, &x);
		r->n.sync_records++;
	} else if (it->desc == ro->tsc) {
		/* KVM writes a vCPU's TSC offset in that vCPU's thread (vCPU
		 * creation, MSR writes), the thread sched_switch last put on
		 * this CPU. Unknown thread: the one VM, or every VM (a break
		 * only splits a segment, it cannot make a bound wrong). */
		uint32_t vm = *tid >= 0 ? mp_thread_vm(&r->pair, *tid, NULL) : MP_NO_VM;

		if (vm != MP_NO_VM)
			r->n.tsc_by_thread++;
		else if (r->n_vms == 1)
			vm = 0;
		e = add_break(br, it->ts, vm, cap);
		r->n.tsc_breaks++;
	} else if (it->desc == ro->sw) {
		*tid = (int32_t)mg_get(&ro->f_sw_next, p);
	}
	return e;
}

static int guest_event(struct mg_result *r, const struct mg_roles *ro, uint32_t vm,
		       const struct vr_item *it)
{
	const struct mg_field *f = ro->f_g;
	const uint8_t *p = it->payload;
	struct mp_guest x;

	if (it->desc != ro->guest)
		return 0;
	x.vm = vm;
	x.cpu = (uint32_t)mg_get(&f[G_CPU], p);
	x.t1 = mg_get(&f[G_T1], p);
	x.t4 = mg_get(&f[G_T4], p);
	x.token = mg_get(&f[G_TOKEN], p);
	x.seq = mg_get(&f[G_SEQ], p);
	r->n.sync_records++;
	return mp_add_guest(&r->pair, &x);
}

static int scan_stream(struct vr_trace *t, size_t i, struct mg_result *r,
		       const struct mg_roles *host, const struct mg_roles *vms,
		       struct breaks *br, size_t cap, char *err, size_t errlen)
{
	struct vr_stream *s;
	struct vr_item it;
	int32_t tid = -1;	/* on this host CPU */
	int e = vr_stream_open(&s, t, i);

	if (e) {
		snprintf(err, errlen, "%s: %s", vr_trace_stream_name(t, i), strerror(-e));
		return e;
	}
	while (vr_stream_next(s, &it) == 1) {
		const struct vr_stream_stats *st = vr_stream_stats(s);

		if (it.kind != VR_EVENT)
			continue;
		if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_HOST)
			e = host_event(r, host, &it, &tid, br, cap);
		else if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST &&
			 st->origin.vm < r->n_vms)
			e = guest_event(r, &vms[st->origin.vm], st->origin.vm, &it);
		if (e == -ENOMEM)
			break;
		e = 0;	/* -ENOSPC: counted as refused */
	}
	vr_stream_close(s);
	if (e)
		snprintf(err, errlen, "%s: %s", vr_trace_stream_name(t, i), strerror(-e));
	return e;
}

int mg_sync(struct vr_trace *t, const struct mg_opts *o, struct mg_result *r,
	    char *err, size_t errlen)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	struct mg_roles host, *vms = NULL;
	struct breaks br = { 0 };
	size_t cap = o->cap ? o->cap : (size_t)64 << 20;
	int e;

	if (errlen)
		err[0] = 0;
	memset(r, 0, sizeof(*r));
	r->n_vms = s ? (uint32_t)s->n_vms : 0;
	e = mp_init(&r->pair, r->n_vms, cap);
	if (!e) {
		r->vm = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->vm));
		vms = calloc(r->n_vms ? r->n_vms : 1, sizeof(*vms));
		if (!r->vm || !vms)
			e = -ENOMEM;
	}
	if (e) {
		snprintf(err, errlen, "out of memory");
		free(vms);
		return e;
	}
	mg_roles_init(&host, vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0));
	for (uint32_t v = 0; v < r->n_vms; v++) {
		const Vmscope__Trace__VmInfo *vi = s->vms[v];

		mg_roles_init(&vms[v], vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, v));
		for (size_t k = 0; k < vi->n_vcpus && !e; k++)
			e = mp_add_thread(&r->pair, vi->vcpus[k]->tid, v, vi->vcpus[k]->vcpu);
		if (e == -ENOSPC)
			e = 0;
	}
	mp_sort_threads(&r->pair);
	double t0 = now();
	for (size_t i = 0; i < vr_trace_nr_streams(t) && !e; i++) {
		r->n.streams++;
		e = scan_stream(t, i, r, &host, vms, &br, cap, err, errlen);
	}
	free(vms);
	double t1 = now();
	if (!e)
		e = mp_pair(&r->pair);
	double t2 = now();
	if (!e)
		e = mt_run(&r->pair, br.b, br.n, &o->sync, r->vm);
	r->time.scan = t1 - t0;
	r->time.pair = t2 - t1;
	r->time.fit = now() - t2;
	free(br.b);
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
	mt_free(r->vm, r->n_vms);
	free(r->vm);
	mp_free(&r->pair);
	memset(r, 0, sizeof(*r));
}
