/*
 * `vmscope record`: host events of some VMs (or all processes) into a
 * trace folder, through collector/record.c. This file is the command
 * line: options, the VMs' facts from /proc, signals.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "device.h"
#include "domrun.h"
#include "event_select.h"
#include "guest_link.h"
#include "live_metrics.h"
#include "rec_args.h"
#include "rec_host.h"
#include "record.h"
#include "util_signal.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope record (--pid QEMU_PID... | --domain NAME... | --all)\n"
		"                      [--duration T]\n"
		"                      [--events LIST] [--mode discard|flight]\n"
		"                      [--keep LIST|none] [--buffer-size S] [--cid CID...]\n"
		"                      [--guest-port P | --guest-handoff FD]\n"
		"                      [--metrics-fd FD [--trigger-exit-us N]\n"
		"                      [--trigger-stall-us N] [--snapshot-dir DIR\n"
		"                      [--snapshot-before-ms N] [--snapshot-after-ms N]\n"
		"                      [--snapshot-cap-mb N]]] [--measure] -o TRACE\n\n"
		"Record the host module's events for the given QEMU processes (or every\n"
		"process) into the trace folder TRACE (created; never overwritten):\n"
		"metadata.vtf (session, the module's event descriptors, each VM's name,\n"
		"vsock CID and vCPU threads from /proc) and host-cpuN.vtf per host CPU\n"
		"(host-ch1-cpuN.vtf too for --keep's events);\n"
		"each VM's guest agent (`vmscope agent`) that connects over vsock from\n"
		"that VM's CID streams into guestV-cpuN.vtf (V: the VM's index).\n"
		"Stops on Ctrl-C/SIGTERM or after T; the files are fsynced and end with\n"
		"an index and a summary. A live status line is shown on a terminal.\n"
		"Read the trace with `vmscope dump TRACE`.\n\n"
		"  --pid PID          a QEMU process to trace (repeatable, at most %d)\n"
		"  --domain NAME      a running libvirt domain: its QEMU pid and vsock CID\n"
		"                     from libvirt's files in %s (NAME.pid, NAME.xml);\n"
		"                     no libvirt connection (repeatable, with --pid too)\n"
		"  --all              every process (no filter)\n"
		"  --duration T       stop after T (seconds; suffix s, m or h; at most a\n"
		"                     year)\n"
		"  --events LIST      only these events: comma-separated names, systems\n"
		"                     (kvm, sched, vmscope) or all (default; `vmscope\n"
		"                     list` shows them); the module drops the others\n"
		"  --mode M           discard (default): drop new events when the ring is\n"
		"                     full, counted; flight: overwrite the oldest\n"
		"  --keep LIST        these events (as --events) go to a second ring per\n"
		"                     CPU of their own, 256 KiB, discard mode, which the\n"
		"                     others never fill or overwrite; default with\n"
		"                     --mode flight: %s (clock sync and\n"
		"                     TSC offsets, which the merge needs from the whole\n"
		"                     recording), of them what --events selects;\n"
		"                     none: one ring (the default with discard)\n"
		"  --buffer-size S    ring buffer per host CPU (bytes; suffix K, M;\n"
		"                     default 2M; 64 KiB sub-buffers, fewer when small)\n"
		"  --cid CID          the vsock CID of the VM of the same-numbered --pid\n"
		"                     (default: guest-cid= of its QEMU command line)\n"
		"  --guest-port P     vsock port the agents connect to (default %d)\n"
		"  --guest-handoff FD take the agents' connections from the AF_UNIX\n"
		"                     socket FD (one passed per message) instead of\n"
		"                     listening: vmscoped listens on the port for every\n"
		"                     recording and hands each one its VMs' connections\n"
		"  --metrics-fd FD    also run the records through `vmscope top`'s live\n"
		"                     pipeline and send the VM's cumulative figures\n"
		"                     once per second on the SOCK_SEQPACKET socket FD\n"
		"                     (vmscoped's /metrics; one --pid or --domain only)\n"
		"  --trigger-exit-us N   with --metrics-fd: also send a trigger when an\n"
		"                     interval's longest exit that is not a halt is\n"
		"                     longer than N microseconds (vmscoped's snapshots)\n"
		"  --trigger-stall-us N  with --metrics-fd: the same for an interval's\n"
		"                     worst guest-thread stall (`report sched`'s)\n"
		"  --snapshot-dir DIR    with a trigger: keep the last seconds of every\n"
		"                     stream in memory, and for each trigger the peer of\n"
		"                     FD sends back (vmscoped: those its rate limit\n"
		"                     admits) write the window around it as a trace\n"
		"                     DIR/TIME/ (`vmscope report` reads it)\n"
		"  --snapshot-before-ms N, --snapshot-after-ms N  the window: N ms before\n"
		"                     the trigger's start (default %llu), after its end\n"
		"                     (default %llu)\n"
		"  --snapshot-cap-mb N   at most N MiB kept per stream (default %llu)\n"
		"  --measure          also time kvm_exit's and kvm_entry's probes, for\n"
		"                     `vmscope stats` (its exit_timing, entry_timing:\n"
		"                     module-wide, every session's events); a\n"
		"                     benchmark's, two more clock reads a probe\n"
		"  -o TRACE           the trace folder to create\n\n"
		"Exit status: 0 when the recording ran and stopped (Ctrl-C, SIGTERM or\n"
		"the duration); 1 on a runtime failure: no host module, TRACE exists,\n"
		"reading the ring buffers failed, or writing the trace failed (a full\n"
		"disk: recording stops, and the trace's final statistics say what was\n"
		"lost, so that readers report it as damaged), or the metrics of\n"
		"--metrics-fd ended early or a snapshot was not written (said; the\n"
		"recording went on); 2 on a usage error.\n",
		VMSCOPE_MAX_PIDS, VD_RUN_DIR, REC_KEEP_DEFAULT, VMSCOPE_AGENT_PORT,
		OL_SNAP_DEFAULT_BEFORE_NS / 1000000ull, OL_SNAP_DEFAULT_AFTER_NS / 1000000ull,
		OL_SNAP_DEFAULT_CAP >> 20);
}

/*
 * --keep (or its default with --mode flight) as a second channel in
 * h->cfg. 0, or -1 after saying why (a usage error).
 */
static int keep_channel(struct hb *h, const char *keep, const struct vmscope_probe_ctl *ctl)
{
	uint64_t probed = ctl->flags & VMSCOPE_CTL_EVENTS ? ctl->events : UINT64_MAX;
	bool chosen = keep != NULL;
	uint64_t mask = 0;
	char why[160];

	if (keep && !strcmp(keep, "none"))
		keep = NULL;
	else if (!keep && h->cfg.chan[0].mode == VMSCOPE_RB_MODE_FLIGHT)
		keep = REC_KEEP_DEFAULT;
	if (keep && vmscope_events_select(keep, h->descs, h->nev, &mask, why, sizeof(why))) {
		fprintf(stderr, "vmscope record: --keep: %s\n", why);
		return -1;
	}
	if (!chosen) {
		mask &= probed;		/* the default: of what is recorded */
	} else if (mask & ~probed) {
		fprintf(stderr, "vmscope record: --keep names events that --events does "
			"not select\n");
		return -1;
	}
	rec_keep_channel(&h->cfg, mask);
	return 0;
}

/* The command line, before the module is asked anything. */
struct record_args {
	struct rec_opts o;
	struct vmscope_session_cfg cfg;
	uint32_t cids[VMSCOPE_MAX_PIDS];	/* --cid, in --pid order */
	struct rec_host_doms doms;		/* --domain's, from libvirt's files */
	unsigned int ncids;
	const char *keep;
	int all;
	int measure;				/* --measure */
	int metrics_fd;				/* --metrics-fd, or -1 */
	uint64_t trigger_exit_us, trigger_stall_us;	/* 0: none */
	const char *snapshot_dir;			/* --snapshot-dir, or NULL */
	uint64_t snapshot_before_ms, snapshot_after_ms, snapshot_cap_mb;
};

/* The option parsers of record's values into struct record_args: args_value_fn. */
static int take_pid(void *args, const char *arg)
{
	return rec_host_pid("vmscope record", arg, &((struct record_args *)args)->o);
}

static int take_duration(void *args, const char *arg)
{
	return rec_host_duration("vmscope record", arg, &((struct record_args *)args)->o);
}

static int take_buffer_size(void *args, const char *arg)
{
	unsigned long long ull;

	if (rec_parse_size(arg, &ull) || rec_geometry(ull, &((struct record_args *)args)->cfg)) {
		fprintf(stderr, "vmscope record: --buffer-size '%s': between 8K and "
			"64M per CPU\n", arg);
		return EXIT_USAGE;
	}
	return 0;
}

static int take_domain(void *args, const char *arg)
{
	struct record_args *a = args;

	return rec_host_domain("vmscope record", arg, &a->o, &a->doms);
}

/* --guest-handoff and --metrics-fd: an open socket of @want_type's */
static int parse_socket_fd(const char *opt, const char *arg, int want_type, int *fd)
{
	unsigned long long ull;
	socklen_t tl;
	int type;

	if (args_number("vmscope record", opt, arg, 0, 65535, &ull))
		return EXIT_USAGE;
	tl = sizeof(type);
	if (getsockopt((int)ull, SOL_SOCKET, SO_TYPE, &type, &tl) ||
	    (want_type && type != want_type)) {
		fprintf(stderr, "vmscope record: %s '%s': not an open %ssocket\n", opt, arg,
			want_type == SOCK_SEQPACKET ? "SOCK_SEQPACKET " : "");
		return EXIT_USAGE;
	}
	*fd = (int)ull;
	return 0;
}

static int take_handoff(void *args, const char *arg)
{
	return parse_socket_fd("--guest-handoff", arg, 0,
			       &((struct record_args *)args)->o.guest_handoff_fd);
}

static int take_metrics_fd(void *args, const char *arg)
{
	return parse_socket_fd("--metrics-fd", arg, SOCK_SEQPACKET,
			       &((struct record_args *)args)->metrics_fd);
}

static int take_cid(void *args, const char *arg)
{
	struct record_args *a = args;
	unsigned long long ull;

	/* CIDs 0-2 are the hypervisor's, the local and the host */
	if (args_number("vmscope record", "--cid", arg, 3, 0xfffffffeull, &ull))
		return EXIT_USAGE;
	if (a->ncids == VMSCOPE_MAX_PIDS) {
		fprintf(stderr, "vmscope record: at most %d --cid\n", VMSCOPE_MAX_PIDS);
		return EXIT_USAGE;
	}
	a->cids[a->ncids++] = (uint32_t)ull;
	return 0;
}

/* --mode's names, as the ring buffer's modes number them */
static const char *const modes[] = { "discard", "flight" };
_Static_assert(VMSCOPE_RB_MODE_DISCARD == 0 && VMSCOPE_RB_MODE_FLIGHT == 1, "modes' order");

static const struct args_opt opts[] = {
	ARGS_FN("pid", 0, take_pid),
	ARGS_FLAG("all", 0, struct record_args, all),
	ARGS_FLAG("measure", 0, struct record_args, measure),
	ARGS_FN("duration", 0, take_duration),
	ARGS_CHOICE("mode", 0, struct record_args, cfg.chan[0].mode, modes, 2),
	ARGS_FN("buffer-size", 0, take_buffer_size),
	ARGS_STR("events", 0, struct record_args, o.events),
	ARGS_STR("keep", 0, struct record_args, keep),
	ARGS_FN("domain", 0, take_domain),
	ARGS_FN("cid", 0, take_cid),
	ARGS_NUM("guest-port", 0, struct record_args, o.guest_port, 0, 0xfffffffeull),
	ARGS_FN("guest-handoff", 0, take_handoff),
	ARGS_FN("metrics-fd", 0, take_metrics_fd),
	/* their ranges: rec_args.h */
	ARGS_NUM("trigger-exit-us", 0, struct record_args, trigger_exit_us, 1, REC_TRIGGER_US_MAX),
	ARGS_NUM("trigger-stall-us", 0, struct record_args, trigger_stall_us, 1,
		 REC_TRIGGER_US_MAX),
	ARGS_STR("snapshot-dir", 0, struct record_args, snapshot_dir),
	ARGS_NUM("snapshot-before-ms", 0, struct record_args, snapshot_before_ms, 0,
		 REC_SNAP_MS_MAX),
	ARGS_NUM("snapshot-after-ms", 0, struct record_args, snapshot_after_ms, 0,
		 REC_SNAP_MS_MAX),
	ARGS_NUM("snapshot-cap-mb", 0, struct record_args, snapshot_cap_mb, 1, 65536),
	ARGS_STR(NULL, 'o', struct record_args, o.path),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope record", usage, opts, 0 };

/* The whole command line into @a: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct record_args *a)
{
	int rc;

	a->o.guest_port = VMSCOPE_AGENT_PORT;
	a->o.guest_handoff_fd = -1;
	a->metrics_fd = -1;
	a->snapshot_before_ms = OL_SNAP_DEFAULT_BEFORE_NS / 1000000ull;
	a->snapshot_after_ms = OL_SNAP_DEFAULT_AFTER_NS / 1000000ull;
	a->snapshot_cap_mb = OL_SNAP_DEFAULT_CAP >> 20;
	if (rec_geometry(2ull << 20, &a->cfg))
		return EXIT_FAILURE_RUNTIME;
	rc = args_run(&spec, a, argc, argv);
	if (rc >= 0)
		return rc;
	if (!a->o.path || (!a->all) == (a->o.ctl.nr_pids == 0)) {
		fprintf(stderr, "vmscope record: need -o TRACE and either --pid/--domain or --all\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (a->measure)
		a->o.ctl.flags |= VMSCOPE_CTL_MEASURE;
	if (a->metrics_fd >= 0 && a->o.ctl.nr_pids != 1) {
		fprintf(stderr, "vmscope record: --metrics-fd takes one --pid or --domain\n");
		return EXIT_USAGE;
	}
	if (a->metrics_fd < 0 && (a->trigger_exit_us || a->trigger_stall_us)) {
		fprintf(stderr, "vmscope record: --trigger-exit-us and --trigger-stall-us go "
			"with --metrics-fd\n");
		return EXIT_USAGE;
	}
	if (a->snapshot_dir && !a->trigger_exit_us && !a->trigger_stall_us) {
		fprintf(stderr, "vmscope record: --snapshot-dir goes with --trigger-exit-us or "
			"--trigger-stall-us\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* Each traced process as a VM (its vCPU threads, its vsock CID). */
static int find_vms(struct record_args *a, struct vm_desc *vms)
{
	if (rec_host_vms("vmscope record", &a->o, &a->doms, vms))
		return -1;
	for (unsigned int i = 0; i < a->ncids && i < a->o.ctl.nr_pids; i++)
		vms[i].cid = a->cids[i];
	return 0;
}

/* --events against the module's own names (a typo is an error); 0 or -1. */
static int select_events(const struct hb *h, struct rec_opts *o)
{
	char why[160];
	uint64_t mask = 0;

	if (!o->events)
		return 0;
	if (vmscope_events_select(o->events, h->descs, h->nev, &mask, why, sizeof(why))) {
		fprintf(stderr, "vmscope record: --events: %s\n", why);
		return -1;
	}
	o->ctl.events = mask;
	o->ctl.flags |= VMSCOPE_CTL_EVENTS;
	return 0;
}

/* rec_run, with --metrics-fd's feed on its tap: 0, or non-zero when the
 * recording or the metrics failed (said on stderr). */
static int metrics_run(struct hb *h, struct record_args *a, volatile sig_atomic_t *stop)
{
	struct ol_mfeed *f;
	int rc;

	if (a->metrics_fd < 0)
		return rec_run(h, &a->o, stop);
	f = ol_mfeed_open(h, a->o.path, a->metrics_fd, OL_MX_INTERVAL_NS,
			  &(struct ol_trig_cfg){ .exit_ns = a->trigger_exit_us * 1000u,
						 .stall_ns = a->trigger_stall_us * 1000u },
			  &(struct ol_snap_cfg){ .dir = a->snapshot_dir,
						 .before_ns = a->snapshot_before_ms * 1000000u,
						 .after_ns = a->snapshot_after_ms * 1000000u,
						 .cap_bytes = a->snapshot_cap_mb << 20 });
	if (!f) {
		fprintf(stderr, "vmscope record: --metrics-fd: out of memory\n");
		return 1;
	}
	a->o.tap = ol_mfeed_tap;
	a->o.tap_ctx = f;
	rc = rec_run(h, &a->o, stop);
	return ol_mfeed_close(f, rc) | rc;
}

int cmd_record(int argc, char **argv)
{
	static struct vm_desc vms[VMSCOPE_MAX_PIDS];
	static struct record_args a;
	static struct hb h;
	struct rec_opts *o = &a.o;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	if (find_vms(&a, vms))
		return EXIT_FAILURE_RUNTIME;
	if (a.ncids > o->ctl.nr_pids) {
		fprintf(stderr, "vmscope record: more --cid than --pid\n");
		return EXIT_USAGE;
	}
	o->vms = vms;
	o->nvms = o->ctl.nr_pids;
	o->status = isatty(STDERR_FILENO);
	o->argc = argc;
	o->argv = argv;

	if (rec_host_open("vmscope record", &h, o))
		return EXIT_FAILURE_RUNTIME;
	h.cfg = a.cfg;
	if (select_events(&h, o) || keep_channel(&h, a.keep, &o->ctl)) {
		hb_close(&h);
		return EXIT_USAGE;
	}
	util_stop_on_signals();
	rc = metrics_run(&h, &a, &util_stop_requested);

	hb_close(&h);
	return rc ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}
