/*
 * `vmscope report sched`: guest scheduling against what the host did to
 * the vCPU threads (analysis/sched.h), as text tables or JSON (json-c).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "args.h"
#include "commands.h"
#include "report.h"
#include "sched.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope report sched [--json] [--top N] [--tasks N] [--accept-damage]\n"
		"                            MERGED\n\n"
		"Guest scheduling against the host's, from a merged trace (`vmscope merge`)\n"
		"that holds the guests' sched_switch/sched_wakeup and the host's\n"
		"sched_switch of the vCPU threads (`vmscope record --pid` keeps a host switch\n"
		"when either side belongs to a recorded process, and every switch on a CPU\n"
		"where a recorded thread waits preempted).\n\n"
		"Per guest thread, in guest terms: running, runnable (woken or preempted,\n"
		"not yet running), blocked. Of the time it was running, how long its vCPU's\n"
		"host thread was off its host CPU (stalled), and by which host tasks it was\n"
		"preempted (each charged the time it had that CPU), or 'blocked in host'\n"
		"when the vCPU thread slept; of the time it was runnable on a guest CPU,\n"
		"how long that vCPU's thread was off its CPU;\n"
		"and the time its vCPU spent in (non-HLT) exits while it ran, off-CPU time\n"
		"inside them not counted twice. Per vCPU, as the host saw it: time preempted\n"
		"(runnable on the host but not running: steal-like time) and by whom, and\n"
		"time blocked in the host. Next to it, what the guest kernel believed:\n"
		"'guest steal' is the steal time the guest kernel accounted on that CPU\n"
		"(its /proc/stat steal, from KVM's steal clock) between the vCPU's first\n"
		"and last clock-sync exchange (each sync_guest record carries it), and\n"
		"'host, same span' the host's preempted time over exactly that span (a\n"
		"loss in the trace splits the span; both add up the pieces). n/a when the\n"
		"trace has no steal readings (guest module before ABI 0.4) or fewer than\n"
		"two; never 0 for that. The guest's number also holds the vCPU thread's\n"
		"run-queue wait after it was woken from a block in the host, which the host\n"
		"side counts as blocked (analysis/README.md). Then the worst stalls of a\n"
		"running guest task with the host task that preempted its vCPU, the host\n"
		"CPU and the time.\n\n"
		"  --top N     the N worst stalls (default 10; 0: none)\n"
		"  --tasks N   at most N guest threads per VM, most stalled first (default\n"
		"              20; 0: all)\n"
		"  --json      one JSON object instead of the tables (every thread; per\n"
		"              vCPU every host task that kept it off, not only the top,\n"
		"              and guest_steal_ns and preempted_in_steal_span_ns (null:\n"
		"              n/a), blocked_in_steal_span_ns (the host's blocked time\n"
		"              over the span), steal_span_ns, steal_readings)\n"
		REPORT_ACCEPT_DAMAGE_HELP "\n"
		REPORT_EXIT_HELP ", or stdout could not be\n"
		"written (a full disk); 2 on a usage error.\n");
}

struct ctx {
	const struct an_walk *w;
	struct an_sched s;
	size_t top;
};

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

static void text(const struct ctx *c, int32_t *idx, size_t max_tasks, size_t ntop)
{
	const struct an_walk *w = c->w;
	const struct an_sched *s = &c->s;
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
	report_clock_line(stdout, an_walk_counts(c->w));
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

static void jadd(json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
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
	jadd(o, "steal_readings", st.n);
}

static json_object *json(const char *path, const struct ctx *c, int32_t *idx, size_t ntop)
{
	const struct an_walk *w = c->w;
	const struct an_sched *s = &c->s;
	json_object *root = json_object_new_object(), *vms = json_object_new_array();
	json_object *worst = json_object_new_array();

	json_object_object_add(root, "trace", json_object_new_string(path));
	jadd(root, "records", an_walk_counts(w)->records);
	jadd(root, "losses", an_walk_counts(w)->losses);
	report_clock_json(root, an_walk_counts(w));
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		json_object *v = json_object_new_object(), *ts = json_object_new_array();
		json_object *cpus = json_object_new_array();
		size_t n = tasks_of(s, vm, idx);

		json_object_object_add(v, "vm", json_object_new_int((int)vm));
		json_object_object_add(v, "name", json_object_new_string(an_walk_vm_name(w, vm)));
		for (size_t i = 0; i < n; i++) {
			const struct an_sched_task *k = &s->t[idx[i]];
			json_object *o = jthread(w, idx[i]);

			jadd(o, "running_ns", k->running_ns);
			jadd(o, "runnable_ns", k->runnable_ns);
			jadd(o, "blocked_ns", k->blocked_ns);
			jadd(o, "stall_running_ns", k->stall_running_ns);
			jadd(o, "stall_runnable_ns", k->stall_runnable_ns);
			jadd(o, "exit_ns", k->exit_ns);
			json_object_object_add(o, "stalled_by", jby(w, k->by, AN_SCHED_KEEP));
			jadd(o, "stalled_by_others_ns", k->by_other_ns);
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
			o = json_object_new_object();
			json_object_object_add(o, "vcpu", json_object_new_int((int)i));
			json_object_object_add(o, "tid", json_object_new_int(an_walk_vcpu_tid(w, vm, i)));
			jadd(o, "preempted_ns", p->preempted_ns);
			jadd(o, "preemptions", p->n_preempted);
			jadd(o, "blocked_ns", p->blocked_ns);
			jadd(o, "blocks", p->n_blocked);
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
		jadd(o, "start_ns", st->start);
		jadd(o, "duration_ns", st->end - st->start);
		json_object_array_add(worst, o);
	}
	json_object_object_add(root, "worst", worst);
	return root;
}

static int setup(struct an_walk *w, struct an_hooks *h, void *arg)
{
	struct ctx *c = arg;

	c->w = w;
	if (an_sched_init(&c->s, w, c->top))
		return -1;
	an_sched_hooks(&c->s, h);
	return 0;
}

int report_sched(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ "tasks", required_argument, NULL, 'n' },
		{ "accept-damage", no_argument, NULL, 'A' },
		ARGS_HELP_AND_END,
	};
	struct ctx c = { 0 };
	struct an_hooks h = { 0 };
	struct an_walk *w;
	size_t top = 10, max_tasks = 20, ntop;
	unsigned long long n;
	bool as_json = false;
	int32_t *idx;
	int ch, status;
	unsigned int flags = 0;

	while ((ch = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (ch) {
		case 'j':
			as_json = true;
			break;
		case 't':
			if (args_number("report sched", "--top", optarg, 0, REPORT_COUNT_MAX, &n))
				return EXIT_USAGE;
			top = (size_t)n;
			break;
		case 'n':
			if (args_number("report sched", "--tasks", optarg, 0, REPORT_COUNT_MAX, &n))
				return EXIT_USAGE;
			max_tasks = (size_t)n;
			break;
		case 'A':
			flags = MR_ACCEPT_DAMAGE;
			break;
		default:	/* 'h' and what getopt refused */
			return args_help_or_usage(ch, usage);
		}
	}
	if (optind != argc - 1)
		return args_usage_error(usage);
	c.top = top;
	status = report_walk_setup("sched", argv[optind], flags, &w, &h, setup, &c);
	if (status < 0)
		return EXIT_FAILURE_RUNTIME;
	ntop = an_topn_sort(&c.s.worst);
	idx = calloc(AN_MAX_TASKS, sizeof(*idx));
	if (!idx) {
		fprintf(stderr, "vmscope report sched: out of memory\n");
		status = 1;
	} else if (as_json) {
		report_print_json(json(argv[optind], &c, idx, ntop), w);
	} else {
		report_damage_line(w);
		text(&c, idx, max_tasks, ntop);
	}
	if (c.s.oom) {
		fprintf(stderr, "vmscope report sched: out of memory: some vCPUs not (fully) analysed\n");
		status = 1;
	}
	free(idx);
	an_sched_free(&c.s);
	an_walk_close(w);
	return status ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}
