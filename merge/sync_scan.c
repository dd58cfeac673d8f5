// SPDX-License-Identifier: GPL-2.0
/* Pass 1 of the merge: pairing and transforms (see merge.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "merge.h"
#include "scan.h"
#include "util_clock.h"


struct ssrc {
	struct vr_stream *s;
	struct vr_item it;	/* the current item, when have */
	bool have, guest;
	uint32_t vm, cpu;
};

struct scan {
	struct mg_scan b;	/* first: the callbacks' user pointer */
	struct ssrc *src;
	size_t n;
	uint32_t **gsrc;	/* [vm][cpu]: 1 + index of that guest stream */
	struct mh heap;		/* the host streams by time */
	const char *spill_dir;
	int spill_errno;	/* the first failure of a temporary file */
};

/* A temporary file for accepted exchanges, its name gone at once. */
static FILE *spill_open(struct scan *c)
{
	char path[4096];
	FILE *f = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/vmscope-merge-XXXXXX", c->spill_dir);
	fd = mkstemp(path);
	if (fd >= 0) {
		unlink(path);
		f = fdopen(fd, "w+");
		if (!f)
			close(fd);
	}
	if (!f && !c->spill_errno)
		c->spill_errno = errno;
	return f;
}

/* Write out what stdio still holds of each temporary file (rewind() in
 * pass 2 would flush it and forget a failure). */
static void spill_flush(struct scan *c)
{
	struct mg_result *r = c->b.r;

	for (uint32_t v = 0; r->acc && v < r->n_vms; v++)
		for (uint32_t k = 0; r->acc[v] && k < MP_MAX_CPUS; k++)
			if (r->acc[v][k] && (fflush(r->acc[v][k]) || ferror(r->acc[v][k])) &&
			    !c->spill_errno)
				c->spill_errno = errno ? errno : EIO;
}

/* The next item of @s; false at its end. */
static bool advance(struct ssrc *s)
{
	s->have = vr_stream_next(s->s, &s->it) == 1;
	return s->have;
}

static int pull(void *user, uint32_t vm, uint32_t cpu, struct mp_guest *out)
{
	struct scan *c = user;
	struct ssrc *s;
	uint32_t i;

	if (vm >= c->b.r->n_vms || cpu >= MP_MAX_CPUS || !c->gsrc[vm] ||
	    !(i = c->gsrc[vm][cpu]))
		return 0;
	s = &c->src[i - 1];
	for (; s->have; advance(s))
		if (mg_scan_guest_sync(&c->b, vm, &s->it, out)) {
			advance(s);
			return 1;
		}
	return 0;
}

/* Spill exchange @x of @vm with outcome @seg (mg_acc) to its CPU's file. */
static void spill(struct scan *c, uint32_t vm, const struct mp_exchange *x, int64_t seg)
{
	struct mg_result *r = c->b.r;
	struct mg_acc a = { .seq = x->x.seq, .token = x->x.token, .t1 = x->x.t1,
			    .t2 = x->x.t2, .t3 = x->x.t3, .t4 = x->x.t4, .seg = seg,
			    .h_tsc = x->h_tsc, .g_tsc = x->g_tsc, .off = x->off };
	FILE **f;

	if (x->guest_cpu >= MP_MAX_CPUS)
		return;
	if (!r->acc[vm]) {
		r->acc[vm] = calloc(MP_MAX_CPUS, sizeof(*r->acc[vm]));
		if (!r->acc[vm]) {
			r->err = -ENOMEM;
			return;
		}
	}
	f = &r->acc[vm][x->guest_cpu];
	if (!*f && !(*f = spill_open(c))) {
		r->err = -c->spill_errno;
		return;
	}
	if (fwrite(&a, sizeof(a), 1, *f) != 1) {
		if (!c->spill_errno)
			c->spill_errno = errno ? errno : EIO;
		r->err = -c->spill_errno;
	}
}

static void accept(void *user, uint32_t vm, const struct mp_exchange *x, int64_t seg)
{
	struct mg_result *r = ((struct scan *)user)->b.r;

	spill(user, vm, x, seg);
	r->n.acc_records++;
}

/* Drops that say something of the guest's clock go to pass 2 too, so
 * that clock.c and the causality check see them at their sync record. */
static void drop(void *user, uint32_t vm, const struct mp_exchange *x, int reason)
{
	struct mg_result *r = ((struct scan *)user)->b.r;

	if (reason == MT_DROP_SHORT || reason == VMSCOPE_SYNC_DROP_RTT) {
		r->spans.dropped_short++;
	} else if (reason == VMSCOPE_SYNC_DROP_OUTLIER ||
		   reason == VMSCOPE_SYNC_DROP_OVERFLOW) {
		r->spans.dropped_offline++;
	} else {
		return;
	}
	spill(user, vm, x, -1 - (int64_t)reason);
}

static int open_all(struct scan *c, char *err, size_t errlen)
{
	struct mg_result *r = c->b.r;

	c->n = vr_trace_nr_streams(c->b.t);
	c->src = calloc(c->n ? c->n : 1, sizeof(*c->src));
	c->heap.e = calloc(c->n ? c->n : 1, sizeof(*c->heap.e));
	c->gsrc = calloc(r->n_vms ? r->n_vms : 1, sizeof(*c->gsrc));
	if (!c->src || !c->heap.e || !c->gsrc)
		return -ENOMEM;
	for (size_t i = 0; i < c->n; i++) {
		struct ssrc *s = &c->src[i];
		const struct vr_stream_stats *st;
		int e = mg_scan_stream_open(&s->s, c->b.t, i, err, errlen);

		if (e)
			return e;
		r->n.streams++;
		if (!advance(s))
			continue;
		/* the origin is known once the first item is read */
		st = vr_stream_stats(s->s);
		s->cpu = st->origin.cpu;
		s->vm = st->origin.vm;
		if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_HOST) {
			c->heap.e[c->heap.n].key = s->it.ts;
			c->heap.e[c->heap.n++].idx = i;
		} else if (st->origin.side == VMSCOPE__TRACE__SIDE__SIDE_GUEST &&
			   s->vm < r->n_vms && s->cpu < MP_MAX_CPUS) {
			s->guest = true;
			if (mg_scan_guest_stream(c->gsrc, s->vm, s->cpu, i))
				return -ENOMEM;
		}
	}
	return 0;
}

static void scan_free(struct scan *c)
{
	for (size_t i = 0; c->src && i < c->n; i++)
		vr_stream_close(c->src[i].s);
	for (uint32_t v = 0; c->gsrc && v < c->b.r->n_vms; v++)
		free(c->gsrc[v]);
	free(c->gsrc);
	free(c->src);
	free(c->heap.e);
	mg_scan_free(&c->b);
}

int mg_sync(struct vr_trace *t, const struct mg_opts *o, struct mg_result *r,
	    char *err, size_t errlen)
{
	struct scan c = { .spill_dir = o->spill_dir ? o->spill_dir : "/tmp" };
	double t0 = util_mono_s();
	int e;

	if (errlen)
		err[0] = 0;
	e = mg_scan_init(&c.b, t, o, r, pull, accept, drop);
	r->spill_dir = c.spill_dir;
	if (!e) {
		r->acc = calloc(r->n_vms ? r->n_vms : 1, sizeof(*r->acc));
		e = r->acc ? 0 : -ENOMEM;
	}
	if (!e)
		e = open_all(&c, err, errlen);
	if (!e) {
		mh_build(&c.heap);
		while (c.heap.n && !r->err && !r->pair->err) {
			struct ssrc *h = &c.src[c.heap.e[0].idx];

			bool more;

			mg_scan_host(&c.b, h->cpu, &h->it);
			/* read on first: the key is the next record's time
			 * (argument order is unspecified; clang read the old
			 * one, which kept a stream on top past other streams'
			 * records: host records out of time order) */
			more = advance(h);
			mh_next(&c.heap, h->it.ts, !more);
		}
		mp_finish(r->pair);
		e = mt_finish(&r->mt);
		spill_flush(&c);
		if (!e)
			e = r->err ? r->err : r->pair->err;
		if (c.spill_errno) {
			snprintf(err, errlen, "a temporary file in %s (TMPDIR): %s", c.spill_dir,
				 strerror(c.spill_errno));
			e = e ? e : -c.spill_errno;
		}
		if (!e)
			mg_tsc_check(r);
		if (!e)
			e = mg_clock_scan(t, r);
	}
	scan_free(&c);
	r->time.sync = util_mono_s() - t0;
	if (e && !err[0])
		snprintf(err, errlen, "%s", strerror(-e));
	return e;
}

uint64_t mg_violations(const struct mg_result *r)
{
	return r->c.viol_t1 + r->c.viol_t4 + r->c.viol_before + r->c.viol_after;
}

void mg_result_free(struct mg_result *r)
{
	for (uint32_t v = 0; r->acc && v < r->n_vms; v++) {
		for (uint32_t c = 0; r->acc[v] && c < MP_MAX_CPUS; c++)
			if (r->acc[v][c])
				fclose(r->acc[v][c]);
		free(r->acc[v]);
	}
	free(r->acc);
	mt_free(&r->mt);
	if (r->pair)
		mp_free(r->pair);
	free(r->pair);
	free(r->vm_exchanges);
	free(r->vm_paired);
	free(r->tsc);
	free(r->spans.s);
	free(r->spans.by_stream);
	memset(r, 0, sizeof(*r));
}
