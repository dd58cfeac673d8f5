/*
 * `vmscope export --perfetto|--ctf TRACE -o OUT`: a merged or raw trace in
 * a format other tools read (export/).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "ctf.h"
#include "ex_out.h"
#include "perfetto.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope export --perfetto TRACE -o FILE [--force]\n"
		"       vmscope export --ctf TRACE -o DIR [--force]\n\n"
		"Write a trace for other tools. TRACE is a merged trace (`vmscope merge`'s)\n"
		"or a raw recording (`vmscope record`'s): a raw one is merged exactly as\n"
		"`vmscope merge` merges it (its two passes; temporary files in $TMPDIR,\n"
		"default /tmp, unlinked at once), its second pass read instead of written,\n"
		"so the export is, byte for byte, the one of its merged trace; what merge\n"
		"prints of the clocks (each VM's segments and bounds) goes to stderr.\n\n"
		"  --perfetto      a Perfetto protobuf trace (ui.perfetto.dev): the host and\n"
		"                  each VM as separate machines (TracePacket.machine_id: VM n\n"
		"                  is machine n+1) with their CPUs' sched_switch (batched\n"
		"                  per CPU, as Perfetto's compact columns where they hold\n"
		"                  every field); on each\n"
		"                  vCPU thread a slice per VM exit, kvm_exit to the next\n"
		"                  kvm_entry, named by the exit reason; each clock-sync\n"
		"                  exchange as a flow from the host's t2 and t3 to the\n"
		"                  guest's sync record. Other events are not in it.\n"
		"  --ctf           a CTF 1.8 trace folder (babeltrace2 DIR): every event\n"
		"                  with its fields, in host time (ns), one stream; each\n"
		"                  event's context says its origin (0 host, n VM n-1), CPU,\n"
		"                  thread, vCPU and original timestamp; losses as discarded\n"
		"                  events\n"
		"  -o, --output    the file (Perfetto) or folder (CTF) to write, not inside\n"
		"                  TRACE; written as .OUTPUT.partial-XXXXXX beside it and\n"
		"                  renamed when complete and synced\n"
		"  -f, --force     replace an existing output (a folder only when it holds\n"
		"                  nothing but an export's files)\n\n"
		"A failed export removes its temporary output; SIGINT, SIGTERM and SIGHUP\n"
		"remove it and end the export by the signal; after SIGKILL it stays.\n\n"
		"Exit status: 0; 1 when the input is not a readable trace, or is damaged\n"
		"(a raw one: as `vmscope merge` names its damage; a merged one: its metadata\n"
		"unreadable, its stream not ending clean, its files not as its summary\n"
		"lists them, merged from damaged input: nothing is written), or writing\n"
		"failed (also writing stdout); 2 on a usage error.\n");
}

static void warn_bad(uint64_t bad)
{
	if (bad)
		fprintf(stderr, "vmscope export: warning: %" PRIu64 " unusable records or frames"
			" in the input were left out (vmscope dump lists them)\n", bad);
}

struct export_args {
	const char *out;
	bool perfetto, ctf, force;
};

static const struct args_opt opts[] = {
	ARGS_FLAG("perfetto", 0, struct export_args, perfetto),
	ARGS_FLAG("ctf", 0, struct export_args, ctf),
	ARGS_STR("output", 'o', struct export_args, out),
	ARGS_FLAG("force", 'f', struct export_args, force),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope export", usage, opts, ARGS_OPERANDS_ANY };

int cmd_export(int argc, char **argv)
{
	struct export_args a = { 0 };
	char err[1024] = "";
	int e;

	e = args_run(&spec, &a, argc, argv);
	if (e >= 0)
		return e;
	if (a.perfetto && a.ctf) {
		fprintf(stderr, "vmscope export: one of --perfetto or --ctf\n");
		return EXIT_USAGE;
	}
	if (!(a.perfetto || a.ctf) || !a.out || optind != argc - 1) {
		if (!(a.perfetto || a.ctf))
			fprintf(stderr, "vmscope export: --perfetto or --ctf\n");
		else if (!a.out)
			fprintf(stderr, "vmscope export: -o OUTPUT is needed\n");
		return args_usage_error(usage);
	}
	if (ex_out_inside(a.out, argv[optind], err, sizeof(err))) {
		fprintf(stderr, "vmscope export: %s: give -o a path outside it\n", err);
		return EXIT_USAGE;
	}
	const char *tmp = getenv("TMPDIR");	/* pass 1's spill files, as merge's */
	struct ex_opts eo = { .force = a.force, .spill_dir = tmp && *tmp ? tmp : NULL,
			      .merge_report = stderr };

	if (a.perfetto) {
		struct ex_pf_stats st;

		e = ex_perfetto(argv[optind], a.out, &eo, &st, err, sizeof(err));
		if (!e)
			printf("perfetto: %s: %u machines, %" PRIu64 " events read, %" PRIu64
			       " packets: %" PRIu64 " sched_switch (%" PRIu64 " compact), %" PRIu64
			       " exit slices (%"
			       PRIu64 " exits without entry), %" PRIu64 " sync flow steps on the host, %"
			       PRIu64 " guest sync records ending flows; %" PRIu64
			       " records on unknown threads\n",
			       a.out, st.machines, st.events, st.packets, st.sched_switch,
			       st.sched_compact, st.slices,
			       st.exits_unpaired, st.flow_steps, st.flow_ends, st.no_thread);
		if (!e)
			warn_bad(st.bad);
		if (!e && st.sched_disordered)
			fprintf(stderr, "vmscope export: warning: %" PRIu64 " sched_switch records "
				"earlier than their CPU's previous one: Perfetto may show the "
				"task before such a switch wrongly\n", st.sched_disordered);
		if (!e && st.table_full)
			fprintf(stderr, "vmscope export: warning: %" PRIu64 " records on threads "
				"beyond the thread table were left out\n", st.table_full);
	} else {
		struct ex_ctf_stats st;

		e = ex_ctf(argv[optind], a.out, &eo, &st, err, sizeof(err));
		if (!e)
			printf("ctf: %s: %" PRIu64 " events in %" PRIu64 " packets, %" PRIu64
			       " discarded (losses of the merged trace), %" PRIu64
			       " records without a usable descriptor left out, %u event layouts"
			       " as raw bytes\n",
			       a.out, st.events, st.packets, st.discarded, st.skipped, st.raw_layouts);
		if (!e)
			warn_bad(st.bad);
	}
	if (e) {
		fprintf(stderr, "vmscope export: %s\n", err);
		return EXIT_FAILURE_RUNTIME;
	}
	return EXIT_OK;
}
