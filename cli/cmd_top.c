/*
 * `vmscope top`: the online pipeline (online/pipe.h) shown per interval.
 * Its source is the host's ring buffers (--pid, --domain, --all:
 * online/live.h; the VMs found by rec_host.h) and their guest agents,
 * or a recorded trace (--replay: merged, or raw and
 * merged as it is read); the views are JSON lines, plain text
 * (online/view.h) and the screen (online/screen.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "vmscope/agent_port.h"
#include "commands.h"
#include "domrun.h"
#include "out.h"
#include "live.h"
#include "rec_args.h"
#include "rec_host.h"
#include "report.h"
#include "screen.h"
#include "util_signal.h"
#include "view.h"

#define TOP_SPEED_MAX 1e6
#define TOP_INTERVAL_MIN_S 0.001

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope top (--pid QEMU_PID... | --domain NAME... | --all)\n"
		"                   [--duration T] [-o TRACE] [--json | --batch]\n"
		"       vmscope top --replay TRACE [--speed X] [--json | --batch] [--accept-damage]\n"
		"         both: [--interval S] [--sort count|total|p99|max] [--tasks N] [--top N]\n\n"
		"VM exits per interval of host time, computed as `vmscope report exits`\n"
		"computes them (the same pass and aggregation), with the totals since the start\n"
		"beside each interval; and `report sched`'s host view: per vCPU its thread's\n"
		"preempted and blocked time, the host tasks that had its CPU, the guest's own\n"
		"steal, the worst stalls of running guest threads. An exit (an off-CPU span)\n"
		"belongs to the interval it ends in, so the intervals' counts, totals, minima\n"
		"and maxima add up to the reports'.\n\n"
		"  --pid QEMU_PID        live, from the host module's ring buffers (root,\n"
		"                        vmscope_host loaded): the exits of these processes'\n"
		"                        vCPUs (repeat for several VMs), read as `vmscope\n"
		"                        record` reads them and ordered across the host's CPUs\n"
		"                        as they come; and, as record takes them (vsock port\n"
		"                        %u, only these VMs' CIDs), their guest agents'\n"
		"                        streams, each guest clock aligned as its sync\n"
		"                        exchanges arrive: the exits' guest tasks. A VM\n"
		"                        without an agent: its guest columns say \"no agent\".\n"
		"                        Records a CPU delivers too late to be put in order\n"
		"                        (over 1 s behind the others) are counted as losses;\n"
		"                        a guest disconnect as a loss of its CPUs. Until\n"
		"                        SIGINT or SIGTERM (the last interval is shown, exit 0)\n"
		"  --domain NAME         live, as --pid, for a running libvirt domain: its\n"
		"                        QEMU pid as vmscoped finds it, from libvirt's files\n"
		"                        (%s/NAME.pid; its vsock CID from\n"
		"                        NAME.xml there; no libvirt connection); the VM is\n"
		"                        named NAME on the screen, in --batch and in --json\n"
		"                        (repeat for several VMs)\n"
		"  --all                 live, as --pid, for every KVM VM running when top\n"
		"                        starts: each process with a KVM VM file descriptor\n"
		"                        (a link to %s in /proc/PID/fd: QEMU,\n"
		"                        with or without libvirt, or any other KVM user).\n"
		"                        A VM started later is not picked up: start top\n"
		"                        again. --pid, --domain, --all: one of them, at most\n"
		"                        %d VMs\n"
		"  --duration T          live: stop after T (seconds; suffix s, m or h)\n"
		"  -o TRACE              live: also write the recording `vmscope record\n"
		"                        -o TRACE` would write of that session (TRACE must not\n"
		"                        exist; complete at the stop, its damage and losses\n"
		"                        accounted as record's); the view is fed as it is\n"
		"                        written\n"
		"  --replay TRACE        read a merged trace (`vmscope merge`'s output), or a\n"
		"                        recording (`vmscope record`'s): a raw recording is merged\n"
		"                        as it is read, in one pass. Its guest times come from\n"
		"                        the clock segments known when they are read, not the\n"
		"                        final fit `merge` uses: within the bound, a guest\n"
		"                        record may land a few hundred ns from where `merge`\n"
		"                        puts it (online/README.md)\n"
		"  --speed X             X seconds of trace per second (default: 1 on the\n"
		"                        screen, as fast as it reads with --json or --batch)\n"
		"  --interval S          the interval, seconds of host time (default 1; from\n"
		"                        %g; \"500ms\" is not taken, \"0.5\" is)\n"
		"  --json                one JSON object per interval, one per line (fields:\n"
		"                        online/README.md)\n"
		"  --batch               plain text per interval: per VM the vCPUs' exits/s,\n"
		"                        time split, preempted and blocked time and guest\n"
		"                        steal, each exit reason's exits/s, total, p50, p99,\n"
		"                        max, and the guest tasks by exit time (\"no agent\"\n"
		"                        for a VM without a guest side)\n"
		"  --sort count|total|p99|max  order of reasons and tasks, largest first (total)\n"

		"  --tasks N             guest tasks (and, in the JSON, host tasks that had\n"
		"                        vCPU threads' CPUs) per interval (default 10)\n"
		"  --top N               the N longest exits and worst guest-thread stalls of\n"
		"                        each interval (default 5)\n"
		"  --accept-damage       replay a damaged trace (exit 0; the damage is\n"
		"                        still said on stderr)\n"
		"\nWithout --json or --batch, a screen (the terminal on stdin and stdout): per VM\n"
		"its vCPUs (exits/s, time split in %%, preempted, blocked, guest steal), the\n"
		"interval's exits by reason, guest task or vCPU (exits/s, total, p50, p99,\n"
		"max) or the host tasks that had vCPU threads' CPUs, the worst stalls with who\n"
		"caused them, the longest exits. Keys: s the sort, g the grouping, v one VM or\n"
		"all, p pause (--replay waits; live goes on, the screen frozen), q quit (live:\n"
		"the session stops). Keys are read as intervals close. After the last interval\n"
		"it stays until q. While it is up, what would go to stderr on the terminal is\n"
		"held, and written there when it ends.\n"
		"\nPercentiles are within 0.8%% of an exact value at that rank (log-linear\n"
		"histograms); counts, totals, min and max are exact. Losses in the trace are\n"
		"counted per interval (an exit cut by one is not counted, and said).\n\n"
		"Exit status: 0 (also on q, and after SIGINT or SIGTERM live); 1 when\n"
		"TRACE is not a readable trace, is damaged (every interval read is still\n"
		"shown) or has no records, a --domain is unknown or not running, --all\n"
		"found no KVM VM (or more than %d), the host module cannot be used or saw no\n"
		"record of the processes, the output could not be written, or the screen has\n"
		"no terminal; 2 on a usage error (also --pid, --domain, --all and --replay\n"
		"mixed).\n", VMSCOPE_AGENT_PORT, VD_RUN_DIR, VM_KVM_FD_LINK, VMSCOPE_MAX_PIDS,
		TOP_INTERVAL_MIN_S, VMSCOPE_MAX_PIDS);
}

static int parse_speed(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	/* plain decimals only: strtod also takes "inf", "nan" and hex */
	if (errno || end == s || *end || s + strspn(s, "0123456789.") != end ||
	    !(*v > 0) || *v > TOP_SPEED_MAX) {
		fprintf(stderr, "vmscope top: --speed: a number above 0, at most %g, not '%s'\n",
			TOP_SPEED_MAX, s);
		return -1;
	}
	return 0;
}

static int parse_interval(const char *s, uint64_t *ns)
{
	double v;

	if (rec_parse_duration(s, &v) || v < TOP_INTERVAL_MIN_S) {
		fprintf(stderr, "vmscope top: --interval: seconds from %g to %g, not '%s'\n",
			TOP_INTERVAL_MIN_S, REC_DURATION_MAX_S, s);
		return -1;
	}
	*ns = (uint64_t)llround(v * 1e9);
	return 0;
}

/* The command line: the pipeline's options and what only the command uses. */
struct top_args {
	struct ol_opts o;
	struct ol_view view;
	const char *replay;
	bool speed_set;
	unsigned int flags;
	struct rec_opts rec;	/* --pid, --duration: the live source's */
	const char *domains[VMSCOPE_MAX_PIDS];	/* --domain, resolved once all is parsed */
	unsigned int ndomains;
	int all;
	struct rec_host_doms doms;
};

/* The option parsers of top's values into struct top_args: args_value_fn. */
static int take_speed(void *args, const char *arg)
{
	struct top_args *a = args;

	if (parse_speed(arg, &a->o.speed))
		return EXIT_USAGE;
	a->speed_set = true;
	return 0;
}

static int take_interval(void *args, const char *arg)
{
	return parse_interval(arg, &((struct top_args *)args)->o.interval_ns) ? EXIT_USAGE : 0;
}

static int take_json(void *args, const char *arg)
{
	(void)arg;
	((struct top_args *)args)->o.view = ol_view_json;
	return 0;
}

static int take_batch(void *args, const char *arg)
{
	(void)arg;
	((struct top_args *)args)->o.view = ol_view_text;
	return 0;
}

static int take_accept_damage(void *args, const char *arg)
{
	(void)arg;
	((struct top_args *)args)->flags = MR_ACCEPT_DAMAGE;
	return 0;
}

static int take_pid(void *args, const char *arg)
{
	return rec_host_pid("vmscope top", arg, &((struct top_args *)args)->rec);
}

static int take_duration(void *args, const char *arg)
{
	return rec_host_duration("vmscope top", arg, &((struct top_args *)args)->rec);
}

static int take_domain(void *args, const char *arg)
{
	struct top_args *a = args;

	if (a->ndomains == VMSCOPE_MAX_PIDS) {
		fprintf(stderr, "vmscope top: at most %d --domain\n", VMSCOPE_MAX_PIDS);
		return EXIT_USAGE;
	}
	a->domains[a->ndomains++] = arg;
	return 0;
}

static const struct args_opt opts[] = {
	ARGS_STR("replay", 0, struct top_args, replay),
	ARGS_FN("speed", 0, take_speed),
	ARGS_FN("interval", 0, take_interval),
	ARGS_CHOICE("sort", 0, struct top_args, o.sort, report_sort_names, 4),
	ARGS_NUM("tasks", 0, struct top_args, view.tasks, 0, AN_MAX_TASKS),
	ARGS_NUM("top", 0, struct top_args, o.top, 0, 1000),
	ARGS_FN_FLAG("json", 0, take_json),
	ARGS_FN_FLAG("batch", 0, take_batch),
	ARGS_FN_FLAG("accept-damage", 0, take_accept_damage),
	ARGS_FN("pid", 0, take_pid),
	ARGS_FN("domain", 0, take_domain),
	ARGS_FLAG("all", 0, struct top_args, all),
	ARGS_FN("duration", 0, take_duration),
	ARGS_STR(NULL, 'o', struct top_args, rec.path),
	ARGS_END,
};

/* The screen as @o's view, showing @source. 0, or -1 (said). */
static int screen_open(struct ol_screen *s, const char *source, struct ol_opts *o, bool live)
{
	if (ol_screen_open(s, source, o->sort, live)) {
		fprintf(stderr, "vmscope top: the screen needs a terminal on stdin and stdout (and TERM): or give --json or --batch\n");
		return -1;
	}
	o->view = ol_view_screen;
	o->view_ctx = s;
	return 0;
}

/* The live source's processes: --pid's, --domain's or --all's; 0, or the
 * exit status (said). */
static int live_vms(struct top_args *a)
{
	for (unsigned int i = 0; i < a->ndomains; i++) {
		int e = rec_host_domain("vmscope top", a->domains[i], &a->rec, &a->doms);

		if (e)
			return e;
	}
	return a->all ? rec_host_all("vmscope top", &a->rec) : 0;
}

/* --pid, --domain, --all: the host's session through the pipeline until a
 * signal (or q). */
static int run_live(struct top_args *a, int argc, char **argv)
{
	static struct vm_desc vms[VMSCOPE_MAX_PIDS];
	static struct hb h;
	struct rec_opts *ro = &a->rec;
	struct ol_screen screen = { 0 };
	char err[1024] = "", source[160];
	int e;

	e = live_vms(a);
	if (e)
		return e;
	/* each VM's CID from its QEMU (or its domain's XML): only those VMs'
	 * agents are taken */
	if (rec_host_vms("vmscope top", ro, &a->doms, vms))
		return EXIT_FAILURE_RUNTIME;
	ro->vms = vms;
	ro->nvms = ro->ctl.nr_pids;
	ro->guest_port = VMSCOPE_AGENT_PORT;
	ro->guest_handoff_fd = -1;
	ro->argc = argc;
	ro->argv = argv;
	if (rec_host_open("vmscope top", &h, ro))
		return EXIT_FAILURE_RUNTIME;
	if (rec_geometry(2ull << 20, &h.cfg)) {
		hb_close(&h);
		return EXIT_FAILURE_RUNTIME;
	}
	/* the screen once the module is open: what failed before is said on
	 * a plain terminal */
	if (a->all)
		snprintf(source, sizeof(source), "--all (%u VM%s)", ro->ctl.nr_pids,
			 ro->ctl.nr_pids > 1 ? "s" : "");
	else if (a->ndomains)
		snprintf(source, sizeof(source), "--domain %.100s%s", a->domains[0],
			 a->ndomains > 1 ? " ..." : "");
	else
		snprintf(source, sizeof(source), "--pid %d%s", ro->ctl.pids[0],
			 ro->ctl.nr_pids > 1 ? " ..." : "");
	if (!a->o.view && screen_open(&screen, source, &a->o, true)) {
		hb_close(&h);
		return EXIT_FAILURE_RUNTIME;
	}
	util_stop_on_signals();
	e = ol_live(&h, ro, &a->o, &util_stop_requested, err, sizeof(err));
	hb_close(&h);
	ol_screen_close(&screen);
	if (e) {
		fprintf(stderr, "vmscope top: %s\n", err);
		return EXIT_FAILURE_RUNTIME;
	}
	if (err[0])
		fprintf(stderr, "vmscope top: %s\n", err);
	return EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
	static const struct args_spec spec = { "vmscope top", usage, opts, 0 };
	struct top_args a = { .view = { .out = stdout, .tasks = 10 },
			      .o = { .interval_ns = 1000000000ull, .top = 5,
				     .sort = AN_SORT_TOTAL } };
	struct ol_opts *o = &a.o;
	struct ol_screen screen = { 0 };
	const char *replay;
	char err[4200] = "";
	int e;

	/* the default view (--json, --batch) writes through a.view */
	o->view_ctx = &a.view;
	e = args_run(&spec, &a, argc, argv);
	if (e >= 0)
		return e;
	replay = a.replay;
	if (!!replay + !!a.rec.ctl.nr_pids + !!a.ndomains + !!a.all != 1) {
		fprintf(stderr, "vmscope top: give one of --pid QEMU_PID..., --domain NAME..., "
			"--all (live) or --replay TRACE\n");
		return EXIT_USAGE;
	}
	if (!replay && (a.speed_set || a.flags)) {
		fprintf(stderr, "vmscope top: --speed and --accept-damage are for --replay\n");
		return EXIT_USAGE;
	}
	if (replay && (a.rec.duration_s > 0 || a.rec.path)) {
		fprintf(stderr, "vmscope top: --duration and -o are for live (--pid, --domain, "
			"--all)\n");
		return EXIT_USAGE;
	}
	if (!replay)
		return run_live(&a, argc, argv);
	if (!o->view) {
		if (screen_open(&screen, replay, o, false))
			return EXIT_FAILURE_RUNTIME;
		if (!a.speed_set)
			o->speed = 1;
	}
	e = ol_replay(replay, a.flags, o, err, sizeof(err));
	ol_screen_close(&screen);
	if (e) {
		fprintf(stderr, "vmscope top: %s: %s\n", replay, err);
		return EXIT_FAILURE_RUNTIME;
	}
	if (err[0])
		fprintf(stderr, "vmscope top: %s: %s\n", replay, err);
	return EXIT_OK;
}
