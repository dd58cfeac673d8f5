/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host module's recording session as userspace sees it, through the
 * real ABI (include/vmscope/ioctl.h): descriptors, session start and
 * geometry, one read-only mapping per CPU, GET_SUBBUF / PUT_SUBBUF,
 * probing on/off, and the ring buffers' loss counters from the mapped
 * control areas. Used by `vmscope capture` and `vmscope record`.
 *
 * Threads: after hb_start(), hb_get()/hb_put() may be called from one
 * thread per CPU at the same time (the module serialises readers); the
 * rest from one thread.
 */
#ifndef VMSCOPE_COLLECTOR_HOST_BUFS_H
#define VMSCOPE_COLLECTOR_HOST_BUFS_H

#include <stdint.h>

#include <vmscope/ioctl.h>
#include <vmscope/ringbuf_abi.h>

#define HB_MAX_CPUS 1024

struct hb {
	int fd;				/* /dev/vmscope-host, owned */
	const char *prog;		/* prefix of error messages */
	unsigned int nev;
	struct vmscope_event_desc descs[VMSCOPE_MAX_EVENTS];
	struct vmscope_session_cfg cfg;	/* in: wishes (0 = default); out: chosen */
	unsigned int ncpu;		/* CPUs 0..ncpu-1; map[c] NULL: impossible */
	const unsigned char *map[HB_MAX_CPUS];
	/* hb_stop(): records the module handed this session, by event id
	 * (VMSCOPE_IOC_GET_SESSION_COUNTS; have_handed 0 if it could not) */
	int have_handed;
	uint64_t handed[VMSCOPE_MAX_EVENTS];
};

/* Take the open device @fd and read the module's descriptors (checked).
 * 0, or -1 after printing why. */
int hb_init(struct hb *h, int fd, const char *prog);

/* Start a session with h->cfg and map every possible CPU's buffer. */
int hb_start(struct hb *h);

/* Take CPU @cpu's next delivered sub-buffer: 1 and *sb (the mapped
 * sub-buffer, header included, 1 << subbuf_shift bytes), 0 when none,
 * -1 on an error (printed). Give it back with hb_put() before the next. */
int hb_get(struct hb *h, unsigned int cpu, struct vmscope_subbuf_req *req,
	   const unsigned char **sb);
int hb_put(struct hb *h, unsigned int cpu);

/* VMSCOPE_IOC_PROBE_CTL: 0 or the errno, nothing printed. */
int hb_try_probes(struct hb *h, const struct vmscope_probe_ctl *ctl);
/* VMSCOPE_IOC_PROBE_CTL; 0 or -1 (printed). */
int hb_probes(struct hb *h, const struct vmscope_probe_ctl *ctl);

/* Probing off, then SESSION_STOP (which flushes every CPU). */
int hb_stop(struct hb *h);

/* The ring buffer's cumulative loss counters of @cpu (mapped control area). */
struct hb_losses {
	uint64_t full, too_big, overwritten;
};
void hb_losses(const struct hb *h, unsigned int cpu, struct hb_losses *l);

/* Unmap and close the device. */
void hb_close(struct hb *h);

#endif
