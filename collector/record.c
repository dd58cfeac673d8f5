/* SPDX-License-Identifier: GPL-2.0 */
/* One recording's run (setup, the main thread's loop, the stop): see
 * record.h for the threads and the bounds, rec_int.h for the files. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <urcu/wfcqueue.h>

#include "file.pb-c.h"
#include "rec_guests.h"
#include "rec_int.h"
#include "reserve.h"
#include "record.h"
#include "tracefmt.h"
#include "util_clock.h"

/* ---- the run ---- */

static void status_line(struct rec *r, double t0, uint64_t *prev_ev, double *prev_t)
{
	double now = util_mono_s();
	uint64_t ev = __atomic_load_n(&r->events, __ATOMIC_RELAXED);
	uint64_t by = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
	uint64_t lost = 0;

	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		struct hb_losses l;

		hb_losses(r->h, i, &l);
		lost += l.full + l.too_big + l.overwritten;
	}
	fprintf(stderr, "\rvmscope record: %.0f s, %.0f events/s, %" PRIu64 " events, "
		"%.1f MiB, lost %" PRIu64 ", guests %u   ", now - t0,
		(double)(ev - *prev_ev) / (now - *prev_t), ev, (double)by / 1048576.0, lost,
		rg_connected(r, -1));
	*prev_ev = ev;
	*prev_t = now;
}




/*
 * What the module handed this session, by event: each record is in the
 * host streams or counted lost there, so the trace can be checked against
 * it whatever other sessions recorded (the module's matched is shared).
 */
static void print_handed(const struct hb *h)
{
	uint64_t total = 0;

	fprintf(stderr, "vmscope record: the module handed this session");
	for (unsigned int id = 0; id < h->nev; id++) {
		if (!h->handed[id])
			continue;
		fprintf(stderr, " %s %" PRIu64, h->descs[id].name, h->handed[id]);
		total += h->handed[id];
	}
	fprintf(stderr, " (total %" PRIu64 ")\n", total);
}

/*
 * The queue's bound (what the rings hold, in slots of the largest
 * sub-buffer: a keep channel's are smaller), its node pool, the stream
 * tables and the writer's eventfd. 0, or -1 (said).
 */
static int prepare(struct rec *r)
{
	const struct hb *h = r->h;
	unsigned int sb_shift = 0;
	uint64_t ring_bytes = 0;

	for (unsigned int k = 0; k < h->cfg.nr_chans; k++) {
		ring_bytes += h->cfg.chan[k].cpu_bytes * h->ncpu;
		if (h->cfg.chan[k].subbuf_shift > sb_shift)
			sb_shift = h->cfg.chan[k].subbuf_shift;
	}
	r->qcap = r->o->max_queue ? r->o->max_queue : ring_bytes;
	if (r->qcap < 2 * ((1ull << sb_shift) + sizeof(struct node)))
		r->qcap = 2 * ((1ull << sb_shift) + sizeof(struct node));
	/* as many slots as the bound holds, resident from now, and a few
	 * for nodes that readers hold between taking and queueing them */
	if (node_pool_init(&r->pool, (size_t)1 << sb_shift, (r->qcap >> sb_shift) + 8))
		goto oom;
	r->sw = calloc(h->nbuf ? h->nbuf : 1, sizeof(*r->sw));
	r->gsw = calloc(r->o->nvms + 1, sizeof(*r->gsw));
	for (unsigned int i = 0; r->gsw && i < r->o->nvms; i++)
		if (!(r->gsw[i] = calloc(REC_GUEST_CPUS, sizeof(**r->gsw))))
			goto oom;
	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->sw && r->gsw && r->efd >= 0)
		return 0;
oom:
	fprintf(stderr, "vmscope record: out of memory or eventfd failed\n");
	return -1;
}

/* The metadata file with its first SessionMetadata, synced: a killed
 * recorder leaves readable metadata. 0, or -1 (said). */
static int open_meta(struct rec *r)
{
	int e;

	r->start_rt = util_realtime_ns();
	e = tf_writer_create(&r->meta, r->dirfd, TF_TRACE_METADATA, NULL);
	if (!e)
		e = rec_write_header(r, r->meta, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA,
				     NULL);
	if (!e)
		e = rec_write_session(r, 0, 0, 0);
	if (!e)
		e = tf_writer_sync(r->meta);
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, TF_TRACE_METADATA,
			strerror(-e));
		return -1;
	}
	e = rec_reserve_hold(&r->reserve, r->dirfd, rec_final_room(r));
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: cannot hold back room for the "
			"trace's final frames: %s\n", r->o->path, REC_RESERVE_NAME, strerror(-e));
		return -1;
	}
	return 0;
}

/*
 * Our session's probing; if we die, it ends with our fd. RESET zeroes the
 * module-wide counters, so that `vmscope stats` afterwards shows this
 * recording's: refused (EBUSY) while another session probes, and then the
 * counters are shared, not ours. 0, or -1 (said).
 */
static int enable_probing(struct rec *r)
{
	struct vmscope_probe_ctl ctl = r->o->ctl;
	int e;

	ctl.flags |= VMSCOPE_CTL_ENABLE | VMSCOPE_CTL_RESET | VMSCOPE_CTL_UNTIL_CLOSE;
	e = hb_try_probes(r->h, &ctl);
	if (!e)
		return 0;
	if (e != EBUSY) {
		fprintf(stderr, "vmscope record: enabling probing: %s\n", strerror(e));
		return -1;
	}
	ctl.flags &= ~VMSCOPE_CTL_RESET;
	fprintf(stderr, "vmscope record: another session is recording: the "
		"module's counters (`vmscope stats`) are not reset and count both\n");
	return hb_probes(r->h, &ctl) ? -1 : 0;
}

static void say_start(const struct rec *r)
{
	const struct hb *h = r->h;

	fprintf(stderr, "vmscope record: recording to %s: %u CPUs, ", r->o->path,
		h->cfg.nr_cpu_ids);
	for (unsigned int k = 0; k < h->cfg.nr_chans; k++) {
		const struct vmscope_chan_cfg *c = &h->cfg.chan[k];
		const char *names[VMSCOPE_MAX_EVENTS];
		unsigned int n = k ? hb_event_names(h, c->events, names) : 0;

		fprintf(stderr, "%s%u x %u KiB sub-buffers, %s", k ? "; kept apart: " : "",
			1u << c->nr_subbuf_shift, (1u << c->subbuf_shift) / 1024,
			hb_mode_name(c->mode));
		for (unsigned int i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? "," : ", for ", names[i]);
	}
	fprintf(stderr, "%s\n", r->o->status ? "; Ctrl-C stops" : "");
}

/* The main thread while recording: until *@stop, an error or the duration. */
static void record_loop(struct rec *r, volatile sig_atomic_t *stop)
{
	const struct rec_opts *o = r->o;
	double t0, prev_t, last_status = 0, last_rescan;
	uint64_t prev_ev = 0;
	int e;

	t0 = prev_t = last_rescan = util_mono_s();
	while (!*stop && !__atomic_load_n(&r->write_err, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&r->tap_stop, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&r->read_err, __ATOMIC_RELAXED) &&
	       (o->duration_s <= 0 || util_mono_s() - t0 < o->duration_s)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);	/* EINTR on a signal: fine */
		/* a guest said hello: its kernel, clock and event table into
		 * a new SessionMetadata (a reader takes the last whole one) */
		if (__atomic_exchange_n(&r->meta_dirty, 0, __ATOMIC_ACQ_REL)) {
			e = rec_write_session(r, 0, 0, 0);
			if (!e)
				e = tf_writer_flush(r->meta);
			if (e)
				rec_set_err(&r->write_err, -e);
		}
		/* the final frames grow with the session and the streams */
		e = rec_reserve_hold(&r->reserve, r->dirfd, rec_final_room(r));
		if (e)
			rec_set_err(&r->write_err, -e);
		if (util_mono_s() - last_rescan >= 1.0) {
			rec_rescan_vcpus(r);
			last_rescan = util_mono_s();
		}
		if (o->status && util_mono_s() - last_status >= 1.0) {
			status_line(r, t0, &prev_ev, &prev_t);
			last_status = util_mono_s();
		}
	}
	if (o->status)
		fprintf(stderr, "\n");
}

/* Every stream finished and closed; the host streams' first and last
 * times and what every stream lost. 0, or 1 (said). */
static int close_streams(struct rec *r, uint64_t *first_ts, uint64_t *last_ts, uint64_t *lost)
{
	struct stream_w **sv = r->sw ? calloc(rec_max_streams(r), sizeof(*sv)) : NULL;
	int rc = 0;

	for (unsigned int i = 0, n = sv ? rec_all_streams(r, sv) : 0; i < n; i++) {
		struct stream_w *s = sv[i];
		struct tf_writer_stats st;
		int e;

		if (!s->w)
			continue;
		e = rec_finish_stream(r, s, lost);
		tf_writer_get_stats(s->w, &st);
		s->frames_end = st.frames_held;
		s->bytes_end = st.offset;
		s->closed_ok = !e;
		if (s->chunks && s->first_ts < *first_ts && !s->guest)
			*first_ts = s->first_ts;
		if (s->last_ts > *last_ts && !s->guest)
			*last_ts = s->last_ts;
		e = tf_writer_close(s->w) ? : e;
		s->w = NULL;
		if (e && !r->write_err) {
			fprintf(stderr, "vmscope record: closing a %s stream (cpu %u): %s\n",
				s->guest ? "guest" : "host", s->cpu, strerror(-e));
			rc = 1;
		}
		free(s->idx_off);
		free(s->idx_b);
		free(s->idx_e);
	}
	free(sv);
	return rc;
}

/*
 * The final SessionMetadata, Statistics and Summary, in the room the
 * streams left (reserve.h); a metadata write that a full disk refused is
 * resumed there. 0, or 1 (said).
 */
static int close_meta(struct rec *r, uint64_t first_ts, uint64_t last_ts)
{
	int e, rc = 0;

	e = rec_reserve_release(&r->reserve);
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, REC_RESERVE_NAME,
			strerror(-e));
		rc = 1;
	}
	if (!r->meta)
		return rc;
	if (tf_writer_error(r->meta))
		tf_writer_resume(r->meta);
	e = rec_write_session(r, r->stop_rt, first_ts == UINT64_MAX ? 0 : first_ts, last_ts);
	if (!e)
		e = rec_write_final(r, last_ts);
	e = tf_writer_close(r->meta) ? : e;
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, TF_TRACE_METADATA,
			strerror(-e));
		return 1;
	}
	return rc;
}

/* The collector's own high-water mark (the kernel's VmHWM), with the stop
 * and the final frames in it: its memory bound shows. */
static void say_end(const struct rec *r, uint64_t lost)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		ru.ru_maxrss = 0;
	fprintf(stderr, "vmscope record: %" PRIu64 " events, %.1f MiB, lost %" PRIu64
		", collector stalls %" PRIu64 ", %.1f s, peak RSS %ld KiB -> %s\n",
		r->events, (double)r->bytes / 1048576.0, lost, r->stalls,
		(double)(r->stop_rt - r->start_rt) / 1e9, ru.ru_maxrss, r->o->path);
}

static void free_rec(struct rec *r)
{
	for (unsigned int i = 0; r->gsw && i < r->o->nvms; i++)
		free(r->gsw[i]);
	free(r->gsw);
	rg_free(r);
	free(r->sw);
	free(r->tsc);
	free(r->rt);
	node_pool_fini(&r->pool);
	if (r->efd >= 0)
		close(r->efd);
	close(r->dirfd);
	free(r);
}

int rec_run(struct hb *h, const struct rec_opts *o, volatile sig_atomic_t *stop)
{
	struct rec *r = calloc(1, sizeof(*r));
	uint64_t first_ts = UINT64_MAX, last_ts = 0, lost = 0;
	bool started = false;
	int e, rc = 1;

	if (!r) {
		fprintf(stderr, "vmscope record: out of memory\n");
		return 1;
	}
	/*
	 * No transparent huge pages for the recorder: where THP is "always"
	 * (Debian's default), the kernel backs a thread's 8 MiB stack or an
	 * arena with a 2 MiB page at a fault or whenever khugepaged gets to
	 * it, so RSS jumped by ~2 MiB at random times (seen in the test host:
	 * AnonHugePages 2048 kB in three thread stacks, `collector-rss`), and
	 * a reader thread per host CPU could cost 2 MiB each for a few KiB of
	 * stack. Before any thread or buffer exists; ignored where
	 * unsupported.
	 */
	(void)prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	r->h = h;
	r->o = o;
	memcpy(r->vms, o->vms, o->nvms * sizeof(*o->vms));
	r->dirfd = r->efd = -1;
	r->reserve.dirfd = -1;
	cds_wfcq_init(&r->qh, &r->qt);
	e = tf_trace_create(o->path, &r->dirfd);
	if (e) {
		fprintf(stderr, "vmscope record: %s: %s%s\n", o->path, strerror(-e),
			e == -EEXIST ? " (a trace is never overwritten: choose another -o)" : "");
		free(r);
		return 1;
	}
	if (getrandom(r->session_id, sizeof(r->session_id), 0) != sizeof(r->session_id))
		memset(r->session_id, 0x5a, sizeof(r->session_id));
	/* `stats --start` leaves the module's shared probing on, which counts
	 * into the same module-wide counters as our session: switch it off
	 * first (measured, before sessions had their own filters: 2
	 * sched_switch records of a killed --all recorder leaked into an
	 * --events kvm trace). While another session probes, the module
	 * refuses this (EBUSY) and shared probing is off anyway. */
	struct vmscope_probe_ctl off = { 0 };

	e = hb_try_probes(h, &off);
	if (e && e != EBUSY) {
		fprintf(stderr, "vmscope record: disabling shared probing: %s\n",
			strerror(e));
		goto out_rmdir;
	}
	if (hb_start(h))
		goto out_rmdir;
	started = true;
	if (prepare(r) || open_meta(r) || (!o->no_streams && rec_open_streams(r)) ||
	    rec_start_threads(r) || rg_start(r, o->guest_port) || enable_probing(r))
		goto out;
	rec_read_tsc(r);
	if (!o->no_streams)
		say_start(r);
	if (o->tap && o->tap_started)
		o->tap_started(o->tap_ctx, h);
	record_loop(r, stop);
	rc = 0;
out:
	/* probes off and the session stopped (flushing every CPU), then the
	 * readers take the rest and the writer writes it */
	if (started && hb_stop(h))
		rc = 1;
	rec_stop_threads(r);
	r->stop_rt = util_realtime_ns();
	if (r->write_err) {
		fprintf(stderr, "vmscope record: writing the trace: %s; recording stopped, "
			"what was written stays readable\n", strerror(r->write_err));
		rc = 1;
	}
	if (r->read_err) {
		fprintf(stderr, "vmscope record: reading the ring buffers failed: %s\n",
			strerror(r->read_err));
		rc = 1;
	}
	rc |= close_streams(r, &first_ts, &last_ts, &lost);
	rc |= close_meta(r, first_ts, last_ts);
	if (started && h->have_handed)
		print_handed(h);
	if (started && !o->no_streams)
		say_end(r, lost);
	free_rec(r);
	return rc;
out_rmdir:
	/* nothing recorded: do not leave an empty trace behind */
	close(r->dirfd);
	rmdir(o->path);
	free(r);
	return 1;
}
