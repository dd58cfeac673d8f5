/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Triggered windows (README.md, "Triggered windows"): what decides whether
 * a trigger a recorder reported becomes a snapshot. A domain gets at most
 * one snapshot per rate interval (tg_rate_admit); the snapshots of every
 * domain, STATE/snapshots/DOMAIN/TIME/, together stay under a disk quota,
 * the oldest removed first (tg_quota). No daemon state here: sessions.c
 * and snapshot.c keep it, so the rules are tested alone (daemon-trigger).
 */
#ifndef VMSCOPE_DAEMON_TRIGGER_H
#define VMSCOPE_DAEMON_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>

/* The daemon's trigger options (vmscoped's command line). */
struct tg_cfg {
	uint64_t exit_ns;		/* an exit longer than this; 0: no exit trigger */
	uint64_t stall_ns;		/* a guest-thread stall longer than this; 0: none */
	double min_gap_s;		/* at most one admitted per domain per this */
};

#define TG_DEFAULT_MIN_GAP_S	60.0

/* One domain's rate limit. */
struct tg_rate {
	bool fired;			/* a snapshot was admitted */
	double last_s;			/* when (monotonic seconds) */
	uint64_t suppressed;		/* triggers refused by it */
};

/* A trigger at @now_s (monotonic seconds): true when it may make a
 * snapshot (none admitted in the last @min_gap_s; then @now_s is the
 * last), else false and counted. */
bool tg_rate_admit(struct tg_rate *r, double now_s, double min_gap_s);

/* Called for each snapshot tg_quota removed: DOMAIN, TIME, its bytes. */
typedef void tg_removed_fn(void *ctx, const char *domain, const char *time, uint64_t bytes);

/*
 * Keep the snapshots under @root (ROOT/DOMAIN/TIME/, names not starting
 * with '.': a snapshot being written is ROOT/DOMAIN/.TIME and not counted)
 * at most @quota bytes on disk together (allocated blocks): the oldest
 * (by TIME, the name sorting as the time it is; then DOMAIN) removed first,
 * each said through @cb. *@total := the bytes left. Returns how many were
 * removed, or -errno when @root could not be read (a missing @root holds
 * nothing: 0) or a snapshot could not be removed.
 */
int tg_quota(const char *root, uint64_t quota, uint64_t *total, tg_removed_fn *cb, void *ctx);

/* The bytes on disk (allocated blocks) of the tree at @path, or -errno. */
int64_t tg_du(const char *path);

/* Remove the tree at @path: 0 or -errno. */
int tg_rm_rf(const char *path);

#endif
