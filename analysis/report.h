/*
 * The reports' output (`vmscope report exits|sched`): text tables, JSON
 * objects (json-c) and the SVG of exit latency, from a finished walk. The
 * commands (cli/) parse the options, run the walk and choose the output.
 */
#ifndef VMSCOPE_ANALYSIS_REPORT_H
#define VMSCOPE_ANALYSIS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dur.h"
#include "exits.h"
#include "halt.h"
#include "irqlat.h"
#include "sched.h"
#include "walk.h"

struct json_object;

/* The names of enum an_by and enum an_sort, as the options spell them. */
extern const char *const report_by_names[AN_BY_N];
extern const char *const report_sort_names[4];

/* `report exits`: the damage line, the tables, the slowest @ntop exits
 * (x->top sorted by an_topn_sort) and the walk's counts, on stdout. */
void report_exits_text(const struct an_walk *w, const struct an_exits *x, enum an_sort sort,
		       size_t ntop);
/* The same as one JSON object (without "damaged": report_print_json). */
struct json_object *report_exits_json(const char *path, const struct an_walk *w,
				      const struct an_exits *x, enum an_sort sort, size_t ntop);
/* One histogram panel per group into @fd; 0 or -errno. */
int report_exits_svg(int fd, const char *path, const struct an_walk *w,
		     const struct an_exits *x);

/* `report sched`: the damage line and the tables on stdout; @idx has room
 * for AN_MAX_TASKS; @max_tasks threads per VM (0: all). */
void report_sched_text(const struct an_walk *w, const struct an_sched *s, int32_t *idx,
		       size_t max_tasks, size_t ntop);
struct json_object *report_sched_json(const char *path, const struct an_walk *w,
				      const struct an_sched *s, int32_t *idx, size_t ntop);

/* `report wake`: per vCPU its halts (halt.h), per VM and vector the
 * interrupts' delivery (irqlat.h); as text on stdout or JSON. */
struct report_wake {
	struct an_halt halt;
	struct an_irq irq;
};
int report_wake_init(struct report_wake *r, const struct an_walk *w);
void report_wake_hooks(struct report_wake *r, struct an_hooks *h);
void report_wake_free(struct report_wake *r);
void report_wake_text(const struct an_walk *w, const struct report_wake *r);
struct json_object *report_wake_json(const char *path, const struct an_walk *w,
				     const struct report_wake *r);

/* "comm/tid" of walk task @task, or its placeholder (an_task_placeholder). */
const char *report_task(const struct an_walk *w, int32_t task, char *buf, size_t len);

/* The line on `vmscope merge`'s clock-unreliable spans (nothing when the
 * trace has none): how many exits and guest records lie in them. */
void report_clock_line(FILE *f, const struct an_counts *c);
/* The same counts into JSON object @counts (a json_object *). */
void report_clock_json(void *counts, const struct an_counts *c);

/* Print @j (a json_object *) pretty with its "damaged" field (what is
 * wrong with the trace @w read, or null), and release it. */
void report_print_json(void *j, const struct an_walk *w);

/* The text report's "damaged: ..." line, when the trace is. */
void report_damage_line(const struct an_walk *w);

/* The sum of the observed time of @vm's vCPUs (or of one, @vcpu >= 0). */
uint64_t report_vcpu_observed(const struct an_walk *w, uint32_t vm, int64_t vcpu);

#endif
