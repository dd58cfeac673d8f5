/* SPDX-License-Identifier: GPL-2.0 */
#include <limits.h>
#include <isa-l/crc.h>

#include "crc32c.h"

uint32_t tf_crc32c(uint32_t crc, const void *buf, size_t len)
{
	/*
	 * ISA-L's crc32_iscsi() neither pre- nor post-inverts: it returns the
	 * raw register from the given initial value. The standard CRC32C
	 * starts from ~0 and inverts the result, so undo our own final
	 * inversion to continue a running value. Its length is an int: feed
	 * large buffers in pieces.
	 */
	unsigned int state = ~crc;
	const unsigned char *p = buf;

	while (len > 0) {
		int n = len > (size_t)INT_MAX ? INT_MAX : (int)len;

		/* ISA-L's prototype lacks const; it does not write the buffer. */
		state = crc32_iscsi((unsigned char *)p, n, state);
		p += n;
		len -= (size_t)n;
	}
	return ~state;
}
