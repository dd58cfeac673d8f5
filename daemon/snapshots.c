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
	if (c->trigger.exit_ns) {
		snprintf(b->exit_us, sizeof(b->exit_us), "%llu",
			 (unsigned long long)(c->trigger.exit_ns / 1000u));
		argv[n++] = "--trigger-exit-us";
		argv[n++] = b->exit_us;
	}
	if (c->trigger.stall_ns) {
		snprintf(b->stall_us, sizeof(b->stall_us), "%llu",
			 (unsigned long long)(c->trigger.stall_ns / 1000u));
		argv[n++] = "--trigger-stall-us";
		argv[n++] = b->stall_us;
	}
	if (!n)
		return 0;
	snprintf(b->dir, sizeof(b->dir), "%s/%s", c->snap.root, s->dom.name);
	snprintf(b->before, sizeof(b->before), "%llu", c->snap.before_ms);
	snprintf(b->after, sizeof(b->after), "%llu", c->snap.after_ms);
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

void sp_start(const struct dm_cfg *c, struct session *s)
{
	char name[sizeof(s->snap_last)];

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

void sp_admitted(const struct dm_cfg *c, struct session *s, const struct ol_trig *t)
{
	uint8_t b[OL_TG_FRAME_MAX];
	size_t n;

	if ((!c->trigger.exit_ns && !c->trigger.stall_ns) || s->metrics_fd < 0)
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
