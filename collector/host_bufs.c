/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode.h"
#include "exit_layout.h"
#include "host_bufs.h"

int hb_init(struct hb *h, int fd, const char *prog)
{
	struct vmscope_event_desc_req req;
	char why[160];

	memset(h, 0, sizeof(*h));
	h->fd = fd;
	h->prog = prog;
	for (h->nev = 0; h->nev < VMSCOPE_MAX_EVENTS; h->nev++) {
		memset(&req, 0, sizeof(req));
		req.index = h->nev;
		if (ioctl(fd, VMSCOPE_IOC_GET_EVENT_DESC, &req) < 0) {
			if (errno == ENOENT)
				return 0;
			fprintf(stderr, "%s: reading the module's descriptors: %s\n", prog,
				strerror(errno));
			return -1;
		}
		if (vmscope_desc_check(&req.desc, why, sizeof(why))) {
			fprintf(stderr, "%s: bad descriptor from the module: %s\n", prog, why);
			return -1;
		}
		h->descs[h->nev] = req.desc;
	}
	return 0;
}

int hb_start(struct hb *h)
{
	if (ioctl(h->fd, VMSCOPE_IOC_SESSION_START, &h->cfg) < 0) {
		int err = errno;

		fprintf(stderr, "%s: cannot start a session: %s", h->prog, strerror(err));
		if (err == EBUSY)
			fprintf(stderr, " (the module records at most %d sessions at once)",
				VMSCOPE_HOST_SESSIONS);
		fprintf(stderr, "\n");
		return -1;
	}
	h->ncpu = h->cfg.nr_cpu_ids < HB_MAX_CPUS ? h->cfg.nr_cpu_ids : HB_MAX_CPUS;
	h->nbuf = h->cfg.nr_chans * h->ncpu;
	h->map = calloc(h->nbuf ? h->nbuf : 1, sizeof(*h->map));
	if (!h->map) {
		fprintf(stderr, "%s: out of memory\n", h->prog);
		return -1;
	}
	for (unsigned int i = 0; i < h->nbuf; i++) {
		const struct vmscope_chan_cfg *c = &h->cfg.chan[hb_chan(h, i)];
		void *p = mmap(NULL, c->cpu_bytes, PROT_READ, MAP_SHARED, h->fd,
			       (off_t)(c->offset + hb_cpu(h, i) * c->cpu_stride));

		if (p == MAP_FAILED) {
			if (errno == ENXIO)	/* not a possible CPU */
				continue;
			fprintf(stderr, "%s: mmap of channel %u's buffer of CPU %u: %s\n",
				h->prog, hb_chan(h, i), hb_cpu(h, i), strerror(errno));
			return -1;
		}
		h->map[i] = p;
	}
	return 0;
}

unsigned int hb_event_names(const struct hb *h, uint64_t mask, const char **names)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < h->nev; i++)
		if (h->descs[i].id < 64 && (mask >> h->descs[i].id & 1))
			names[n++] = h->descs[i].name;
	return n;
}

/* The module's number of buffer @buf. */
static uint32_t module_buf(const struct hb *h, unsigned int buf)
{
	return hb_chan(h, buf) * h->cfg.nr_cpu_ids + hb_cpu(h, buf);
}

int hb_get(struct hb *h, unsigned int buf, struct vmscope_subbuf_req *req,
	   const unsigned char **sb)
{
	memset(req, 0, sizeof(*req));
	req->buf = module_buf(h, buf);
	if (ioctl(h->fd, VMSCOPE_IOC_GET_SUBBUF, req) < 0) {
		if (errno == EAGAIN)
			return 0;
		fprintf(stderr, "%s: GET_SUBBUF channel %u CPU %u: %s\n", h->prog,
			hb_chan(h, buf), hb_cpu(h, buf), strerror(errno));
		return -1;
	}
	/* the module's offset, but never past our mapping */
	if (req->offset + hb_subbuf_size(h, buf) > h->cfg.chan[hb_chan(h, buf)].cpu_bytes) {
		fprintf(stderr, "%s: GET_SUBBUF channel %u CPU %u: offset %llu outside the buffer\n",
			h->prog, hb_chan(h, buf), hb_cpu(h, buf), (unsigned long long)req->offset);
		return -1;
	}
	*sb = h->map[buf] + req->offset;
	return 1;
}

int hb_put(struct hb *h, unsigned int buf)
{
	uint32_t b = module_buf(h, buf);

	if (ioctl(h->fd, VMSCOPE_IOC_PUT_SUBBUF, &b) < 0) {
		fprintf(stderr, "%s: PUT_SUBBUF channel %u CPU %u: %s\n", h->prog,
			hb_chan(h, buf), hb_cpu(h, buf), strerror(errno));
		return -1;
	}
	return 0;
}

int hb_try_probes(struct hb *h, const struct vmscope_probe_ctl *ctl)
{
	/* the running kernel's kvm_exit layout, for the module to check
	 * before it reads the VMCB (record and capture alike) */
	if ((ctl->flags & VMSCOPE_CTL_ENABLE) && !(ctl->flags & VMSCOPE_CTL_NO_EXIT_REASON) &&
	    !h->layout_sent) {
		(void)exit_layout_send(h->fd, h->prog);
		h->layout_sent = 1;
	}
	return ioctl(h->fd, VMSCOPE_IOC_PROBE_CTL, ctl) < 0 ? errno : 0;
}

int hb_probes(struct hb *h, const struct vmscope_probe_ctl *ctl)
{
	int err = hb_try_probes(h, ctl);

	if (err) {
		fprintf(stderr, "%s: %s probing: %s\n", h->prog,
			ctl->flags & VMSCOPE_CTL_ENABLE ? "enabling" : "disabling",
			strerror(err));
		return -1;
	}
	return 0;
}

int hb_stop(struct hb *h)
{
	struct vmscope_probe_ctl off = { 0 };
	int r = hb_probes(h, &off);
	struct vmscope_session_counts sc;

	/* probing off: these are final; the stop below frees the slot */
	memset(&sc, 0, sizeof(sc));
	if (ioctl(h->fd, VMSCOPE_IOC_GET_SESSION_COUNTS, &sc) == 0) {
		memcpy(h->handed, sc.handed, sizeof(h->handed));
		h->have_handed = 1;
	}
	if (ioctl(h->fd, VMSCOPE_IOC_SESSION_STOP) < 0) {
		fprintf(stderr, "%s: SESSION_STOP: %s\n", h->prog, strerror(errno));
		r = -1;
	}
	return r;
}

void hb_losses(const struct hb *h, unsigned int buf, struct hb_losses *l)
{
	const struct vmscope_rb_ctrl *c = h->map ? (const void *)h->map[buf] : NULL;

	memset(l, 0, sizeof(*l));
	if (!c)
		return;
	l->full = __atomic_load_n(&c->lost_full, __ATOMIC_RELAXED);
	l->too_big = __atomic_load_n(&c->lost_too_big, __ATOMIC_RELAXED);
	l->overwritten = __atomic_load_n(&c->lost_overwritten, __ATOMIC_RELAXED);
}

void hb_close(struct hb *h)
{
	for (unsigned int i = 0; h->map && i < h->nbuf; i++)
		if (h->map[i])
			munmap((void *)h->map[i], h->cfg.chan[hb_chan(h, i)].cpu_bytes);
	free(h->map);
	h->map = NULL;
	if (h->fd >= 0)
		close(h->fd);
	h->fd = -1;
}
