/*
 * Compiled format strings (format_prog.h). Integers are converted by hand
 * rather than with snprintf because the conversions events use are few
 * (%u %d %x %#x and widths) and snprintf's per-call cost (parsing its own
 * format, setting up a string FILE) dominated `vmscope dump`; anything else
 * is left to vmscope_format_event(), so the rare conversions stay exactly
 * what glibc prints.
 */
#include <string.h>

#include "decode.h"
#include "decode_conv.h"
#include "format_prog.h"

enum { OP_LIT, OP_DEC, OP_UDEC, OP_HEX, OP_STR, OP_CHAR };

#define F_LEFT	1u	/* '-' */
#define F_ZERO	2u	/* '0' (ignored with '-', as printf does) */
#define F_ALT	4u	/* '#': 0x/0X before a non-zero hex value */
#define F_UPPER	8u	/* %X */

/* Longest digits of a 64-bit value: decimal with sign, hex with 0x. */
#define DEC_MAX	20u
#define HEX_MAX	18u

/*
 * The op for conversion @c of field @f; false when the ops do not do it
 * by hand (then the whole format goes through vmscope_format_event()).
 */
static bool conv_op(const struct vmscope_conv *c, const struct vmscope_field_desc *f,
		    struct vmscope_fmt_op *op, struct vmscope_fmt_prog *p)
{
	const char *s = c->flags + 1;	/* after the '%' */
	unsigned int flags = 0, width = 0, longest;

	for (; *s && strchr("#0- +", *s); s++) {
		if (*s == '+' || *s == ' ')
			return false;
		flags |= *s == '-' ? F_LEFT : *s == '0' ? F_ZERO : F_ALT;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		width = width * 10 + (unsigned int)(*s - '0');
		if (width > UINT8_MAX)
			return false;
	}
	if (*s)			/* a precision */
		return false;
	op->type = (uint8_t)f->type;
	op->off = f->offset;
	op->len = f->size;
	switch (c->kind) {
	case 'c':		/* vmscope_format_event() ignores its flags */
		op->kind = OP_CHAR;
		p->may_nul = true;
		p->max_len += 1;
		return true;
	case 's':
		if (flags & ~F_LEFT)
			return false;
		op->kind = OP_STR;
		longest = f->size;
		break;
	case 'd': case 'i': case 'u':
		if (flags & F_ALT)
			return false;
		op->kind = c->kind == 'u' ? OP_UDEC : OP_DEC;
		longest = DEC_MAX;
		break;
	case 'x': case 'X':
		op->kind = OP_HEX;
		flags |= c->kind == 'X' ? F_UPPER : 0;
		longest = HEX_MAX;
		break;
	default:		/* %o */
		return false;
	}
	op->flags = (uint8_t)flags;
	op->width = (uint8_t)width;
	p->max_len += width > longest ? width : longest;
	return true;
}

void vmscope_fmt_compile(struct vmscope_fmt_prog *p, const struct vmscope_event_desc *d)
{
	struct vmscope_fmt_op *lit = NULL;
	unsigned int field = 0;
	size_t nlit = 0;
	char why[128];

	memset(p, 0, sizeof(*p));
	p->desc = d;
	/* checked: at most VMSCOPE_MAX_FIELDS conversions, so ops fit */
	if (vmscope_desc_check(d, why, sizeof(why)))
		return;
	for (const char *s = d->format; *s; s++) {
		if (*s != '%' || s[1] == '%') {
			if (!lit) {
				lit = &p->ops[p->nops++];
				lit->kind = OP_LIT;
				lit->off = (uint16_t)nlit;
			}
			p->lit[nlit++] = *s;
			lit->len++;
			p->max_len++;
			s += *s == '%';
			continue;
		}
		struct vmscope_conv c;
		int n = vmscope_parse_conv(s + 1, &c);

		lit = NULL;
		if (!conv_op(&c, &d->fields[field++], &p->ops[p->nops++], p))
			return;
		s += n;
	}
	p->fast = true;
}

/* @v in decimal, ending just before @end; returns where it starts. */
static char *put_dec(char *end, unsigned long long v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

	while (v >= 100) {
		end -= 2;
		memcpy(end, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

char *vmscope_fmt_dec(char *out, unsigned long long v, unsigned int min_digits)
{
	char digits[24], *end = digits + sizeof(digits), *d = put_dec(end, v);

	while (end - d < (long)min_digits && d > digits + 4)
		*--d = '0';
	memcpy(out, d, (size_t)(end - d));
	return out + (end - d);
}

/* @pre then @body, padded to the op's width as printf pads. */
static char *put_padded(char *o, const struct vmscope_fmt_op *op, const char *pre,
			size_t npre, const char *body, size_t nbody)
{
	size_t n = npre + nbody, pad = op->width > n ? op->width - n : 0;

	if (!(op->flags & (F_LEFT | F_ZERO))) {
		memset(o, ' ', pad);
		o += pad;
	}
	memcpy(o, pre, npre);
	o += npre;
	if ((op->flags & (F_LEFT | F_ZERO)) == F_ZERO) {
		memset(o, '0', pad);
		o += pad;
	}
	memcpy(o, body, nbody);
	o += nbody;
	if (op->flags & F_LEFT) {
		memset(o, ' ', pad);
		o += pad;
	}
	return o;
}

static char *put_int(char *o, const struct vmscope_fmt_op *op, const unsigned char *field)
{
	char digits[24], *end = digits + sizeof(digits), *d;
	const char *pre = "";
	size_t npre = 0;
	unsigned long long u;
	long long s;

	vmscope_read_int(op->type, field, &u, &s);
	if (op->kind == OP_HEX) {
		const char *xd = op->flags & F_UPPER ? "0123456789ABCDEF" : "0123456789abcdef";
		unsigned long long v = u;

		d = end;
		do {
			*--d = xd[v & 15];
			v >>= 4;
		} while (v);
		if ((op->flags & F_ALT) && u) {
			pre = op->flags & F_UPPER ? "0X" : "0x";
			npre = 2;
		}
	} else if (op->kind == OP_DEC && s < 0) {
		d = put_dec(end, 0ull - (unsigned long long)s);
		pre = "-";
		npre = 1;
	} else {
		d = put_dec(end, op->kind == OP_DEC ? (unsigned long long)s : u);
	}
	return put_padded(o, op, pre, npre, d, (size_t)(end - d));
}

int vmscope_fmt_run(const struct vmscope_fmt_prog *p, const void *payload, size_t len,
		    char *buf, size_t buflen)
{
	const unsigned char *pl = payload;
	char *o = buf;

	if (!p->fast || p->max_len >= buflen || len < p->desc->payload_size)
		return vmscope_format_event(p->desc, payload, len, buf, buflen);
	for (unsigned int i = 0; i < p->nops; i++) {
		const struct vmscope_fmt_op *op = &p->ops[i];

		switch (op->kind) {
		case OP_LIT:
			memcpy(o, p->lit + op->off, op->len);
			o += op->len;
			break;
		case OP_STR: {
			const char *s = (const char *)pl + op->off;

			o = put_padded(o, op, "", 0, s, strnlen(s, op->len));
			break;
		}
		case OP_CHAR: {
			unsigned long long u;
			long long s;

			vmscope_read_int(op->type, pl + op->off, &u, &s);
			*o++ = (char)(u & 0xff);
			break;
		}
		default:
			o = put_int(o, op, pl + op->off);
			break;
		}
	}
	*o = 0;
	return (int)(o - buf);
}
