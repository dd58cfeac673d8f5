/*
 * `vmscope report wake`: its options and the walk (analysis/report_wake.c
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
	fprintf(out, "usage: vmscope report wake [--json] [--accept-damage] TRACE\n\n"
		"How halted vCPUs run again, from TRACE's host kvm_vcpu_wakeup records (one\n"
		"at the end of each halt in KVM: host module of ABI 1.3 or later), the host's\n"
		"sched_switch of the vCPU threads and their kvm_entry. Per vCPU:\n"
		"  halted      the time the vCPU spent halted in KVM (from the guest's HLT\n"
		"              being handled to its wake-up), halt polling included; the sum\n"
		"              of the times KVM itself measured\n"
		"  wake-ups    how many halts ended; polled: KVM's halt polling saw the\n"
		"              wake-up, so the vCPU thread never slept (cheap); slept: the\n"
		"              thread went to sleep and had to be woken (slower)\n"
		"  polling     the time spent polling: all of a polled halt, and the part of\n"
		"              a slept one before its thread went to sleep (from the host\n"
		"              switch that took it off its CPU; p.unknown counts the slept\n"
		"              halts where that switch is not in the trace)\n"
		"  wake-up -> entry   from the wake-up to the vCPU's next entry into the guest:\n"
		"              count, p50, p99, max; unknown: a loss in the trace or its end\n"
		"              came first\n"
		"Halts KVM did not time (no wake-up record) are not counted here; `report\n"
		"exits` counts every HLT exit as halted time.\n\n"
		REPORT_TRACE_HELP
		"  --json      one JSON object instead of the table: \"has_wakeup_records\"\n"
		"              (false: the trace has none, the text says why), per VM\n"
		"              \"vcpus\" (those with a wake-up), each\n"
		"              with vcpu, tid, halted_ns, wakeups, polled, slept, invalid (KVM's\n"
		"              valid flag 0: never on x86), polling_ns, polling_unknown, and\n"
		"              wake_to_entry {count, p50_ns, p99_ns, max_ns, unknown}\n"
		REPORT_ACCEPT_DAMAGE_HELP "\n"
		REPORT_EXIT_HELP ", or stdout could not be\n"
		"written (a full disk); 2 on a usage error.\n");
}

static int setup(struct an_walk *w, struct an_hooks *h, void *arg)
{
	struct an_halt *a = arg;

	if (an_halt_init(a, w))
		return -1;
	an_halt_hooks(a, h);
	return 0;
}

struct wake_args {
	bool json, accept;
};

static const struct args_opt opts[] = {
	ARGS_FLAG("json", 0, struct wake_args, json),
	ARGS_FLAG("accept-damage", 0, struct wake_args, accept),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope report wake", usage, opts, 1 };

int report_wake(int argc, char **argv)
{
	struct wake_args a = { 0 };
	struct an_halt s = { 0 };
	struct an_hooks h = { 0 };
	struct an_walk *w;
	int status;

	status = args_run(&spec, &a, argc, argv);
	if (status >= 0)
		return status;
	status = report_walk_setup("wake", argv[optind], a.accept ? MR_ACCEPT_DAMAGE : 0,
				   &w, &h, setup, &s);
	if (status < 0)
		return EXIT_FAILURE_RUNTIME;
	if (a.json)
		report_print_json(report_wake_json(argv[optind], w, &s), w);
	else
		report_wake_text(w, &s);
	if (s.oom) {
		fprintf(stderr, "vmscope report wake: out of memory: some wake-ups not counted\n");
		status = 1;
	}
	an_halt_free(&s);
	an_walk_close(w);
	return status ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}
