// SPDX-License-Identifier: GPL-2.0
/* The online pipeline over a merged or raw trace: see pipe.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "out.h"
#include "pipe_int.h"


static void fail(struct pipe *p, int e, const char *why)
{
	if (p->error)
		return;
	p->error = e;
	snprintf(p->why, sizeof(p->why), "%s", why);
}

/* The walk's hooks: the windows' and the sched pass's. */
static void on_exit_done(void *ctx, const struct an_exit *e)
{
	struct pipe *p = ctx;

	ol_window_exit(&p->iv, e);
	ol_window_exit(&p->cum, e);
	p->sh.exit(p->sh.ctx, e);
}

static void on_off(void *ctx, const struct an_off *o)
{
	struct pipe *p = ctx;

	ol_window_off(&p->iv, o);
	ol_window_off(&p->cum, o);
}

static void on_guest_switch(void *ctx, uint32_t vm, const struct an_switch *s, int32_t prev,
			    int32_t next)
{
	struct pipe *p = ctx;

	p->sh.guest_switch(p->sh.ctx, vm, s, prev, next);
}

static void on_guest_wakeup(void *ctx, uint32_t vm, uint64_t ts, int32_t task, int32_t cpu)
{
	struct pipe *p = ctx;

	p->sh.guest_wakeup(p->sh.ctx, vm, ts, task, cpu);
}

static void on_host_switch(void *ctx, const struct an_switch *s, int32_t prev, int32_t next)
{
	struct pipe *p = ctx;

	p->sh.host_switch(p->sh.ctx, s, prev, next);
}

static void on_guest_sync(void *ctx, uint32_t vm, uint64_t ts, uint32_t cpu, bool has_steal,
			  uint64_t steal_ns)
{
	struct pipe *p = ctx;

	p->sh.guest_sync(p->sh.ctx, vm, ts, cpu, has_steal, steal_ns);
}

static void on_loss(void *ctx, uint64_t ts)
{
	struct pipe *p = ctx;

	p->sh.loss(p->sh.ctx, ts);
}

/* Hand the interval ending at @end to the view and start the next one. */
static void close_interval(struct pipe *p, uint64_t end, bool final)
{
	struct ol_report r = { .w = p->w, .iv = &p->iv, .cum = &p->cum, .index = p->index,
			       .final = final, .sync = p->sync, .n_sync = p->n_sync };
	int e;

	if (p->error || p->quit)
		return;
	if (ol_snap_take(&p->now, p->w, &p->sched) ||
	    ol_snap_diff(&p->iv.t, &p->now, &p->base) ||
	    ol_snap_take(&p->cum.t, p->w, &p->sched)) {
		fail(p, -ENOMEM, "out of memory");
		return;
	}
	ol_snap_swap(&p->base, &p->now);
	ol_window_close(&p->iv, end);
	p->cum.end = end;	/* it goes on: its heaps stay heaps */
	an_exits_sort(&p->iv.by_reason, p->o->sort);
	an_exits_sort(&p->iv.by_task, p->o->sort);
	an_exits_sort(&p->cum.by_reason, p->o->sort);
	an_exits_sort(&p->cum.by_task, p->o->sort);
	e = p->o->view(p->o->view_ctx, &r);
	if (e == OL_VIEW_QUIT) {
		p->quit = true;
		an_walk_stop(p->w);
		return;
	}
	if (e) {
		fail(p, e, "the view failed");
		return;
	}
	p->index++;
	ol_window_free(&p->iv);
	if (ol_window_init(&p->iv, end, p->o->top))
		fail(p, -ENOMEM, "out of memory");
}

const char *const ol_sync_names[] = { "bounded", "no agent", "no sync yet",
					"not shown in a replay" };

enum ol_sync_state ol_sync_of(const struct ol_report *r, uint32_t vm, uint64_t *bound_ns)
{
	if (!r->sync)
		return OL_SYNC_REPLAY;
	if (!an_walk_vm_has_guest(r->w, vm) || vm >= r->n_sync)
		return OL_SYNC_NO_AGENT;
	if (!r->sync[vm].bounded)
		return OL_SYNC_NOT_YET;
	*bound_ns = r->sync[vm].bound_ns;
	return OL_SYNC_BOUNDED;
}

/* --speed: wait until the wall clock has caught up with host time @ts. */
static void pace(struct pipe *p, uint64_t ts)
{
	struct timespec now, d;
	double due, spent;

	clock_gettime(CLOCK_MONOTONIC, &now);
	due = (double)(ts - p->first_ts) / p->o->speed;
	spent = (double)(now.tv_sec - p->wall0.tv_sec) * 1e9 +
		(double)(now.tv_nsec - p->wall0.tv_nsec);
	if (due <= spent)
		return;
	d.tv_sec = (time_t)((due - spent) / 1e9);
	d.tv_nsec = (long)((due - spent) - (double)d.tv_sec * 1e9);
	nanosleep(&d, NULL);
}

static void tick(void *ctx, uint64_t ts)
{
	struct pipe *p = ctx;

	if (!p->started) {
		p->started = true;
		p->first_ts = ts;
		p->iv.start = p->cum.start = ts;
		p->next_edge = ts + p->o->interval_ns;
		clock_gettime(CLOCK_MONOTONIC, &p->wall0);
	}
	if (p->o->speed > 0 && !p->quit)
		pace(p, ts);
	/* records come in host-time order; an empty interval is still one */
	while (ts >= p->next_edge && !p->error && !p->quit) {
		close_interval(p, p->next_edge, false);
		p->next_edge += p->o->interval_ns;
	}
}

static void on_end(void *ctx, uint64_t ts)
{
	struct pipe *p = ctx;

	p->sh.end(p->sh.ctx, ts);
	if (p->started)
		close_interval(p, ts + 1 > p->iv.start ? ts + 1 : p->iv.start, true);
}

int ol_pipe_open(struct pipe *p, struct an_walk *w, const struct ol_opts *o,
		 struct an_hooks *h)
{
	memset(p, 0, sizeof(*p));
	p->o = o;
	p->w = w;
	*h = (struct an_hooks){ .ctx = p, .tick = tick, .exit = on_exit_done,
				.guest_switch = on_guest_switch, .guest_wakeup = on_guest_wakeup,
				.host_switch = on_host_switch, .guest_sync = on_guest_sync,
				.loss = on_loss, .end = on_end };
	p->have_sched = !an_sched_init(&p->sched, w, 0);
	if (!p->have_sched || ol_window_init(&p->iv, 0, o->top) ||
	    ol_window_init(&p->cum, 0, 0))
		return -ENOMEM;
	an_sched_hooks(&p->sched, &p->sh);
	p->sched.on_off = on_off;
	p->sched.off_ctx = p;
	return 0;
}

int ol_pipe_result(struct pipe *p, int e, char *err, size_t errlen)
{
	if (e >= 0 && p->error) {
		snprintf(err, errlen, "%s", p->why);
		e = p->error;
	} else if (e >= 0 && !p->started) {
		snprintf(err, errlen, "no records");
		e = 1;
	}
	if (!e && an_walk_damage(p->w))
		snprintf(err, errlen, "damaged (accepted): %s", an_walk_damage(p->w));
	else if (!e && an_walk_note(p->w))
		snprintf(err, errlen, "%s", an_walk_note(p->w));
	if (e >= 0 && (ol_window_oom(&p->cum) || p->sched.oom)) {
		snprintf(err, errlen, "out of memory: %d exits or off-CPU intervals not counted",
			 ol_window_oom(&p->cum) + p->sched.oom);
		e = 1;
	}
	return e;
}

void ol_pipe_close(struct pipe *p)
{
	if (p->have_sched)
		an_sched_free(&p->sched);
	ol_window_free(&p->iv);
	ol_window_free(&p->cum);
	ol_snap_free(&p->base);
	ol_snap_free(&p->now);
}

int ol_replay(const char *path, unsigned int flags, const struct ol_opts *o, char *err,
	      size_t errlen)
{
	struct an_walk *w;
	struct an_hooks h;
	struct pipe p;
	int e;

	e = an_trace_is_merged(path) ? an_walk_open(&w, path, flags, err, errlen) :
			   an_walk_open_raw(&w, path, flags, err, errlen);
	if (e)
		return e;
	e = ol_pipe_open(&p, w, o, &h);
	if (e)
		snprintf(err, errlen, "out of memory");
	else
		e = ol_pipe_result(&p, an_walk_run(w, &h, err, errlen), err, errlen);
	if (e == 1 && !p.started && !p.error)
		snprintf(err, errlen, "the trace has no records");
	ol_pipe_close(&p);
	an_walk_close(w);
	return e;
}
