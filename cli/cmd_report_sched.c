/*
 * `vmscope report sched`: its options and the walk (analysis/report_sched.c
 * prints the output).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "cmd_report.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope report sched [--json] [--top N] [--tasks N] [--accept-damage]\n"
		"                            TRACE\n\n"
		"Guest scheduling against the host's, from TRACE (a raw recording, merged\n"
		"as it is read, or a merged trace; below) that holds the guests' sched_switch/sched_wakeup and the host's\n"
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
		REPORT_TRACE_HELP
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

static int setup(struct an_walk *w, struct an_hooks *h, void *arg)
{
	struct ctx *c = arg;

	c->w = w;
	if (an_sched_init(&c->s, w, c->top))
		return -1;
	an_sched_hooks(&c->s, h);
	return 0;
}

struct sched_args {
	size_t top, max_tasks;
	bool json, accept;
};

static const struct args_opt opts[] = {
	ARGS_FLAG("json", 0, struct sched_args, json),
	ARGS_NUM("top", 0, struct sched_args, top, 0, REPORT_COUNT_MAX),
	ARGS_NUM("tasks", 0, struct sched_args, max_tasks, 0, REPORT_COUNT_MAX),
	ARGS_FLAG("accept-damage", 0, struct sched_args, accept),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope report sched", usage, opts, 1 };

int report_sched(int argc, char **argv)
{
	struct sched_args a = { .top = 10, .max_tasks = 20 };
	struct ctx c = { 0 };
	struct an_hooks h = { 0 };
	struct an_walk *w;
	size_t ntop;
	int32_t *idx;
	int status;

	status = args_run(&spec, &a, argc, argv);
	if (status >= 0)
		return status;
	c.top = a.top;
	status = report_walk_setup("sched", argv[optind], a.accept ? MR_ACCEPT_DAMAGE : 0,
				   &w, &h, setup, &c);
	if (status < 0)
		return EXIT_FAILURE_RUNTIME;
	ntop = an_topn_sort(&c.s.worst);
	idx = calloc(AN_MAX_TASKS, sizeof(*idx));
	if (!idx) {
		fprintf(stderr, "vmscope report sched: out of memory\n");
		status = 1;
	} else if (a.json) {
		report_print_json(report_sched_json(argv[optind], w, &c.s, idx, ntop), w);
	} else {
		report_sched_text(w, &c.s, idx, a.max_tasks, ntop);
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
