/*
 * What the reports print alike: task names, the clock-unreliable line,
 * the damage line, and the JSON object's printing.
 */
#include <inttypes.h>
#include <stdio.h>

#include <json-c/json.h>

#include "report.h"

const char *report_task(const struct an_walk *w, int32_t task, char *buf, size_t len)
{
	const struct an_task *t = an_walk_task(w, task);

	if (t)
		snprintf(buf, len, "%s/%d", t->comm, t->tid);
	else
		snprintf(buf, len, "%s", an_task_placeholder(task));
	return buf;
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
