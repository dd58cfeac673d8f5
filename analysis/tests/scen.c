// SPDX-License-Identifier: GPL-2.0
/* Merged traces with a known story: see scen.h. */
#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../merge/tests/synth.h"
#include "out.h"
#include "reader.h"
#include "scen.h"
#include "tracefmt.h"
#include "vmscope_events.h"

const uint32_t scen_svm_code[SCEN_REASONS] = { 0x7b, 0x72, 0x78, 0x400 };
const uint32_t scen_vmx_code[SCEN_REASONS] = { 30, 10, 12, 48 };
const char *const scen_svm_name[SCEN_REASONS] = { "io", "cpuid", "hlt", "npf" };
const char *const scen_vmx_name[SCEN_REASONS] = { "IO_INSTRUCTION", "CPUID", "HLT",
						  "EPT_VIOLATION" };
const char *const scen_task_comm[SCEN_TASKS] = { "alpha", "beta", "gamma" };
/* typical durations per reason, ns */
static const uint64_t base_ns[SCEN_REASONS] = { 20000, 1500, 100000, 5000 };

enum phase { P_START, P_SWITCH, P_EXIT, P_USER, P_HOG_OFF, P_HOG_MID, P_HOG_ON, P_ENTRY };

struct vstate {
	unsigned int vm, v;
	enum phase ph;
	uint64_t next, rng;
	int task, reason;
	uint64_t exit_ts, user_ts, guest_since, dur;
	bool lost;		/* a loss inside the current exit */
	uint64_t hog, task_since;	/* hog duration; task running since (0: unknown) */
	bool block;			/* the hog is a block in the host */
	uint64_t pre;			/* of hog: a kworker ran first (0: none) */
	uint64_t last_out[SCEN_TASKS];	/* switched out at (0: never) */
};

static uint64_t rnd(struct vstate *s)
{
	/* xorshift64* */
	s->rng ^= s->rng >> 12;
	s->rng ^= s->rng << 25;
	s->rng ^= s->rng >> 27;
	return s->rng * 0x2545f4914f6cdd1dull;
}

struct scen_out {
	struct mo *m;
	struct vr_trace *t;
	int id[SCEN_VMS + 1][VMSCOPE_NR_EVENTS];
	int err;
};

void scen_out_event(struct scen_out *o, uint32_t origin, unsigned int ev, uint64_t ts,
		    const void *p, uint16_t size, const struct mo_origin *mo)
{
	int e;

	if (origin > SCEN_VMS || ev >= VMSCOPE_NR_EVENTS || o->id[origin][ev] < 0) {
		if (!o->err)
			o->err = -ENOENT;
		return;
	}
	e = mo_event(o->m, o->id[origin][ev], ts, p, size, mo);
	if (e && !o->err)
		o->err = e;
}

void scen_out_loss(struct scen_out *o, uint64_t ts)
{
	scen_out_loss_at(o, 0, 0, ts);
}

void scen_out_loss_at(struct scen_out *o, uint32_t origin, uint32_t cpu, uint64_t ts)
{
	/* a LossRecord readers accept: a kind and a side */
	Vmscope__Trace__Origin lo = VMSCOPE__TRACE__ORIGIN__INIT;
	int e;

	lo.side = origin ? VMSCOPE__TRACE__SIDE__SIDE_GUEST : VMSCOPE__TRACE__SIDE__SIDE_HOST;
	lo.vm = origin ? origin - 1 : 0;
	lo.cpu = cpu;
	e = mo_loss(o->m, &lo, VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD, 5, 0, ts,
		    "test loss");

	if (e && !o->err)
		o->err = e;
}

static void emit(struct scen *s, struct scen_out *o, uint32_t origin, unsigned int ev,
		 uint64_t ts, const void *p, uint16_t size, uint32_t cpu, int32_t tid,
		 uint32_t vcpu)
{
	struct mo_origin mo = { .orig_ts = ts, .cpu = cpu, .tid = tid, .origin = origin,
				.vcpu = vcpu };

	if (s->last_vm_no_agent && origin == s->n_vms)
		return;		/* that VM's guest side is not in the trace */
	scen_out_event(o, origin, ev, ts, p, size, &mo);
	s->records++;
	s->last_ts = ts;
}

static void host_emit(struct scen *s, struct scen_out *o, const struct vstate *v, unsigned int ev,
		      uint64_t ts, const void *p, uint16_t size)
{
	int32_t tid = s->unknown_tids ? -1 : (int32_t)(1000 * (v->vm + 1) + 1 + v->v);

	emit(s, o, 0, ev, ts, p, size, v->vm * s->vcpus + v->v, tid,
	     s->unknown_tids ? MO_NONE : v->v);
}

static void keep(struct scen_expect *x, unsigned int vm, int r, uint64_t d)
{
	uint64_t *n;

	if (!x->keep)
		return;
	if (!(x->ndur[vm][r] & (x->ndur[vm][r] + 1)) || !x->dur[vm][r]) {
		n = realloc(x->dur[vm][r], 2 * (x->ndur[vm][r] + 1) * sizeof(*n));
		if (!n)
			abort();
		x->dur[vm][r] = n;
	}
	x->dur[vm][r][x->ndur[vm][r]++] = d;
}

/* P_START, P_ENTRY: the vCPU enters the guest; an entry ends an exit, whose time is expected. */
static void ph_entry(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct scen_expect *x = &s->x;
	struct vmscope_ev_kvm_entry en = { .rip = 0xffffffff81000000ull + v->reason,
					   .vcpu_id = v->v };

	host_emit(s, o, v, VMSCOPE_EV_kvm_entry, now, &en, sizeof(en));
	if (v->ph == P_ENTRY && v->lost) {
		v->lost = false;
	} else if (v->ph == P_ENTRY) {
		uint64_t d = now - v->exit_ts;

		x->count[v->vm][v->task][v->reason]++;
		x->total[v->vm][v->task][v->reason] += d;
		if (v->reason == 2) {
			x->halted_ns[v->vm][v->v] += d;
		} else if (v->reason == 0) {
			x->user_ns[v->vm][v->v] += now - v->user_ts;
			x->kernel_ns[v->vm][v->v] += v->user_ts - v->exit_ts;
		} else {
			x->kernel_ns[v->vm][v->v] += d;
		}
		if (d < x->min[v->vm][v->reason])
			x->min[v->vm][v->reason] = d;
		if (d > x->max[v->vm][v->reason])
			x->max[v->vm][v->reason] = d;
		x->exits++;
		keep(x, v->vm, v->reason, d);
	}
	v->guest_since = now;
	if (v->ph == P_START || rnd(v) % 8 == 0) {
		v->ph = P_SWITCH;
		v->next = now + 100 + rnd(v) % 1000;
	} else {
		v->ph = P_EXIT;
		v->next = now + 500 + rnd(v) % 5000;
	}
}

/* P_SWITCH: the guest switches tasks on the vCPU. */
static void ph_switch(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct scen_expect *x = &s->x;
	int next = (int)(rnd(v) % SCEN_TASKS);
	struct vmscope_ev_sched_switch sw = { .prev_pid = 100 + v->task,
					      .next_pid = 100 + next, .prev_state = 1 };

	snprintf(sw.prev_comm, sizeof(sw.prev_comm), "%s", scen_task_comm[v->task]);
	snprintf(sw.next_comm, sizeof(sw.next_comm), "%s", scen_task_comm[next]);
	if (s->cpu_task && !v->task_since) {
		struct vmscope_ev_cpu_task ct = { .pid = 100 + next, .tgid = 100 + next };

		snprintf(ct.comm, sizeof(ct.comm), "%s", scen_task_comm[next]);
		emit(s, o, v->vm + 1, VMSCOPE_EV_cpu_task, now, &ct, sizeof(ct), v->v,
		     100 + next, v->v);
	} else {
		emit(s, o, v->vm + 1, VMSCOPE_EV_sched_switch, now, &sw, sizeof(sw), v->v,
		     100 + v->task, v->v);
	}
	if (v->task_since)
		x->running_ns[v->vm][v->task] += now - v->task_since;
	v->last_out[v->task] = now;
	if (v->last_out[next])
		x->blocked_ns[v->vm][next] += now - v->last_out[next];
	v->task_since = now;
	v->task = next;
	v->ph = P_EXIT;
	v->next = now + 500 + rnd(v) % 5000;
}

/* P_EXIT: an exit of a random reason and heavy-tailed length, perhaps with a loss or a host hog. */
static void ph_exit(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct scen_expect *x = &s->x;
	struct vmscope_ev_kvm_exit ex = { .vcpu_id = v->v, .reason_valid = 1 };
	/* heavy tail: base * (1 + exponential), sometimes 50x */
	double f = 1 - log(((double)(rnd(v) >> 11) + 0.5) / 9007199254740992.0);

	v->reason = (int)(rnd(v) % SCEN_REASONS);
	ex.isa = v->vm % 2 ? 1 : 2;
	ex.exit_reason = v->vm % 2 ? scen_vmx_code[v->reason] : scen_svm_code[v->reason];
	ex.guest_rip = 0x400000 + 16 * (uint64_t)v->reason + v->task;
	if (rnd(v) % 64 == 0)
		f *= 50;
	v->dur = (uint64_t)((double)base_ns[v->reason] * f);
	host_emit(s, o, v, VMSCOPE_EV_kvm_exit, now, &ex, sizeof(ex));
	x->guest_ns[v->vm][v->v] += now - v->guest_since;
	if (s->loss_after && !s->loss_done && s->records >= s->loss_after &&
	    v->vm == 0 && v->v == 0) {
		scen_out_loss(o, now + 1);
		s->loss_done = v->lost = true;
	}
	v->exit_ts = now;
	v->ph = v->reason == 0 ? P_USER : P_ENTRY;
	v->next = now + (v->reason == 0 ? v->dur / 3 : v->dur);
	if (s->hog && v->vm == 0 && v->v == 0 && v->reason && !v->lost && rnd(v) % 8 == 0) {
		v->hog = 1000000 + rnd(v) % 2000000;
		v->block = rnd(v) % 4 == 0;
		v->pre = !v->block && rnd(v) % 2 ? 20000 + rnd(v) % 40000 : 0;
		v->ph = P_HOG_OFF;
		v->next = now + v->dur / 3;
	}
}

/* P_HOG_OFF: the host takes the vCPU thread off its CPU (a hog, a kworker first, or a sleep). */
static void ph_hog_off(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct vmscope_ev_sched_switch sw = { .prev_pid = 1001, .prev_tgid = 1000,
					      .preempt = 1, .next_pid = SCEN_HOG_TID,
					      .next_tgid = SCEN_HOG_TID };

	snprintf(sw.prev_comm, sizeof(sw.prev_comm), "CPU 0/KVM");
	snprintf(sw.next_comm, sizeof(sw.next_comm), "hog");
	if (v->block) {		/* sleeps: the CPU goes idle */
		sw.preempt = 0;
		sw.prev_state = 1;
		sw.next_pid = sw.next_tgid = 0;
		snprintf(sw.next_comm, sizeof(sw.next_comm), "swapper/0");
	} else if (v->pre) {	/* a short kernel thread first */
		sw.next_pid = sw.next_tgid = SCEN_KWORKER_TID;
		snprintf(sw.next_comm, sizeof(sw.next_comm), "kworker/0:1");
	}
	host_emit(s, o, v, VMSCOPE_EV_sched_switch, now, &sw, sizeof(sw));
	v->ph = v->pre ? P_HOG_MID : P_HOG_ON;
	v->next = now + (v->pre ? v->pre : v->hog);
}

/* P_HOG_MID: the kworker sleeps, the hog gets the CPU. */
static void ph_hog_mid(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct vmscope_ev_sched_switch sw = { .prev_pid = SCEN_KWORKER_TID,
					      .prev_tgid = SCEN_KWORKER_TID,
					      .prev_state = 1, .next_pid = SCEN_HOG_TID,
					      .next_tgid = SCEN_HOG_TID };
	struct mo_origin mo = { .orig_ts = now, .cpu = 0, .tid = SCEN_KWORKER_TID,
				.origin = 0, .vcpu = MO_NONE };

	snprintf(sw.prev_comm, sizeof(sw.prev_comm), "kworker/0:1");
	snprintf(sw.next_comm, sizeof(sw.next_comm), "hog");
	scen_out_event(o, 0, VMSCOPE_EV_sched_switch, now, &sw, sizeof(sw), &mo);
	s->records++;
	s->last_ts = now;
	v->ph = P_HOG_ON;
	v->next = now + v->hog - v->pre;
}

/* P_HOG_ON: the vCPU thread gets its CPU back; the stall is expected. */
static void ph_hog_on(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct scen_expect *x = &s->x;
	struct vmscope_ev_sched_switch sw = { .prev_pid = SCEN_HOG_TID, .prev_state = 0,
					      .next_pid = 1001, .next_tgid = 1000 };
	struct mo_origin mo = { .orig_ts = now, .cpu = 0, .tid = SCEN_HOG_TID,
				.origin = 0, .vcpu = MO_NONE };

	snprintf(sw.prev_comm, sizeof(sw.prev_comm), "hog");
	if (v->block) {
		sw.prev_pid = mo.tid = 0;
		snprintf(sw.prev_comm, sizeof(sw.prev_comm), "swapper/0");
	}
	snprintf(sw.next_comm, sizeof(sw.next_comm), "CPU 0/KVM");
	scen_out_event(o, 0, VMSCOPE_EV_sched_switch, now, &sw, sizeof(sw), &mo);
	s->records++;
	s->last_ts = now;
	if (v->block) {
		x->block_ns[v->task] += v->hog;
		x->block_n++;
		if (v->reason == 2)
			x->block_hlt_ns[v->task] += v->hog;
	} else {
		x->hog_ns[v->task] += v->hog;
		x->kworker_ns[v->task] += v->pre;
		x->hog_n++;
		if (v->reason == 2)
			x->hog_hlt_ns[v->task] += v->hog;
	}
	if (v->hog > x->hog_max)
		x->hog_max = v->hog;
	v->ph = P_ENTRY;
	v->next = v->exit_ts + v->dur + v->hog;
}

/* P_USER: the exit goes to userspace (QEMU). */
static void ph_user(struct scen *s, struct scen_out *o, struct vstate *v, uint64_t now)
{
	struct vmscope_ev_kvm_userspace_exit u = { .reason = 2 };

	host_emit(s, o, v, VMSCOPE_EV_kvm_userspace_exit, now, &u, sizeof(u));
	v->user_ts = now;
	v->ph = P_ENTRY;
	v->next = v->exit_ts + v->dur;
}

/* What a vCPU does next, by its phase. */
static void step(struct scen *s, struct scen_out *o, struct vstate *v)
{
	static void (*const phase[])(struct scen *, struct scen_out *, struct vstate *,
				     uint64_t) = {
		[P_START] = ph_entry, [P_ENTRY] = ph_entry, [P_SWITCH] = ph_switch,
		[P_EXIT] = ph_exit, [P_HOG_OFF] = ph_hog_off, [P_HOG_MID] = ph_hog_mid,
		[P_HOG_ON] = ph_hog_on, [P_USER] = ph_user,
	};

	phase[v->ph](s, o, v, v->next);
}

int scen_out_open(struct scen_out **out, const char *dir, unsigned int n_vms,
		  unsigned int vcpus)
{
	return scen_out_open_abi(out, dir, n_vms, vcpus, false);
}

int scen_out_open_abi(struct scen_out **out, const char *dir, unsigned int n_vms,
		      unsigned int vcpus, bool guest_abi03)
{
	return scen_out_open_spans(out, dir, n_vms, vcpus, guest_abi03, NULL, 0);
}

int scen_out_open_spans(struct scen_out **out, const char *dir, unsigned int n_vms,
			unsigned int vcpus, bool guest_abi03,
			Vmscope__Trace__ClockSpan **spans, size_t n_spans)
{
	return scen_out_open_vms(out, dir, n_vms, vcpus, guest_abi03, spans, n_spans, false);
}

static int open_vms(struct scen_out **out, const char *dir, unsigned int n_vms,
		    unsigned int vcpus, bool guest_abi03, Vmscope__Trace__ClockSpan **spans,
		    size_t n_spans, bool last_vm_no_agent, Vmscope__Trace__GuestSymbols *syms);

int scen_out_open_vms(struct scen_out **out, const char *dir, unsigned int n_vms,
		      unsigned int vcpus, bool guest_abi03, Vmscope__Trace__ClockSpan **spans,
		      size_t n_spans, bool last_vm_no_agent)
{
	return open_vms(out, dir, n_vms, vcpus, guest_abi03, spans, n_spans, last_vm_no_agent,
			NULL);
}

int scen_out_open_syms(struct scen_out **out, const char *dir, unsigned int n_vms,
		       unsigned int vcpus, Vmscope__Trace__GuestSymbols *syms)
{
	return open_vms(out, dir, n_vms, vcpus, false, NULL, 0, false, syms);
}

static int open_vms(struct scen_out **out, const char *dir, unsigned int n_vms,
		    unsigned int vcpus, bool guest_abi03, Vmscope__Trace__ClockSpan **spans,
		    size_t n_spans, bool last_vm_no_agent, Vmscope__Trace__GuestSymbols *syms)
{
	struct scen_out *o = calloc(1, sizeof(*o));
	char in[4096], merged[4096], err[256];
	struct synth sy;
	int dfd, e;

	*out = NULL;
	if (!o)
		return -ENOMEM;
	if (!n_vms || n_vms > SCEN_VMS || !vcpus || vcpus > SCEN_VCPUS) {
		free(o);
		return -EINVAL;
	}
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	synth_defaults(&sy, 1);
	sy.n_vms = n_vms;
	sy.vcpus = vcpus;
	sy.real_guest_table = true;
	sy.guest_abi03 = guest_abi03;
	sy.last_vm_no_agent = last_vm_no_agent;
	sy.H0 = SCEN_H0;
	e = tf_trace_create(in, &dfd);
	if (e) {
		free(o);
		return e;
	}
	e = synth_write_meta(&sy, dfd);
	close(dfd);
	if (!e)
		e = vr_trace_open(&o->t, in, err, sizeof(err));
	if (!e) {
		const Vmscope__Trace__SessionMetadata *ss = vr_trace_session(o->t);
		Vmscope__Trace__VmInfo vi[SCEN_VMS], *vp[SCEN_VMS];

		for (unsigned int v = 0; ss && v < ss->n_vms && v < SCEN_VMS; v++) {
			vi[v] = *ss->vms[v];
			if (!v) {	/* VM 0's clock-unreliable spans, symbols */
				vi[v].n_clock_unreliable = n_spans;
				vi[v].clock_unreliable = spans;
				vi[v].guest_symbols = syms;
			}
			vp[v] = &vi[v];
		}
		e = mo_create_vms(&o->m, merged, o->t, ss && (n_spans || syms) ? vp : NULL, err,
				  sizeof(err));
	}
	if (e) {
		vr_trace_close(o->t);
		free(o);
		return e;
	}
	for (uint32_t origin = 0; origin <= n_vms; origin++) {
		const struct vr_events *ev = origin ?
			vr_trace_events(o->t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, origin - 1) :
			vr_trace_events(o->t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);

		for (unsigned int k = 0; k < VMSCOPE_NR_EVENTS; k++) {
			int i = ev ? vr_events_index(ev, k) : -1;

			o->id[origin][k] = i < 0 ? -1 : mo_id(o->m, o->t, origin, &ev->desc[i]);
		}
	}
	for (uint32_t origin = n_vms + 1; origin <= SCEN_VMS; origin++)
		for (unsigned int k = 0; k < VMSCOPE_NR_EVENTS; k++)
			o->id[origin][k] = -1;
	*out = o;
	return 0;
}

int scen_out_close(struct scen_out *o)
{
	int e = mo_close(o->m, NULL);

	vr_trace_close(o->t);
	e = o->err ? o->err : e;
	free(o);
	return e;
}

int scen_write(struct scen *s, const char *dir)
{
	struct vstate v[SCEN_VMS * SCEN_VCPUS];
	struct scen_out *o;
	unsigned int n;
	int e;

	memset(&s->x.count, 0, offsetof(struct scen_expect, keep));
	s->loss_done = false;
	memset(s->x.hog_ns, 0, sizeof(s->x.hog_ns));
	memset(s->x.hog_hlt_ns, 0, sizeof(s->x.hog_hlt_ns));
	memset(s->x.kworker_ns, 0, sizeof(s->x.kworker_ns));
	memset(s->x.block_ns, 0, sizeof(s->x.block_ns));
	memset(s->x.block_hlt_ns, 0, sizeof(s->x.block_hlt_ns));
	s->x.block_n = 0;
	s->x.hog_n = s->x.hog_max = 0;
	memset(s->x.running_ns, 0, sizeof(s->x.running_ns));
	memset(s->x.blocked_ns, 0, sizeof(s->x.blocked_ns));
	for (unsigned int vm = 0; vm < SCEN_VMS; vm++)
		for (int r = 0; r < SCEN_REASONS; r++)
			s->x.min[vm][r] = UINT64_MAX;
	s->records = 0;
	e = scen_out_open_vms(&o, dir, s->n_vms, s->vcpus, false, NULL, 0, s->last_vm_no_agent);
	if (e)
		return e;
	n = s->n_vms * s->vcpus;
	for (unsigned int i = 0; i < n; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].vm = i / s->vcpus;
		v[i].v = i % s->vcpus;
		v[i].rng = s->seed * 0x9e3779b97f4a7c15ull + i + 1;
		v[i].next = SCEN_H0 + 137 * i;
	}
	while (s->records < s->n_records && !o->err) {
		unsigned int best = 0;

		for (unsigned int i = 1; i < n; i++)
			if (v[i].next < v[best].next)
				best = i;
		step(s, o, &v[best]);
	}
	/* the walk closes what runs at its last record */
	for (unsigned int i = 0; i < n; i++)
	{
		if (v[i].task_since && s->last_ts > v[i].task_since)
			s->x.running_ns[v[i].vm][v[i].task] += s->last_ts - v[i].task_since;
		for (int t = 0; t < SCEN_TASKS; t++)
			if (t != v[i].task && v[i].last_out[t])
				s->x.blocked_ns[v[i].vm][t] += s->last_ts - v[i].last_out[t];
	}
	return scen_out_close(o);
}

void scen_free(struct scen *s)
{
	for (unsigned int vm = 0; vm < SCEN_VMS; vm++)
		for (int r = 0; r < SCEN_REASONS; r++) {
			free(s->x.dur[vm][r]);
			s->x.dur[vm][r] = NULL;
			s->x.ndur[vm][r] = 0;
		}
}
