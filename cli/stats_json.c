/*
 * `vmscope stats --json`: the view as one JSON object, for scripts (the
 * VM tests) that would otherwise depend on the text's columns. The fields
 * are listed in `vmscope stats --help`.
 */
#include "exit_layout.h"
#include "stats_view.h"

static void put_u64(json_object *o, const char *k, unsigned long long v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void put_bool(json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

static void put_str(json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

static json_object *state_json(unsigned int s)
{
	json_object *o = json_object_new_object();

	put_bool(o, "enabled", s & VMSCOPE_STATE_ENABLED);
	put_bool(o, "kvm_attached", s & VMSCOPE_STATE_KVM_ATTACHED);
	put_bool(o, "sched_attached", s & VMSCOPE_STATE_SCHED_ATTACHED);
	put_bool(o, "exit_reasons", s & VMSCOPE_STATE_EXIT_REASON);
	return o;
}

static json_object *timing_json(const struct stats_view *v)
{
	json_object *o = json_object_new_object();

	for (int k = 0; k < 2; k++) {
		json_object *t;

		if (!v->timing_n[k])
			continue;
		t = json_object_new_object();
		put_u64(t, "n", v->timing_n[k]);
		json_object_object_add(t, "gap_ns_avg", json_object_new_double(
			(double)v->timing_gap_ns[k] / v->timing_n[k]));
		json_object_object_add(t, "probe_ns_avg", json_object_new_double(
			(double)v->timing_probe_ns[k] / v->timing_n[k]));
		json_object_object_add(o, k ? "entry" : "exit", t);
	}
	return o;
}

static json_object *exit_mode_json(const struct vmscope_exit_mode *m)
{
	json_object *o = json_object_new_object();

	put_str(o, "mode", exit_mode_name(m->mode));
	put_u64(o, "compared", m->compared);
	put_u64(o, "mismatches", m->mismatches);
	put_u64(o, "reasons", m->reasons);
	put_u64(o, "calibrations", m->calibrations);
	put_u64(o, "fallbacks", m->fallbacks);
	put_u64(o, "direct_exits", m->direct_exits);
	put_str(o, "layout", stats_layout_name(m->layout));
	put_str(o, "refused", exit_refused_name(m->refused));
	put_str(o, "why", m->why);
	return o;
}

static json_object *rb_json(const struct stats_rb *rb)
{
	json_object *o = json_object_new_object();

	put_u64(o, "sessions", rb->active);
	put_u64(o, "lost", rb->full + rb->too_big + rb->overwritten);
	put_u64(o, "lost_full", rb->full);
	put_u64(o, "lost_too_big", rb->too_big);
	put_u64(o, "lost_overwritten", rb->overwritten);
	put_u64(o, "subbufs_delivered", rb->delivered);
	return o;
}

static json_object *events_json(const struct stats_view *v)
{
	json_object *o = json_object_new_object();

	for (unsigned int e = 0; e < v->nev; e++) {
		json_object *ev = json_object_new_object();

		put_bool(ev, "attached", v->first.attached >> e & 1);
		put_u64(ev, "seen", v->seen[e]);
		put_u64(ev, "matched", v->matched[e]);
		json_object_object_add(o, v->descs[e].name, ev);
	}
	return o;
}

static json_object *per_cpu_json(const struct stats_view *v)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < v->n_per_cpu; i++) {
		const struct stats_cpu_count *c = &v->per_cpu[i];
		json_object *o = json_object_new_object();

		put_u64(o, "cpu", c->cpu);
		put_str(o, "event", v->descs[c->event].name);
		put_u64(o, "seen", c->seen);
		put_u64(o, "matched", c->matched);
		json_object_array_add(a, o);
	}
	return a;
}

static json_object *last_json(const struct stats_view *v)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < v->n_last; i++) {
		const struct stats_last *l = &v->last[i];
		json_object *o = json_object_new_object();

		put_str(o, "event", v->descs[l->event].name);
		put_u64(o, "cpu", l->cpu);
		put_u64(o, "ts", l->ts);
		put_str(o, "text", l->text);
		json_object_array_add(a, o);
	}
	return a;
}

json_object *stats_view_json(const struct stats_view *v)
{
	json_object *o = json_object_new_object();

	if (!o)
		return NULL;
	json_object_object_add(o, "state", state_json(v->first.state));
	put_u64(o, "kvm_attach_count", v->first.attach_count);
	put_u64(o, "kvm_detach_count", v->first.detach_count);
	put_u64(o, "sync_collisions", v->first.sync_collisions);
	put_u64(o, "exit_reason_missed", v->exit_reason_missed);
	json_object_object_add(o, "timing", timing_json(v));
	json_object_object_add(o, "exit_mode",
			       v->have_exit_mode ? exit_mode_json(&v->exit_mode) : NULL);
	json_object_object_add(o, "ringbuf", rb_json(&v->rb));
	json_object_object_add(o, "events", events_json(v));
	json_object_object_add(o, "per_cpu", per_cpu_json(v));
	json_object_object_add(o, "last", last_json(v));
	return o;
}
