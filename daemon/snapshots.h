/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Snapshot windows (README.md, "Triggered windows"): what the daemon does
 * for them. A recorder started with triggers gets --snapshot-dir
 * STATE/snapshots/DOMAIN and the window's sizes (sp_args); each trigger its
 * domain's rate limit admits is sent back to that recorder on its metrics
 * socket (sp_admitted), which writes the window there (record's
 * online/live_snap.h); the poll loop's tick then finds the new folder
 * (sp_scan): logged with its path, counted in vmscope_snapshots_total,
 * and the quota applied to every domain's snapshots (trigger.h, tg_quota).
 */
#ifndef VMSCOPE_DAEMON_SNAPSHOTS_H
#define VMSCOPE_DAEMON_SNAPSHOTS_H

#include "live_snap.h"
#include "sessions.h"
#include "trigger_frame.h"

/* --snapshot-quota-mb's default */
#define DM_SNAP_QUOTA_MB 1024ull

/* The recorder's options, in buffers that live as long as its argv. */
struct sp_argbuf {
	char dir[PATH_MAX], before[24], after[24], cap[24], exit_us[24], stall_us[24];
};

/* @s's recorder's trigger thresholds (sp_start's) and, with any, its
 * snapshot options into @argv (at most SP_ARGS entries); how many. */
#define SP_ARGS 12
unsigned int sp_args(const struct dm_cfg *c, const struct session *s, const char **argv,
		     struct sp_argbuf *b);

/* @s's recorder starts with a metrics feed: its thresholds and window
 * chosen (its domain's metadata, else the daemon's options; logged when
 * the metadata set any); the snapshots already in its folder are not its. */
void sp_start(const struct dm_cfg *c, struct session *s);

/* @s's recorder starts without a metrics feed (no --metrics): thresholds
 * in its domain's metadata cannot apply, and the log says so. */
void sp_no_feed(const struct dm_cfg *c, struct session *s);

/* The rate limit admitted @t of @s: sent back to its recorder to write. */
void sp_admitted(struct session *s, const struct ol_trig *t);

/* Each tick: @s's new snapshots, while it has some to come. */
void sp_scan(const struct dm_cfg *c, struct session *s);

#endif
