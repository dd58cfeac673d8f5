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
		"How vCPUs are woken: first how halted vCPUs run again, from TRACE's host kvm_vcpu_wakeup records (one\n"
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
		"Then interrupt delivery, per VM and x86 vector: how long an interrupt KVM\n"
		"injected into a vCPU (host kvm_inj_virq) took to reach the guest's handler\n"
		"of that vector on that vCPU (the guest's irq_vector_entry: Linux's local\n"
		"APIC timer, IPIs, irq_work, APIC error and spurious vectors; guest module of\n"
		"ABI 1.3 or later):\n"
		"  injected    kvm_inj_virq records of the vector\n"
		"  matched     those whose handler entry the guest recorded; p50, p99, max:\n"
		"              the time from the injection to it (host time; it includes the\n"
		"              guest's interrupt entry code and, for the timer, its EOI), and\n"
		"              the slowest one's vCPU, guest task and time\n"
		"  reinj.      deliveries KVM repeated (an exit cut one short)\n"
		"  unmatched   the others, each counted by why: the vCPU's next injection came\n"
		"              first (its guest record missing, or put after that injection by\n"
		"              the clock alignment's error), told apart before the vCPU's\n"
		"              first guest vector record and after its last (the guest not\n"
		"              recording yet, or no longer), a loss or the trace's end came\n"
		"              first, no guest tracepoint for the vector (device vectors: the\n"
		"              guest names a Linux IRQ there, not the vector), no guest records\n"
		"              of vectors in that VM, a soft interrupt (the guest's INT n)\n"
		"injected = matched + unmatched + reinj., for every vector.\n\n"
		REPORT_TRACE_HELP
		"  --json      one JSON object instead of the table: \"has_wakeup_records\"\n"
		"              (false: the trace has none, the text says why), per VM\n"
		"              \"vcpus\" (those with a wake-up), each\n"
		"              with vcpu, tid, halted_ns, wakeups, polled, slept, invalid (KVM's\n"
		"              valid flag 0: never on x86), polling_ns, polling_unknown, and\n"
		"              wake_to_entry {count, p50_ns, p99_ns, max_ns, unknown}; and\n"
		"              has_vector_records and \"interrupts\", one per vector: vector\n"
		"              (null: above 0xff), name (null: not a traced system vector),\n"
		"              injections, matched, unmatched, reinjections, unmatched_by\n"
		"              {next_injection_first, before_guest_records,\n"
		"              after_guest_records, loss, trace_end, no_guest_tracepoint,\n"
		"              no_guest_records, soft}, guest_without_injection (handler\n"
		"              entries with no injection waiting), latency {count, p50_ns,\n"
		"              p99_ns, max_ns}, slowest {vcpu, task, injected_ns, latency_ns}\n"
		"              or null\n"
		REPORT_ACCEPT_DAMAGE_HELP "\n"
		REPORT_EXIT_HELP ", or stdout could not be\n"
		"written (a full disk); 2 on a usage error.\n");
}

static int setup(struct an_walk *w, struct an_hooks *h, void *arg)
{
	struct report_wake *r = arg;

	if (report_wake_init(r, w))
		return -1;
	report_wake_hooks(r, h);
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
	struct report_wake s = { 0 };
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
	if (s.halt.oom || s.irq.oom) {
		fprintf(stderr, "vmscope report wake: out of memory: some wake-ups or interrupts "
			"not counted\n");
		status = 1;
	}
	report_wake_free(&s);
	an_walk_close(w);
	return status ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}
