/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's connection to the host collector: AF_VSOCK stream, frames as
 * collector/guest_link.h describes them (FileHeader, GuestHello, then
 * StreamChunks), one frame at a time through one buffer of frame_cap
 * bytes (a sub-buffer plus framing: the agent's memory does not grow with
 * the rate or with the time the host is away).
 *
 * agent_drain(): the module's side of it, taking delivered sub-buffers
 * (GET_SUBBUF), sending them, giving them back (PUT_SUBBUF).
 *
 * Blocking sends: a slow host slows the agent, and the ring buffer in
 * front of it absorbs the difference (or drops and counts, discard mode).
 * A failed send closes the connection; the sub-buffer it carried stays
 * taken and is the first thing the next connection sends, so a reconnect
 * loses only what the host received but never processed. That part the
 * agent cannot know (there are no acknowledgements); the hello of the next
 * connection says how much was sent before (cursors), and the receiver,
 * which knows what it kept, counts the difference as lost.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <vmscope/ringbuf_abi.h>

#include "agent.h"
#include "file.pb-c.h"
#include "stream.pb-c.h"
#include "tracefmt.h"

static int send_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_msg(struct agent *a, uint16_t type, const ProtobufCMessage *m)
{
	size_t need = tf_msg_frame_size(m), len;
	int e;

	if (need > a->frame_cap)
		return -EMSGSIZE;
	len = tf_msg_frame_encode(type, a->frame_seq, m, a->frame);
	if (!len)
		return -EINVAL;
	e = send_all(a->sock, a->frame, len);
	if (e)
		return e;
	a->frame_seq++;
	a->bytes += len;
	return 0;
}

int agent_frame_alloc(struct agent *a)
{
	a->frame_cap = ((size_t)1 << a->cfg.chan[0].subbuf_shift) + 4096;
	if (tf_msg_frame_size(&a->hello->base) > a->frame_cap)
		a->frame_cap = tf_msg_frame_size(&a->hello->base) + 4096;
	a->frame = malloc(a->frame_cap);
	return a->frame ? 0 : -ENOMEM;
}

void agent_disconnect(struct agent *a)
{
	if (a->sock < 0)
		return;
	close(a->sock);
	a->sock = -1;
	/* what the broken connection got counts as sent before the next */
	for (uint32_t c = 0; c < a->cfg.nr_cpu_ids; c++) {
		a->cpus[c].chunks_sent += a->cpus[c].conn_chunks;
		a->cpus[c].records_sent += a->cpus[c].conn_records;
		a->cpus[c].conn_chunks = 0;
		a->cpus[c].conn_records = 0;
	}
}

int agent_connect(struct agent *a)
{
	struct sockaddr_vm addr = {
		.svm_family = AF_VSOCK,
		.svm_cid = a->cid,
		.svm_port = a->port,
	};
	struct timeval tv = { .tv_sec = 10 };
	int fd, e;

	fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* a host that accepts but never reads must not stall shutdown forever */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		e = -errno;
		close(fd);
		return e;
	}
	return agent_link_start(a, fd);
}

int agent_link_start(struct agent *a, int fd)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	int e;

	a->sock = fd;
	a->frame_seq = 0;
	o.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
	fh.format_version = 1;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fh.origin = &o;
	fh.created_realtime_ns = 0;
	fh.writer = "vmscope agent";
	for (uint32_t c = 0; c < a->cfg.nr_cpu_ids; c++) {
		Vmscope__Trace__GuestCpuCursor *k = a->hello->cursors[c];

		k->next_seq = a->cpus[c].holding ? a->cpus[c].req.seq
						 : a->cpus[c].next_seq;
		k->chunks_sent = a->cpus[c].chunks_sent;
		k->records_sent = a->cpus[c].records_sent;
	}
	a->hello->connection = a->connection;
	e = send_msg(a, TF_FRAME_FILE_HEADER, &fh.base);
	if (!e)
		e = send_msg(a, TF_FRAME_GUEST_HELLO, &a->hello->base);
	if (e) {
		agent_disconnect(a);
		return e;
	}
	a->connection++;
	return 0;
}

int agent_send_chunk(struct agent *a, uint32_t cpu)
{
	struct agent_cpu *c = &a->cpus[cpu];
	const struct vmscope_rb_subbuf_hdr *h =
		(const void *)(c->map + c->req.offset);
	Vmscope__Trace__StreamChunk k = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	uint32_t size = (uint32_t)1 << a->cfg.chan[0].subbuf_shift;
	uint32_t data_size = h->data_size;
	int e;

	/* the mapped header is the writer's; trust only what fits */
	if (data_size < VMSCOPE_RB_SB_HDR_SIZE || data_size > size)
		data_size = VMSCOPE_RB_SB_HDR_SIZE;
	o.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
	o.cpu = cpu;
	k.origin = &o;
	k.seq = h->seq;
	k.begin_ts = h->begin_ts;
	k.end_ts = h->end_ts;
	k.lost_before = h->lost_before;
	k.nr_records = h->records;
	k.records.data = (uint8_t *)h + VMSCOPE_RB_SB_HDR_SIZE;
	k.records.len = data_size - VMSCOPE_RB_SB_HDR_SIZE;
	e = send_msg(a, TF_FRAME_CHUNK, &k.base);
	if (e) {
		a->send_failures++;
		agent_disconnect(a);
		return e;
	}
	c->conn_chunks++;
	c->conn_records += h->records;
	c->lost_before = h->lost_before;
	c->next_seq = h->seq + 1;
	a->chunks++;
	a->records += h->records;
	return 0;
}

int agent_send_tail_loss(struct agent *a, uint32_t cpu)
{
	struct agent_cpu *c = &a->cpus[cpu];
	Vmscope__Trace__LossRecord l = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;

	if (c->lost_total <= c->lost_before)
		return 0;
	o.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
	o.cpu = cpu;
	l.origin = &o;
	l.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD;
	l.events = c->lost_total - c->lost_before;
	l.detail = "ring buffer drops after the last sub-buffer began";
	return send_msg(a, TF_FRAME_LOSS, &l.base);
}

int agent_drain(struct agent *a)
{
	for (uint32_t cpu = 0; cpu < a->cfg.nr_cpu_ids; cpu++) {
		struct agent_cpu *c = &a->cpus[cpu];

		if (!c->map)
			continue;
		while (a->sock >= 0) {
			if (!c->holding) {
				memset(&c->req, 0, sizeof(c->req));
				c->req.buf = cpu;
				if (ioctl(a->dev, VMSCOPE_IOC_GET_SUBBUF, &c->req) < 0) {
					if (errno == EAGAIN)
						break;
					perror("vmscope agent: GET_SUBBUF");
					return -1;
				}
				c->holding = 1;
				c->lost_total = c->req.lost_total;
			}
			if (agent_send_chunk(a, cpu))
				break;	/* disconnected; still holding it */
			c->holding = 0;
			if (ioctl(a->dev, VMSCOPE_IOC_PUT_SUBBUF, &cpu) < 0) {
				perror("vmscope agent: PUT_SUBBUF");
				return -1;
			}
		}
	}
	return 0;
}
