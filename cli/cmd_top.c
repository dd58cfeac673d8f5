/*
 * `vmscope top`: the online pipeline (online/pipe.h) shown per interval.
 * Today its source is a recorded trace (--replay: merged, or raw and merged
 * as it is read); the views are JSON lines and plain text (online/view.h).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "out.h"
#include "rec_args.h"
#include "report.h"
#include "screen.h"
#include "view.h"

#define TOP_SPEED_MAX 1e6
#define TOP_INTERVAL_MIN_S 0.001

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope top --replay TRACE [--speed X] [--json | --batch]\n"
		"                   [--interval S] [--sort count|total|p99|max] [--tasks N]\n"
		"                   [--top N] [--accept-damage]\n\n"
		"VM exits per interval of host time, computed as `vmscope report exits`\n"
		"computes them (the same pass and aggregation), with the totals since the start\n"
		"beside each interval; and `report sched`'s host view: per vCPU its thread's\n"
		"preempted and blocked time, the host tasks that had its CPU, the guest's own\n"
		"steal, the worst stalls of running guest threads. An exit (an off-CPU span)\n"
		"belongs to the interval it ends in, so the intervals' counts, totals, minima\n"
		"and maxima add up to the reports'.\n\n"
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
		"all, p pause, q quit. After the last interval it stays until q.\n"
		"\nPercentiles are within 0.8%% of an exact value at that rank (log-linear\n"
		"histograms); counts, totals, min and max are exact. Losses in the trace are\n"
		"counted per interval (an exit cut by one is not counted, and said).\n"
		"Not built yet: live tracing (--pid, --domain, --all, -o); record, then\n"
		"replay.\n\n"
		"Exit status: 0 (also on q); 1 when TRACE is not a readable trace, is\n"
		"damaged (every interval read is still shown) or has no records, the output\n"
		"could not be written, or the screen has no terminal; 2 on a usage error.\n", TOP_INTERVAL_MIN_S);
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

int cmd_top(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "replay", required_argument, NULL, 'r' },
		{ "speed", required_argument, NULL, 'S' },
		{ "interval", required_argument, NULL, 'i' },
		{ "sort", required_argument, NULL, 's' },
		{ "tasks", required_argument, NULL, 'T' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "batch", no_argument, NULL, 'b' },
		{ "accept-damage", no_argument, NULL, 'A' },
		ARGS_HELP_AND_END
	};
	struct ol_view view = { .out = stdout, .tasks = 10 };
	struct ol_opts o = { .interval_ns = 1000000000ull, .top = 5, .sort = AN_SORT_TOTAL,
			     .view_ctx = &view };
	struct ol_screen screen = { 0 };
	const char *replay = NULL;
	bool speed_set = false;
	unsigned int flags = 0;
	unsigned long long n;
	char err[4200] = "";
	int c, e;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			replay = optarg;
			break;
		case 'S':
			if (parse_speed(optarg, &o.speed))
				return EXIT_USAGE;
			speed_set = true;
			break;
		case 'i':
			if (parse_interval(optarg, &o.interval_ns))
				return EXIT_USAGE;
			break;
		case 's':
			for (e = 0; e < 4 && strcmp(optarg, report_sort_names[e]); e++)
				;
			if (e == 4) {
				fprintf(stderr, "vmscope top: --sort: count, total, p99 or max, not '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			o.sort = (enum an_sort)e;
			break;
		case 'T':
			if (args_number("top", "--tasks", optarg, 0, AN_MAX_TASKS, &n))
				return EXIT_USAGE;
			view.tasks = (size_t)n;
			break;
		case 't':
			if (args_number("top", "--top", optarg, 0, 1000, &n))
				return EXIT_USAGE;
			o.top = (size_t)n;
			break;
		case 'j':
			o.view = ol_view_json;
			break;
		case 'b':
			o.view = ol_view_text;
			break;
		case 'A':
			flags = MR_ACCEPT_DAMAGE;
			break;
		default:	/* 'h' and what getopt refused */
			return args_help_or_usage(c, usage);
		}
	}
	if (optind != argc)
		return args_usage_error(usage);
	if (!replay) {
		fprintf(stderr, "vmscope top: live tracing is not built yet: give --replay TRACE\n");
		return EXIT_USAGE;
	}
	if (!o.view) {
		if (ol_screen_open(&screen, replay, o.sort)) {
			fprintf(stderr, "vmscope top: the screen needs a terminal on stdin and stdout (and TERM): or give --json or --batch\n");
			return EXIT_FAILURE_RUNTIME;
		}
		o.view = ol_view_screen;
		o.view_ctx = &screen;
		if (!speed_set)
			o.speed = 1;
	}
	e = ol_replay(replay, flags, &o, err, sizeof(err));
	ol_screen_close(&screen);
	if (e) {
		fprintf(stderr, "vmscope top: %s: %s\n", replay, err);
		return EXIT_FAILURE_RUNTIME;
	}
	if (err[0])
		fprintf(stderr, "vmscope top: %s: %s\n", replay, err);
	return EXIT_OK;
}
