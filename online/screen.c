// SPDX-License-Identifier: GPL-2.0
/* The pipeline's intervals on a terminal (ncurses): see screen.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <curses.h>

#include "dur.h"
#include "screen.h"

static const char *const sort_names[] = { "count", "total", "p99", "max" };
static const enum an_sort sort_next[] = { AN_SORT_P99, AN_SORT_COUNT, AN_SORT_MAX,
					  AN_SORT_TOTAL };

int ol_screen_open(struct ol_screen *s, const char *source, enum an_sort sort)
{
	SCREEN *t;

	*s = (struct ol_screen){ .source = source, .sort = sort, .group = AN_BY_REASON,
				 .vm = -1 };
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
		return -1;
	t = newterm(NULL, stdout, stdin);
	if (!t)
		return -1;
	s->term = t;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	return 0;
}

void ol_screen_close(struct ol_screen *s)
{
	if (!s->term)
		return;
	endwin();
	delscreen(s->term);
	s->term = NULL;
}

/* One line at row *@y, cut at the screen's width; nothing past its end. */
static void line(int *y, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (*y >= LINES)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mvaddnstr(*y, 0, buf, COLS);
	(*y)++;
}

static bool shown(const struct ol_screen *s, uint32_t vm)
{
	return s->vm < 0 || (uint32_t)s->vm == vm;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void vcpus(const struct ol_screen *s, const struct ol_report *r, double secs, int *y)
{
	const struct ol_snap *t = &r->iv->t;

	for (uint32_t vm = 0; vm < t->n_vms; vm++) {
		if (!shown(s, vm))
			continue;
		attron(A_BOLD);
		line(y, "VM %u %s%s", vm, an_walk_vm_name(r->w, vm),
		     an_walk_vm_has_guest(r->w, vm) ? "" : "   guest: no agent");
		attroff(A_BOLD);
		line(y, "  %-5s %8s %10s %8s %8s %8s %8s", "vcpu", "thread", "exits/s", "guest%",
		     "kernel%", "user%", "halted%");
		for (uint32_t c = 0; c < t->n_vcpus[vm]; c++) {
			const struct an_vcpu_time *x = &t->t[vm][c];
			uint64_t all = x->guest_ns + x->kernel_ns + x->user_ns + x->halted_ns;

			line(y, "  %-5u %8d %10.0f %8.1f %8.1f %8.1f %8.1f", c,
			     an_walk_vcpu_tid(r->w, vm, c), secs > 0 ? (double)x->exits / secs : 0,
			     pct(x->guest_ns, all), pct(x->kernel_ns, all), pct(x->user_ns, all),
			     pct(x->halted_ns, all));
		}
	}
}

static const char *group_label(const struct ol_report *r, enum an_by by,
			       const struct an_group *g, char *buf, size_t len)
{
	if (by == AN_BY_REASON)
		snprintf(buf, len, "%s", an_walk_reason_name(r->w, g->reason));
	else if (by == AN_BY_VCPU)
		snprintf(buf, len, "vcpu %u", g->vcpu);
	else if (!an_walk_vm_has_guest(r->w, g->vm))
		snprintf(buf, len, "(no agent)");
	else
		an_walk_task_label(r->w, g->task, buf, len);
	return buf;
}

static void groups(const struct ol_screen *s, const struct ol_report *r, double secs, int *y)
{
	static const char *const by_names[] = { "vm", "vcpu", "exit reason", "guest task" };
	struct an_exits *x = s->group == AN_BY_TASK ? &r->iv->by_task :
			     s->group == AN_BY_VCPU ? &r->iv->by_vcpu : &r->iv->by_reason;
	char l[64], b[5][32];

	an_exits_sort(x, s->sort);
	attron(A_REVERSE);
	line(y, "%-4s %-24s %10s %10s %10s %10s %10s", "VM", by_names[s->group], "exits/s",
	     "total", "p50", "p99", "max");
	attroff(A_REVERSE);
	for (size_t i = 0; i < x->n; i++) {
		const struct an_group *g = &x->g[i];

		if (!shown(s, g->vm))
			continue;
		line(y, "%-4u %-24s %10.0f %10s %10s %10s %10s", g->vm,
		     group_label(r, s->group, g, l, sizeof(l)),
		     secs > 0 ? (double)g->h.count / secs : 0, an_dur(g->h.sum, b[0], sizeof(b[0])),
		     an_dur(an_hist_quantile(&g->h, 0.5), b[1], sizeof(b[1])),
		     an_dur(an_hist_quantile(&g->h, 0.99), b[2], sizeof(b[2])),
		     an_dur(g->h.max, b[3], sizeof(b[3])));
	}
}

static void longest(const struct ol_screen *s, const struct ol_report *r, int *y)
{
	char b[32], t[64];

	if (!r->iv->n_longest)
		return;
	line(y, "");
	line(y, "longest exits of the interval:");
	for (size_t i = 0; i < r->iv->n_longest; i++) {
		const struct an_exit *e = an_topn_item(&r->iv->by_reason.top, i);

		if (!shown(s, e->vm))
			continue;
		line(y, "  VM %u vcpu %u %-20s %10s  %s", e->vm, e->vcpu,
		     an_walk_reason_name(r->w, e->reason), an_dur(e->end - e->start, b, sizeof(b)),
		     an_walk_vm_has_guest(r->w, e->vm) ?
		     an_walk_task_label(r->w, e->task, t, sizeof(t)) : "(no agent)");
	}
}

static void draw(const struct ol_screen *s, const struct ol_report *r)
{
	const struct ol_window *iv = r->iv;
	const struct an_counts *c = &iv->t.counts;
	double secs = (double)(iv->end - iv->start) / 1e9;
	char b[32], vm[32];
	int y = 0;

	erase();
	if (s->vm < 0)
		snprintf(vm, sizeof(vm), "all");
	else
		snprintf(vm, sizeof(vm), "%" PRId64, s->vm);
	attron(A_BOLD);
	line(&y, "vmscope top  %s  interval %" PRIu64 " (%s of host time)%s%s", s->source,
	     r->index, an_dur(iv->end - iv->start, b, sizeof(b)),
	     r->final ? "  END OF TRACE" : "", s->paused ? "  PAUSED" : "");
	attroff(A_BOLD);
	line(&y, "VMs %u   records/s %.0f   exits/s %.0f   lost %" PRIu64 " (cut exits %" PRIu64
	     ")   sync bound: not stored in a merged trace", iv->t.n_vms,
	     secs > 0 ? (double)c->records / secs : 0, secs > 0 ? (double)c->exits / secs : 0,
	     c->losses, c->open_dropped);
	line(&y, "keys: s sort (%s)  g group  v VM (%s)  p pause  q quit", sort_names[s->sort], vm);
	line(&y, "");
	vcpus(s, r, secs, &y);
	line(&y, "");
	groups(s, r, secs, &y);
	longest(s, r, &y);
	refresh();
}

/* One key; OL_VIEW_QUIT for q. */
static int key(struct ol_screen *s, const struct ol_report *r, int k)
{
	switch (k) {
	case 'q':
		return OL_VIEW_QUIT;
	case 's':
		s->sort = sort_next[s->sort];
		break;
	case 'g':
		s->group = s->group == AN_BY_REASON ? AN_BY_TASK :
			   s->group == AN_BY_TASK ? AN_BY_VCPU : AN_BY_REASON;
		break;
	case 'v':
		s->vm = s->vm + 1 < (int64_t)an_walk_nr_vms(r->w) ? s->vm + 1 : -1;
		break;
	case 'p':
		s->paused = !s->paused;
		break;
	}
	return 0;
}

int ol_view_screen(void *ctx, const struct ol_report *r)
{
	struct ol_screen *s = ctx;
	int k;

	draw(s, r);
	/* the keys pressed since the last interval, then wait while paused or
	 * at the end */
	timeout(0);
	for (;;) {
		k = getch();
		if (k == ERR) {
			if (!s->paused && !r->final)
				return 0;
			timeout(200);
			continue;
		}
		if (key(s, r, k) == OL_VIEW_QUIT)
			return OL_VIEW_QUIT;
		draw(s, r);	/* also for KEY_RESIZE */
	}
}
