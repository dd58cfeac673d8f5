/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A decoded message's string field into a fixed array, for the places that
 * keep a message's strings in structs of their own (reader/reader_desc.c:
 * stored event descriptors; daemon/proto.c: vmscoped's requests). Here,
 * beside the messages, because both depend on schemas/ and not on each
 * other. Inline in a header: the guest agent's static build and the fuzz
 * targets compile their sources without linking this folder's library.
 */
#ifndef VMSCOPE_SCHEMAS_PB_STR_H
#define VMSCOPE_SCHEMAS_PB_STR_H

#include <stddef.h>
#include <string.h>

/*
 * Copy @src, terminated, into @dst of @cap bytes; -1 (and @dst untouched)
 * when it does not fit. NULL copies as "", an absent string: callers
 * need not tell an unset field from an empty one.
 */
static inline int pb_str_copy(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strlen(src) : 0;

	if (n >= cap)
		return -1;
	memcpy(dst, src ? src : "", n + 1);
	return 0;
}

#endif
