/*
 * `vmscope report exits|sched|wake TRACE`: analyses of a raw or merged trace
 * (analysis/), a text table by default and JSON with --json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "cmd_report.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope report exits [OPTIONS] TRACE\n"
		"       vmscope report sched [OPTIONS] TRACE\n"
		"       vmscope report wake [OPTIONS] TRACE\n\n"
		"Analyses of a recording (`vmscope record`'s, merged as `vmscope merge`\n"
		"merges it, nothing written) or of a merged trace (`vmscope merge`'s), in\n"
		"memory that does not grow with the trace's length:\n"
		"  exits   VM exit latency per VM, vCPU, exit reason or guest task, or of\n"
		"          the exits that accessed an I/O port, an MSR or MMIO, per port,\n"
		"          MSR or guest-physical page (--by port|msr|mmio), or of the\n"
		"          nested page faults per page (--by npf); MMIO and faults also per\n"
		"          region of adjacent pages (--by mmio-region|npf-region); or per\n"
		"          guest kernel function at the exit's RIP (--by symbol)\n"
		"  sched   guest threads' running/runnable/blocked time against what the\n"
		"          host did to their vCPU threads: stalls and who caused them\n"
		"  wake    how halted vCPUs run again: per vCPU the time halted, wake-ups\n"
		"          caught by halt polling against those that slept, the time spent\n"
		"          polling, and the latency from the wake-up to the next guest entry;\n"
		"          per VM and vector, the latency from KVM's injection of an interrupt\n"
		"          to the guest's handler entry\n\n"
		"`vmscope report CMD --help` describes each, and its exit status.\n");
}

int cmd_report(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "exits"))
		return report_exits(argc - 1, argv + 1);
	if (!strcmp(argv[1], "sched"))
		return report_sched(argc - 1, argv + 1);
	if (!strcmp(argv[1], "wake"))
		return report_wake(argc - 1, argv + 1);
	fprintf(stderr, "vmscope report: unknown report '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
