// SPDX-License-Identifier: GPL-2.0
/* A metrics snapshot's frame: see metrics_frame.h. */
#include <stdio.h>
#include <string.h>

#include "metrics_frame.h"
#include "frame_int.h"
#include "util_endian.h"

#define FLAG_BOUND 1u
#define FLAG_STEAL 2u
#define FLAG_STALL 4u
#define FLAGS_KNOWN (FLAG_BOUND | FLAG_STEAL | FLAG_STALL)

/* The head's OL_MX_HEAD_U64 fields, in their order, from @s (absent ones
 * 0); daemon-metrics checks each one's offset. */
static void head_of(const struct ol_msnap *s, uint64_t *h)
{
	int i = 0;

	h[i++] = s->seq;
	h[i++] = s->end_ns;
	h[i++] = s->guest_ns;
	h[i++] = s->kernel_ns;
	h[i++] = s->user_ns;
	h[i++] = s->halted_ns;
	h[i++] = s->preempted_ns;
	h[i++] = s->events_lost;
	h[i++] = s->has_bound ? s->bound_ns : 0;
	h[i++] = s->has_steal ? s->steal_ns : 0;
	for (int st = 0; st < OL_MX_STALL_STATES; st++)
		for (int c = 0; c < OL_MX_STALL_CAUSES; c++)
			h[i++] = s->has_stall ? s->stall_ns[st][c] : 0;
}

size_t ol_msnap_encode(const struct ol_msnap *s, uint8_t *buf)
{
	uint64_t head[OL_MX_HEAD_U64];
	uint8_t *p = buf;
	uint32_t n = s->n_reasons < OL_MX_REASONS ? s->n_reasons : OL_MX_REASONS;

	head_of(s, head);
	le_put32(p, OL_MX_MAGIC);
	le_put16(p + 4, OL_MX_VERSION);
	le_put16(p + 6, (s->has_bound ? FLAG_BOUND : 0) | (s->has_steal ? FLAG_STEAL : 0) |
			(s->has_stall ? FLAG_STALL : 0));
	le_put32(p + 8, n);
	p += 12;
	for (unsigned int i = 0; i < OL_MX_HEAD_U64; i++, p += 8)
		le_put64(p, head[i]);
	for (uint32_t i = 0; i < n; i++) {
		const struct ol_mx_reason *r = &s->r[i];
		size_t l = strnlen(r->name, OL_MX_NAME - 1);

		*p++ = (uint8_t)l;
		memcpy(p, r->name, l);
		p += l;
		le_put64(p, r->count);
		le_put64(p + 8, r->sum_ns);
		p += 16;
		for (int b = 0; b < OL_MX_BUCKETS; b++, p += 8)
			le_put64(p, r->bucket[b]);
	}
	return (size_t)(p - buf);
}

/* One reason at @p (@left bytes) into @r: its size, or 0 (@why). */
static size_t parse_reason(const uint8_t *p, size_t left, struct ol_mx_reason *r, char *why,
			   size_t whylen)
{
	uint64_t in_buckets = 0;
	size_t l = left ? p[0] : 0;
	size_t need = 1 + l + (2 + OL_MX_BUCKETS) * 8;

	if (!left || left < need) {
		ol_frame_why(why, whylen, "a reason is cut short");
		return 0;
	}
	if (l == 0 || l >= OL_MX_NAME) {
		ol_frame_why(why, whylen, "a reason name of %zu bytes", l);
		return 0;
	}
	for (size_t i = 0; i < l; i++) {
		if (p[1 + i] < 0x20 || p[1 + i] > 0x7e) {
			ol_frame_why(why, whylen, "a reason name holds byte 0x%02x", p[1 + i]);
			return 0;
		}
	}
	memset(r->name, 0, sizeof(r->name));
	memcpy(r->name, p + 1, l);
	p += 1 + l;
	r->count = le_get64(p);
	r->sum_ns = le_get64(p + 8);
	for (int b = 0; b < OL_MX_BUCKETS; b++) {
		r->bucket[b] = le_get64(p + 16 + 8 * b);
		if (r->bucket[b] > r->count - in_buckets) {
			ol_frame_why(why, whylen, "reason %s: its buckets hold more than its count",
			    r->name);
			return 0;
		}
		in_buckets += r->bucket[b];
	}
	return need;
}

int ol_msnap_parse(const uint8_t *buf, size_t len, struct ol_msnap *s, char *why,
		   size_t whylen)
{
	uint64_t head[OL_MX_HEAD_U64];
	uint16_t flags;
	size_t off;
	int i = 0;

	memset(s, 0, sizeof(*s));
	/* magic and version first: another build's frame is named as such */
	if (len < 6)
		return ol_frame_why(why, whylen, "a frame of %zu bytes (at least %u)", len, OL_MX_HEAD);
	if (le_get32(buf) != OL_MX_MAGIC)
		return ol_frame_why(why, whylen, "not a metrics frame (magic 0x%08x)", le_get32(buf));
	if (le_get16(buf + 4) != OL_MX_VERSION)
		return ol_frame_why(why, whylen, "frame version %u (this daemon reads %u: the recorder "
			   "is of another build)", le_get16(buf + 4), OL_MX_VERSION);
	if (len < OL_MX_HEAD)
		return ol_frame_why(why, whylen, "a frame of %zu bytes (at least %u)", len, OL_MX_HEAD);
	if (len > OL_MX_FRAME_MAX)
		return ol_frame_why(why, whylen, "a frame of %zu bytes (at most %u)", len,
			   OL_MX_FRAME_MAX);
	flags = le_get16(buf + 6);
	if (flags & ~FLAGS_KNOWN)
		return ol_frame_why(why, whylen, "unknown frame flags 0x%x", flags);
	s->n_reasons = le_get32(buf + 8);
	if (s->n_reasons > OL_MX_REASONS)
		return ol_frame_why(why, whylen, "%u reasons (at most %u)", s->n_reasons, OL_MX_REASONS);
	for (unsigned int k = 0; k < OL_MX_HEAD_U64; k++)
		head[k] = le_get64(buf + 12 + 8 * k);
	s->seq = head[i++];
	s->end_ns = head[i++];
	s->guest_ns = head[i++];
	s->kernel_ns = head[i++];
	s->user_ns = head[i++];
	s->halted_ns = head[i++];
	s->preempted_ns = head[i++];
	s->events_lost = head[i++];
	s->has_bound = flags & FLAG_BOUND;
	s->bound_ns = head[i++];
	s->has_steal = flags & FLAG_STEAL;
	s->steal_ns = head[i++];
	s->has_stall = flags & FLAG_STALL;
	for (int st = 0; st < OL_MX_STALL_STATES; st++)
		for (int c = 0; c < OL_MX_STALL_CAUSES; c++) {
			s->stall_ns[st][c] = head[i++];
			if (!s->has_stall && s->stall_ns[st][c])
				return ol_frame_why(why, whylen, "a stall time without the stall flag");
		}
	if (!s->has_bound && s->bound_ns)
		return ol_frame_why(why, whylen, "a bound without the bound flag");
	if (!s->has_steal && s->steal_ns)
		return ol_frame_why(why, whylen, "a steal time without the steal flag");
	off = OL_MX_HEAD;
	for (uint32_t i = 0; i < s->n_reasons; i++) {
		size_t n = parse_reason(buf + off, len - off, &s->r[i], why, whylen);

		if (!n)
			return -1;
		for (uint32_t j = 0; j < i; j++)
			if (!strcmp(s->r[j].name, s->r[i].name))
				return ol_frame_why(why, whylen, "reason %s twice", s->r[i].name);
		off += n;
	}
	if (off != len)
		return ol_frame_why(why, whylen, "%zu bytes after the last reason", len - off);
	return 0;
}
