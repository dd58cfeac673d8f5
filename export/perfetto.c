// SPDX-License-Identifier: GPL-2.0
/*
 * A merged trace (or a raw one, merged as it is read: ex_in.h) as a
 * Perfetto trace (perfetto.h, README.md):
 *
 * - machines: the host's packets carry no machine_id, VM n's guest
 *   packets machine_id n + 1 (TracePacket.machine_id, upstream's field
 *   for "producers running on a remote host (e.g. a VM guest)");
 * - CPU scheduling: every sched_switch, host or guest, as an ftrace
 *   sched_switch of its machine and CPU (guest CPU = vCPU);
 * - exit slices: the exits of the analysis pass (analysis/walk.h, the
 *   one definition the reports use: kvm_exit .. the vCPU's next
 *   kvm_entry, open exits ended uncounted by a loss), each on the host
 *   thread track of its kvm_exit record (else of its vCPU thread), named
 *   by the exit reason as the reports name it, with the reason code,
 *   guest RIP and vCPU as annotations;
 * - clock-sync exchanges: a flow from the host's sync_t2 instant through
 *   its sync_t3 instant (same vCPU thread) to the guest's sync_guest
 *   instant on a "vCPU N clock sync" track of the VM's machine. The flow
 *   id is a hash of the exchange's (token, seq, guest CPU), which both
 *   sides record, so no exchange needs to be remembered.
 *
 * The file is the packets of a Trace message written one by one (field 1,
 * length-delimited), so memory does not grow with the trace. Slices are
 * written when the walk completes their exit (at its kvm_entry), so their begin packet follows later
 * packets; Perfetto sorts packets by timestamp when it reads a file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ex_in.h"
#include "ex_out.h"
#include "out.h"
#include "perfetto.h"
#include "perfetto_subset.pb-c.h"
#include "pf_intern.h"
#include "pf_roles.h"
#include "pf_sched.h"
#include "roles.h"
#include "walk.h"

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__TrackDescriptor TrackDesc;
typedef Perfetto__Protos__DebugAnnotation Annotation;

/* ---- fixed tables: host threads, guest sync tracks ---- */

#define PF_THREADS	4096	/* power of two */
#define PF_GTRACKS	1024

struct pf_thread {
	bool used, track_sent, has_t2;
	uint32_t seq;			/* its packet sequence, 0: none yet */
	bool seq_started;
	struct pf_intern_seq names;	/* the names its sequence defined */
	int32_t tid;
	int32_t pid;		/* QEMU's pid for a known vCPU thread, else 0 */
	int vm;			/* the vCPU thread's VM, or -1 */
	uint32_t vcpu;
	uint64_t t2, fid;
};

struct pf {
	FILE *f;
	uint8_t *buf;
	size_t cap;
	int err;
	struct ex_pf_stats *st;
	struct an_walk *w;		/* the exits, the input */
	const struct vr_events *ev;	/* its table, indexing roles */
	const struct pf_role_of *roles;
	const Vmscope__Trace__SessionMetadata *s;
	uint32_t n_vms;
	bool *seq_started;	/* [1 + n_vms] */
	struct pf_thread th[PF_THREADS];
	uint32_t thread_seqs;		/* host thread sequences begun */
	uint64_t gtrack[PF_GTRACKS];	/* (vm + 1) << 32 | cpu, 0: free */
	struct pf_sched *sched;		/* sched_switch bundles */
	struct pf_sched_stats sched_st;
	struct pf_intern intern;	/* the host sequence's names */
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static struct pf_thread *thread(struct pf *p, int32_t tid)
{
	uint32_t h = (uint32_t)mix((uint64_t)(uint32_t)tid);

	for (unsigned int i = 0; i < PF_THREADS; i++) {
		struct pf_thread *t = &p->th[(h + i) & (PF_THREADS - 1)];

		if (t->used && t->tid == tid)
			return t;
		if (!t->used) {
			t->used = true;
			t->tid = tid;
			t->vm = -1;
			return t;
		}
	}
	p->st->table_full++;
	return NULL;
}

/*
 * Track uuids: id, machine, kind (2 bits); unique by construction, and
 * small where ids are (a host thread's: about 4 bytes in every event).
 */
enum { U_PROCESS = 1, U_THREAD, U_GSYNC };

static uint64_t uuid(unsigned int kind, uint32_t machine, uint32_t id)
{
	return ((uint64_t)id << 16 | (machine & 0xffff)) << 2 | kind;
}

static uint64_t flow_id(uint64_t token, uint64_t seq, uint64_t cpu)
{
	uint64_t id = mix(mix(mix(token) ^ seq) ^ cpu);

	return id ? id : 1;
}

/* ---- writing packets ---- */

/*
 * Packet sequences: 1 + machine for each machine's descriptors, CPU
 * bundles and guest instants; after them one per host thread track
 * (pf_thread_seq), whose events name their track and names by its
 * incremental state (defaults, interned names) rather than in every packet.
 * @started: the sequence began (its first packet clears the state).
 */
static void emit_seq(struct pf *p, Packet *pk, uint32_t machine, uint32_t seq, bool *started)
{
	uint8_t hdr[11];
	size_t n, h = 0;

	if (p->err)
		return;
	if (machine) {
		pk->has_machine_id = true;
		pk->machine_id = machine;
	}
	pk->has_trusted_packet_sequence_id = true;
	pk->trusted_packet_sequence_id = seq;
	if (started && !*started) {
		*started = true;
		pk->has_sequence_flags = true;
		pk->sequence_flags |= 1;	/* SEQ_INCREMENTAL_STATE_CLEARED */
	}
	n = protobuf_c_message_get_packed_size(&pk->base);
	if (n > p->cap) {
		uint8_t *b = realloc(p->buf, n);

		if (!b) {
			p->err = -ENOMEM;
			return;
		}
		p->buf = b;
		p->cap = n;
	}
	protobuf_c_message_pack(&pk->base, p->buf);
	hdr[h++] = 0x0a;	/* Trace.packet: field 1, length-delimited */
	for (size_t v = n; ; v >>= 7) {
		hdr[h++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
		if (v < 0x80)
			break;
	}
	if (fwrite(hdr, 1, h, p->f) != h || fwrite(p->buf, 1, n, p->f) != n)
		p->err = -EIO;
	p->st->packets++;
}

static void emit(struct pf *p, Packet *pk, uint32_t machine)
{
	emit_seq(p, pk, machine, 1 + machine,
		 machine <= p->n_vms ? &p->seq_started[machine] : NULL);
}

static void emit_track(struct pf *p, TrackDesc *td, uint32_t machine)
{
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
	pk.track_descriptor = td;
	emit(p, &pk, machine);
}

/* A guest machine's event (on its machine's sequence, names inline). */
static void emit_event(struct pf *p, uint64_t ts, TrackEvent *te, uint32_t machine)
{
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	pk.has_timestamp = true;
	pk.timestamp = ts;
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	pk.track_event = te;
	emit(p, &pk, machine);
}

static const char *vm_name(const struct pf *p, uint32_t vm, char *buf, size_t len)
{
	if (vm < p->n_vms && p->s->vms[vm]->name && p->s->vms[vm]->name[0])
		return p->s->vms[vm]->name;
	snprintf(buf, len, "vm%u", vm);
	return buf;
}

/* The QEMU process and vCPU thread tracks the session names. */
static void known_threads(struct pf *p)
{
	char name[96], vb[16];

	for (uint32_t v = 0; v < p->n_vms; v++) {
		const Vmscope__Trace__VmInfo *vm = p->s->vms[v];
		Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
		TrackDesc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;

		if (vm->qemu_pid <= 0)
			continue;
		snprintf(name, sizeof(name), "QEMU %s", vm_name(p, v, vb, sizeof(vb)));
		pd.has_pid = true;
		pd.pid = vm->qemu_pid;
		pd.process_name = name;
		td.has_uuid = true;
		td.uuid = uuid(U_PROCESS, 0, (uint32_t)vm->qemu_pid);
		td.process = &pd;
		emit_track(p, &td, 0);
		for (size_t k = 0; k < vm->n_vcpus; k++) {
			struct pf_thread *t = thread(p, vm->vcpus[k]->tid);

			if (t) {
				t->pid = vm->qemu_pid;
				t->vm = (int)v;
				t->vcpu = vm->vcpus[k]->vcpu;
			}
		}
	}
}

/* The host thread track of @t, described on first use. */
static uint64_t thread_track(struct pf *p, struct pf_thread *t)
{
	uint64_t u = uuid(U_THREAD, 0, (uint32_t)t->tid);

	if (!t->track_sent) {
		Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
		TrackDesc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		char name[96], vb[16];

		td.has_uuid = true;
		td.uuid = u;
		if (t->pid > 0) {	/* a vCPU thread the session knows */
			snprintf(name, sizeof(name), "%s vCPU %u",
				 vm_name(p, (uint32_t)t->vm, vb, sizeof(vb)), t->vcpu);
			th.has_pid = th.has_tid = true;
			th.pid = t->pid;
			th.tid = t->tid;
			th.thread_name = name;
			td.thread = &th;
			td.has_parent_uuid = true;
			td.parent_uuid = uuid(U_PROCESS, 0, (uint32_t)t->pid);
		} else {	/* its process is not known: a plain named track */
			snprintf(name, sizeof(name), "host thread %d", t->tid);
			td.name = name;
		}
		emit_track(p, &td, 0);
		t->track_sent = true;
	}
	return u;
}

/*
 * An event on host thread @t's track, on the thread's own sequence: its
 * first packet makes that track the sequence's default, so no event names
 * it; @names: what the packet interns, or NULL.
 */
static void emit_thread_event(struct pf *p, struct pf_thread *t, uint64_t ts, TrackEvent *te,
			      Perfetto__Protos__InternedData *names)
{
	Perfetto__Protos__TrackEventDefaults ted = PERFETTO__PROTOS__TRACK_EVENT_DEFAULTS__INIT;
	Perfetto__Protos__TracePacketDefaults d = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	uint64_t u = thread_track(p, t);

	if (!t->seq_started) {
		ted.has_track_uuid = true;
		ted.track_uuid = u;
		d.track_event_defaults = &ted;
		pk.trace_packet_defaults = &d;
	}
	pk.interned_data = names;
	pk.has_sequence_flags = true;
	pk.sequence_flags = 2;	/* SEQ_NEEDS_INCREMENTAL_STATE: defaults, names */
	pk.has_timestamp = true;
	pk.timestamp = ts;
	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT;
	pk.track_event = te;
	if (!t->seq)	/* numbered in order of use: small, one byte in most packets */
		t->seq = p->n_vms + 2 + p->thread_seqs++;
	emit_seq(p, &pk, 0, t->seq, &t->seq_started);
}

/* The "vCPU N clock sync" track of VM @vm's machine. */
static bool guest_track(struct pf *p, uint32_t vm, uint32_t cpu, uint64_t *u)
{
	uint64_t key = (uint64_t)(vm + 1) << 32 | cpu;
	uint32_t h = (uint32_t)mix(key);

	*u = uuid(U_GSYNC, vm + 1, cpu);
	for (unsigned int i = 0; i < PF_GTRACKS; i++) {
		uint64_t *g = &p->gtrack[(h + i) % PF_GTRACKS];

		if (*g == key)
			return true;
		if (!*g) {
			TrackDesc td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
			char name[96], vb[16];

			*g = key;
			snprintf(name, sizeof(name), "%s vCPU %u clock sync",
				 vm_name(p, vm, vb, sizeof(vb)), cpu);
			td.has_uuid = true;
			td.uuid = *u;
			td.name = name;
			emit_track(p, &td, vm + 1);
			return true;
		}
	}
	p->st->table_full++;
	return false;
}

/* ---- events ---- */

/* A NUL-terminated, printable copy of a string field. */
static char *str_copy(char *buf, const struct vmscope_field_desc *f, const uint8_t *pl)
{
	unsigned int n = 0;

	for (; n < f->size && n < VMSCOPE_MAX_PAYLOAD && pl[f->offset + n]; n++) {
		uint8_t c = pl[f->offset + n];

		buf[n] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	buf[n] = 0;
	return buf;
}

static void sched_switch(struct pf *p, const struct pf_role_of *r, const struct vr_item *it,
			 const struct mo_origin *o, uint64_t ts)
{
	char prev[VMSCOPE_MAX_PAYLOAD + 1], next[VMSCOPE_MAX_PAYLOAD + 1];
	const uint8_t *pl = it->payload;
	struct pf_switch x = { .ts = ts };

	x.prev_pid = (int32_t)mg_get(&r->f[SW_PREV], pl);
	x.next_pid = (int32_t)mg_get(&r->f[SW_NEXT], pl);
	if ((x.has_prev_prio = r->has[SW_PREV_PRIO]))
		x.prev_prio = (int32_t)mg_get(&r->f[SW_PREV_PRIO], pl);
	if ((x.has_next_prio = r->has[SW_NEXT_PRIO]))
		x.next_prio = (int32_t)mg_get(&r->f[SW_NEXT_PRIO], pl);
	if ((x.has_prev_state = r->has[SW_STATE]))
		x.prev_state = (int64_t)mg_get(&r->f[SW_STATE], pl);
	if (r->prev_comm)
		x.prev_comm = str_copy(prev, r->prev_comm, pl);
	if (r->next_comm)
		x.next_comm = str_copy(next, r->next_comm, pl);
	pf_sched_add(p->sched, o->origin, o->cpu, &x);
	p->st->sched_switch++;
}

/* pf_sched's output: a bundle of one machine's CPU as one packet */
static void sched_bundle(void *ctx, uint32_t machine, Perfetto__Protos__FtraceEventBundle *b)
{
	Packet pk = PERFETTO__PROTOS__TRACE_PACKET__INIT;

	pk.data_case = PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS;
	pk.ftrace_events = b;
	emit(ctx, &pk, machine);
}

/* A debug annotation named by its iid on @seq. */
static void annotation(struct pf_intern_seq *seq, struct pf_intern_packet *ip, Annotation *a,
		       Annotation **ap, enum pf_ann name, uint64_t v, bool ptr)
{
	perfetto__protos__debug_annotation__init(a);
	a->name_field_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID;
	a->name_iid = pf_intern_ann(seq, ip, name);
	a->value_case = ptr ? PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_POINTER_VALUE
			    : PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
	if (ptr)
		a->pointer_value = v;
	else
		a->uint_value = v;
	*ap = a;
}

/* @te on @t's sequence named @name in category @cat: by iid, else inline. */
static void host_names(struct pf *p, struct pf_thread *t, struct pf_intern_packet *ip,
		       TrackEvent *te, uint64_t *cat_iid, enum pf_cat cat, const char *name)
{
	uint64_t iid = pf_intern_name(&p->intern, &t->names, ip, name);

	*cat_iid = pf_intern_cat(&t->names, ip, cat);
	te->n_category_iids = 1;
	te->category_iids = cat_iid;
	if (iid) {
		te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID;
		te->name_iid = iid;
	} else {
		te->name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
		te->name = (char *)name;
	}
}

/* The slice of exit @x on @t's track. */
static void exit_slice(struct pf *p, struct pf_thread *t, const struct an_exit *x)
{
	TrackEvent b = PERFETTO__PROTOS__TRACK_EVENT__INIT, e = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	struct pf_intern_packet ip;
	Annotation a[5], *ap[5];
	size_t na = 0;
	uint32_t isa, code;
	uint64_t cat;
	char sym[640];

	pf_intern_packet_init(&ip);
	/* the reason's code only where the probe recorded it ("unknown") */
	if (an_walk_reason_code(p->w, x->reason, &isa, &code)) {
		annotation(&t->names, &ip, &a[na], &ap[na], PF_ANN_EXIT_REASON, code, false), na++;
		annotation(&t->names, &ip, &a[na], &ap[na], PF_ANN_ISA, isa, false), na++;
	}
	annotation(&t->names, &ip, &a[na], &ap[na], PF_ANN_GUEST_RIP, x->rip, true), na++;
	annotation(&t->names, &ip, &a[na], &ap[na], PF_ANN_VCPU, x->vcpu, false), na++;
	/* the RIP as the reports name it: "fn+0x1f [module]", or user mode */
	if (x->sym >= 0 || x->sym == AN_SYM_USER) {
		const char *label = an_walk_rip_label(p->w, x->vm, x->sym, x->rip, sym,
						      sizeof(sym));

		annotation(&t->names, &ip, &a[na], &ap[na], PF_ANN_GUEST_SYMBOL, 0, false);
		a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID;
		a[na].string_value_iid = pf_intern_str(&p->intern, &t->names, &ip, label);
		if (!a[na].string_value_iid) {	/* the table is full: inline */
			a[na].value_case = PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
			a[na].string_value = (char *)label;
		}
		na++;
	}
	b.has_type = e.has_type = true;
	b.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	e.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	host_names(p, t, &ip, &b, &cat, PF_CAT_KVM, an_walk_reason_name(p->w, x->reason));
	b.n_debug_annotations = na;
	b.debug_annotations = ap;
	emit_thread_event(p, t, x->start, &b, pf_intern_data(&ip));
	emit_thread_event(p, t, x->end, &e, NULL);
	p->st->slices++;
}

/* The walk's exit hook: a completed exit as a slice. */
static void pf_exit(void *ctx, const struct an_exit *x)
{
	struct pf *p = ctx;
	int32_t tid = x->tid >= 0 ? x->tid : an_walk_vcpu_tid(p->w, x->vm, x->vcpu);
	struct pf_thread *t;

	if (tid < 0) {
		p->st->no_thread++;
		return;
	}
	t = thread(p, tid);
	if (t)
		exit_slice(p, t, x);
}

/* A host sync instant on @t's track carrying flow @fid. */
static void host_instant(struct pf *p, struct pf_thread *t, uint64_t ts, const char *name,
			 uint64_t fid)
{
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	struct pf_intern_packet ip;
	uint64_t cat;

	te.has_type = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
	pf_intern_packet_init(&ip);
	host_names(p, t, &ip, &te, &cat, PF_CAT_SYNC, name);
	te.n_flow_ids = 1;
	te.flow_ids = &fid;
	p->st->flow_steps++;
	emit_thread_event(p, t, ts, &te, pf_intern_data(&ip));
}

static void host_event(struct pf *p, const struct pf_role_of *r, const struct vr_item *it,
		       const struct mo_origin *o, uint64_t ts)
{
	const uint8_t *pl = it->payload;
	struct pf_thread *t;

	if (o->tid < 0) {
		p->st->no_thread++;
		return;
	}
	t = thread(p, o->tid);
	if (!t)
		return;
	switch (r->role) {
	case R_T2:
		t->has_t2 = true;
		t->t2 = mg_get(&r->f[S_T2], pl);
		t->fid = flow_id(mg_get(&r->f[S_TOKEN], pl), mg_get(&r->f[S_SEQ], pl),
				 mg_get(&r->f[S_CPU], pl));
		host_instant(p, t, ts, "sync t2", t->fid);
		break;
	case R_T3:
		/* the module writes the t2 it paired into t3 (merge/README.md) */
		if (t->has_t2 && t->t2 == mg_get(&r->f[S_T2], pl))
			host_instant(p, t, ts, "sync t3", t->fid);
		t->has_t2 = false;
		break;
	default:
		break;
	}
}

/* A guest sync record: an instant on its vCPU's sync track ending its flow. */
static void guest_sync(struct pf *p, const struct pf_role_of *r, const struct vr_item *it,
		       const struct mo_origin *o, uint64_t ts)
{
	static char *cat = "vmscope_sync";
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	const uint8_t *pl = it->payload;
	uint64_t cpu = mg_get(&r->f[S_CPU], pl), fid;

	if (!guest_track(p, o->origin - 1, o->cpu, &te.track_uuid))
		return;
	fid = flow_id(mg_get(&r->f[S_TOKEN], pl), mg_get(&r->f[S_SEQ], pl), cpu);
	te.has_type = te.has_track_uuid = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
	te.n_categories = 1;
	te.categories = &cat;
	te.name_field_case = PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME;
	te.name = "sync_guest";
	te.n_terminating_flow_ids = 1;
	te.terminating_flow_ids = &fid;
	p->st->flow_ends++;
	emit_event(p, ts, &te, o->origin);
}

/* The walk's record hook: what the export writes besides exits. */
static void pf_record(void *ctx, const struct vr_item *it, const struct mo_origin *o, bool has,
		      uint64_t ts)
{
	struct pf *p = ctx;
	ptrdiff_t i = it->desc - p->ev->desc;
	const struct pf_role_of *r;

	if (it->kind == VR_BAD)
		p->st->bad++;
	if (it->kind != VR_EVENT)
		return;
	p->st->events++;

	if (!has || i < 0 || (size_t)i >= p->ev->n || o->origin > p->n_vms)
		return;
	r = &p->roles[i];
	if (r->role == R_SW)
		sched_switch(p, r, it, o, ts);
	else if (r->role == R_GSYNC && o->origin)
		guest_sync(p, r, it, o, ts);
	else if (r->role != R_NONE && !o->origin)
		host_event(p, r, it, o, ts);
	if (p->err)
		an_walk_stop(p->w);
}

int ex_perfetto(const char *in, const char *out, const struct ex_opts *opts,
		struct ex_pf_stats *st, char *err, size_t errlen)
{
	static Vmscope__Trace__SessionMetadata empty = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	struct pf_role_of *roles = NULL;
	const struct vr_events *ev;
	struct an_walk *w;
	struct ex_out o;
	struct pf *p = NULL;
	int e;

	memset(st, 0, sizeof(*st));
	e = ex_in_open(&w, &ev, in, opts, err, errlen);
	if (e)
		return e;
	e = ex_out_file(&o, out, opts->force, err, errlen);
	if (e) {
		an_walk_close(w);
		return e;
	}
	p = calloc(1, sizeof(*p));
	roles = calloc(ev->n ? ev->n : 1, sizeof(*roles));
	if (p) {
		p->s = an_walk_session(w);
		if (!p->s)
			p->s = &empty;
		p->n_vms = (uint32_t)p->s->n_vms;
		p->seq_started = calloc(p->n_vms + 1, sizeof(bool));
		p->sched = pf_sched_new(sched_bundle, p, &p->sched_st);
		p->f = fdopen(o.fd, "w");
	}
	if (!p || !roles || !p->seq_started || !p->sched || !p->f) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto out;
	}
	p->st = st;
	p->w = w;
	p->ev = ev;
	p->roles = roles;
	st->machines = 1 + p->n_vms;
	for (unsigned int i = 0; i < ev->n; i++)
		if (!ev->why[i][0])
			pf_classify(&roles[i], &ev->desc[i]);
	known_threads(p);
	e = an_walk_run(w, &(struct an_hooks){ .ctx = p, .exit = pf_exit, .record = pf_record },
			err, errlen);
	pf_sched_flush(p->sched);
	st->sched_compact = p->sched_st.compact;
	st->sched_disordered = p->sched_st.disordered;
	st->exits_unpaired = an_walk_counts(w)->open_dropped + an_walk_counts(w)->open_at_end;
	st->no_thread += an_walk_counts(w)->unattributed;
	if (!p->err && fflush(p->f))
		p->err = -errno;
	if (p->err) {
		snprintf(err, errlen, "writing %s: %s", out, strerror(-p->err));
		e = p->err;
	} else {
		e = ex_in_check_end(w, e, in, opts, err, errlen);
	}
out:
	if (p && p->f) {
		o.fd = dup(fileno(p->f));	/* ex_out syncs and closes its own */
		fclose(p->f);
	}
	if (!e)
		e = ex_out_commit(&o, err, errlen);
	else
		ex_out_abort(&o);
	if (p) {
		for (unsigned int i = 0; i < PF_THREADS; i++)
			pf_intern_seq_free(&p->th[i].names);
		pf_intern_free(&p->intern);
		free(p->buf);
		free(p->seq_started);
		pf_sched_free(p->sched);
	}
	free(p);
	free(roles);
	an_walk_close(w);
	return e;
}
