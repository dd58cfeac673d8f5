/*
 * `vmscope dump TRACE`: every event of every stream as text, through the
 * format strings stored in the trace (reader/), with the losses, sequence
 * gaps, unusable records and how each file ended (clean, torn tail,
 * corrupt). The first consumer of the reader library.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "decode.h"
#include "format_prog.h"
#include "reader.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope dump [--summary] [--stream NAME] [--accept-damage] TRACE\n\n"
		"Print every event of the trace folder TRACE, one stream file after\n"
		"the other, each line: time (s, trace clock), origin, event, fields as\n"
		"the event's stored format string says. Also printed, as '--' lines:\n"
		"events lost (ring buffer counters, loss records), skipped sub-buffer\n"
		"sequence numbers, records that cannot be decoded, how each file\n"
		"ends (clean, torn tail after a crash, corrupt), and whether the files\n"
		"are those the trace's summary lists (frames, bytes). Ends with totals.\n\n"
		"  --summary        no event lines: per-stream and per-event counts only\n"
		"  --stream NAME    only the stream file NAME (e.g. host-cpu0.vtf)\n"
		"  --accept-damage  print a damaged trace (also a merged trace made from\n"
		"                   damaged input) and exit 0; the output says it is damaged\n\n"
		"Exit status: 0 when every file reads to a clean end, or to a torn tail in\n"
		"a trace without a summary (what a killed recorder leaves); 1 when\n"
		"anything is damaged (corrupt, torn where the summary says it was closed,\n"
		"undecodable, missing, unlisted, not as the summary lists it, metadata\n"
		"unreadable, made from damaged input), TRACE is not a trace, or another\n"
		"failure; 2 on a usage error.\n");
}

#define MAX_TOTALS 256

struct totals {
	uint64_t events, undecodable, bad, lost, gaps, streams;
	uint64_t clean, torn, corrupt, io;
	/* records per event, summed over the streams of one side */
	struct {
		char who[16];
		const char *name;	/* in the trace's tables, live until close */
		uint64_t n;
	} ev[MAX_TOTALS];
	unsigned int nev;
};

static void add_event_total(struct totals *tot, const char *who, const char *name,
			    uint64_t n)
{
	unsigned int i;

	for (i = 0; i < tot->nev; i++)
		if (!strcmp(tot->ev[i].who, who) && !strcmp(tot->ev[i].name, name))
			break;
	if (i == tot->nev) {
		if (tot->nev == MAX_TOTALS)
			return;
		snprintf(tot->ev[i].who, sizeof(tot->ev[i].who), "%s", who);
		tot->ev[i].name = name;
		tot->ev[i].n = 0;
		tot->nev++;
	}
	tot->ev[i].n += n;
}

static void origin_str(const Vmscope__Trace__Origin *o, char *buf, size_t len)
{
	if (o->side == VMSCOPE__TRACE__SIDE__SIDE_GUEST)
		snprintf(buf, len, "guest%u cpu%u", o->vm, o->cpu);
	else if (o->side == VMSCOPE__TRACE__SIDE__SIDE_HOST)
		snprintf(buf, len, "host cpu%u", o->cpu);
	else
		snprintf(buf, len, "? cpu%u", o->cpu);
}

static const char *loss_kind_str(int k)
{
	switch (k) {
	case VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD: return "ring buffer full";
	case VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_OVERWRITE: return "overwritten";
	case VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_SEQ_GAP: return "sequence gap";
	case VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_WRITER: return "collector could not write";
	case VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_STREAM: return "stream broken";
	case VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_TOO_BIG: return "record too big";
	default: return "loss record";
	}
}

static const Vmscope__Trace__ClockDesc *stream_clock(const struct vr_trace *t,
						     const Vmscope__Trace__Origin *o)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);

	if (!s)
		return NULL;
	if (o->side == VMSCOPE__TRACE__SIDE__SIDE_GUEST)
		return o->vm < s->n_vms ? s->vms[o->vm]->guest_clock : NULL;
	return s->host_clock;
}

static void print_session(const struct vr_trace *t, const char *path)
{
	const Vmscope__Trace__SessionMetadata *s = vr_trace_session(t);
	const char *p = vr_trace_problem(t);

	printf("trace %s\n", path);
	if (s) {
		printf("session ");
		for (size_t i = 0; i < s->session_id.len; i++)
			printf("%02x", s->session_id.data[i]);
		if (s->host && s->host->kernel)
			printf(" host %s %s %s", s->host->hostname, s->host->kernel->release,
			       s->host->vmscope_version);
		printf(" start %" PRIu64 ".%09" PRIu64 " (realtime)",
		       s->start_realtime_ns / 1000000000, s->start_realtime_ns % 1000000000);
		if (s->stop_realtime_ns)
			printf(" duration %.3f s",
			       (double)(s->stop_realtime_ns - s->start_realtime_ns) / 1e9);
		printf("\n");
		for (size_t i = 0; i < s->n_vms; i++) {
			const Vmscope__Trace__VmInfo *v = s->vms[i];

			printf("vm %zu: %s pid %d cid %u vcpus", i, v->name, v->qemu_pid,
			       v->vsock_cid);
			for (size_t k = 0; k < v->n_vcpus; k++)
				printf(" %u:%d", v->vcpus[k]->vcpu, v->vcpus[k]->tid);
			printf("%s\n", v->agent_connected ? " (agent connected)" : "");
			/* KVM's TSC relation as the recorder read it */
			for (size_t k = 0; k < v->n_tsc; k++)
				printf("vm %zu: vcpu %u tsc offset %" PRId64 " ratio %" PRIu64
				       "/2^%u\n", i, v->tsc[k]->vcpu_id, (int64_t)v->tsc[k]->offset,
				       v->tsc[k]->ratio, v->tsc[k]->frac_bits);
		}
		if (s->snapshot) {
			const Vmscope__Trace__SnapshotWindow *w = s->snapshot;

			/* a window: its streams begin with a cut, not a loss */
			printf("snapshot window of %s: host %" PRIu64 " .. %" PRIu64 "%s; trigger: "
			       "%s %s of %" PRIu64 " ns > %" PRIu64 " ns on vCPU %u at host %"
			       PRIu64 " (guest task %s, host task %s)\n", w->recording,
			       w->begin_ts, w->end_ts, w->ended_early ? " (the recording ended "
			       "first)" : "", w->kind, w->what, w->dur_ns, w->threshold_ns, w->vcpu,
			       w->trigger_ts, w->task, w->host_task);
			if (w->guest_incomplete || w->guest_by_arrival)
				printf("snapshot window: %u guest CPU streams incomplete (their "
				       "records after the window had not come: it may lack their "
				       "last ones), %u placed by arrival (no clock alignment: "
				       "records near its ends may be off)\n", w->guest_incomplete,
				       w->guest_by_arrival);
		}
	}
	if (p)
		printf("-- metadata: %s\n", p);
	if (!vr_trace_summary(t))
		printf("-- no summary frame: the recording did not stop cleanly\n");
}

/*
 * Event lines are built in one large buffer and written in big pieces,
 * each event's text through its descriptor's compiled format: a printf
 * per line and vmscope_format_event()'s parsing and snprintf per field were
 * nearly all of the dump's time (bench/README.md). Other lines are rare and
 * keep printf; the buffer is flushed before each, so the order holds.
 */
#define EVENT_TEXT_MAX	512	/* an event's text is cut to 511 bytes, as it always was */
#define LINE_MAX_LEN	(20 + 1 + 9 + 1 + 48 + 1 + VMSCOPE_NAME_LEN + 2 + EVENT_TEXT_MAX + 1)

struct line_out {
	size_t len;
	char buf[1 << 18];
};

static void out_flush(struct line_out *o)
{
	if (o->len)
		fwrite(o->buf, 1, o->len, stdout);	/* errors: ferror(stdout) at the end */
	o->len = 0;
}

/* A descriptor's compiled format and name length, made at its first event. */
struct event_printer {
	struct vmscope_fmt_prog prog;
	size_t name_len;
};

static void printer_init(struct event_printer *p, const struct vmscope_event_desc *d)
{
	vmscope_fmt_compile(&p->prog, d);
	p->name_len = strnlen(d->name, sizeof(d->name));
}

/* The printers of one stream's event table, one per descriptor. */
struct printers {
	const struct vr_events *ev;
	struct event_printer *p;	/* [ev->n], NULL when out of memory */
	struct event_printer spare;
};

static const struct event_printer *printer_for(struct printers *t, const struct vr_events *ev,
					       const struct vmscope_event_desc *d)
{
	if (ev && t->ev != ev) {
		free(t->p);
		t->p = calloc(ev->n ? ev->n : 1, sizeof(*t->p));
		t->ev = ev;
	}
	if (ev && t->p && d >= ev->desc && d < ev->desc + ev->n) {
		struct event_printer *p = &t->p[d - ev->desc];

		if (p->prog.desc != d)
			printer_init(p, d);
		return p;
	}
	printer_init(&t->spare, d);	/* no memory: compiled for this event alone */
	return &t->spare;
}

/* "SECONDS.NANOSECONDS ORIGIN NAME: TEXT\n" */
static void put_event_line(struct line_out *o, uint64_t ns, const char *org, size_t org_len,
			   const struct event_printer *p, const struct vr_item *it)
{
	char *s;
	int n;

	if (sizeof(o->buf) - o->len < LINE_MAX_LEN)
		out_flush(o);
	s = o->buf + o->len;
	s = vmscope_fmt_dec(s, ns / 1000000000, 1);
	*s++ = '.';
	s = vmscope_fmt_dec(s, ns % 1000000000, 9);
	*s++ = ' ';
	memcpy(s, org, org_len);
	s += org_len;
	*s++ = ' ';
	memcpy(s, it->desc->name, p->name_len);
	s += p->name_len;
	*s++ = ':';
	*s++ = ' ';
	n = vmscope_fmt_run(&p->prog, it->payload, it->size, s, EVENT_TEXT_MAX);
	/* -1 cannot happen: the reader hands out only checked descriptors
	 * with payloads long enough */
	size_t text = n < 0 ? 0 : n < EVENT_TEXT_MAX ? (size_t)n : EVENT_TEXT_MAX - 1;
	if (!p->prog.fast || p->prog.may_nul)	/* a %c of 0 ends the text, as %s did */
		text = strnlen(s, text);
	s += text;
	*s++ = '\n';
	o->len = (size_t)(s - o->buf);
}

/* One stream: its events (unless summary), then its end. */
static int dump_stream(struct vr_trace *t, size_t i, int summary, struct totals *tot)
{
	const char *name = vr_trace_stream_name(t, i);
	const Vmscope__Trace__ClockDesc *clk = NULL;
	const struct vr_stream_stats *st;
	struct vr_stream *s;
	struct vr_item it;
	static struct line_out out;
	struct printers printers = { 0 };
	char org[48] = "";
	size_t org_len = 0;
	bool started = false;
	int e = vr_stream_open(&s, t, i);

	if (e) {
		printf("stream %s: cannot open: %s\n", name, vr_strerror(e));
		tot->io++;
		return -1;
	}
	st = vr_stream_stats(s);
	printf("stream %s\n", name);
	while (vr_stream_next(s, &it) == 1) {
		if (!started) {	/* the header (if any) has been read by now */
			origin_str(&st->origin, org, sizeof(org));
			org_len = strlen(org);
			clk = stream_clock(t, &st->origin);
			started = true;
		}
		uint64_t ns = vr_clock_ns(clk, it.ts);

		if (it.kind == VR_EVENT) {
			if (!summary)
				put_event_line(&out, ns, org, org_len,
					       printer_for(&printers, st->events_table, it.desc),
					       &it);
			continue;
		}
		out_flush(&out);
		switch (it.kind) {
		case VR_EVENT:	/* above */
			break;
		case VR_LOSS:
			printf("-- %" PRIu64 ".%09" PRIu64 " %s lost %" PRIu64 " events (%s%s%s)\n",
			       ns / 1000000000, ns % 1000000000, org, it.events,
			       it.loss_kind ? loss_kind_str(it.loss_kind) : "ring buffer",
			       it.text[0] && it.loss_kind ? ": " : "",
			       it.loss_kind ? it.text : "");
			break;
		case VR_GAP:
			printf("-- %" PRIu64 ".%09" PRIu64 " %s sub-buffers %" PRIu64 "..%" PRIu64
			       " missing\n", ns / 1000000000, ns % 1000000000, org,
			       it.first, it.last);
			break;
		case VR_BAD:
			printf("-- %s bad (offset %" PRIu64 "): %s\n", org, it.offset, it.text);
			break;
		}
	}
	out_flush(&out);
	free(printers.p);
	if (st->events_table) {
		char who[16];

		if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST)
			snprintf(who, sizeof(who), "guest%u", st->origin.vm);
		else
			snprintf(who, sizeof(who), "host");
		for (unsigned int k = 0; k < st->events_table->n; k++) {
			if (!st->counts[k])
				continue;
			if (summary)
				printf("  %-24s %" PRIu64 "\n",
				       st->events_table->desc[k].name, st->counts[k]);
			add_event_total(tot, who, st->events_table->desc[k].name,
					st->counts[k]);
		}
	}
	const struct tf_end_info *end = &st->end;
	/* a file without a single frame (not even its header) is torn */
	bool empty = end->kind == TF_END_CLEAN && !end->frames;

	printf("end of %s: %s after %" PRIu64 " frames, %" PRIu64 " chunks, %" PRIu64
	       " events, %" PRIu64 " undecodable, %" PRIu64 " lost, %" PRIu64
	       " sub-buffers missing%s", name, empty ? "empty" : tf_end_str(end->kind),
	       end->frames,
	       st->chunks, st->events, st->undecodable, st->lost_events, st->gap_subbufs,
	       st->has_index ? ", indexed" : "");
	if (end->kind != TF_END_CLEAN)
		printf(": at offset %" PRIu64 " of %" PRIu64 ": %s", end->offset, end->size,
		       end->reason);
	printf("\n");
	if (vr_damage_count(vr_stream_damage(s)))
		printf("-- damaged: %s\n", vr_stream_damage(s)->first);
	tot->streams++;
	tot->events += st->events;
	tot->undecodable += st->undecodable;
	tot->bad += st->bad;
	tot->lost += st->lost_events;
	tot->gaps += st->gap_subbufs;
	tot->clean += end->kind == TF_END_CLEAN && !empty;
	tot->torn += end->kind == TF_END_TORN || empty;
	tot->corrupt += end->kind == TF_END_CORRUPT;
	tot->io += end->kind == TF_END_IO;
	vr_stream_close(s);
	return 0;
}

struct dump_args {
	const char *only;	/* --stream */
	bool summary, accept;
};

static const struct args_opt opts[] = {
	ARGS_FLAG("summary", 0, struct dump_args, summary),
	ARGS_STR("stream", 0, struct dump_args, only),
	ARGS_FLAG("accept-damage", 0, struct dump_args, accept),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope dump", usage, opts, 1 };

int cmd_dump(int argc, char **argv)
{
	static char outbuf[1 << 20];
	struct dump_args a = { 0 };
	static struct totals tot;
	struct vr_trace *t;
	char err[512], dmg[1024];
	int found = 0, damaged, rc;

	rc = args_run(&spec, &a, argc, argv);
	if (rc >= 0)
		return rc;
	if (vr_trace_open(&t, argv[optind], err, sizeof(err))) {
		fprintf(stderr, "vmscope dump: %s\n", err);
		return EXIT_FAILURE_RUNTIME;
	}
	/* made from damaged input: refused before anything is printed */
	if (!a.accept && vr_trace_damage(t)->marked) {
		vr_damage_describe(t, argv[optind], dmg, sizeof(dmg));
		fprintf(stderr, "vmscope dump: %s (--accept-damage to print it)\n", dmg);
		vr_trace_close(t);
		return EXIT_FAILURE_RUNTIME;
	}
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	print_session(t, argv[optind]);
	for (size_t i = 0; i < vr_trace_nr_streams(t); i++) {
		if (a.only && strcmp(a.only, vr_trace_stream_name(t, i)))
			continue;
		found = 1;
		dump_stream(t, i, a.summary, &tot);
	}
	for (unsigned int k = 0; k < tot.nev; k++)
		printf("events %s %s %" PRIu64 "\n", tot.ev[k].who, tot.ev[k].name,
		       tot.ev[k].n);
	printf("total: %" PRIu64 " streams (%" PRIu64 " clean, %" PRIu64 " torn, %" PRIu64
	       " corrupt, %" PRIu64 " unreadable), %" PRIu64 " events, %" PRIu64
	       " undecodable, %" PRIu64 " bad, %" PRIu64 " lost, %" PRIu64
	       " sub-buffers missing\n", tot.streams, tot.clean, tot.torn, tot.corrupt,
	       tot.io, tot.events, tot.undecodable, tot.bad, tot.lost, tot.gaps);
	damaged = vr_damage_describe(t, argv[optind], dmg, sizeof(dmg));
	if (damaged)
		printf("-- damaged: %s\n", dmg);
	vr_trace_close(t);	/* a failed write to stdout: main.c */
	if (a.only && !found) {
		fprintf(stderr, "vmscope dump: no stream %s in the trace\n", a.only);
		return EXIT_FAILURE_RUNTIME;
	}
	if (damaged && !a.accept) {
		fprintf(stderr, "vmscope dump: %s\n", dmg);
		return EXIT_FAILURE_RUNTIME;
	}
	return EXIT_OK;
}
