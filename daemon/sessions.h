/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped's tracing sessions: one per traced domain start, each its own
 * trace folder OUTPUT/DOMAIN/START-TIME/:
 *
 *   session.txt   the domain's facts and options (written at start)
 *   trace/        the recording: `vmscope record --pid QEMU [--cid C] ...`
 *   record.log    what record printed (its last line is its summary)
 *   merged/       `vmscope merge trace -o merged` at the end
 *   merge.log     what merge printed
 *   summary.txt   one line, written last: the trace is finalized
 *
 * The recorder and the merge are child processes running the vmscope
 * command itself (collector/record.c through cmd_record.c, merge/ through
 * cmd_merge.c): rec_run keeps one recording per process, a recording
 * survives the daemon's own crash, and a crashed recorder leaves a readable
 * trace (collector/README.md) that is still merged.
 *
 * States: recording -> stopping (SIGTERM sent) -> merging -> done, or
 * failed (nothing recorded, or merge failed: the recording stays).
 * `pending`: a start waits for the previous recorder of the same domain
 * to exit (a domain restart: stop and start arrive back to back).
 *
 * Domains are recorded side by side, each recorder one of the host
 * module's capture sessions (at most VMSCOPE_HOST_SESSIONS at once: one
 * more domain is refused, with that reason). The guest agents of every
 * domain connect to one vsock port, where the daemon listens; it hands
 * each connection to the recorder of the domain with the peer's CID
 * (ss_handoff, `vmscope record --guest-handoff`).
 *
 * Durability: an active session has a registry file STATE/active/DOMAIN
 * (trace folder and recorder pid, fsynced); a daemon that starts finds
 * those its predecessor left, stops any recorder still running and
 * finalizes each (merge, summary): nothing recorded is left unmerged.
 */
#ifndef VMSCOPE_DAEMON_SESSIONS_H
#define VMSCOPE_DAEMON_SESSIONS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <vmscope/ioctl.h>

#include "daemon.pb-c.h"
#include "proto.h"
#include "trigger.h"

struct mstore;

struct dm_cfg {
	const char *state_dir;		/* /var/lib/vmscope */
	const char *default_output;	/* STATE/traces */
	const char *pid_dir;		/* libvirt's /run/libvirt/qemu */
	const char *vmscope;		/* the vmscope command */
	double stop_timeout_s;		/* SIGTERM -> SIGKILL of a recorder */
	/* --metrics: each recorder's snapshots go here (metrics_feed.h);
	 * NULL: off */
	struct mstore *metrics;
	/* --trigger-*: thresholds (0: off) and rate limit; with metrics only */
	struct tg_cfg trigger;
	/* with a trigger: the snapshot windows (snapshots.h) */
	struct {
		const char *root;		/* STATE/snapshots */
		unsigned long long before_ms, after_ms, cap_mb;
		uint64_t quota_bytes;		/* every domain's together */
	} snap;
};

/* OUTPUT (< VD_PATH_MAX) / DOMAIN (< VD_NAME_MAX) / START-TIME[-N] */
#define SS_DIR_MAX (VD_PATH_MAX + VD_NAME_MAX + 32)

enum ss_state { SS_PENDING, SS_RECORDING, SS_STOPPING, SS_MERGING, SS_DONE, SS_FAILED };

struct session {
	struct vd_domain dom;
	pid_t qemu_pid;
	char dir[SS_DIR_MAX];
	uint64_t start_ns;
	enum ss_state state;
	pid_t child;			/* recorder or merge; 0: none */
	int handoff_fd;			/* to our recorder: guest connections; -1 */
	int metrics_fd;			/* from our recorder: its snapshots; -1 */
	bool metrics_refused;		/* the store was full: said once */
	struct tg_rate trig_rate;	/* its triggers' rate limit */
	/* its triggers' thresholds (0: off) and window: its domain's
	 * metadata's, else the daemon's options (sp_start) */
	uint64_t trig_exit_ns, trig_stall_ns;
	unsigned long long snap_before_ms, snap_after_ms;
	unsigned int snap_waiting;	/* snapshots asked for, not seen yet */
	char snap_last[32];		/* the newest snapshot seen (its name) */
	int adopted;			/* child is a predecessor's: not ours to wait */
	double deadline;		/* stopping: SIGKILL after */
	char detail[512];
};

/*
 * Sessions kept: every recorder the host module can have at once
 * (VMSCOPE_HOST_SESSIONS), as many again merging or ended (an ended one's
 * slot is reused, oldest first, for `session list`).
 */
#define SS_MAX (2 * VMSCOPE_HOST_SESSIONS)

struct sessions {
	const struct dm_cfg *cfg;
	struct session s[SS_MAX];
	unsigned int n;
};

const char *ss_state_name(enum ss_state st);

void ss_init(struct sessions *ss, const struct dm_cfg *cfg);

/* Finalize what a previous daemon left in STATE/active. */
void ss_recover(struct sessions *ss);

/*
 * Start tracing @dom (a new trace; a running session of the same domain is
 * stopped first). 0, or -1 with @msg saying why (also kept as the failed
 * session's detail).
 */
int ss_start(struct sessions *ss, const struct vd_domain *dom, pid_t pid, char *msg,
	     size_t msglen);

/* Stop @name's active session (finalized in the background; @why in the
 * log): 0, -1 none. */
int ss_stop(struct sessions *ss, const char *name, const char *why, char *msg, size_t msglen);

/* Stop every active session (daemon shutdown). */
void ss_stop_all(struct sessions *ss);

/* Reap children, move states on, kill overdue recorders, notice QEMU
 * processes that went away. Call on SIGCHLD and periodically. */
void ss_tick(struct sessions *ss);

/*
 * A guest connection @fd accepted from vsock @cid: handed (SCM_RIGHTS) to
 * the recorder of the domain with that CID. 0, or -1; @msg says which.
 * The caller closes its @fd either way.
 */
int ss_handoff(struct sessions *ss, int fd, uint32_t cid, char *msg, size_t msglen);

/* Sessions not yet done or failed. */
unsigned int ss_active(const struct sessions *ss);

/* Fill a response's session list (pointers into @ss; valid until the next
 * call that changes @ss). */
void ss_describe(struct sessions *ss, Vmscope__Daemon__Response *r,
		 Vmscope__Daemon__Session **vec, Vmscope__Daemon__Session *store,
		 Vmscope__Daemon__Domain *dstore);

#endif
