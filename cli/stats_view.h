/*
 * What `vmscope stats` shows, read from the host module once
 * (stats_read.c) and then printed as text (stats_text.c) or as one JSON
 * object (stats_json.c): the two outputs cannot disagree.
 */
#ifndef VMSCOPE_CLI_STATS_VIEW_H
#define VMSCOPE_CLI_STATS_VIEW_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include <vmscope/ioctl.h>

/* One event's counters on one CPU (--per-cpu: only CPUs that saw it). */
struct stats_cpu_count {
	unsigned int cpu, event;
	unsigned long long seen, matched;
};

/* The last matched payload of an event on a CPU (--last), decoded. */
struct stats_last {
	unsigned int event, cpu;
	unsigned long long ts;
	char text[512];
};

/* The recording sessions' ring-buffer losses, summed over CPUs. */
struct stats_rb {
	unsigned int active;	/* recording sessions; 0: none */
	unsigned long long full, too_big, overwritten, delivered;
};

struct stats_view {
	const struct vmscope_event_desc *descs;
	unsigned int nev;
	struct vmscope_probe_stats first;	/* CPU 0's: state, attached, counts */
	unsigned long long seen[VMSCOPE_MAX_EVENTS], matched[VMSCOPE_MAX_EVENTS];
	unsigned long long exit_reason_missed;
	/* VMSCOPE_CTL_MEASURE: [0] kvm_exit, [1] kvm_entry */
	unsigned long long timing_n[2], timing_gap_ns[2], timing_probe_ns[2];
	bool have_exit_mode;		/* false: the module does not say */
	struct vmscope_exit_mode exit_mode;
	struct stats_rb rb;
	struct stats_cpu_count *per_cpu;
	size_t n_per_cpu;
	struct stats_last *last;
	size_t n_last;
};

/*
 * The counters of the module behind @fd for the @nev events of @descs
 * into @v (per-CPU rows with @per_cpu, last payloads with @last). 0, or
 * -1 after saying why; stats_view_free() in both cases.
 */
int stats_view_read(int fd, const struct vmscope_event_desc *descs, unsigned int nev,
		    bool per_cpu, bool last, struct stats_view *v);
void stats_view_free(struct stats_view *v);

/* "btf-match", "btf-mismatch" or "no-btf" for VMSCOPE_EXIT_LAYOUT_* */
const char *stats_layout_name(unsigned int layout);

/* The text lines, in the order the --help describes. */
void stats_view_print(const struct stats_view *v);

/* The JSON object of --json (fields in `vmscope stats --help`); NULL: no memory. */
json_object *stats_view_json(const struct stats_view *v);

#endif
