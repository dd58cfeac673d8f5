// SPDX-License-Identifier: GPL-2.0
/* A trigger's frame: see trigger_frame.h. */
#include <stdio.h>
#include <string.h>

#include "trigger_frame.h"
#include "frame_int.h"
#include "util_endian.h"

static uint8_t *put_text(uint8_t *p, const char *s)
{
	size_t l = strnlen(s, OL_TG_TEXT - 1);

	*p++ = (uint8_t)l;
	for (size_t i = 0; i < l; i++)
		*p++ = s[i] >= 0x20 && s[i] < 0x7f ? (uint8_t)s[i] : '?';
	return p;
}

size_t ol_trig_encode(const struct ol_trig *t, uint8_t *buf)
{
	uint8_t *p = buf;

	le_put32(p, OL_TG_MAGIC);
	le_put16(p + 4, OL_TG_VERSION);
	p[6] = t->kind;
	p[7] = 0;
	le_put32(p + 8, t->vcpu);
	le_put64(p + 12, t->start_ns);
	le_put64(p + 20, t->dur_ns);
	le_put64(p + 28, t->threshold_ns);
	p += OL_TG_HEAD;
	p = put_text(p, t->what);
	p = put_text(p, t->task);
	p = put_text(p, t->host_task);
	return (size_t)(p - buf);
}

/* A text at *@p (@left bytes) into @out: 0, or -1 (@why). */
static int get_text(const uint8_t **p, size_t *left, char *out, const char *name, char *why,
		    size_t whylen)
{
	size_t l;

	if (*left < 1)
		return ol_frame_why(why, whylen, "cut short before its %s", name);
	l = (*p)[0];
	if (l >= OL_TG_TEXT)
		return ol_frame_why(why, whylen, "%s of %zu bytes (at most %d)", name, l, OL_TG_TEXT - 1);
	if (*left < 1 + l)
		return ol_frame_why(why, whylen, "cut short in its %s", name);
	for (size_t i = 0; i < l; i++)
		if ((*p)[1 + i] < 0x20 || (*p)[1 + i] >= 0x7f)
			return ol_frame_why(why, whylen, "%s: byte 0x%02x is not printable", name,
				   (*p)[1 + i]);
	memcpy(out, *p + 1, l);
	out[l] = '\0';
	*p += 1 + l;
	*left -= 1 + l;
	return 0;
}

int ol_trig_parse(const uint8_t *buf, size_t len, struct ol_trig *t, char *why, size_t whylen)
{
	const uint8_t *p;
	size_t left;
	unsigned int v;

	memset(t, 0, sizeof(*t));
	if (len < 6 || le_get32(buf) != OL_TG_MAGIC)
		return ol_frame_why(why, whylen, "not a trigger frame");
	v = le_get16(buf + 4);
	if (v != OL_TG_VERSION)
		return ol_frame_why(why, whylen, "trigger frame version %u (this daemon reads %u: the "
			   "recorder is of another build)", v, OL_TG_VERSION);
	if (len < OL_TG_HEAD)
		return ol_frame_why(why, whylen, "trigger frame of %zu bytes: cut short", len);
	if (buf[6] != OL_TG_EXIT && buf[6] != OL_TG_STALL)
		return ol_frame_why(why, whylen, "trigger kind %u", buf[6]);
	if (buf[7])
		return ol_frame_why(why, whylen, "trigger frame: byte 7 is %u, not 0", buf[7]);
	t->kind = buf[6];
	t->vcpu = le_get32(buf + 8);
	t->start_ns = le_get64(buf + 12);
	t->dur_ns = le_get64(buf + 20);
	t->threshold_ns = le_get64(buf + 28);
	if (t->dur_ns <= t->threshold_ns)
		return ol_frame_why(why, whylen, "a trigger of %llu ns that does not cross its threshold "
			   "of %llu ns", (unsigned long long)t->dur_ns,
			   (unsigned long long)t->threshold_ns);
	p = buf + OL_TG_HEAD;
	left = len - OL_TG_HEAD;
	if (get_text(&p, &left, t->what, "what", why, whylen) ||
	    get_text(&p, &left, t->task, "task", why, whylen) ||
	    get_text(&p, &left, t->host_task, "host task", why, whylen))
		return -1;
	if (left)
		return ol_frame_why(why, whylen, "trigger frame: %zu bytes after its end", left);
	return 0;
}
