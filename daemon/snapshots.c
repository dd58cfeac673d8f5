// SPDX-License-Identifier: GPL-2.0
/* Snapshot windows, the daemon's side: see snapshots.h. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "dmlog.h"
#include "metrics_store.h"
#include "snapshots.h"

unsigned int sp_args(const struct dm_cfg *c, const struct session *s, const char **argv,
		     struct sp_argbuf *b)
{
	unsigned int n = 0;

	/* the recorder's live pipeline finds what crosses them */
	if (s->trig_exit_ns) {
		snprintf(b->exit_us, sizeof(b->exit_us), "%llu",
			 (unsigned long long)(s->trig_exit_ns / 1000u));
		argv[n++] = "--trigger-exit-us";
		argv[n++] = b->exit_us;
	}
	if (s->trig_stall_ns) {
		snprintf(b->stall_us, sizeof(b->stall_us), "%llu",
			 (unsigned long long)(s->trig_stall_ns / 1000u));
		argv[n++] = "--trigger-stall-us";
		argv[n++] = b->stall_us;
	}
	if (!n)
		return 0;
	snprintf(b->dir, sizeof(b->dir), "%s/%s", c->snap.root, s->dom.name);
	snprintf(b->before, sizeof(b->before), "%llu", s->snap_before_ms);
	snprintf(b->after, sizeof(b->after), "%llu", s->snap_after_ms);
	snprintf(b->cap, sizeof(b->cap), "%llu", c->snap.cap_mb);
	argv[n++] = "--snapshot-dir";
	argv[n++] = b->dir;
	argv[n++] = "--snapshot-before-ms";
	argv[n++] = b->before;
	argv[n++] = "--snapshot-after-ms";
	argv[n++] = b->after;
	argv[n++] = "--snapshot-cap-mb";
	argv[n++] = b->cap;
	return n;
}

/* A threshold in ns: the domain's (µs; VD_TRIGGER_OFF: none), else the
 * daemon's. */
static uint64_t threshold(uint64_t dom_us, uint64_t daemon_ns)
{
	if (dom_us == VD_TRIGGER_OFF)
		return 0;
	return dom_us ? dom_us * 1000u : daemon_ns;
}

/* "off", or the threshold in ms, into @buf. */
static const char *said(uint64_t ns, char *buf, size_t len)
{
	if (!ns)
		return "off";
	snprintf(buf, len, "%.3f ms", ns / 1e6);
	return buf;
}

static bool metadata_sets(const struct vd_opts *o)
{
	return o->trigger_exit_us || o->trigger_stall_us || o->snapshot_before_ms ||
	       o->snapshot_after_ms;
}

/* The first snapshot of @s's domain whose name (its time) sorts after
 * @after ("": any), into @out ("" when none); names starting with '.'
 * (being written) are not snapshots yet. */
static void next_after(const struct dm_cfg *c, const struct session *s, const char *after,
			 char *out, size_t len)
{
	char dir[PATH_MAX];
	struct dirent *de;
	DIR *d;

	out[0] = '\0';
	snprintf(dir, sizeof(dir), "%s/%s", c->snap.root, s->dom.name);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, after) > 0 &&
		    (!out[0] || strcmp(de->d_name, out) < 0) && strlen(de->d_name) < len)
			snprintf(out, len, "%s", de->d_name);
	closedir(d);
}

void sp_no_feed(const struct dm_cfg *c, struct session *s)
{
	s->trig_exit_ns = s->trig_stall_ns = 0;
	if (metadata_sets(&s->dom.opts))
		dm_log("%s: the trigger options of its metadata not applied: %s", s->dom.name,
		       c->metrics ? "its recorder has no metrics feed" :
		       "vmscoped runs without --metrics");
}

void sp_start(const struct dm_cfg *c, struct session *s)
{
	const struct vd_opts *o = &s->dom.opts;
	char name[sizeof(s->snap_last)], e[32], st[32];

	s->trig_exit_ns = threshold(o->trigger_exit_us, c->trigger.exit_ns);
	s->trig_stall_ns = threshold(o->trigger_stall_us, c->trigger.stall_ns);
	s->snap_before_ms = o->snapshot_before_ms ? o->snapshot_before_ms : c->snap.before_ms;
	s->snap_after_ms = o->snapshot_after_ms ? o->snapshot_after_ms : c->snap.after_ms;
	if (metadata_sets(o))
		dm_log("%s: triggers from its metadata and the daemon's options: exit %s, "
		       "stall %s, window %llu ms before, %llu ms after", s->dom.name,
		       said(s->trig_exit_ns, e, sizeof(e)), said(s->trig_stall_ns, st, sizeof(st)),
		       s->snap_before_ms, s->snap_after_ms);

	s->snap_waiting = 0;
	s->snap_last[0] = '\0';
	/* the newest one there: names sort as their times */
	for (;;) {
		next_after(c, s, s->snap_last, name, sizeof(name));
		if (!name[0])
			break;
		snprintf(s->snap_last, sizeof(s->snap_last), "%s", name);
	}
}

void sp_admitted(struct session *s, const struct ol_trig *t)
{
	uint8_t b[OL_TG_FRAME_MAX];
	size_t n;

	if ((!s->trig_exit_ns && !s->trig_stall_ns) || s->metrics_fd < 0)
		return;
	n = ol_trig_encode(t, b);
	if (send(s->metrics_fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)n) {
		dm_log("%s: snapshot not asked for: %s", s->dom.name, strerror(errno));
		return;
	}
	s->snap_waiting++;
}

static void removed(void *ctx, const char *domain, const char *time, uint64_t bytes)
{
	(void)ctx;
	dm_log("%s: snapshot %s removed (%llu bytes): over the snapshots' quota", domain, time,
	       (unsigned long long)bytes);
}

void sp_scan(const struct dm_cfg *c, struct session *s)
{
	char name[sizeof(s->snap_last)];
	bool any = false;
	uint64_t total;
	int e;

	while (s->snap_waiting) {
		next_after(c, s, s->snap_last, name, sizeof(name));
		if (!name[0])
			break;
		/* the oldest new one first: one per admitted trigger */
		snprintf(s->snap_last, sizeof(s->snap_last), "%s", name);
		s->snap_waiting--;
		any = true;
		dm_log("%s: snapshot written: %s/%s/%s", s->dom.name, c->snap.root, s->dom.name,
		       name);
		if (c->metrics)
			ms_snapshot(c->metrics, s->start_ns);
	}
	if (!any)
		return;
	e = tg_quota(c->snap.root, c->snap.quota_bytes, &total, removed, NULL);
	if (e < 0)
		dm_log("snapshots' quota: %s: %s", c->snap.root, strerror(-e));
}
