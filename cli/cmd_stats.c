/*
 * `vmscope stats`: start/stop host probing with a process filter, and show
 * per-event counters (all CPUs or per CPU) and the last payload of each
 * event, decoded with the module's own descriptors.
 */
#include <errno.h>
#include <getopt.h>
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
#include "stats_ctl.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope stats [--start [--pid PID]... [--events LIST]] [--stop]\n"
		"                     [--reset] [--per-cpu] [--last]\n\n"
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
		"  --last       the last matched payload of each event on each CPU\n\n"
		"Each `vmscope record` or `capture` has its own probing (its filter, its\n"
		"buffers; up to %d at once), and this command's is apart from theirs.\n"
		"The counters are the module's: while any of them runs, --start, --stop\n"
		"and --reset are refused (exit 1) and change nothing; stats without them\n"
		"still shows the counters, which then count every session's hits.\n",
		VMSCOPE_MAX_PIDS, VMSCOPE_HOST_SESSIONS);
}

struct totals {
	struct vmscope_probe_stats first;	/* state, attached ... */
	unsigned long long seen[VMSCOPE_MAX_EVENTS];
	unsigned long long matched[VMSCOPE_MAX_EVENTS];
	unsigned long long exit_reason_missed;
	/* VMSCOPE_CTL_MEASURE: [0] kvm_exit, [1] kvm_entry */
	unsigned long long timing_n[2], timing_gap_ns[2], timing_probe_ns[2];
};

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

/* The recording sessions' ring-buffer losses, summed over CPUs. */
static void show_rb_stats(int fd, unsigned int ncpu)
{
	unsigned long long full = 0, big = 0, over = 0, delivered = 0;
	struct vmscope_rb_stats rs;
	unsigned int active = 0;

	for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
		memset(&rs, 0, sizeof(rs));
		rs.cpu = cpu;
		if (ioctl(fd, VMSCOPE_IOC_GET_RB_STATS, &rs) < 0 || !rs.active)
			continue;	/* impossible CPU, old module, no session */
		if (rs.active > active)	/* a session may start meanwhile */
			active = rs.active;
		full += rs.lost_full;
		big += rs.lost_too_big;
		over += rs.lost_overwritten;
		delivered += rs.subbufs_delivered;
	}
	if (!active) {
		printf("ringbuf: no session recording\n");
		return;
	}
	printf("ringbuf: recording (%u session%s), lost %llu (full %llu too_big %llu "
	       "overwritten %llu) subbufs_delivered %llu\n", active, active == 1 ? "" : "s",
	       full + big + over, full, big, over, delivered);
}

/* Where kvm_exit's details come from (exit_direct.c in the module). */
static void show_exit_mode(int fd)
{
	struct vmscope_exit_mode m;
	const char *refused;

	memset(&m, 0, sizeof(m));
	if (ioctl(fd, VMSCOPE_IOC_GET_EXIT_MODE, &m) < 0)
		return;
	m.why[sizeof(m.why) - 1] = 0;
	refused = exit_refused_name(m.refused);
	printf("exit_mode %s compared %llu mismatches %llu reasons %u calibrations %llu "
	       "fallbacks %llu direct_exits %llu layout %s refused %s%s%s%s\n",
	       exit_mode_name(m.mode), (unsigned long long)m.compared,
	       (unsigned long long)m.mismatches, m.reasons,
	       (unsigned long long)m.calibrations, (unsigned long long)m.fallbacks,
	       (unsigned long long)m.direct_exits,
	       m.layout == VMSCOPE_EXIT_LAYOUT_MATCH ? "btf-match" :
	       m.layout == VMSCOPE_EXIT_LAYOUT_MISMATCH ? "btf-mismatch" : "no-btf",
	       refused ? refused : "no", m.why[0] ? " (" : "", m.why, m.why[0] ? ")" : "");
}

static int show_stats(int fd, const struct vmscope_event_desc *descs,
		      unsigned int nev, int per_cpu, int last)
{
	struct vmscope_probe_stats st;
	struct totals t;
	unsigned int ncpu = 1;

	memset(&t, 0, sizeof(t));
	for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
		memset(&st, 0, sizeof(st));
		st.cpu = cpu;
		if (ioctl(fd, VMSCOPE_IOC_GET_STATS, &st) < 0) {
			if (errno == EINVAL && cpu > 0)
				continue;	/* not a possible CPU */
			perror("vmscope stats: stats ioctl");
			return -1;
		}
		if (cpu == 0) {
			t.first = st;
			ncpu = st.nr_cpu_ids;
		}
		t.exit_reason_missed += st.exit_reason_missed;
		t.timing_n[0] += st.exit_timing_n;
		t.timing_gap_ns[0] += st.exit_timing_gap_ns;
		t.timing_probe_ns[0] += st.exit_timing_probe_ns;
		t.timing_n[1] += st.entry_timing_n;
		t.timing_gap_ns[1] += st.entry_timing_gap_ns;
		t.timing_probe_ns[1] += st.entry_timing_probe_ns;
		for (unsigned int e = 0; e < nev; e++) {
			t.seen[e] += st.seen[e];
			t.matched[e] += st.matched[e];
			if (per_cpu && st.seen[e])
				printf("cpu %-3u %-22s seen %llu matched %llu\n", cpu,
				       descs[e].name, (unsigned long long)st.seen[e],
				       (unsigned long long)st.matched[e]);
		}
	}
	unsigned int s = t.first.state;
	printf("state:%s%s%s%s\n", s & VMSCOPE_STATE_ENABLED ? " enabled" : " disabled",
	       s & VMSCOPE_STATE_KVM_ATTACHED ? " kvm-attached" : " kvm-not-attached",
	       s & VMSCOPE_STATE_SCHED_ATTACHED ? " sched-attached" : "",
	       s & VMSCOPE_STATE_EXIT_REASON ? " exit-reasons" : "");
	printf("kvm_attach_count %llu kvm_detach_count %llu sync_collisions %llu "
	       "exit_reason_missed %llu\n",
	       (unsigned long long)t.first.attach_count,
	       (unsigned long long)t.first.detach_count,
	       (unsigned long long)t.first.sync_collisions, t.exit_reason_missed);
	for (int k = 0; k < 2; k++)
		if (t.timing_n[k])
			printf("%s_timing n %llu gap_ns_avg %.1f probe_ns_avg %.1f\n",
			       k ? "entry" : "exit", t.timing_n[k],
			       (double)t.timing_gap_ns[k] / t.timing_n[k],
			       (double)t.timing_probe_ns[k] / t.timing_n[k]);
	show_exit_mode(fd);
	show_rb_stats(fd, ncpu);
	printf("%-22s %-8s %14s %14s\n", "event", "attached", "seen", "matched");
	for (unsigned int e = 0; e < nev; e++)
		printf("%-22s %-8s %14llu %14llu\n", descs[e].name,
		       t.first.attached >> e & 1 ? "yes" : "no", t.seen[e], t.matched[e]);

	if (!last)
		return 0;
	for (unsigned int e = 0; e < nev; e++) {
		for (unsigned int cpu = 0; cpu < ncpu; cpu++) {
			struct vmscope_last_event le;
			char text[512];

			memset(&le, 0, sizeof(le));
			le.cpu = cpu;
			le.event = e;
			if (ioctl(fd, VMSCOPE_IOC_GET_LAST, &le) < 0 || !le.seq)
				continue;
			if (vmscope_format_event(&descs[e], le.payload, sizeof(le.payload),
						 text, sizeof(text)) < 0)
				snprintf(text, sizeof(text), "(undecodable)");
			printf("last %s cpu %u ts %llu: %s\n", descs[e].name, cpu,
			       (unsigned long long)le.timestamp, text);
		}
	}
	return 0;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "start", no_argument, NULL, 's' },
		{ "stop", no_argument, NULL, 'S' },
		{ "reset", no_argument, NULL, 'r' },
		{ "pid", required_argument, NULL, 'p' },
		{ "per-cpu", no_argument, NULL, 'c' },
		{ "no-exit-reasons", no_argument, NULL, 'n' },
		{ "measure", no_argument, NULL, 'm' },
		{ "exit-reasons", required_argument, NULL, 'x' },
		{ "last", no_argument, NULL, 'l' },
		{ "events", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct vmscope_probe_ctl ctl;
	int start = 0, stop = 0, reset = 0, per_cpu = 0, last = 0, no_reasons = 0;
	int measure = 0, c;
	bool exit_perf = false, exit_verify = false;
	const char *events = NULL;

	memset(&ctl, 0, sizeof(ctl));
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': start = 1; break;
		case 'S': stop = 1; break;
		case 'r': reset = 1; break;
		case 'c': per_cpu = 1; break;
		case 'l': last = 1; break;
		case 'n': no_reasons = 1; break;
		case 'm': measure = 1; break;
		case 'e': events = optarg; break;
		case 'x':
			if (!strcmp(optarg, "perf")) {
				exit_perf = true;
			} else if (!strcmp(optarg, "verify")) {
				exit_verify = true;
			} else if (strcmp(optarg, "auto")) {
				fprintf(stderr, "vmscope stats: --exit-reasons: auto, perf or verify\n");
				return EXIT_USAGE;
			}
			break;
		case 'p': {
			unsigned long long pid;

			if (args_number("stats", "--pid", optarg, 1, ARGS_PID_MAX, &pid))
				return EXIT_USAGE;
			if (ctl.nr_pids == VMSCOPE_MAX_PIDS) {
				fprintf(stderr, "vmscope stats: at most %d --pid\n", VMSCOPE_MAX_PIDS);
				return EXIT_USAGE;
			}
			ctl.pids[ctl.nr_pids++] = (__s32)pid;
			break;
		}
		default:
			return args_help_or_usage(c, usage);
		}
	}
	if (args_none_left("stats", argc, argv))
		return EXIT_USAGE;
	if (start && stop) {
		fprintf(stderr, "vmscope stats: --start or --stop, not both\n");
		return EXIT_USAGE;
	}
	if ((ctl.nr_pids || events || exit_perf || exit_verify) && !start) {
		fprintf(stderr, "vmscope stats: --pid, --events and --exit-reasons go with --start\n");
		return EXIT_USAGE;
	}

	int fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);
	if (fd < 0)
		return EXIT_FAILURE_RUNTIME;
	struct vmscope_version v;
	int ret = EXIT_FAILURE_RUNTIME;
	struct vmscope_event_desc descs[VMSCOPE_MAX_EVENTS];
	unsigned int nev;

	if (vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v) ||
	    load_descs(fd, descs, &nev))
		goto out;
	if (events) {
		char why[160];
		uint64_t mask;

		if (vmscope_events_select(events, descs, nev, &mask, why, sizeof(why))) {
			fprintf(stderr, "vmscope stats: --events: %s\n", why);
			ret = EXIT_USAGE;
			goto out;
		}
		ctl.events = mask;
	}
	const struct stats_ctl_opts o = {
		.start = start, .stop = stop, .reset = reset,
		.no_reasons = no_reasons, .measure = measure, .events = events != NULL,
		.exit_perf = exit_perf, .exit_verify = exit_verify,
	};
	struct vmscope_probe_stats st;
	bool enabled = false;

	memset(&st, 0, sizeof(st));
	/* the module checks the running kernel's layout before it reads it */
	if (start && !no_reasons)
		(void)exit_layout_send(fd, "vmscope stats");
	if (stats_ctl_needs_state(&o) && ioctl(fd, VMSCOPE_IOC_GET_STATS, &st) == 0)
		enabled = st.state & VMSCOPE_STATE_ENABLED;
	if (stats_ctl_flags(&o, enabled, &ctl.flags) &&
	    ioctl(fd, VMSCOPE_IOC_PROBE_CTL, &ctl) < 0) {
		fprintf(stderr, "vmscope stats: %s\n", stats_ctl_error(errno));
		goto out;
	}
	if (show_stats(fd, descs, nev, per_cpu, last) == 0)
		ret = EXIT_OK;
out:
	close(fd);
	return ret;
}
