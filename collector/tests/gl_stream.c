/* SPDX-License-Identifier: GPL-2.0 */
#include <stdlib.h>
#include <string.h>

#include <vmscope/ringbuf_abi.h>

#include "tracefmt.h"
#include "guest_link.h"
#include "gl_stream.h"

static size_t put(uint8_t **img, size_t *len, size_t *cap, uint16_t type,
		  uint32_t seq, const ProtobufCMessage *m)
{
	size_t need = tf_msg_frame_size(m), at = *len;

	if (*len + need > *cap) {
		*cap = (*len + need) * 2;
		*img = realloc(*img, *cap);
		if (!*img)
			abort();
	}
	if (tf_msg_frame_encode(type, seq, m, *img + *len) != need)
		abort();
	*len += need;
	return at;
}

#define PUT(type, m) do { \
	size_t at_ = put(&img, len, &cap, (type), seq++, (m)); \
	if (offs) \
		offs[n++] = at_; \
} while (0)

uint8_t *gl_test_stream(unsigned nr_chunks, size_t *len, size_t *offs)
{
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__GuestHello h = VMSCOPE__TRACE__GUEST_HELLO__INIT;
	Vmscope__Trace__GuestStateDump sd = VMSCOPE__TRACE__GUEST_STATE_DUMP__INIT;
	Vmscope__Trace__GuestTask t = VMSCOPE__TRACE__GUEST_TASK__INIT, *tp = &t;
	Vmscope__Trace__ClockDesc ck = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__EventTable et = VMSCOPE__TRACE__EVENT_TABLE__INIT;
	Vmscope__Trace__EventDesc ev = VMSCOPE__TRACE__EVENT_DESC__INIT, *evp = &ev;
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	Vmscope__Trace__LossRecord l = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	uint8_t recs[GL_TEST_RECORDS_PER_CHUNK * 16];
	uint8_t *img = NULL;
	size_t cap = 0, n = 0;
	uint32_t seq = 0;
	unsigned i, k;

	*len = 0;
	o.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
	o.vm = 99;	/* a claim the host must ignore */
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fh.origin = &o;
	fh.format_version = 1;
	PUT(TF_FRAME_FILE_HEADER, &fh.base);

	t.pid = 1;
	t.tgid = 1;
	t.comm = "init";
	sd.n_tasks = 1;
	sd.tasks = &tp;
	sd.nr_cpus = GL_TEST_CPUS;
	sd.nr_cpu_ids = GL_TEST_CPUS;
	ck.name = "trace_clock_local";
	ck.unit = "ns";
	ck.ns_mul = 1;
	ck.ns_div = 1;
	ck.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	ck.ts_bits = 64;
	ev.id = 1;
	ev.name = "ev";
	ev.payload_size = 8;
	et.origin = &o;
	et.n_events = 1;
	et.events = &evp;
	h.protocol_version = VMSCOPE_GUEST_PROTOCOL;
	h.token = 0x1234;
	h.sync_available = 1;
	h.clock = &ck;
	h.events = &et;
	h.state = &sd;
	h.subbuf_size = 4096;
	PUT(TF_FRAME_GUEST_HELLO, &h.base);

	memset(recs, 0, sizeof(recs));
	for (k = 0; k < GL_TEST_RECORDS_PER_CHUNK; k++) {
		uint64_t hd = VMSCOPE_RB_REC_HDR(100 + k, 1, 8, 0);

		memcpy(recs + 16 * k, &hd, 8);
		memcpy(recs + 16 * k + 8, &k, sizeof(k));
	}
	c.origin = &o;
	c.records.data = recs;
	c.records.len = sizeof(recs);
	c.nr_records = GL_TEST_RECORDS_PER_CHUNK;
	for (i = 0; i < nr_chunks; i++) {
		o.cpu = i % GL_TEST_CPUS;
		c.seq = 10 + i / GL_TEST_CPUS;
		c.begin_ts = 100 * i;
		c.end_ts = 100 * i + 50;
		PUT(TF_FRAME_CHUNK, &c.base);
	}
	o.cpu = 1;
	l.origin = &o;
	l.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_STREAM;
	l.events = 5;
	PUT(TF_FRAME_LOSS, &l.base);
	if (offs)
		offs[n] = *len;
	return img;
}
