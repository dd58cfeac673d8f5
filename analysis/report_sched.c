/*
 * The output of `vmscope report sched`: guest scheduling against what the
 * host did to the vCPU threads (sched.h), as text tables or JSON (json-c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "exits_json.h"
#include "report.h"
#include "sched.h"

static uint64_t stalled(const struct an_sched_task *t)
{
	return t->stall_running_ns + t->stall_runnable_ns;
}

static const struct an_sched *sort_s;

static int cmp_task(const void *a, const void *b)
{
	const struct an_sched_task *x = &sort_s->t[*(const int32_t *)a];
	const struct an_sched_task *y = &sort_s->t[*(const int32_t *)b];

	if (stalled(x) != stalled(y))
		return stalled(x) < stalled(y) ? 1 : -1;
	if (x->running_ns != y->running_ns)
		return x->running_ns < y->running_ns ? 1 : -1;
	return (*(const int32_t *)a > *(const int32_t *)b) - (*(const int32_t *)a < *(const int32_t *)b);
}

/* The guest tasks of @vm seen by the analysis, most stalled first. */
static size_t tasks_of(const struct an_sched *s, uint32_t vm, int32_t *out)
{
	size_t n = 0;

	for (uint32_t i = 0; i < an_walk_nr_tasks(s->w); i++) {
		const struct an_task *k = an_walk_task(s->w, (int32_t)i);

		if (s->t[i].seen && k && k->vm == vm)
			out[n++] = (int32_t)i;
	}
	sort_s = s;	/* qsort has no context argument; one sort at a time */
	qsort(out, n, sizeof(*out), cmp_task);
	return n;
}

static const char *host_name(const struct an_walk *w, int32_t host_task, char *buf, size_t len)
{
	if (host_task == AN_TASK_UNKNOWN) {
		snprintf(buf, len, "(blocked in host)");
		return buf;
	}
	return report_task(w, host_task, buf, len);
}

/* The AN_SCHED_BY largest of @by[@n] (sorted), the rest with @other as others. */
static void text_by(const struct an_walk *w, const struct an_by_host *by, size_t n,
		    uint64_t other)
{
	char name[64], d[32];

	for (size_t i = 0; i < n && by[i].n; i++) {
		if (i < AN_SCHED_BY)
			printf("%s%s %s", i ? ", " : "", host_name(w, by[i].host_task, name,
								   sizeof(name)),
			       an_dur(by[i].ns, d, sizeof(d)));
		else
			other += by[i].ns;
	}
	if (other)
		printf(", others %s", an_dur(other, d, sizeof(d)));
}

void report_sched_text(const struct an_walk *w, const struct an_sched *s, int32_t *idx,
		       size_t max_tasks, size_t ntop)
{
	report_damage_line(w);
	char b[8][32], t[64];

	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		size_t n = tasks_of(s, vm, idx);

		printf("VM %u %s: %zu guest threads, most stalled first%s\n", vm,
		       an_walk_vm_name(w, vm), n,
		       max_tasks && n > max_tasks ? " (the first ones; --tasks)" : "");
		printf("  %-24s %10s %10s %10s %10s %10s %10s  %s\n", "thread", "running", "runnable",
		       "blocked", "stalled:run", "stalled:rq", "in exits", "stalled by (host)");
		for (size_t i = 0; i < n && (!max_tasks || i < max_tasks); i++) {
			const struct an_sched_task *k = &s->t[idx[i]];

			printf("  %-24s %10s %10s %10s %10s %10s %10s  ",
			       report_task(w, idx[i], t, sizeof(t)),
			       an_dur(k->running_ns, b[0], sizeof(b[0])),
			       an_dur(k->runnable_ns, b[1], sizeof(b[1])),
			       an_dur(k->blocked_ns, b[2], sizeof(b[2])),
			       an_dur(k->stall_running_ns, b[3], sizeof(b[3])),
			       an_dur(k->stall_runnable_ns, b[4], sizeof(b[4])),
			       an_dur(k->exit_ns, b[5], sizeof(b[5])));
			text_by(w, k->by, AN_SCHED_KEEP, k->by_other_ns);
			printf("\n");
		}
		printf("  vCPUs as the host saw them, and the guest's own steal time:\n");
		printf("  %-5s %8s %12s %8s %12s %8s %12s %15s  %s\n", "vcpu", "thread",
		       "preempted", "times", "blocked", "times", "guest steal", "host, same span",
		       "preempted/blocked by");
		for (uint32_t v = 0; v < an_walk_nr_vcpus(w, vm); v++) {
			const struct an_sched_vcpu *p = an_sched_vcpu(s, vm, v);
			struct an_steal st;

			if (!p)
				continue;
			an_steal_result(p, &st);
			printf("  %-5u %8d %12s %8" PRIu64 " %12s %8" PRIu64 " %12s %15s  ", v,
			       an_walk_vcpu_tid(w, vm, v),
			       an_dur(p->preempted_ns, b[0], sizeof(b[0])), p->n_preempted,
			       an_dur(p->blocked_ns, b[1], sizeof(b[1])), p->n_blocked,
			       st.known ? an_dur(st.guest_ns, b[2], sizeof(b[2])) : "n/a",
			       st.known ? an_dur(st.host_ns, b[3], sizeof(b[3])) : "n/a");
			text_by(w, p->by, AN_SCHED_BY, p->by_other_ns);
			printf("\n");
		}
	}
	if (ntop) {
		printf("\nthe %zu worst stalls of a running guest thread:\n", ntop);
		printf("%-4s %-5s %-24s %10s %-28s %-8s %s\n", "VM", "vcpu", "guest thread",
		       "duration", "host task", "host cpu", "from (host time)");
	}
	for (size_t i = 0; i < ntop; i++) {
		const struct an_stall *st = an_topn_item(&s->worst, i);
		char h[64];

		printf("%-4u %-5u %-24s %10s %-28s %-8u %" PRIu64 ".%09" PRIu64 "%s\n", st->vm,
		       st->vcpu, report_task(w, st->task, t, sizeof(t)),
		       an_dur(st->end - st->start, b[0], sizeof(b[0])),
		       host_name(w, st->host_task, h, sizeof(h)), st->host_cpu,
		       st->start / 1000000000, st->start % 1000000000,
		       st->preempted ? " preempted" : "");
	}
	printf("\nguest steal: what the guest kernel accounted as steal time from the vCPU's first\n"
	       "to its last clock-sync exchange; host, same span: the vCPU thread's preempted\n"
	       "time over that span; n/a: fewer than two steal readings (none: the guest\n"
	       "module was older than ABI 0.4)\n");
	report_clock_line(stdout, an_walk_counts(w));
}

/* ---- JSON ---- */

static json_object *jthread(const struct an_walk *w, int32_t task)
{
	const struct an_task *k = an_walk_task(w, task);
	json_object *o = json_object_new_object();
	char n[64];

	json_object_object_add(o, "tid", json_object_new_int(k ? k->tid : -1));
	json_object_object_add(o, "comm", json_object_new_string(
		k ? k->comm : host_name(w, task, n, sizeof(n))));
	return o;
}

static json_object *jby(const struct an_walk *w, const struct an_by_host *by, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n && by[i].n; i++) {
		json_object *o = json_object_new_object();

		if (by[i].host_task == AN_TASK_UNKNOWN)
			json_object_object_add(o, "blocked_in_host", json_object_new_boolean(1));
		else
			json_object_object_add(o, "host_task", jthread(w, by[i].host_task));
		json_object_object_add(o, "ns", json_object_new_uint64(by[i].ns));
		json_object_object_add(o, "times", json_object_new_uint64(by[i].n));
		json_object_array_add(a, o);
	}
	return a;
}

/* The guest's steal next to the host's (steal.h); null when not known. */
static void jsteal(json_object *o, const struct an_sched_vcpu *p)
{
	struct an_steal st;

	an_steal_result(p, &st);
	json_object_object_add(o, "guest_steal_ns",
			       st.known ? json_object_new_uint64(st.guest_ns) : NULL);
	json_object_object_add(o, "preempted_in_steal_span_ns",
			       st.known ? json_object_new_uint64(st.host_ns) : NULL);
	json_object_object_add(o, "blocked_in_steal_span_ns",
			       st.known ? json_object_new_uint64(st.blocked_ns) : NULL);
	json_object_object_add(o, "steal_span_ns",
			       st.known ? json_object_new_uint64(st.span_ns) : NULL);
	an_json_u64(o, "steal_readings", st.n);
}

json_object *report_sched_json(const char *path, const struct an_walk *w,
			       const struct an_sched *s, int32_t *idx, size_t ntop)
{
	json_object *root = json_object_new_object(), *vms = json_object_new_array();
	json_object *worst = json_object_new_array();

	an_json_trace(root, path, w);
	report_clock_json(root, an_walk_counts(w));
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		json_object *v = an_json_vm(w, vm), *ts = json_object_new_array();
		json_object *cpus = json_object_new_array();
		size_t n = tasks_of(s, vm, idx);

		for (size_t i = 0; i < n; i++) {
			const struct an_sched_task *k = &s->t[idx[i]];
			json_object *o = jthread(w, idx[i]);

			an_json_u64(o, "running_ns", k->running_ns);
			an_json_u64(o, "runnable_ns", k->runnable_ns);
			an_json_u64(o, "blocked_ns", k->blocked_ns);
			an_json_u64(o, "stall_running_ns", k->stall_running_ns);
			an_json_u64(o, "stall_runnable_ns", k->stall_runnable_ns);
			an_json_u64(o, "exit_ns", k->exit_ns);
			json_object_object_add(o, "stalled_by", jby(w, k->by, AN_SCHED_KEEP));
			an_json_u64(o, "stalled_by_others_ns", k->by_other_ns);
			json_object_array_add(ts, o);
		}
		json_object_object_add(v, "threads", ts);
		for (uint32_t i = 0; i < an_walk_nr_vcpus(w, vm); i++) {
			const struct an_sched_vcpu *p = an_sched_vcpu(s, vm, i);
			struct an_by_host *by;
			size_t nby;
			json_object *o;

			if (!p)
				continue;
			o = an_json_vcpu(w, vm, i);
			an_json_u64(o, "preempted_ns", p->preempted_ns);
			an_json_u64(o, "preemptions", p->n_preempted);
			an_json_u64(o, "blocked_ns", p->blocked_ns);
			an_json_u64(o, "blocks", p->n_blocked);
			jsteal(o, p);
			/* every host task, exactly (the text shows the top) */
			nby = an_sched_vcpu_by_all(p, &by);
			json_object_object_add(o, "by", jby(w, by, nby));
			free(by);
			json_object_array_add(cpus, o);
		}
		json_object_object_add(v, "vcpus", cpus);
		json_object_array_add(vms, v);
	}
	json_object_object_add(root, "vms", vms);
	for (size_t i = 0; i < ntop; i++) {
		const struct an_stall *st = an_topn_item(&s->worst, i);
		json_object *o = json_object_new_object();

		json_object_object_add(o, "vm", json_object_new_int((int)st->vm));
		json_object_object_add(o, "vcpu", json_object_new_int((int)st->vcpu));
		json_object_object_add(o, "thread", jthread(w, st->task));
		if (st->host_task == AN_TASK_UNKNOWN)
			json_object_object_add(o, "blocked_in_host", json_object_new_boolean(1));
		else
			json_object_object_add(o, "host_task", jthread(w, st->host_task));
		json_object_object_add(o, "preempted", json_object_new_boolean(st->preempted));
		json_object_object_add(o, "host_cpu", json_object_new_int((int)st->host_cpu));
		an_json_u64(o, "start_ns", st->start);
		an_json_u64(o, "duration_ns", st->end - st->start);
		json_object_array_add(worst, o);
	}
	json_object_object_add(root, "worst", worst);
	return root;
}
