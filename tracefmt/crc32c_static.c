/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tf_crc32c() for statically linked programs (the guest agent): ISA-L has
 * no static archive in Debian 12, so crc32c_own.c computes it (see there).
 * Linked instead of crc32c.c, never next to it.
 */
#include "crc32c.h"
#include "crc32c_own.h"

uint32_t tf_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return tf_crc32c_own(crc, buf, len);
}
