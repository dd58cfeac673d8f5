/*
 * `vmscope merge TRACE [-o MERGED]`: one timeline in host time from the
 * host and guest streams of a trace, through the guest→host clock
 * transforms the sync exchanges prove (merge/), with the report of each
 * VM's bound and the causality check over every sync exchange.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "decode.h"
#include "ex_out.h"
#include "merge.h"
#include "out.h"
#include "rec_args.h"

#define REPORT_FILE "report.txt"

/* What a merged trace folder holds (ex_out removes them from an
 * unfinished one). */
static const char *const merged_files[] = { TF_TRACE_METADATA, MO_STREAM, REPORT_FILE, NULL };

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope merge [-o MERGED] [--ppm N] [--max-segment T]\n"
		"                     [--tsc-breaks MODE] [--accept-damage] TRACE\n"
		"       vmscope merge --sync-report [options] TRACE\n"
		"       vmscope merge [--accept-damage] --show MERGED\n\n"
		"Align every guest clock to the host clock from the trace's clock-sync\n"
		"exchanges (convex hull: a guaranteed error bound; forged or wrong samples\n"
		"are identified and dropped) and merge all host and guest streams into one\n"
		"stream ordered by host time, written as the trace folder MERGED (default\n"
		"TRACE.merged; must not exist, nor lie inside TRACE), readable by `vmscope\n"
		"dump`. Each record keeps its origin (host or VM), CPU, thread and original\n"
		"timestamp. Prints, per VM, the transform's segments with their bound, the\n"
		"samples used and dropped, and the causality check over all exchanges (also\n"
		"saved as MERGED/report.txt).\n\n"
		"MERGED is written as .MERGED.partial-XXXXXX beside it and renamed when\n"
		"complete and synced: a failed merge removes it; SIGINT, SIGTERM and SIGHUP\n"
		"remove it and end the merge by the signal; after SIGKILL or a crash it\n"
		"stays under that name (delete it). Accepted exchanges go from the first\n"
		"pass to the second through temporary files in $TMPDIR (default /tmp),\n"
		"deleted as they are made.\n\n"
		"  --sync-report         only the clock alignment report, on stdout; nothing\n"
		"                        written (so no -o)\n"
		"  --show MERGED         print a merged trace: host time, origin (host or VM\n"
		"                        name), CPU, thread, event, fields, original time\n"
		"  -o, --output MERGED   the merged trace folder\n"
		"  --ppm N               drift prior, parts per million (default 1000)\n"
		"  --max-segment T       start a new segment after this much host time\n"
		"                        (seconds; suffix s, m or h)\n"
		"  --tsc-breaks MODE     which kvm_write_tsc_offset end a VM's segment: auto\n"
		"                        (default: one 1 s or more after the previous one of\n"
		"                        its VM; an unstable host TSC rewrites offsets at\n"
		"                        every vCPU load), all, none (change detection only)\n"
		"  --accept-damage       merge a damaged TRACE (a file corrupt, torn where its\n"
		"                        summary says it was closed, missing, unlisted or not\n"
		"                        as the summary lists it, metadata unreadable): MERGED\n"
		"                        is marked damaged, so that dump, report and export\n"
		"                        refuse it unless given --accept-damage too; with\n"
		"                        --show, print a damaged MERGED\n\n"
		"The input's damage, losses and skipped sub-buffers are printed and kept in\n"
		"MERGED's summary. Without --accept-damage, damage found before anything is\n"
		"written stops the merge; damage found while merging (a guest stream read\n"
		"in the second pass) leaves MERGED written but marked damaged.\n\n"
		"Exit status: 0; 1 when the input is damaged (unless --accept-damage), is not\n"
		"a trace, something failed (also writing stdout), or a causality check was\n"
		"violated; 2 on a usage error.\n");
}

/* MERGED/report.txt, synced: part of the merged trace, so written before
 * the folder gets its name. */
static int write_report(const char *dir, const struct vr_trace *t, const struct mg_result *r,
			char *err, size_t errlen)
{
	char path[4096];
	FILE *f = NULL;
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, REPORT_FILE);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || !(f = fdopen(fd, "w")))
		e = errno;
	if (f) {
		mg_report(f, t, r, MG_REPORT_ALL);
		if (fflush(f) || ferror(f) || fsync(fd))
			e = errno ? errno : EIO;
		if (fclose(f) && !e)
			e = errno;
	} else if (fd >= 0) {
		close(fd);
	}
	if (e)
		snprintf(err, errlen, "%s: %s", path, strerror(e));
	return e ? -e : 0;
}

/* `--show MERGED`: the merged timeline with each record's origin. */
static int show(const char *path, unsigned int flags)
{
	const Vmscope__Trace__SessionMetadata *s;
	struct mo_origin o;
	struct vr_item it;
	struct mr *m;
	char err[1024], text[512];
	bool has;
	uint64_t n = 0;
	int e = mr_open(&m, path, flags, err, sizeof(err));

	if (e) {
		fprintf(stderr, "vmscope merge: %s\n", err);
		return EXIT_FAILURE_RUNTIME;
	}
	s = vr_trace_session(mr_trace(m));
	while (mr_next(m, &it, &o, &has) == 1) {
		if (it.kind == VR_LOSS) {
			printf("%" PRIu64 ".%09" PRIu64 " -- lost %" PRIu64 " events: %s\n",
			       it.ts / 1000000000, it.ts % 1000000000, it.events,
			       it.text ? it.text : "");
			continue;
		}
		if (it.kind != VR_EVENT)
			continue;
		const char *name = it.desc->name, *colon = strchr(name, ':');
		const char *who = "?";

		if (has && !o.origin)
			who = "host";
		else if (has && s && o.origin <= s->n_vms && s->vms[o.origin - 1]->name)
			who = s->vms[o.origin - 1]->name;
		if (has && o.origin && colon)	/* "vmN:" is said by who */
			name = colon + 1;
		vmscope_format_event(it.desc, it.payload, it.size, text, sizeof(text));
		if (has)
			printf("%" PRIu64 ".%09" PRIu64 " %s cpu%u tid %d %s: %s (at %" PRIu64 ")\n",
			       it.ts / 1000000000, it.ts % 1000000000, who, o.cpu, o.tid, name,
			       text, o.orig_ts);
		else
			printf("%" PRIu64 ".%09" PRIu64 " ? %s: %s\n", it.ts / 1000000000,
			       it.ts % 1000000000, name, text);
		n++;
	}
	e = mr_stats(m)->end.kind != TF_END_CLEAN;
	printf("%" PRIu64 " events; merged stream: %s\n", n, tf_end_str(mr_stats(m)->end.kind));
	if (mr_damage(m, err, sizeof(err))) {
		printf("damaged: %s\n", err);
		e = !(flags & MR_ACCEPT_DAMAGE);
	}
	mr_close(m);
	return e ? EXIT_FAILURE_RUNTIME : EXIT_OK;
}

/*
 * The input's damage, as the merged trace's Summary keeps it (its losses
 * and gaps are in the report's merge counts). 1 when the input was
 * damaged and that was not accepted.
 */
static int input_account(struct vr_trace *t, const char *path, const char *merged,
			 bool accept)
{
	char dmg[1024];
	int damaged = vr_damage_describe(t, path, dmg, sizeof(dmg));

	if (!damaged) {
		printf("input: no damage\n");
		return 0;
	}
	printf("input damaged: %s\n", dmg);
	if (merged)
		printf("merged trace %s is marked damaged%s\n", merged,
		       accept ? " (--accept-damage)" : "");
	if (!accept)
		fprintf(stderr, "vmscope merge: %s\n", dmg);
	return !accept;
}

struct merge_args {
	struct mg_opts o;
	bool sync_only, accept;
	const char *show_path;
	const char *out;
};

/* --max-segment T: a duration above 0 into @args (struct merge_args). */
static int take_max_segment(void *args, const char *arg)
{
	struct merge_args *a = args;
	double sec;

	if (rec_parse_duration(arg, &sec) || !(sec > 0)) {
		fprintf(stderr, "vmscope merge: --max-segment: '%s' is not a duration "
			"above 0 and at most %.0f s\n", arg, REC_DURATION_MAX_S);
		return EXIT_USAGE;
	}
	a->o.sync.max_segment_ns = (uint64_t)(sec * 1e9);
	return 0;
}

/* --tsc-breaks' names, in enum mg_tsc_breaks' order */
static const char *const tsc_breaks[] = { "auto", "all", "none" };
_Static_assert(MG_TSC_AUTO == 0 && MG_TSC_ALL == 1 && MG_TSC_NONE == 2, "tsc_breaks' order");

static const struct args_opt opts[] = {
	ARGS_FLAG("sync-report", 0, struct merge_args, sync_only),
	ARGS_STR("output", 'o', struct merge_args, out),
	ARGS_NUM("ppm", 0, struct merge_args, o.sync.ppm, 1, VMSCOPE_SYNC_MAX_PPM),
	ARGS_FN("max-segment", 0, take_max_segment),
	ARGS_CHOICE("tsc-breaks", 0, struct merge_args, o.tsc_breaks, tsc_breaks, 3),
	ARGS_STR("show", 0, struct merge_args, show_path),
	ARGS_FLAG("accept-damage", 0, struct merge_args, accept),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope merge", usage, opts, ARGS_OPERANDS_ANY };

/* "TRACE.merged" (trailing slashes dropped) in a malloc'd string, or NULL. */
static char *default_output(const char *in)
{
	size_t n = strlen(in);
	char *def;

	while (n > 1 && in[n - 1] == '/')
		n--;
	def = malloc(n + 8);
	if (def)
		snprintf(def, n + 8, "%.*s.merged", (int)n, in);
	return def;
}

/*
 * The trace @in, open as @t, merged into @a->out (reserved as @dst) or
 * only its sync report (--sync-report); the exit status.
 */
static int merge_trace(struct vr_trace *t, const char *in, struct merge_args *a,
		       struct ex_out *dst)
{
	struct mg_result r;
	char err[4608] = "", dmg[1024];
	int e, status = EXIT_OK;

	e = mg_sync(t, &a->o, &r, err, sizeof(err));
	if (!e && !a->accept && vr_damage_describe(t, in, dmg, sizeof(dmg))) {
		snprintf(err, sizeof(err), "the first pass found damage: nothing written");
		e = -EBADMSG;
	}
	if (!e && !a->sync_only)
		e = mg_merge(t, dst->tmp, &r, err, sizeof(err));
	if (!e && r.merged)
		e = write_report(dst->tmp, t, &r, err, sizeof(err));
	if (!e && r.merged)
		e = ex_out_commit(dst, err, sizeof(err));
	else if (a->out)
		ex_out_abort(dst);
	if (e) {
		fprintf(stderr, "vmscope merge: %s\n", err);
		status = EXIT_FAILURE_RUNTIME;
	}
	mg_report(stdout, t, &r, MG_REPORT_SPANS);
	if (!e && r.merged) {
		printf("merged trace: %s\n", a->out);
		if (mg_violations(&r))
			status = EXIT_FAILURE_RUNTIME;
	}
	if (input_account(t, in, !e && r.merged ? a->out : NULL, a->accept))
		status = EXIT_FAILURE_RUNTIME;
	mg_result_free(&r);
	return status;
}

/* The trace @in opened, refused if damaged (unless --accept-damage), merged. */
static int open_and_merge(const char *in, struct merge_args *a, struct ex_out *dst)
{
	char err[4608] = "", dmg[1024];
	struct vr_trace *t;
	int status;

	if (vr_trace_open(&t, in, err, sizeof(err))) {
		fprintf(stderr, "vmscope merge: %s\n", err);
		if (a->out)
			ex_out_abort(dst);
		return EXIT_FAILURE_RUNTIME;
	}
	if (vr_trace_problem(t))
		fprintf(stderr, "vmscope merge: warning: %s\n", vr_trace_problem(t));
	/* damage known before anything is written stops the merge there */
	if (!a->accept && vr_damage_describe(t, in, dmg, sizeof(dmg))) {
		fprintf(stderr, "vmscope merge: %s (--accept-damage to merge it)\n", dmg);
		if (a->out)
			ex_out_abort(dst);
		vr_trace_close(t);
		return EXIT_FAILURE_RUNTIME;
	}
	status = merge_trace(t, in, a, dst);
	vr_trace_close(t);
	return status;
}

/* The output checked and reserved, then the merge; the exit status. */
static int merge_to(const char *in, struct merge_args *a)
{
	char err[4608] = "";
	struct ex_out dst;

	if (a->out && ex_out_inside(a->out, in, err, sizeof(err))) {
		fprintf(stderr, "vmscope merge: %s: give -o a path outside it\n", err);
		return EXIT_USAGE;
	}
	/* the merged trace is written as .MERGED.partial-XXXXXX and renamed
	 * when complete; an existing MERGED is refused before any work */
	if (a->out && ex_out_reserve(&dst, a->out, merged_files, err, sizeof(err))) {
		fprintf(stderr, "vmscope merge: %s\n", err);
		return EXIT_FAILURE_RUNTIME;
	}
	return open_and_merge(in, a, &dst);
}

int cmd_merge(int argc, char **argv)
{
	struct merge_args a = { .o = { .spill_dir = getenv("TMPDIR") } };
	char *def = NULL;
	int rc;

	rc = args_run(&spec, &a, argc, argv);
	if (rc >= 0)
		return rc;
	if (a.show_path && optind == argc)
		return show(a.show_path, a.accept ? MR_ACCEPT_DAMAGE : 0);
	if (a.show_path || optind != argc - 1)
		return args_usage_error(usage);
	if (a.sync_only && a.out) {
		fprintf(stderr, "vmscope merge: --sync-report writes nothing: no -o with it "
			"(redirect its output to keep the report)\n");
		return EXIT_USAGE;
	}
	if (a.o.spill_dir && !*a.o.spill_dir)
		a.o.spill_dir = NULL;
	if (!a.out && !a.sync_only) {
		def = default_output(argv[optind]);
		if (!def)
			return EXIT_FAILURE_RUNTIME;
		a.out = def;
	}
	rc = merge_to(argv[optind], &a);
	free(def);
	return rc;
}
