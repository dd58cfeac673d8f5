/* Userspace: turn a payload into text using only its descriptor. */
#ifndef VMSCOPE_KVM_PROBES_DECODE_H
#define VMSCOPE_KVM_PROBES_DECODE_H

#include <stddef.h>

#include <vmscope/events.h>

/*
 * Checks that @d is usable for decoding: fields inside the payload and in
 * VMSCOPE_MAX_PAYLOAD, known types, sizes matching types, and a format
 * whose conversions consume exactly nr_fields values of fitting kinds
 * (%s only for strings). Descriptors come from a module or a trace file, so
 * they are checked before use. Returns 0, or -1 with a reason in @why.
 */
int vmscope_desc_check(const struct vmscope_event_desc *d, char *why, size_t whylen);

/*
 * Formats @payload (@len bytes) of event @d into @buf as its format string
 * says, each conversion taking the next field with that field's own width.
 * Returns the length snprintf would have written, or -1 when @d fails
 * vmscope_desc_check() or @len is shorter than the payload.
 */
int vmscope_format_event(const struct vmscope_event_desc *d, const void *payload,
			 size_t len, char *buf, size_t buflen);

/* "u32", "str" ... for listings. */
const char *vmscope_field_type_name(unsigned int type);

#endif
