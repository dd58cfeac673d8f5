/*
 * A descriptor's format string compiled once into a list of operations
 * (literal text, one field conversion each), so that printing many events
 * does not parse the format and call snprintf per field for every event:
 * that was most of `vmscope dump`'s time. The output is byte for byte
 * vmscope_format_event()'s (test: kvm-probes/tests/test_format_prog.c,
 * fuzz target fuzz_format_prog).
 */
#ifndef VMSCOPE_KVM_PROBES_FORMAT_PROG_H
#define VMSCOPE_KVM_PROBES_FORMAT_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <vmscope/events.h>

struct vmscope_fmt_op {
	uint8_t kind;		/* enum in format_prog.c */
	uint8_t type;		/* the field's VMSCOPE_FT_* */
	uint8_t flags;		/* '-', '0', '#', upper case hex */
	uint8_t width;		/* minimum width */
	uint16_t off;		/* of the field in the payload, or of the text in lit */
	uint16_t len;		/* of the field, or of the text */
};

struct vmscope_fmt_prog {
	const struct vmscope_event_desc *desc;	/* must outlive the program */
	/*
	 * Every conversion is one the ops do by hand (%d %i %u %x %X with the
	 * flags '-' '0', '#' for hex, a width; %s with '-' and a width; %c).
	 * When false (precision, '+', ' ', %o ... or a descriptor that fails
	 * vmscope_desc_check()), vmscope_fmt_run() calls vmscope_format_event().
	 */
	bool fast;
	bool may_nul;		/* a %c can put a NUL byte inside the text */
	unsigned int nops;
	size_t max_len;		/* the text is never longer than this (fast only) */
	struct vmscope_fmt_op ops[2 * VMSCOPE_MAX_FIELDS + 1];
	char lit[VMSCOPE_FORMAT_LEN];	/* the literal runs, "%%" made "%" */
};

/* Compiles @d's format into @p; always succeeds (see .fast). */
void vmscope_fmt_compile(struct vmscope_fmt_prog *p, const struct vmscope_event_desc *d);

/*
 * Exactly vmscope_format_event(p->desc, payload, len, buf, buflen): same
 * bytes in @buf, same return value; without parsing or snprintf when the
 * program is fast and its longest text fits @buflen.
 */
int vmscope_fmt_run(const struct vmscope_fmt_prog *p, const void *payload, size_t len,
		    char *buf, size_t buflen);

/*
 * Writes @v in decimal at @out, with leading zeros to at least @min_digits
 * digits (at most 20); returns the end. No NUL. For callers that print
 * numbers next to formatted events (`vmscope dump`'s times).
 */
char *vmscope_fmt_dec(char *out, unsigned long long v, unsigned int min_digits);

#endif
