/*
 * `vmscope report exits|sched MERGED`: analyses of a merged trace
 * (analysis/), a text table by default and JSON with --json.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "commands.h"
#include "report.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope report exits [OPTIONS] MERGED\n"
		"       vmscope report sched [OPTIONS] MERGED\n\n"
		"Analyses of a merged trace (the output of `vmscope merge`), in one pass\n"
		"whose memory does not grow with the trace's length:\n"
		"  exits   VM exit latency per VM, vCPU, exit reason or guest task\n"
		"  sched   guest threads' running/runnable/blocked time against what the\n"
		"          host did to their vCPU threads: stalls and who caused them\n\n"
		"`vmscope report CMD --help` describes each.\n");
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
	fprintf(stderr, "vmscope report: unknown report '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

const char *report_task(const struct an_walk *w, int32_t task, char *buf, size_t len)
{
	return an_walk_task_label(w, task, buf, len);
}

int report_walk_setup(const char *cmd, const char *path, unsigned int flags,
		      struct an_walk **w, struct an_hooks *h,
		      int (*setup)(struct an_walk *w, struct an_hooks *h, void *arg), void *arg)
{
	char err[1400] = "";
	int e = an_walk_open(w, path, flags, err, sizeof(err));

	if (e) {
		fprintf(stderr, "vmscope report %s: %s\n", cmd, err);
		*w = NULL;
		return -1;
	}
	if (setup && setup(*w, h, arg)) {
		fprintf(stderr, "vmscope report %s: out of memory\n", cmd);
		an_walk_close(*w);
		*w = NULL;
		return -1;
	}
	e = an_walk_run(*w, h, err, sizeof(err));
	if (e < 0) {
		fprintf(stderr, "vmscope report %s: %s: %s\n", cmd, path, err);
		an_walk_close(*w);
		*w = NULL;
		return -1;
	}
	if (e)
		fprintf(stderr, "vmscope report %s: %s: %s\n", cmd, path, err);
	return e;
}

uint64_t report_vcpu_observed(const struct an_walk *w, uint32_t vm, int64_t vcpu)
{
	uint64_t sum = 0;

	for (uint32_t c = 0; c < an_walk_nr_vcpus(w, vm); c++) {
		const struct an_vcpu_time *t = an_walk_vcpu_time(w, vm, c);

		if (t && (vcpu < 0 || vcpu == c))
			sum += t->guest_ns + t->kernel_ns + t->user_ns + t->halted_ns;
	}
	return sum;
}

void report_clock_line(FILE *f, const struct an_counts *c)
{
	if (!c->clock_spans)
		return;
	fprintf(f, "guest clock unreliable (vmscope merge): %" PRIu64 " spans; %" PRIu64 " of %"
		PRIu64 " exits and %" PRIu64 " of %" PRIu64 " guest records fall in them: "
		"their guest placement (and the guest task of those exits) is not within the "
		"merge's bound\n", c->clock_spans, c->exits_clock_unreliable, c->exits,
		c->guest_clock_unreliable, c->guest_records);
}

void report_clock_json(void *counts, const struct an_counts *c)
{
	json_object *o = counts;

	json_object_object_add(o, "clock_spans", json_object_new_uint64(c->clock_spans));
	json_object_object_add(o, "exits_clock_unreliable",
			       json_object_new_uint64(c->exits_clock_unreliable));
	json_object_object_add(o, "guest_records", json_object_new_uint64(c->guest_records));
	json_object_object_add(o, "guest_clock_unreliable",
			       json_object_new_uint64(c->guest_clock_unreliable));
}

void report_damage_line(const struct an_walk *w)
{
	if (an_walk_damage(w))
		printf("damaged: %s\n", an_walk_damage(w));
}

void report_print_json(void *j, const struct an_walk *w)
{
	json_object_object_add(j, "damaged", an_walk_damage(w) ?
			       json_object_new_string(an_walk_damage(w)) : NULL);
	printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
						      JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
}
