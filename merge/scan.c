// SPDX-License-Identifier: GPL-2.0
/* The sync side of a merge, shared by pass 1 and the online merge: see scan.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"

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
static struct mp_tsc_off offset_of(const struct mg_scan *c, uint32_t vm, uint64_t vcpu)
{
	struct mp_tsc_off none = { 0 };

	if (vm >= c->r->n_vms || vcpu >= MP_MAX_CPUS || !c->offs[vm])
		return none;
	return c->offs[vm][vcpu];
}

/* A kvm_write_tsc_offset of @vm (MP_NO_VM: unknown, so that vCPU's
 * offset is unknown in every VM). */
static void offset_write(struct mg_scan *c, uint32_t vm, uint64_t vcpu, uint64_t off,
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
static void offsets_from_session(struct mg_scan *c, const Vmscope__Trace__SessionMetadata *s)
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

static void emit(void *user, uint32_t vm, const struct mp_exchange *x)
{
	struct mg_scan *c = user;	/* the driver's first member */

	c->r->vm_exchanges[vm]++;
	c->r->vm_paired[vm] += x->x.guest_valid;
	mt_add(&c->r->mt, vm, x);
}

void mg_scan_host(struct mg_scan *c, uint32_t cpu, const struct vr_item *it)
{
	const struct mg_roles *ro = &c->host;
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
		int32_t tid = cpu < MP_MAX_CPUS ? c->host_tid[cpu] : -1;
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
		if (cpu < MP_MAX_CPUS)
			c->host_tid[cpu] = (int32_t)mg_get(&ro->f_sw_next, p);
	}
}

int mg_scan_guest_stream(uint32_t **gsrc, uint32_t vm, uint32_t cpu, size_t i)
{
	if (!gsrc[vm] && !(gsrc[vm] = calloc(MP_MAX_CPUS, sizeof(**gsrc))))
		return -ENOMEM;
	if (!gsrc[vm][cpu])	/* the first stream of a CPU */
		gsrc[vm][cpu] = (uint32_t)i + 1;
	return 0;
}

bool mg_scan_guest_sync(struct mg_scan *c, uint32_t vm, const struct vr_item *it,
			struct mp_guest *out)
{
	const struct mg_roles *ro;
	const uint8_t *p = it->payload;

	if (vm >= c->r->n_vms)
		return false;
	ro = &c->vms[vm];
	if (it->kind != VR_EVENT || !ro->guest || it->desc != ro->guest)
		return false;
	out->cpu = (uint32_t)mg_get(&ro->f_g[G_CPU], p);
	out->t1 = mg_get(&ro->f_g[G_T1], p);
	out->t4 = mg_get(&ro->f_g[G_T4], p);
	out->token = mg_get(&ro->f_g[G_TOKEN], p);
	out->seq = mg_get(&ro->f_g[G_SEQ], p);
	out->tsc = tsc_of(ro->g_has_tsc, ro->f_g_tsc, p);
	c->r->n.sync_records++;
	return true;
}

int mg_scan_init(struct mg_scan *c, struct vr_trace *t, const struct mg_opts *o,
		 struct mg_result *r, mp_pull_fn pull, mt_accept_fn accept, mt_drop_fn drop)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	int e;

	memset(c, 0, sizeof(*c));
	memset(r, 0, sizeof(*r));
	c->t = t;
	c->r = r;
	r->n_vms = s ? (uint32_t)s->n_vms : 0;
	r->pair = malloc(sizeof(*r->pair));
	r->vm_exchanges = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->vm_exchanges));
	r->vm_paired = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->vm_paired));
	r->tsc = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->tsc));
	c->vms = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c->vms));
	c->tsc_mode = o->tsc_breaks;
	c->tsc_last = calloc(r->n_vms + 1, sizeof(*c->tsc_last));
	c->tsc_seen = calloc(r->n_vms + 1, sizeof(*c->tsc_seen));
	c->offs = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c->offs));
	c->host_tid = malloc(MP_MAX_CPUS * sizeof(*c->host_tid));
	if (!r->pair || !r->vm_exchanges || !r->vm_paired || !r->tsc || !c->vms ||
	    !c->tsc_last || !c->tsc_seen || !c->offs || !c->host_tid)
		return -ENOMEM;
	for (uint32_t cpu = 0; cpu < MP_MAX_CPUS; cpu++)
		c->host_tid[cpu] = -1;
	if (mp_init(r->pair, r->n_vms, pull, emit, c)) {
		free(r->pair);
		r->pair = NULL;
		return -ENOMEM;
	}
	e = mt_init(&r->mt, r->n_vms, &o->sync, accept, c);
	if (e)
		return e;
	r->mt.drop = drop;
	mg_roles_init(&c->host, vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0));
	for (uint32_t v = 0; v < r->n_vms && !e; v++) {
		const Vmscope__Trace__VmInfo *vi = s->vms[v];

		mg_roles_init(&c->vms[v], vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, v));
		for (size_t k = 0; k < vi->n_vcpus && !e; k++)
			e = mp_add_thread(r->pair, vi->vcpus[k]->tid, v, vi->vcpus[k]->vcpu);
	}
	if (e)
		return e;
	mp_sort_threads(r->pair);
	offsets_from_session(c, s);
	return r->err;
}

void mg_scan_free(struct mg_scan *c)
{
	free(c->host_tid);
	free(c->vms);
	free(c->tsc_last);
	free(c->tsc_seen);
	for (uint32_t v = 0; c->offs && c->r && v < c->r->n_vms; v++)
		free(c->offs[v]);
	free(c->offs);
	memset(c, 0, sizeof(*c));
}

int mg_scan_stream_open(struct vr_stream **s, struct vr_trace *t, size_t i, char *err,
			size_t errlen)
{
	int e = vr_stream_open(s, t, i);

	if (e)
		snprintf(err, errlen, "%s: %s", vr_trace_stream_name(t, i), strerror(-e));
	return e;
}
