/*
 * Internals shared by the two text formatters of decode.c (snprintf per
 * field, any conversion) and format_prog.c (compiled once per descriptor,
 * hand-rolled common conversions): one parser of a conversion and one
 * reader of an integer field, so that both see a format the same way.
 */
#ifndef VMSCOPE_KVM_PROBES_DECODE_CONV_H
#define VMSCOPE_KVM_PROBES_DECODE_CONV_H

#include <stdint.h>
#include <string.h>

#include <vmscope/events.h>

/* One parsed conversion: the spec without length modifier, and its kind. */
struct vmscope_conv {
	char flags[16];		/* "%#08" ... flags, width, precision */
	char kind;		/* d i u x X o c s */
};

/* Largest width or precision a format may give (larger: malformed). */
#define VMSCOPE_CONV_WIDTH_MAX	255

/*
 * Parses the conversion at @p (just after '%'). Returns the number of
 * characters consumed, or -1 if malformed (including a width or
 * precision above VMSCOPE_CONV_WIDTH_MAX).
 */
int vmscope_parse_conv(const char *p, struct vmscope_conv *c);

/* Reads an integer field, sign-extending signed types. */
static inline void vmscope_read_int(unsigned int type, const unsigned char *p,
				    unsigned long long *u, long long *s)
{
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (type) {
	case VMSCOPE_FT_u8: memcpy(&v8, p, 1); *u = v8; *s = v8; break;
	case VMSCOPE_FT_u16: memcpy(&v16, p, 2); *u = v16; *s = v16; break;
	case VMSCOPE_FT_u32: memcpy(&v32, p, 4); *u = v32; *s = v32; break;
	case VMSCOPE_FT_s32: memcpy(&v32, p, 4); *s = (int32_t)v32; *u = (unsigned long long)*s; break;
	case VMSCOPE_FT_s64: memcpy(&v64, p, 8); *s = (int64_t)v64; *u = v64; break;
	default: memcpy(&v64, p, 8); *u = v64; *s = (long long)v64; break;
	}
}

#endif
