/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host module's recording session as userspace sees it, through the
 * real ABI (include/vmscope/ioctl.h): descriptors, session start and
 * geometry, one read-only mapping per buffer (channel x CPU),
 * GET_SUBBUF / PUT_SUBBUF, probing on/off, and the ring buffers' loss
 * counters from the mapped control areas. Used by `vmscope record` and
 * by the ABI test reader vmscope-capture (tests/vm/tools/capture.c).
 *
 * Buffers are numbered i = channel * ncpu + cpu here (the module's number
 * uses its nr_cpu_ids, which hb_get()/hb_put() translate to).
 *
 * Threads: after hb_start(), hb_get()/hb_put() may be called from one
 * thread per buffer at the same time (the module serialises readers); the
 * rest from one thread.
 */
#ifndef VMSCOPE_COLLECTOR_HOST_BUFS_H
#define VMSCOPE_COLLECTOR_HOST_BUFS_H

#include <stddef.h>
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
	unsigned int ncpu;		/* CPUs 0..ncpu-1 */
	unsigned int nbuf;		/* cfg.nr_chans * ncpu */
	const unsigned char **map;	/* [nbuf]; NULL: an impossible CPU's */
	/* hb_stop(): records the module handed this session, by event id
	 * (VMSCOPE_IOC_GET_SESSION_COUNTS; have_handed 0 if it could not) */
	int have_handed;
	int layout_sent;		/* VMSCOPE_IOC_SET_EXIT_LAYOUT done */
	uint64_t handed[VMSCOPE_MAX_EVENTS];
};

/* Take the open device @fd and read the module's descriptors (checked).
 * 0, or -1 after printing why. */
int hb_init(struct hb *h, int fd, const char *prog);

/* Start a session with h->cfg and map every possible CPU's buffers. */
int hb_start(struct hb *h);

static inline unsigned int hb_chan(const struct hb *h, unsigned int buf)
{
	return buf / h->ncpu;
}

static inline unsigned int hb_cpu(const struct hb *h, unsigned int buf)
{
	return buf % h->ncpu;
}

/* A channel's mode as the command line spells it. */
static inline const char *hb_mode_name(uint32_t mode)
{
	return mode == VMSCOPE_RB_MODE_FLIGHT ? "flight" : "discard";
}

/* The names of the module's events in @mask (bit per id) into @names
 * (VMSCOPE_MAX_EVENTS of them), in descriptor order; returns how many. */
unsigned int hb_event_names(const struct hb *h, uint64_t mask, const char **names);

/* Sub-buffer size of buffer @buf's channel. */
static inline size_t hb_subbuf_size(const struct hb *h, unsigned int buf)
{
	return (size_t)1 << h->cfg.chan[hb_chan(h, buf)].subbuf_shift;
}

/* Take buffer @buf's next delivered sub-buffer: 1 and *sb (the mapped
 * sub-buffer, header included, hb_subbuf_size() bytes), 0 when none,
 * -1 on an error (printed). Give it back with hb_put() before the next. */
int hb_get(struct hb *h, unsigned int buf, struct vmscope_subbuf_req *req,
	   const unsigned char **sb);
int hb_put(struct hb *h, unsigned int buf);

/* VMSCOPE_IOC_PROBE_CTL: 0 or the errno, nothing printed. */
int hb_try_probes(struct hb *h, const struct vmscope_probe_ctl *ctl);
/* VMSCOPE_IOC_PROBE_CTL; 0 or -1 (printed). */
int hb_probes(struct hb *h, const struct vmscope_probe_ctl *ctl);

/* Probing off, then SESSION_STOP (which flushes every CPU). */
int hb_stop(struct hb *h);

/* Buffer @buf's cumulative loss counters (mapped control area). */
struct hb_losses {
	uint64_t full, too_big, overwritten;
};
void hb_losses(const struct hb *h, unsigned int buf, struct hb_losses *l);

/* Unmap and close the device. */
void hb_close(struct hb *h);

#endif
