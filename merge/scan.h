/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sync side of a merge, shared by pass 1 (sync_scan.c) and the online
 * merge (online.c): the host records that make the transforms (sync_t2 /
 * sync_t3 into the pairing, kvm_write_tsc_offset as breaks and offsets,
 * the host's sched_switch for the thread on each CPU), given in host-time
 * order; the guest's sync_guest records decoded for the pairing's pull.
 * Where guest records come from and what becomes of an accepted exchange
 * is the driver's: its pull and accept/drop callbacks.
 *
 * The driver's context begins with a struct mg_scan (the pairing and the
 * transforms are given the driver's pointer as their user pointer).
 */
#ifndef VMSCOPE_MERGE_SCAN_H
#define VMSCOPE_MERGE_SCAN_H

#include "merge.h"
#include "roles.h"

struct mg_scan {
	struct vr_trace *t;
	struct mg_result *r;
	struct mg_roles host, *vms;
	/* [MP_MAX_CPUS]: thread each host CPU runs (sched_switch), -1 when
	 * unknown; per CPU, not per stream: a CPU's records may lie in
	 * several streams (session channels) */
	int32_t *host_tid;
	enum mg_tsc_breaks tsc_mode;
	uint64_t *tsc_last;	/* [n_vms + 1]: last write per VM, [n_vms]: unknown VM */
	bool *tsc_seen;
	struct mp_tsc_off **offs;	/* [n_vms][MP_MAX_CPUS]: by vCPU id */
};

/*
 * Reset @r and set up the pairing (with @pull) and the per-VM transforms
 * (with @accept, and @drop when not NULL) for trace @t: the session's
 * vCPU threads and TSC offsets, the events' roles. @c must be the first
 * member of the driver's context, which the callbacks are given.
 * 0 or -ENOMEM.
 */
int mg_scan_init(struct mg_scan *c, struct vr_trace *t, const struct mg_opts *o,
		 struct mg_result *r, mp_pull_fn pull, mt_accept_fn accept, mt_drop_fn drop);
void mg_scan_free(struct mg_scan *c);

/* Stream @i is VM @vm's guest CPU @cpu (vm < n_vms, cpu < MP_MAX_CPUS):
 * @gsrc[vm][cpu] (allocated as needed) keeps 1 + the index of the first
 * such stream, the one the pairing pulls from. 0 or -ENOMEM. */
int mg_scan_guest_stream(uint32_t **gsrc, uint32_t vm, uint32_t cpu, size_t i);

/* Stream @i of @t opened into *@s; on failure @err names the stream. 0 or
 * negative errno. For every pass that reads all streams. */
int mg_scan_stream_open(struct vr_stream **s, struct vr_trace *t, size_t i, char *err,
			size_t errlen);

/* A host record of host CPU @cpu, in host-time order. */
void mg_scan_host(struct mg_scan *c, uint32_t cpu, const struct vr_item *it);

/* Whether @it is VM @vm's sync_guest record; *@out decoded when it is
 * (and counted in the merge's sync records). */
bool mg_scan_guest_sync(struct mg_scan *c, uint32_t vm, const struct vr_item *it,
			struct mp_guest *out);

#endif
