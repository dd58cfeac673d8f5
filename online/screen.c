// SPDX-License-Identifier: GPL-2.0
/* The pipeline's intervals on a terminal (ncurses): see screen.h. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <curses.h>

#include "dur.h"
#include "screen.h"

static const char *const sort_names[] = { "count", "total", "p99", "max" };
static const enum an_sort sort_next[] = { AN_SORT_P99, AN_SORT_COUNT, AN_SORT_MAX,
					  AN_SORT_TOTAL };

/* stderr into a temporary file while the screen is up, when it is the
 * terminal; left as it is if that cannot be done. */
static void hold_stderr(struct ol_screen *s)
{
	if (!isatty(STDERR_FILENO))
		return;
	fflush(stderr);
	s->held = tmpfile();
	s->saved_err = s->held ? dup(STDERR_FILENO) : -1;
	if (s->saved_err >= 0 && dup2(fileno(s->held), STDERR_FILENO) >= 0)
		return;
	if (s->saved_err >= 0)
		close(s->saved_err);
	if (s->held)
		fclose(s->held);
	s->saved_err = -1;
	s->held = NULL;
}

/* stderr back on the terminal, and what was held written to it. */
static void release_stderr(struct ol_screen *s)
{
	char buf[4096];
	size_t n;

	if (s->saved_err < 0)
		return;
	fflush(stderr);
	dup2(s->saved_err, STDERR_FILENO);
	close(s->saved_err);
	s->saved_err = -1;
	rewind(s->held);
	while ((n = fread(buf, 1, sizeof(buf), s->held)) > 0)
		fwrite(buf, 1, n, stderr);
	fflush(stderr);
	fclose(s->held);
	s->held = NULL;
}

int ol_screen_open(struct ol_screen *s, const char *source, enum an_sort sort, bool live)
{
	SCREEN *t;

	*s = (struct ol_screen){ .source = source, .sort = sort, .group = OL_GROUP_REASON,
				 .vm = -1, .live = live, .saved_err = -1 };
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
	hold_stderr(s);
	return 0;
}

void ol_screen_close(struct ol_screen *s)
{
	if (!s->term)
		return;
	endwin();
	delscreen(s->term);
	s->term = NULL;
	release_stderr(s);
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
		line(y, "  %-5s %8s %10s %8s %8s %8s %8s %10s %10s %12s", "vcpu", "thread",
		     "exits/s", "guest%", "kernel%", "user%", "halted%", "preempted", "blocked",
		     "guest steal");
		for (uint32_t c = 0; c < t->n_vcpus[vm]; c++) {
			const struct ol_vcpu *x = &t->t[vm][c];
			uint64_t all = x->t.guest_ns + x->t.kernel_ns + x->t.user_ns + x->t.halted_ns;
			char b[3][32];

			line(y, "  %-5u %8d %10.0f %8.1f %8.1f %8.1f %8.1f %10s %10s %12s", c,
			     an_walk_vcpu_tid(r->w, vm, c), secs > 0 ? (double)x->t.exits / secs : 0,
			     pct(x->t.guest_ns, all), pct(x->t.kernel_ns, all), pct(x->t.user_ns, all),
			     pct(x->t.halted_ns, all), an_dur(x->preempted_ns, b[0], sizeof(b[0])),
			     an_dur(x->blocked_ns, b[1], sizeof(b[1])),
			     !an_walk_vm_has_guest(r->w, vm) ? "no agent" :
			     !x->steal_readings ? "n/a" : an_dur(x->steal_ns, b[2], sizeof(b[2])));
		}
	}
}

static const char *group_label(const struct ol_report *r, int group, const struct an_group *g,
			       char *buf, size_t len)
{
	if (group == OL_GROUP_REASON)
		snprintf(buf, len, "%s", an_walk_reason_name(r->w, g->reason));
	else if (group == OL_GROUP_VCPU)
		snprintf(buf, len, "vcpu %u", g->vcpu);
	else if (!an_walk_vm_has_guest(r->w, g->vm))
		snprintf(buf, len, "(no agent)");
	else
		an_walk_task_label(r->w, g->task, buf, len);
	return buf;
}

/* The host tasks that had vCPU threads' CPUs in the interval (all VMs). */
static void preemptors(const struct ol_report *r, int *y)
{
	struct an_by_host *by;
	size_t n = ol_window_preemptors(r->iv, &by);
	char l[64], b[32];

	attron(A_REVERSE);
	line(y, "%-32s %12s %8s", "host task on vCPU threads' CPUs", "time", "times");
	attroff(A_REVERSE);
	for (size_t i = 0; i < n; i++) {
		if (by[i].host_task == AN_TASK_UNKNOWN)
			snprintf(l, sizeof(l), "(blocked in the host)");
		else
			an_walk_task_label(r->w, by[i].host_task, l, sizeof(l));
		line(y, "%-32s %12s %8" PRIu64, l, an_dur(by[i].ns, b, sizeof(b)), by[i].n);
	}
	if (!n)
		line(y, "(none in this interval)");
	free(by);
}

static void groups(const struct ol_screen *s, const struct ol_report *r, double secs, int *y)
{
	static const char *const names[] = { "exit reason", "guest task", "vcpu" };
	struct an_exits *x = s->group == OL_GROUP_TASK ? &r->iv->by_task :
			     s->group == OL_GROUP_VCPU ? &r->iv->by_vcpu : &r->iv->by_reason;
	char l[64], b[5][32];

	if (s->group == OL_GROUP_PREEMPTOR) {
		preemptors(r, y);
		return;
	}
	an_exits_sort(x, s->sort);
	attron(A_REVERSE);
	line(y, "%-4s %-24s %10s %10s %10s %10s %10s", "VM", names[s->group], "exits/s",
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

/* The interval's worst stalls of running guest threads, with the host task. */
static void stalls(const struct ol_screen *s, const struct ol_report *r, int *y)
{
	char b[32], t[64], h[64];

	if (!r->iv->n_stalls)
		return;
	line(y, "");
	line(y, "worst guest-thread stalls of the interval (vCPU thread off its CPU):");
	for (size_t i = 0; i < r->iv->n_stalls; i++) {
		const struct an_stall *st = an_topn_item(&r->iv->stalls, i);

		if (!shown(s, st->vm))
			continue;
		if (st->host_task == AN_TASK_UNKNOWN)
			snprintf(h, sizeof(h), "blocked in the host");
		else
			an_walk_task_label(r->w, st->host_task, h, sizeof(h));
		line(y, "  VM %u vcpu %u %-20s %10s  by %s (host CPU %u)", st->vm, st->vcpu,
		     an_walk_task_label(r->w, st->task, t, sizeof(t)),
		     an_dur(st->end - st->start, b, sizeof(b)), h, st->host_cpu);
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

/* Each VM's clock alignment, on one line. */
static void sync_line(const struct ol_report *r, int *y)
{
	char buf[256], b[32];
	int n = snprintf(buf, sizeof(buf), "sync bound:");

	for (uint32_t vm = 0; vm < r->iv->t.n_vms && n > 0 && (size_t)n < sizeof(buf); vm++) {
		uint64_t bound = 0;
		enum ol_sync_state st = ol_sync_of(r, vm, &bound);

		n += snprintf(buf + n, sizeof(buf) - (size_t)n, "%s VM %u %s", vm ? "," : "", vm,
			      st == OL_SYNC_BOUNDED ? an_dur(bound, b, sizeof(b)) :
			      ol_sync_names[st]);
	}
	line(y, "%s", buf);
}

static void draw(struct ol_screen *s, const struct ol_report *r)
{
	const struct ol_window *iv = r->iv;
	const struct an_counts *c = &iv->t.counts;
	double secs = (double)(iv->end - iv->start) / 1e9;
	char b[32], vm[32], cpus[16];
	int y = 0;

	/* anything written to the terminal before (the live source's start
	 * on stderr) is not ncurses' to know of: the first draw repaints all */
	if (!s->drawn)
		clear();
	else
		erase();
	s->drawn = true;
	if (s->vm < 0)
		snprintf(vm, sizeof(vm), "all");
	else
		snprintf(vm, sizeof(vm), "%" PRId64, s->vm);
	attron(A_BOLD);
	line(&y, "vmscope top  %s  interval %" PRIu64 " (%s of host time)%s%s", s->source,
	     r->index, an_dur(iv->end - iv->start, b, sizeof(b)),
	     r->final ? (s->live ? "  STOPPED" : "  END OF TRACE") : "",
	     s->paused ? (s->live ? "  PAUSED (still running)" : "  PAUSED") : "");
	attroff(A_BOLD);
	if (an_walk_host_cpus(r->w))
		snprintf(cpus, sizeof(cpus), "%u", an_walk_host_cpus(r->w));
	else
		snprintf(cpus, sizeof(cpus), "?");
	line(&y, "host CPUs %s   VMs %u   records/s %.0f   exits/s %.0f   lost %" PRIu64
	     " (cut exits %" PRIu64 ")", cpus, iv->t.n_vms,
	     secs > 0 ? (double)c->records / secs : 0, secs > 0 ? (double)c->exits / secs : 0,
	     c->losses, c->open_dropped);
	sync_line(r, &y);
	line(&y, "keys: s sort (%s)  g group  v VM (%s)  p pause  q quit", sort_names[s->sort], vm);
	line(&y, "");
	vcpus(s, r, secs, &y);
	line(&y, "");
	groups(s, r, secs, &y);
	stalls(s, r, &y);
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
		s->group = (s->group + 1) % OL_GROUPS;
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
	bool frozen;
	int k;

	/* live and paused: the screen keeps the interval it froze on */
	frozen = s->live && s->paused && !r->final;
	if (!frozen)
		draw(s, r);
	/* the keys pressed since the last interval, then wait while a replay
	 * is paused, or at the end */
	timeout(0);
	for (;;) {
		k = getch();
		if (k == ERR) {
			if ((!s->paused || s->live) && !r->final)
				return 0;
			timeout(200);
			continue;
		}
		if (key(s, r, k) == OL_VIEW_QUIT)
			return OL_VIEW_QUIT;
		/* also for KEY_RESIZE; a frozen screen's interval is gone: it
		 * is drawn again once unpaused, with the next interval */
		frozen = frozen && s->paused;
		if (!frozen)
			draw(s, r);
	}
}
