/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm_req_parse on what a client of the socket sends: no crash, no leak,
 * bounded; what it accepts passes again after a round trip through
 * dm_req_pack. Inputs starting with 'S' are turned into a well-formed
 * Request first (op, mode, cid, pid, sizes, trigger options from the next
 * bytes; the strings from the rest, split at NULs), so that the mutations
 * reach the field checks and not only protobuf's decoder.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t buf[DM_MSG_MAX + 1];

/* The next NUL-terminated piece of @s (advanced), or "" at the end. */
static char *piece(char **s, char *end)
{
	char *p = *s;

	if (p >= end)
		return (char *)"";
	*s = p + strnlen(p, (size_t)(end - p)) + 1;
	return p;
}

/* A trigger option from one byte: 0, 2^64-1 ("off"), 2^64-2, or a power
 * of two times the byte's low bits, so that the bounds are reached. */
static uint64_t trig_value(uint8_t b)
{
	switch (b >> 6) {
	case 0:
		return 0;
	case 1:
		return b & 1 ? UINT64_MAX : UINT64_MAX - 1;
	default:
		return (uint64_t)(b & 7) << (b >> 3 & 31);
	}
}

static size_t structured(const uint8_t *data, size_t size)
{
	static const char *const hooks[] = { "started", "stopped", "release", "reconnect",
					     "prepare", "" };
	Vmscope__Daemon__Request m = VMSCOPE__DAEMON__REQUEST__INIT;
	Vmscope__Daemon__Domain d = VMSCOPE__DAEMON__DOMAIN__INIT;
	Vmscope__Daemon__TraceOptions o = VMSCOPE__DAEMON__TRACE_OPTIONS__INIT;
	static char text[DM_MSG_MAX];
	char *s = text, *end;
	size_t n;

	if (size < 20)
		return 0;
	m.version = data[1] & 0x80 ? data[1] : DM_PROTO_VERSION;
	m.op = (Vmscope__Daemon__Op)(data[2] % 7);
	m.hook_event = (char *)hooks[data[3] % 6];
	d.cid = data[4] | (uint32_t)data[5] << 8 | (data[6] & 0x80 ? 0xffff0000u : 0);
	d.pid = (int32_t)(data[7] | (uint32_t)data[8] << 8 | (uint32_t)(data[6] & 1) << 31);
	o.mode = data[9] % 4;
	o.buffer_size = (uint64_t)data[10] << (data[11] % 48);
	o.duration_s = data[12] & 0x80 ? -1.0 * data[13] : (double)data[13] * data[14];
	o.trigger_exit_us = trig_value(data[16]);
	o.trigger_stall_us = trig_value(data[17]);
	o.snapshot_before_ms = trig_value(data[18]);
	o.snapshot_after_ms = trig_value(data[19]);
	n = size - 20 < sizeof(text) - 1 ? size - 20 : sizeof(text) - 1;
	memcpy(text, data + 20, n);
	text[n] = '\0';
	end = text + n;
	d.name = piece(&s, end);
	d.uuid = piece(&s, end);
	o.events = piece(&s, end);
	o.output = piece(&s, end);
	if (!(data[15] & 1))
		m.domain = &d;
	if (!(data[15] & 2))
		m.options = &o;
	if (vmscope__daemon__request__get_packed_size(&m) > DM_MSG_MAX)
		return 0;
	return vmscope__daemon__request__pack(&m, buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t again[DM_MSG_MAX];
	struct dm_req r, back;
	char why[200];
	size_t n;

	if (size && data[0] == 'S') {
		size = structured(data, size);
		data = buf;
	}
	if (dm_req_parse(data, size, &r, why, sizeof(why))) {
		if (!why[0])
			abort();
		return 0;
	}
	n = dm_req_pack(&r, again);
	if (!n || dm_req_parse(again, n, &back, why, sizeof(why)))
		abort();
	if (back.op != r.op || back.hook != r.hook || strcmp(back.dom.name, r.dom.name) ||
	    back.dom.cid != r.dom.cid || back.pid != r.pid ||
	    strcmp(back.dom.opts.output, r.dom.opts.output) ||
	    back.dom.opts.trigger_exit_us != r.dom.opts.trigger_exit_us ||
	    back.dom.opts.trigger_stall_us != r.dom.opts.trigger_stall_us ||
	    back.dom.opts.snapshot_before_ms != r.dom.opts.snapshot_before_ms ||
	    back.dom.opts.snapshot_after_ms != r.dom.opts.snapshot_after_ms)
		abort();
	/* what the daemon takes holds domxml.h's ranges */
	if (vd_check_triggers(&r.dom.opts, why, sizeof(why)))
		abort();
	return 0;
}
