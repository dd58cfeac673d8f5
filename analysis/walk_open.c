// SPDX-License-Identifier: GPL-2.0
/* Opening a trace for the walk (walk.h): event roles, the session. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gsym.h"
#include "walk_int.h"

static void find_switch(const struct vr_events *ev, const char *name, struct switch_fields *s,
			const struct vmscope_event_desc **d)
{
	static const char *const f[S_N] = { "prev_pid", "prev_state", "next_pid" };

	*d = mg_role_find(ev, name, f, S_N, s->f);
	s->has_comm = *d && mg_str_field_find(*d, "prev_comm", &s->prev_comm) &&
		      mg_str_field_find(*d, "next_comm", &s->next_comm);
	s->has_preempt = *d && mg_field_find(*d, "preempt", &s->preempt);
}

static struct role_of *role_at(struct role_tab *t, const struct vmscope_event_desc *d)
{
	return &t->roles[d - t->ev->desc];
}

static void set_role(struct role_tab *t, const struct vmscope_event_desc *d, enum role r,
		     uint32_t vm)
{
	if (!d)
		return;
	role_at(t, d)->role = (uint8_t)r;
	role_at(t, d)->vm = vm;
}

/* The table of VM @v's events and the name of its event @ev there: in a
 * merged trace's union "vmN:ev", in the VM's own table (raw) "ev". */
static struct role_tab *guest_tab(struct an_walk *w, uint32_t v, const char *ev, char *name,
				  size_t len)
{
	if (w->sides) {
		snprintf(name, len, "%s", ev);
		return w->tab[1 + v].ev ? &w->tab[1 + v] : NULL;
	}
	snprintf(name, len, "vm%u:%s", v, ev);
	return &w->tab[0];
}

static void find_guest_roles(struct an_walk *w, uint32_t v)
{
	static const char *const fw[1] = { "pid" };
	const char *wake[2] = { "sched_wakeup", "sched_waking" };
	const struct vmscope_event_desc *d;
	struct mg_field pid0;
	struct role_tab *t;
	char name[64];

	if (!(t = guest_tab(w, v, "sched_switch", name, sizeof(name))))
		return;
	find_switch(t->ev, name, &w->vm[v].sw, &d);
	set_role(t, d, R_GSWITCH, v);
	w->vm[v].guest = d != NULL;
	if (d)
		role_at(t, d)->sw = &w->vm[v].sw;
	for (int k = 0; k < 2; k++) {
		struct mg_field pid;

		guest_tab(w, v, wake[k], name, sizeof(name));
		d = mg_role_find(t->ev, name, fw, 1, &pid);
		set_role(t, d, R_GWAKE, v);
		if (d) {
			struct role_of *r = role_at(t, d);

			r->wake_pid = pid;
			r->has_wake_cpu = mg_field_find(d, "target_cpu", &r->wake_cpu);
		}
	}
	guest_tab(w, v, "cpu_task", name, sizeof(name));
	d = mg_role_find(t->ev, name, fw, 1, &pid0);
	set_role(t, d, R_GTASK, v);
	w->vm[v].has_cpu_task = d != NULL;
	/*
	 * vCPUs met before this table (a fed walk's, before the agent's
	 * hello) are before the guest session (walk.c, first_task) and stay
	 * so until their CPU's cpu_task, as a report of the recording has
	 * them; but a table without cpu_task never says when its session
	 * began, and a report of such a trace has their tasks unknown.
	 */
	for (uint32_t c = 0; !d && c < w->vm[v].cap; c++) {
		struct vcpu *p = &w->vm[v].v[c];

		if (p->task == AN_TASK_BEFORE)
			p->task = AN_TASK_UNKNOWN;
		if (p->exit_task == AN_TASK_BEFORE)
			p->exit_task = AN_TASK_UNKNOWN;
	}
	if (d) {
		struct role_of *r = role_at(t, d);

		r->task_pid = pid0;
		r->has_task_comm = mg_str_field_find(d, "comm", &r->task_comm);
	}
	guest_tab(w, v, "irq_vector_entry", name, sizeof(name));
	{
		static const char *const fv[1] = { "vector" };
		struct mg_field vec;

		d = mg_role_find(t->ev, name, fv, 1, &vec);
		set_role(t, d, R_GVEC, v);
		w->vm[v].has_vector = d != NULL;
		if (d)
			role_at(t, d)->vector = vec;
	}
	guest_tab(w, v, "sync_guest", name, sizeof(name));
	d = mg_role_find(t->ev, name, NULL, 0, NULL);
	set_role(t, d, R_GSYNC, v);
	if (d)	/* absent from traces of guest modules before ABI 0.4 */
		role_at(t, d)->has_steal = mg_field_find(d, "steal_ns", &role_at(t, d)->steal);
}

static int find_roles(struct an_walk *w, char *err, size_t errlen)
{
	static const char *const fx[X_N] = { "vcpu_id", "exit_reason", "guest_rip", "isa",
					     "reason_valid" };
	static const char *const fe[1] = { "vcpu_id" };
	static const char *const fpio[D_PIO_N] = { "write", "port", "size" };
	static const char *const fmmio[D_MMIO_N] = { "gpa", "type", "len" };
	static const char *const fmsr[D_MSR_N] = { "ecx", "write" };
	static const char *const fnpf[D_NPF_N] = { "address", "error_code" };
	static const char *const fwake[K_N] = { "ns", "waited", "valid" };
	static const char *const finj[J_N] = { "vector", "soft", "reinjected" };
	const struct vmscope_event_desc *d;
	struct role_tab *h;

	w->ntab = w->sides ? 1 + w->n_vms : 1;
	w->tab = calloc(w->ntab, sizeof(*w->tab));
	if (!w->tab)
		return -ENOMEM;
	w->tab[0].ev = w->ev;
	for (uint32_t v = 0; w->sides && v < w->n_vms; v++)
		w->tab[1 + v].ev = vr_trace_events(w->raw, VMSCOPE__TRACE__SIDE__SIDE_GUEST, v);
	for (uint32_t i = 0; i < w->ntab; i++)
		if (w->tab[i].ev &&
		    !(w->tab[i].roles = calloc(w->tab[i].ev->n ? w->tab[i].ev->n : 1,
					       sizeof(*w->tab[i].roles))))
			return -ENOMEM;
	h = &w->tab[0];
	d = mg_role_find(w->ev, "kvm_exit", fx, X_N, w->fx);
	if (!d && !(w->flags & AN_WALK_ANY_TRACE)) {
		snprintf(err, errlen, "the trace has no usable kvm_exit event (with %s, %s, %s, %s, %s)",
			 fx[0], fx[1], fx[2], fx[3], fx[4]);
		return -ENOENT;
	}
	set_role(h, d, R_EXIT, 0);
	d = mg_role_find(w->ev, "kvm_entry", fe, 1, &w->entry_vcpu);
	if (!d && !(w->flags & AN_WALK_ANY_TRACE)) {
		snprintf(err, errlen, "the trace has no usable kvm_entry event (with vcpu_id)");
		return -ENOENT;
	}
	set_role(h, d, R_ENTRY, 0);
	set_role(h, mg_role_find(w->ev, "kvm_userspace_exit", NULL, 0, NULL), R_USER, 0);
	/* an exit's detail (walk_detail.c): absent, the exits have none */
	set_role(h, mg_role_find(w->ev, "kvm_pio", fpio, D_PIO_N, w->fpio), R_PIO, 0);
	set_role(h, mg_role_find(w->ev, "kvm_mmio", fmmio, D_MMIO_N, w->fmmio), R_MMIO, 0);
	set_role(h, mg_role_find(w->ev, "kvm_msr", fmsr, D_MSR_N, w->fmsr), R_MSR, 0);
	set_role(h, mg_role_find(w->ev, "kvm_page_fault", fnpf, D_NPF_N, w->fnpf), R_NPF, 0);
	/* halts' ends (host modules before ABI 1.3 record none) */
	d = mg_role_find(w->ev, "kvm_vcpu_wakeup", fwake, K_N, w->fwake);
	set_role(h, d, R_WAKE, 0);
	w->has_wakeup = d != NULL;
	d = mg_role_find(w->ev, "kvm_inj_virq", finj, J_N, w->finj);
	set_role(h, d, R_INJ, 0);
	w->has_inj = d != NULL;
	find_switch(w->ev, "sched_switch", &w->host_sw, &d);
	set_role(h, d, R_HSWITCH, 0);
	if (d)
		role_at(h, d)->sw = &w->host_sw;
	for (uint32_t v = 0; v < w->n_vms; v++)
		find_guest_roles(w, v);
	return 0;
}

static int load_session(struct an_walk *w, const Vmscope__Trace__SessionMetadata *s)
{
	size_t nth = 0;

	w->sess = s;
	for (uint32_t v = 0; s && v < s->n_vms; v++)
		w->n.clock_spans += s->vms[v]->n_clock_unreliable;
	w->n_vms = s ? (uint32_t)s->n_vms : 0;
	w->vm = calloc(w->n_vms ? w->n_vms : 1, sizeof(*w->vm));
	if (!w->vm)
		return -ENOMEM;
	for (uint32_t v = 0; v < w->n_vms; v++) {
		snprintf(w->vm[v].name, sizeof(w->vm[v].name), "%s",
			 s->vms[v]->name && s->vms[v]->name[0] ? s->vms[v]->name : "?");
		nth += s->vms[v]->n_vcpus;
	}
	w->th = calloc(nth ? nth : 1, sizeof(*w->th));
	if (!w->th)
		return -ENOMEM;
	for (uint32_t v = 0; v < w->n_vms; v++)
		for (size_t i = 0; i < s->vms[v]->n_vcpus; i++) {
			const Vmscope__Trace__VcpuThread *t = s->vms[v]->vcpus[i];

			if (!t)
				continue;
			w->th[w->nth].tid = t->tid;
			w->th[w->nth].vm = v;
			w->th[w->nth].vcpu = t->vcpu;
			w->nth++;
		}
	qsort(w->th, w->nth, sizeof(*w->th), an_walk_cmp_thread);
	return 0;
}

bool an_trace_is_merged(const char *path)
{
	char p[4096];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", path, MO_STREAM);
	return !stat(p, &st);
}

/* Where the walk's records come from: a merged trace; a raw one through
 * the online merge (top --replay) or merge's own two passes (report); or
 * only a raw one's metadata, its records fed (top's live source). */
enum source { SRC_MERGED, SRC_ONLINE, SRC_EXACT, SRC_FED };

/* -EBADMSG with the reader's account in @err when the raw trace is
 * damaged and that was not accepted. */
static int refuse_damage(struct an_walk *w, const char *path, char *err, size_t errlen)
{
	size_t l;

	if ((w->flags & MR_ACCEPT_DAMAGE) || !vr_damage_describe(w->raw, path, err, errlen))
		return 0;
	l = strlen(err);
	snprintf(err + l, errlen - l, " (--accept-damage to read it)");
	return -EBADMSG;
}

/* Pass 1 of `vmscope merge` over the raw trace, stopped by its damage as
 * `vmscope merge` stops (unless accepted), then pass 2 as the source. */
static int open_exact(struct an_walk *w, const char *path, const char *spill_dir, char *err,
		      size_t errlen)
{
	struct mg_opts o = { .spill_dir = spill_dir };
	int e;

	w->mg = calloc(1, sizeof(*w->mg));
	if (!w->mg)
		return -ENOMEM;
	/* damage known before pass 1, then after it: where `vmscope merge`
	 * looks, so that the account is the one it gives */
	e = refuse_damage(w, path, err, errlen);
	if (!e)
		e = mg_sync(w->raw, &o, w->mg, err, errlen);
	if (!e)
		e = refuse_damage(w, path, err, errlen);
	if (!e)
		e = mg_p2_open(&w->p2, w->raw, w->mg, err, errlen);
	return e;
}

/* Open @path's records: a merged trace, or a raw one through the online
 * merge or the two passes, or only a raw one's metadata (SRC_FED). The
 * trace whose metadata the walk reads. */
static int open_source(struct an_walk *w, const char *path, enum source src,
		       const char *spill_dir, char *err, size_t errlen)
{
	struct om_opts o = { 0 };
	int e;

	if (src == SRC_MERGED) {
		e = mr_open(&w->mr, path, w->flags & ~AN_WALK_ANY_TRACE, err, errlen);
		return e;
	}
	e = vr_trace_open(&w->raw, path, err, errlen);
	if (e)
		return e;
	/* a recording being written (SRC_FED) may end in a torn frame */
	if (vr_trace_problem(w->raw) && !(w->flags & MR_ACCEPT_DAMAGE) && src != SRC_FED) {
		snprintf(err, errlen, "%s: %s", path, vr_trace_problem(w->raw));
		return -EBADMSG;
	}
	if (!vr_trace_session(w->raw) || src == SRC_FED)
		return 0;	/* said below */
	if (src == SRC_EXACT)
		return open_exact(w, path, spill_dir, err, errlen);
	return om_open(&w->om, w->raw, &o, err, errlen);
}

/* The session as the merged trace's metadata has it: each VM's
 * clock-unreliable spans from pass 1 (mg_merge writes the same). */
static int session_as_merged(struct an_walk *w, const Vmscope__Trace__SessionMetadata **s)
{
	int e = mg_clock_vms(*s, w->mg, &w->cv);

	if (e)
		return e;
	w->sess2 = **s;
	if (w->cv.vms)
		w->sess2.vms = w->cv.vms;
	*s = &w->sess2;
	return 0;
}

/* The two passes' records are read as the merged trace's: decoded with
 * its one table, which becomes the walk's. */
static int merged_table(struct an_walk *w, char *err, size_t errlen)
{
	int e = mo_union_build(&w->uni, w->raw, err, errlen);

	if (!e)
		e = vr_events_from_pb(&w->uev, &w->uni.table);
	if (e == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	w->ev = w->uev;
	return e;
}

static int walk_open(struct an_walk **out, const char *path, unsigned int flags,
		     enum source src, const char *spill_dir, char *err, size_t errlen)
{
	struct an_walk *w = calloc(1, sizeof(*w));
	const Vmscope__Trace__SessionMetadata *s;
	struct vr_trace *t;
	int e;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	w->task = calloc(AN_MAX_TASKS, sizeof(*w->task));
	if (!w->task) {
		free(w);
		return -ENOMEM;
	}
	w->flags = flags;
	snprintf(w->path, sizeof(w->path), "%s", path);
	e = open_source(w, path, src, spill_dir, err, errlen);
	if (e)
		goto fail;
	t = src != SRC_MERGED ? w->raw : mr_trace(w->mr);
	s = vr_trace_session(t);
	if (s && w->mg && session_as_merged(w, &s)) {
		snprintf(err, errlen, "out of memory");
		e = -ENOMEM;
		goto fail;
	}
	w->sides = src == SRC_ONLINE || src == SRC_FED;
	w->fed = src == SRC_FED;
	w->ev = vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
	if (w->mg && w->ev) {
		e = merged_table(w, err, errlen);
		if (e)
			goto fail;
	}
	/* a raw trace without a session has no pass 2 to read: nothing
	 * would be read, so it is refused even where any trace is taken */
	if (!w->ev || (!s && (!(flags & AN_WALK_ANY_TRACE) || src == SRC_EXACT))) {
		const char *why = vr_trace_problem(t);

		snprintf(err, errlen, "%s: no usable session metadata%s%s", path,
			 why ? ": " : "", why ? why : "");
		e = -EINVAL;
		goto fail;
	}
	w->clock = s ? s->host_clock : NULL;
	e = load_session(w, s);
	if (!e)
		e = an_walk_syms_load(w, s, err, errlen);
	if (!e)
		e = find_roles(w, err, errlen);
	if (e) {
		if (e == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		goto fail;
	}
	*out = w;
	return 0;
fail:
	an_walk_close(w);
	return e;
}

int an_walk_open(struct an_walk **out, const char *path, unsigned int flags,
		 char *err, size_t errlen)
{
	return walk_open(out, path, flags, SRC_MERGED, NULL, err, errlen);
}

int an_walk_open_raw(struct an_walk **out, const char *path, unsigned int flags,
		     char *err, size_t errlen)
{
	return walk_open(out, path, flags, SRC_ONLINE, NULL, err, errlen);
}

int an_walk_open_raw_exact(struct an_walk **out, const char *path, unsigned int flags,
			   const char *spill_dir, char *err, size_t errlen)
{
	return walk_open(out, path, flags, SRC_EXACT, spill_dir, err, errlen);
}

const struct mg_result *an_walk_merge_result(const struct an_walk *w)
{
	return w->mg;
}

void an_walk_merge_report(FILE *f, const struct an_walk *w)
{
	if (w->mg)
		mg_report(f, w->raw, w->mg, MG_REPORT_SPANS);
}

int an_walk_fed_guest_table(struct an_walk *w, uint32_t vm, const struct vr_events *ev)
{
	struct role_of *roles;

	if (!w->sides || vm >= w->n_vms || !ev)
		return -EINVAL;
	roles = calloc(ev->n ? ev->n : 1, sizeof(*roles));
	if (!roles)
		return -ENOMEM;
	free(w->tab[1 + vm].roles);
	w->tab[1 + vm].roles = roles;
	w->tab[1 + vm].ev = ev;
	find_guest_roles(w, vm);
	return 0;
}

int an_walk_open_fed(struct an_walk **out, const char *path, char *err, size_t errlen)
{
	return walk_open(out, path, 0, SRC_FED, NULL, err, errlen);
}

void an_walk_close(struct an_walk *w)
{
	if (!w)
		return;
	mr_close(w->mr);
	om_close(w->om);
	mg_p2_close(w->p2, NULL, 0);	/* before the spill files it reads */
	if (w->mg)
		mg_result_free(w->mg);
	free(w->mg);
	mg_clock_vms_free(&w->cv);
	mo_union_free(&w->uni);
	vr_events_free(w->uev);
	vr_trace_close(w->raw);
	for (uint32_t i = 0; w->tab && i < w->ntab; i++)
		free(w->tab[i].roles);
	free(w->tab);
	for (uint32_t v = 0; v < w->n_vms && w->vm; v++) {
		free(w->vm[v].v);
		gsym_free(w->vm[v].sym);
	}
	free(w->vm);
	free(w->th);
	free(w->hc);
	free(w->task);
	free(w);
}

