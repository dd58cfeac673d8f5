/*
 * Descriptor-driven decoding: no per-event code, so a trace from another
 * module version decodes with the descriptors stored in it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decode.h"
#include "decode_conv.h"

const char *vmscope_field_type_name(unsigned int type)
{
	switch (type) {
	case VMSCOPE_FT_u8: return "u8";
	case VMSCOPE_FT_u16: return "u16";
	case VMSCOPE_FT_u32: return "u32";
	case VMSCOPE_FT_u64: return "u64";
	case VMSCOPE_FT_s32: return "s32";
	case VMSCOPE_FT_s64: return "s64";
	case VMSCOPE_FT_str: return "str";
	default: return "?";
	}
}

static size_t type_size(unsigned int type)
{
	switch (type) {
	case VMSCOPE_FT_u8: return 1;
	case VMSCOPE_FT_u16: return 2;
	case VMSCOPE_FT_u32: case VMSCOPE_FT_s32: return 4;
	case VMSCOPE_FT_u64: case VMSCOPE_FT_s64: return 8;
	default: return 0;
	}
}

/* See decode_conv.h. */
int vmscope_parse_conv(const char *p, struct vmscope_conv *c)
{
	size_t n = 0, i = 0;
	unsigned long width = 0, precision = 0;

	c->flags[n++] = '%';
	while (p[i] && strchr("#0- +", p[i]) && n < sizeof(c->flags) - 1)
		c->flags[n++] = p[i++];
	while (p[i] >= '0' && p[i] <= '9' && n < sizeof(c->flags) - 1) {
		width = width * 10 + (unsigned long)(p[i] - '0');
		c->flags[n++] = p[i++];
	}
	if (p[i] == '.') {
		c->flags[n++] = p[i++];
		while (p[i] >= '0' && p[i] <= '9' && n < sizeof(c->flags) - 1) {
			precision = precision * 10 + (unsigned long)(p[i] - '0');
			c->flags[n++] = p[i++];
		}
	}
	/*
	 * A width or precision of millions, as a damaged or hostile trace may
	 * store, makes snprintf pad (or allocate) that much for every event.
	 */
	if (n >= sizeof(c->flags) - 1 || width > VMSCOPE_CONV_WIDTH_MAX ||
	    precision > VMSCOPE_CONV_WIDTH_MAX)
		return -1;
	c->flags[n] = 0;
	/* The format says how to show, the field says how wide: drop h/l/ll/z. */
	while (p[i] && strchr("hlzjt", p[i]))
		i++;
	if (!p[i] || !strchr("diuxXocs", p[i]))
		return -1;
	c->kind = p[i];
	return (int)i + 1;
}

int vmscope_desc_check(const struct vmscope_event_desc *d, char *why, size_t whylen)
{
	if (!memchr(d->name, 0, sizeof(d->name)) || !memchr(d->format, 0, sizeof(d->format))) {
		snprintf(why, whylen, "unterminated name or format");
		return -1;
	}
	if (d->nr_fields > VMSCOPE_MAX_FIELDS || d->payload_size > VMSCOPE_MAX_PAYLOAD) {
		snprintf(why, whylen, "%s: too many fields or payload too large", d->name);
		return -1;
	}
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct vmscope_field_desc *f = &d->fields[i];
		size_t ts = type_size(f->type);

		if (!memchr(f->name, 0, sizeof(f->name)) ||
		    (f->type == VMSCOPE_FT_str ? f->size == 0 : ts == 0 || ts != f->size) ||
		    (size_t)f->offset + f->size > d->payload_size) {
			snprintf(why, whylen, "%s: bad field %u", d->name, i);
			return -1;
		}
	}
	unsigned int used = 0;
	for (const char *p = d->format; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			p++;
			continue;
		}
		struct vmscope_conv c;
		int n = vmscope_parse_conv(p + 1, &c);
		if (n < 0) {
			snprintf(why, whylen, "%s: bad conversion at '%s'", d->name, p);
			return -1;
		}
		if (used >= d->nr_fields) {
			snprintf(why, whylen, "%s: format has more conversions than fields", d->name);
			return -1;
		}
		if ((c.kind == 's') != (d->fields[used].type == VMSCOPE_FT_str)) {
			snprintf(why, whylen, "%s: %%%c for field %s", d->name, c.kind,
				 d->fields[used].name);
			return -1;
		}
		used++;
		p += n;
	}
	if (used != d->nr_fields) {
		snprintf(why, whylen, "%s: format uses %u of %u fields", d->name, used, d->nr_fields);
		return -1;
	}
	return 0;
}

/* snprintf into buf at *pos, keeping the would-be total like snprintf. */
#define APPEND(...) do { \
	size_t room_ = *pos < buflen ? buflen - *pos : 0; \
	int n_ = snprintf(room_ ? buf + *pos : NULL, room_, __VA_ARGS__); \
	if (n_ > 0) \
		*pos += (size_t)n_; \
} while (0)

static void emit_field(const struct vmscope_conv *c, const struct vmscope_field_desc *f,
		       const unsigned char *payload, char *buf, size_t buflen, size_t *pos)
{
	const unsigned char *p = payload + f->offset;
	char spec[24];

	if (f->type == VMSCOPE_FT_str) {
		snprintf(spec, sizeof(spec), "%s.*s", c->flags);
		int len = (int)strnlen((const char *)p, f->size);
		APPEND(spec, len, (const char *)p);
		return;
	}
	unsigned long long u;
	long long s;
	vmscope_read_int(f->type, p, &u, &s);
	snprintf(spec, sizeof(spec), "%sll%c", c->flags, c->kind);
	if (c->kind == 'd' || c->kind == 'i')
		APPEND(spec, s);
	else if (c->kind == 'c')
		APPEND("%c", (int)(u & 0xff));
	else
		APPEND(spec, u);
}

int vmscope_format_event(const struct vmscope_event_desc *d, const void *payload,
			 size_t len, char *buf, size_t buflen)
{
	char why[128];
	size_t total = 0, *pos = &total;
	unsigned int field = 0;

	if (vmscope_desc_check(d, why, sizeof(why)) || len < d->payload_size)
		return -1;
	if (buflen)
		buf[0] = 0;
	for (const char *p = d->format; *p; p++) {
		if (*p != '%') {
			/* a run of literal text in one copy: one snprintf per
			 * character was most of `vmscope dump`'s time */
			size_t run = strcspn(p, "%"), room = total < buflen ? buflen - total : 0;

			if (room)
				memcpy(buf + total, p, run < room ? run : room - 1);
			total += run;
			if (buflen)
				buf[total < buflen ? total : buflen - 1] = 0;
			p += run - 1;
			continue;
		}
		if (p[1] == '%') {
			APPEND("%%");
			p++;
			continue;
		}
		struct vmscope_conv c;
		int n = vmscope_parse_conv(p + 1, &c);
		emit_field(&c, &d->fields[field++], payload, buf, buflen, pos);
		p += n;
	}
	return (int)total;
}
