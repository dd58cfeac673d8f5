/*
 * `vmscope stats`: start/stop host probing with a process filter, and show
 * per-event counters (all CPUs or per CPU) and the last payload of each
 * event, decoded with the module's own descriptors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "args.h"
#include "commands.h"
#include "decode.h"
#include "device.h"
#include "event_select.h"
#include "exit_layout.h"
#include "rec_host.h"
#include "stats_ctl.h"
#include "stats_view.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope stats [--start [--pid PID]... [--events LIST]] [--stop]\n"
		"                     [--reset] [--per-cpu] [--last] [--json]\n\n"
		"Controls the host module's probes and prints their counters: per event,\n"
		"whether its tracepoint is attached, probe hits while enabled (seen) and\n"
		"hits that passed the process filter (matched).\n\n"
		"  --start      enable probing (for the --pid processes, else all);\n"
		"               it stays on after this command (until --stop, or\n"
		"               until a `vmscope record` switches it off as it starts)\n"
		"  --pid PID    trace this process (QEMU); repeatable, up to %d\n"
		"  --events LIST  with --start: only these events; comma-separated\n"
		"               event names, systems (kvm, sched, vmscope) or all\n"
		"               (default all; `vmscope list` shows them)\n"
		"  --stop       disable probing\n"
		"  --reset      zero the counters (with --start, before starting;\n"
		"               alone it keeps probing on or off, but for every\n"
		"               process and event)\n"
		"  --measure    with --start: time kvm_exit's and kvm_entry's probes\n"
		"               (exit_timing, entry_timing lines)\n"
		"  --no-exit-reasons  with --start: kvm_exit without reason/info (no\n"
		"               perf counters on kvm_exit), to measure what they cost\n"
		"  --exit-reasons=HOW  with --start: where kvm_exit's reason/info come\n"
		"               from: auto (default: the perf counter until calibration\n"
		"               verified the direct VMCB read, then direct), perf (the\n"
		"               perf counter only), verify (the perf counter, and every\n"
		"               exit's direct read compared with it: exit_mode's\n"
		"               mismatches)\n"
		"  --per-cpu    one line per event and CPU with non-zero counts\n"
		"  --last       the last matched payload of each event on each CPU\n"
		"  --json       the same as one JSON object (for scripts):\n"
		"               state {enabled, kvm_attached, sched_attached,\n"
		"               exit_reasons}; kvm_attach_count, kvm_detach_count,\n"
		"               sync_collisions, exit_reason_missed; timing {exit,\n"
		"               entry: {n, gap_ns_avg, probe_ns_avg}} (--measure);\n"
		"               exit_mode {mode, compared, mismatches, reasons,\n"
		"               calibrations, fallbacks, direct_exits, layout, refused,\n"
		"               why} (null: the module does not say); ringbuf {sessions,\n"
		"               lost, lost_full, lost_too_big, lost_overwritten,\n"
		"               subbufs_delivered}; events {NAME: {attached, seen,\n"
		"               matched}}; per_cpu [{cpu, event, seen, matched}]\n"
		"               (--per-cpu, else empty); last [{event, cpu, ts, text}]\n"
		"               (--last, else empty)\n\n"
		"Each `vmscope record` (or other capture session) has its own probing\n"
		"(its filter, its buffers; up to %d at once), and this command's is\n"
		"apart from theirs.\n"
		"The counters are the module's: while any of them runs, --start, --stop\n"
		"and --reset are refused (exit 1) and change nothing; stats without them\n"
		"still shows the counters, which then count every session's hits.\n\n"
		"Exit status: 0; 1 without the host module, or when a control is\n"
		"refused; 2 on a usage error.\n",
		VMSCOPE_MAX_PIDS, VMSCOPE_HOST_SESSIONS);
}

static int load_descs(int fd, struct vmscope_event_desc *descs, unsigned int *n)
{
	struct vmscope_event_desc_req req;
	char why[160];

	for (*n = 0; *n < VMSCOPE_MAX_EVENTS; (*n)++) {
		memset(&req, 0, sizeof(req));
		req.index = *n;
		if (ioctl(fd, VMSCOPE_IOC_GET_EVENT_DESC, &req) < 0) {
			if (errno == ENOENT)
				return 0;
			perror("vmscope stats: descriptors");
			return -1;
		}
		if (vmscope_desc_check(&req.desc, why, sizeof(why))) {
			fprintf(stderr, "vmscope stats: bad descriptor: %s\n", why);
			return -1;
		}
		descs[*n] = req.desc;
	}
	return 0;
}

/* The counters, as text or (@json) one JSON object; 0 or -1. */
static int show(int fd, const struct vmscope_event_desc *descs, unsigned int nev,
		int per_cpu, int last, int json)
{
	struct stats_view v;
	json_object *o;
	int rc = -1;

	if (stats_view_read(fd, descs, nev, per_cpu, last, &v))
		goto out;
	if (!json) {
		stats_view_print(&v);
		rc = 0;
	} else if ((o = stats_view_json(&v))) {
		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		rc = 0;
	} else {
		fprintf(stderr, "vmscope stats: out of memory\n");
	}
out:
	stats_view_free(&v);
	return rc;
}

/* The command line: the probe control to send and what to show. */
struct stats_args {
	struct vmscope_probe_ctl ctl;
	struct stats_ctl_opts o;
	const char *events;
	int per_cpu, last, json;
	int exit_reasons;	/* an index of exit_reasons[] */
};

static const char *const exit_reasons[] = { "auto", "perf", "verify" };

/* --pid PID, repeatable, into @args (struct stats_args): args_value_fn. */
static int take_pid(void *args, const char *arg)
{
	return rec_host_ctl_pid("vmscope stats", arg, &((struct stats_args *)args)->ctl);
}

static const struct args_opt opts[] = {
	ARGS_FLAG("start", 0, struct stats_args, o.start),
	ARGS_FLAG("stop", 0, struct stats_args, o.stop),
	ARGS_FLAG("reset", 0, struct stats_args, o.reset),
	ARGS_FN("pid", 0, take_pid),
	ARGS_FLAG("per-cpu", 0, struct stats_args, per_cpu),
	ARGS_FLAG("no-exit-reasons", 0, struct stats_args, o.no_reasons),
	ARGS_FLAG("measure", 0, struct stats_args, o.measure),
	ARGS_CHOICE("exit-reasons", 0, struct stats_args, exit_reasons, exit_reasons, 3),
	ARGS_FLAG("last", 0, struct stats_args, last),
	ARGS_STR("events", 0, struct stats_args, events),
	ARGS_FLAG("json", 0, struct stats_args, json),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope stats", usage, opts, 0 };

/* The whole command line into @a: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct stats_args *a)
{
	int rc;

	rc = args_run(&spec, a, argc, argv);
	if (rc >= 0)
		return rc;
	a->o.exit_perf = a->exit_reasons == 1;
	a->o.exit_verify = a->exit_reasons == 2;
	if (a->o.start && a->o.stop) {
		fprintf(stderr, "vmscope stats: --start or --stop, not both\n");
		return EXIT_USAGE;
	}
	if ((a->ctl.nr_pids || a->events || a->o.exit_perf || a->o.exit_verify) && !a->o.start) {
		fprintf(stderr, "vmscope stats: --pid, --events and --exit-reasons go with --start\n");
		return EXIT_USAGE;
	}
	a->o.events = a->events != NULL;
	return -1;
}

/* --start, --stop, --reset as the module's probe control; 0 or -1. */
static int control(int fd, struct stats_args *a)
{
	struct vmscope_probe_stats st;
	bool enabled = false;

	memset(&st, 0, sizeof(st));
	/* the module checks the running kernel's layout before it reads it */
	if (a->o.start && !a->o.no_reasons)
		(void)exit_layout_send(fd, "vmscope stats");
	if (stats_ctl_needs_state(&a->o) && ioctl(fd, VMSCOPE_IOC_GET_STATS, &st) == 0)
		enabled = st.state & VMSCOPE_STATE_ENABLED;
	if (stats_ctl_flags(&a->o, enabled, &a->ctl.flags) &&
	    ioctl(fd, VMSCOPE_IOC_PROBE_CTL, &a->ctl) < 0) {
		fprintf(stderr, "vmscope stats: %s\n", stats_ctl_error(errno));
		return -1;
	}
	return 0;
}

/* The module behind @fd: events selected, control sent, counters shown. */
static int stats_on(int fd, struct stats_args *a)
{
	struct vmscope_event_desc descs[VMSCOPE_MAX_EVENTS];
	struct vmscope_version v;
	unsigned int nev;
	char why[160];
	uint64_t mask;

	if (vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v) || load_descs(fd, descs, &nev))
		return EXIT_FAILURE_RUNTIME;
	if (a->events) {
		if (vmscope_events_select(a->events, descs, nev, &mask, why, sizeof(why))) {
			fprintf(stderr, "vmscope stats: --events: %s\n", why);
			return EXIT_USAGE;
		}
		a->ctl.events = mask;
	}
	if (control(fd, a) || show(fd, descs, nev, a->per_cpu, a->last, a->json))
		return EXIT_FAILURE_RUNTIME;
	return EXIT_OK;
}

int cmd_stats(int argc, char **argv)
{
	static struct stats_args a;
	int fd, rc;

	memset(&a, 0, sizeof(a));
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);
	if (fd < 0)
		return EXIT_FAILURE_RUNTIME;
	rc = stats_on(fd, &a);
	close(fd);
	return rc;
}
