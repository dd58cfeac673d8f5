// SPDX-License-Identifier: GPL-2.0
/* One pass over a merged trace (or a raw one merged online) with per-vCPU state: see walk.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_reason.h"
#include "walk_int.h"

/*
 * Does [a, b] overlap a clock-unreliable span of (vm, cpu)? Merge writes
 * a VM's spans by CPU, then start, without overlaps per CPU; each cursor
 * serves queries whose @a does not decrease (exits by start, guest
 * records by time, per vCPU).
 */
static bool clock_unreliable(const struct an_walk *w, uint32_t vm, struct vcpu *v,
			     uint32_t cpu, size_t *cur, uint64_t a, uint64_t b)
{
	const Vmscope__Trace__VmInfo *vi;
	size_t n;

	if (!w->sess || vm >= w->sess->n_vms)
		return false;
	vi = w->sess->vms[vm];
	n = vi->n_clock_unreliable;
	if (!v->span_init) {
		size_t i = 0;

		while (i < n && vi->clock_unreliable[i]->cpu < cpu)
			i++;
		v->span_x = v->span_g = i;
		v->span_init = true;
	}
	while (*cur < n && vi->clock_unreliable[*cur]->cpu == cpu &&
	       vi->clock_unreliable[*cur]->host_end_ns < a)
		(*cur)++;
	return *cur < n && vi->clock_unreliable[*cur]->cpu == cpu &&
	       vi->clock_unreliable[*cur]->host_start_ns <= b;
}

/* ---- tables ---- */

int an_walk_cmp_thread(const void *a, const void *b)
{
	const struct thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

bool an_walk_thread_vcpu(const struct an_walk *w, int32_t tid, uint32_t *vm, uint32_t *vcpu)
{
	struct thread key = { .tid = tid };
	const struct thread *t = w->nth ? bsearch(&key, w->th, w->nth, sizeof(*w->th), an_walk_cmp_thread) :
				 NULL;

	if (!t)
		return false;
	*vm = t->vm;
	*vcpu = t->vcpu;
	return true;
}

static uint32_t reason_of(struct an_walk *w, uint32_t isa, uint32_t code, bool valid)
{
	struct reason *r;

	if (!valid)
		isa = code = 0;
	for (uint32_t i = 0; i < w->nreason; i++)
		if (w->reason[i].isa == isa && w->reason[i].code == code &&
		    w->reason[i].valid == valid)
			return i;
	if (w->nreason == AN_MAX_REASONS) {
		w->n.reasons_other++;
		return AN_MAX_REASONS;
	}
	r = &w->reason[w->nreason];
	r->isa = isa;
	r->code = code;
	r->valid = valid;
	an_exit_label(isa, code, valid, r->name, sizeof(r->name));
	return w->nreason++;
}

static void set_comm(char *dst, const uint8_t *p, const struct mg_field *f)
{
	size_t len = f->size < AN_COMM_LEN ? f->size : AN_COMM_LEN;

	memcpy(dst, p + f->off, len);
	dst[len] = 0;
	/* names come from the guest: keep them printable */
	for (char *c = dst; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			*c = '?';
}

const char *an_task_placeholder(int32_t task)
{
	switch (task) {
	case AN_TASK_OTHER:
		return "(other tasks)";
	case AN_TASK_BEFORE:
		return "(before guest session)";
	default:
		return "(unknown task)";
	}
}

/* The task (vm, tid), named @comm when given. */
static int32_t task_of(struct an_walk *w, uint32_t vm, int32_t tid, const uint8_t *p,
		       const struct mg_field *comm)
{
	uint32_t h = ((uint32_t)tid * 2654435761u ^ vm * 40503u) % TASK_HASH;
	struct an_task *t;

	for (uint32_t k = 0; k < TASK_HASH; k++, h = (h + 1) % TASK_HASH) {
		int32_t i = w->task_hash[h] - 1;

		if (i < 0)
			break;
		if (w->task[i].vm == vm && w->task[i].tid == tid) {
			if (comm)
				set_comm(w->task[i].comm, p, comm);
			return i;
		}
	}
	if (w->ntask == AN_MAX_TASKS) {
		w->n.tasks_other++;
		return AN_TASK_OTHER;
	}
	t = &w->task[w->ntask];
	t->vm = vm;
	t->tid = tid;
	if (comm)
		set_comm(t->comm, p, comm);
	else
		snprintf(t->comm, sizeof(t->comm), "?");
	w->task_hash[h] = (int32_t)++w->ntask;
	return (int32_t)(w->ntask - 1);
}

/* Make index @i of the array *@p (capacity *@cap elements of @size)
 * usable, new elements zeroed. false when out of memory. */
static bool grow(void **p, uint32_t *cap, uint32_t i, size_t size)
{
	uint32_t n = *cap ? *cap : 4;
	unsigned char *a;

	if (i < *cap)
		return true;
	while (n <= i)
		n *= 2;
	a = realloc(*p, n * size);
	if (!a)
		return false;
	memset(a + *cap * size, 0, (n - *cap) * size);
	*p = a;
	*cap = n;
	return true;
}

/*
 * A vCPU's task until its guest CPU names one: before the guest session
 * when the VM's guest module says when that began (cpu_task), and in a
 * fed walk (`top --pid`) while the VM has no guest side yet: its agent
 * may still connect, and a recording of the same run has that table from
 * its start, so `report` has these exits before the session too.
 */
static int32_t first_task(const struct an_walk *w, uint32_t vm)
{
	const struct vm *m = &w->vm[vm];

	return m->has_cpu_task || (w->fed && !m->guest) ? AN_TASK_BEFORE : AN_TASK_UNKNOWN;
}

static struct vcpu *vcpu_of(struct an_walk *w, uint32_t vm, uint32_t v)
{
	struct vm *m;
	uint32_t old;

	if (vm >= w->n_vms || v >= AN_MAX_VCPUS)
		return NULL;
	m = &w->vm[vm];
	old = m->cap;
	if (!grow((void **)&m->v, &m->cap, v, sizeof(*m->v)))
		return NULL;
	for (uint32_t i = old; i < m->cap; i++)
		m->v[i].task = m->v[i].exit_task = first_task(w, vm);
	if (v >= m->n)
		m->n = v + 1;
	return &m->v[v];
}

static struct host_cpu *host_cpu(struct an_walk *w, uint32_t cpu)
{
	if (cpu >= AN_MAX_HOST_CPUS || !grow((void **)&w->hc, &w->nhc, cpu, sizeof(*w->hc)))
		return NULL;
	return &w->hc[cpu];
}

/* ---- the pass ---- */

/* The (vm, vcpu) of a host kvm record with vCPU field @vcpu. */
static struct vcpu *host_vcpu(struct an_walk *w, const struct mo_origin *o, bool has_o,
			      uint32_t vcpu, uint32_t *vm_out)
{
	uint32_t vm, tv;

	if (has_o && o->tid >= 0 && an_walk_thread_vcpu(w, o->tid, &vm, &tv))
		;
	else if (w->n_vms == 1)
		vm = 0;
	else
		return NULL;
	*vm_out = vm;
	return vcpu_of(w, vm, vcpu);
}

/* vCPU @v's wake-up waiting for its entry, passed on with the entry
 * unknown (a loss, the end of the trace). */
static void wake_flush(const struct an_hooks *h, struct vcpu *v)
{
	if (!v->wake_on)
		return;
	v->wake.entry_known = false;
	if (h->wakeup)
		h->wakeup(h->ctx, &v->wake);
	v->wake_on = false;
}

/*
 * A loss (or gap) at origin @o: what the lost records would have said is
 * unknown from here. A host stream's loss: every vCPU's exit, entry or
 * wake-up may be among them (a vCPU thread runs on any host CPU), and
 * each host CPU's thread; the guest tasks stay known, since they come
 * from the guests' own streams. A guest CPU's loss: that vCPU's task
 * (its switches may be lost). A loss of no known origin: all of it.
 */
static void drop_open(struct an_walk *w, const struct an_hooks *h, const struct mo_origin *o,
		      bool has_o)
{
	bool host = !has_o || o->origin == 0;

	for (uint32_t v = 0; v < w->n_vms; v++)
		for (uint32_t c = 0; c < w->vm[v].n; c++) {
			struct vcpu *p = &w->vm[v].v[c];
			bool guest = !has_o || (o->origin == v + 1 && o->cpu == c);

			if (host) {
				wake_flush(h, p);
				p->block_ts = 0;
				if (p->st == V_EXIT || p->st == V_USER)
					w->n.open_dropped++;
				p->st = V_UNKNOWN;
			}
			/* still before the session: a loss does not change that */
			if (guest && p->task != AN_TASK_BEFORE)
				p->task = AN_TASK_UNKNOWN;
		}
	if (host)
		for (uint32_t k = 0; k < w->nhc; k++)
			w->hc[k].valid = false;
}

static void on_kvm_exit(struct an_walk *w, uint64_t ts, const uint8_t *p, const struct mo_origin *o,
		    bool has_o)
{
	uint32_t vm, vcpu = (uint32_t)mg_get(&w->fx[X_VCPU], p);
	struct vcpu *v = host_vcpu(w, o, has_o, vcpu, &vm);
	struct host_cpu *hc;

	if (!v) {
		w->n.unattributed++;
		return;
	}
	if (v->st == V_GUEST)
		v->t.guest_ns += ts - v->since;
	else if (v->st == V_EXIT || v->st == V_USER)
		w->n.open_dropped++;	/* its entry is missing */
	v->st = V_EXIT;
	v->exit_ts = ts;
	v->user_ts = 0;
	v->rip = mg_get(&w->fx[X_RIP], p);
	v->reason = reason_of(w, (uint32_t)mg_get(&w->fx[X_ISA], p),
			      (uint32_t)mg_get(&w->fx[X_REASON], p),
			      mg_get(&w->fx[X_VALID], p) != 0);
	v->exit_task = v->task;
	v->exit_tid = has_o ? o->tid : -1;
	memset(&v->detail, 0, sizeof(v->detail));
	memset(&v->fault, 0, sizeof(v->fault));
	if (has_o && (hc = host_cpu(w, o->cpu))) {
		hc->vm = vm;
		hc->vcpu = vcpu;
		hc->valid = true;
	}
}

/* The vCPU of a host kvm record without a vCPU field: its thread's, or
 * the one whose kvm_exit was the last on its host CPU; NULL when neither
 * is known. */
static struct vcpu *thread_vcpu_id(struct an_walk *w, const struct mo_origin *o, bool has_o,
				   uint32_t *vm, uint32_t *vcpu)
{
	struct host_cpu *hc = NULL;

	if (has_o && o->tid >= 0 && an_walk_thread_vcpu(w, o->tid, vm, vcpu))
		return vcpu_of(w, *vm, *vcpu);
	if (has_o && (hc = host_cpu(w, o->cpu)) && hc->valid) {
		*vm = hc->vm;
		*vcpu = hc->vcpu;
		return vcpu_of(w, *vm, *vcpu);
	}
	return NULL;
}

static struct vcpu *thread_vcpu(struct an_walk *w, const struct mo_origin *o, bool has_o)
{
	uint32_t vm, vcpu;

	return thread_vcpu_id(w, o, has_o, &vm, &vcpu);
}

/* kvm_vcpu_wakeup: a halt of the record's vCPU ended at @ts; held until
 * the vCPU's next kvm_entry. */
static void on_kvm_wakeup(struct an_walk *w, const struct an_hooks *h, uint64_t ts,
			  const uint8_t *p, const struct mo_origin *o, bool has_o)
{
	uint32_t vm, vcpu;
	struct vcpu *v = thread_vcpu_id(w, o, has_o, &vm, &vcpu);
	struct an_wakeup *k;
	uint64_t start;

	if (!v) {
		w->n.unattributed++;
		return;
	}
	wake_flush(h, v);	/* a second halt without an entry between */
	k = &v->wake;
	memset(k, 0, sizeof(*k));
	v->wake_on = true;
	k->vm = vm;
	k->vcpu = vcpu;
	k->ts = ts;
	k->halt_ns = mg_get(&w->fwake[K_NS], p);
	k->waited = mg_get(&w->fwake[K_WAITED], p) != 0;
	k->valid = mg_get(&w->fwake[K_VALID], p) != 0;
	start = k->halt_ns <= ts ? ts - k->halt_ns : 0;
	k->poll_known = true;
	if (!k->waited)
		k->poll_ns = k->halt_ns;
	else if (v->block_ts && v->block_ts >= start && v->block_ts <= ts)
		k->poll_ns = v->block_ts - start;
	else
		k->poll_known = false;
}

static void on_kvm_user(struct an_walk *w, uint64_t ts, const struct mo_origin *o, bool has_o)
{
	struct vcpu *v = thread_vcpu(w, o, has_o);

	if (!v) {
		w->n.unattributed++;
		return;
	}
	if (v->st == V_EXIT) {
		v->st = V_USER;
		v->user_ts = ts;
	}
}

static void on_kvm_entry(struct an_walk *w, const struct an_hooks *h, uint64_t ts, const uint8_t *p,
		     const struct mo_origin *o, bool has_o)
{
	uint32_t vm, vcpu = (uint32_t)mg_get(&w->entry_vcpu, p);
	struct vcpu *v = host_vcpu(w, o, has_o, vcpu, &vm);
	struct an_exit x;

	if (!v) {
		w->n.unattributed++;
		return;
	}
	if (v->wake_on) {
		v->wake.entry_ns = ts - v->wake.ts;
		v->wake.entry_known = true;
		if (h->wakeup)
			h->wakeup(h->ctx, &v->wake);
		v->wake_on = false;
	}
	if (v->st == V_EXIT || v->st == V_USER) {
		memset(&x, 0, sizeof(x));
		x.vm = vm;
		x.vcpu = vcpu;
		x.reason = v->reason;
		x.start = v->exit_ts;
		x.end = ts;
		x.user_ns = v->st == V_USER ? ts - v->user_ts : 0;
		x.halted = v->reason < w->nreason &&
			   an_exit_is_hlt(w->reason[v->reason].isa, w->reason[v->reason].code) &&
			   w->reason[v->reason].valid;
		x.task = v->exit_task;
		x.tid = v->exit_tid;
		x.rip = v->rip;
		x.sym = an_walk_sym_of(w, vm, v->rip);
		x.detail = v->detail;
		x.fault = v->fault;
		if (x.halted)
			v->t.halted_ns += x.end - x.start;
		else
			v->t.kernel_ns += x.end - x.start - x.user_ns;
		v->t.user_ns += x.halted ? 0 : x.user_ns;
		v->t.exits++;
		w->n.exits++;
		w->n.exits_before_session += x.task == AN_TASK_BEFORE;
		w->n.exits_task_unknown += x.task == AN_TASK_UNKNOWN;
		w->n.exits_clock_unreliable +=
			clock_unreliable(w, vm, v, vcpu, &v->span_x, x.start, x.end);
		if (h->exit)
			h->exit(h->ctx, &x);
	} else if (v->st == V_UNKNOWN) {
		w->n.entries_without_exit++;
	}
	v->st = V_GUEST;
	v->since = ts;
}

static void fill_switch(struct an_switch *s, const struct switch_fields *f, uint64_t ts,
			uint32_t cpu, const uint8_t *p)
{
	static const char none[AN_COMM_LEN] = "?";

	s->ts = ts;
	s->cpu = cpu;
	s->prev_tid = (int32_t)mg_get(&f->f[S_PREV], p);
	s->next_tid = (int32_t)mg_get(&f->f[S_NEXT], p);
	s->prev_state = mg_get(&f->f[S_STATE], p);
	s->prev_runnable = !s->prev_state || (f->has_preempt && mg_get(&f->preempt, p));
	s->prev_comm = f->has_comm ? (const char *)p + f->prev_comm.off : none;
	s->next_comm = f->has_comm ? (const char *)p + f->next_comm.off : none;
}

static void on_guest_switch(struct an_walk *w, const struct an_hooks *h, const struct role_of *r,
			    uint64_t ts, const uint8_t *p, const struct mo_origin *o)
{
	struct an_switch s;
	struct vcpu *v = vcpu_of(w, r->vm, o->cpu);
	int32_t prev, next;

	fill_switch(&s, r->sw, ts, o->cpu, p);
	prev = task_of(w, r->vm, s.prev_tid, p, r->sw->has_comm ? &r->sw->prev_comm : NULL);
	next = task_of(w, r->vm, s.next_tid, p, r->sw->has_comm ? &r->sw->next_comm : NULL);
	if (v)
		v->task = next;
	if (h->guest_switch)
		h->guest_switch(h->ctx, r->vm, &s, prev, next);
}

/* The task a guest CPU ran as its session began: a switch from nothing. */
static void on_cpu_task(struct an_walk *w, const struct an_hooks *h, const struct role_of *r,
			uint64_t ts, const uint8_t *p, const struct mo_origin *o)
{
	static const char none[AN_COMM_LEN] = "?";
	struct an_switch s = { .ts = ts, .cpu = o->cpu, .prev_tid = -1, .prev_comm = none };
	struct vcpu *v = vcpu_of(w, r->vm, o->cpu);
	int32_t next;

	s.next_tid = (int32_t)mg_get(&r->task_pid, p);
	s.next_comm = r->has_task_comm ? (const char *)p + r->task_comm.off : none;
	next = task_of(w, r->vm, s.next_tid, p, r->has_task_comm ? &r->task_comm : NULL);
	if (v)
		v->task = next;
	if (h->guest_switch)
		h->guest_switch(h->ctx, r->vm, &s, AN_TASK_UNKNOWN, next);
}

static void record(struct an_walk *w, const struct an_hooks *h, const struct vr_item *it,
		   uint64_t ts, const struct mo_origin *o, bool has_o)
{
	const struct role_of *r;
	struct an_switch s;

	const struct role_tab *t = NULL;

	/* the table holding the record's descriptor (one, but for a raw
	 * trace's sides) */
	for (uint32_t i = 0; i < w->ntab && !t; i++)
		if (w->tab[i].ev && it->desc >= w->tab[i].ev->desc &&
		    it->desc < w->tab[i].ev->desc + w->tab[i].ev->n)
			t = &w->tab[i];
	if (!it->desc || !t)
		return;
	r = &t->roles[it->desc - t->ev->desc];
	if (r->role == R_NONE)
		return;
	/* host roles need a host record, guest roles their VM's */
	if (has_o && (r->role == R_GSWITCH || r->role == R_GWAKE || r->role == R_GSYNC ||
		      r->role == R_GTASK || r->role == R_GVEC) != (o->origin != 0))
		return;
	if (has_o && o->origin && o->origin - 1 != r->vm)
		return;
	switch (r->role) {
	case R_EXIT:
		on_kvm_exit(w, ts, it->payload, o, has_o);
		break;
	case R_ENTRY:
		on_kvm_entry(w, h, ts, it->payload, o, has_o);
		break;
	case R_USER:
		on_kvm_user(w, ts, o, has_o);
		break;
	case R_WAKE:
		on_kvm_wakeup(w, h, ts, it->payload, o, has_o);
		break;
	case R_INJ: {
		struct an_inject j = { .ts = ts };

		if (!thread_vcpu_id(w, o, has_o, &j.vm, &j.vcpu)) {
			w->n.unattributed++;
			break;
		}
		j.vector = (uint32_t)mg_get(&w->finj[J_VECTOR], it->payload);
		j.soft = mg_get(&w->finj[J_SOFT], it->payload) != 0;
		j.reinjected = mg_get(&w->finj[J_REINJ], it->payload) != 0;
		if (h->inject)
			h->inject(h->ctx, &j);
		break;
	}
	case R_GVEC:
		if (has_o && h->guest_vector)
			h->guest_vector(h->ctx, r->vm, o->cpu, ts,
					(uint32_t)mg_get(&r->vector, it->payload));
		break;
	case R_PIO:
	case R_MMIO:
	case R_MSR:
	case R_NPF: {
		/* not counted when unattributed: no exit is lost with it */
		struct vcpu *v = thread_vcpu(w, o, has_o);

		if (v)
			an_walk_detail(w, r->role, it->payload, v);
		break;
	}
	case R_HSWITCH:
		if (has_o) {
			uint32_t vm, vcpu;
			struct vcpu *v;

			/* a vCPU thread going to sleep: where a halt's polling ended */
			fill_switch(&s, r->sw, ts, o->cpu, it->payload);
			if (!s.prev_runnable && an_walk_thread_vcpu(w, s.prev_tid, &vm, &vcpu) &&
			    (v = vcpu_of(w, vm, vcpu)))
				v->block_ts = ts;
		}
		if (has_o && h->host_switch) {
			const struct mg_field *pc = r->sw->has_comm ? &r->sw->prev_comm : NULL;
			const struct mg_field *nc = r->sw->has_comm ? &r->sw->next_comm : NULL;

			h->host_switch(h->ctx, &s,
				       task_of(w, AN_VM_HOST, s.prev_tid, it->payload, pc),
				       task_of(w, AN_VM_HOST, s.next_tid, it->payload, nc));
		}
		break;
	case R_GSWITCH:
		if (has_o)
			on_guest_switch(w, h, r, ts, it->payload, o);
		break;
	case R_GTASK:
		if (has_o)
			on_cpu_task(w, h, r, ts, it->payload, o);
		break;
	case R_GWAKE:
		if (has_o && h->guest_wakeup)
			h->guest_wakeup(h->ctx, r->vm, ts,
					task_of(w, r->vm, (int32_t)mg_get(&r->wake_pid, it->payload),
						NULL, NULL),
					r->has_wake_cpu ?
					(int32_t)mg_get(&r->wake_cpu, it->payload) : -1);
		break;
	case R_GSYNC:
		if (has_o && h->guest_sync)
			h->guest_sync(h->ctx, r->vm, ts, o->cpu, r->has_steal,
				      r->has_steal ? mg_get(&r->steal, it->payload) : 0);
		break;
	}
}

/* One item of the merged stream: losses end what is open, events go to
 * their role. */
static void item(struct an_walk *w, const struct an_hooks *h, const struct vr_item *it,
		 uint64_t ts, const struct mo_origin *o, bool has_o)
{
	if (!w->any)
		w->first_ts = ts;
	w->any = true;
	if (ts > w->last_ts)
		w->last_ts = ts;
	if (h->tick)
		h->tick(h->ctx, ts);
	if (it->kind == VR_LOSS || it->kind == VR_GAP || it->kind == VR_BAD) {
		w->n.losses++;
		drop_open(w, h, o, has_o);
		if (h->loss)
			h->loss(h->ctx, ts);
		return;
	}
	if (it->kind != VR_EVENT)
		return;
	w->n.records++;
	if (!has_o)
		w->n.no_origin++;
	if (has_o && o->origin && o->origin - 1 < w->n_vms)
		w->n.guest_records++;
	if (has_o && o->origin && o->origin - 1 < w->n_vms && w->sess &&
	    w->sess->vms[o->origin - 1]->n_clock_unreliable) {
		struct vcpu *gv = vcpu_of(w, o->origin - 1, o->cpu);

		if (gv && clock_unreliable(w, o->origin - 1, gv, o->cpu, &gv->span_g, ts, ts))
			w->n.guest_clock_unreliable++;
	}
	record(w, h, it, ts, o, has_o);
}

void an_walk_count_open(struct an_walk *w, const struct an_hooks *h)
{
	for (uint32_t v = 0; v < w->n_vms; v++)
		for (uint32_t c = 0; c < w->vm[v].n; c++) {
			w->n.open_at_end += w->vm[v].v[c].st == V_EXIT ||
					    w->vm[v].v[c].st == V_USER;
			wake_flush(h, &w->vm[v].v[c]);
		}
}

void an_walk_one(struct an_walk *w, const struct an_hooks *h, const struct vr_item *it,
		 const struct mo_origin *o, bool has_o)
{
	uint64_t ts = vr_clock_ns(w->clock, it->ts);

	item(w, h, it, ts, o, has_o);
	if (h->record)
		h->record(h->ctx, it, o, has_o, ts);
}

void an_walk_feed(struct an_walk *w, const struct an_hooks *h, const struct vr_item *it,
		  const struct mo_origin *o)
{
	if (!w->stop)
		an_walk_one(w, h, it, o, true);
}

void an_walk_feed_time(struct an_walk *w, const struct an_hooks *h, uint64_t ts)
{
	if (w->stop || !w->any || ts <= w->last_ts || !h->tick)
		return;
	h->tick(h->ctx, ts);
}

void an_walk_feed_end(struct an_walk *w, const struct an_hooks *h)
{
	an_walk_count_open(w, h);
	if (h->end)
		h->end(h->ctx, w->last_ts);
}

struct vr_trace *an_walk_fed_trace(const struct an_walk *w)
{
	return w->raw;
}
