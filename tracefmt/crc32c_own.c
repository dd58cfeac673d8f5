/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC32C written here rather than taken from a library, for one reason:
 * the guest agent must be a statically linked binary (it runs in minimal
 * guests with only busybox), and Debian 12's libisal-dev ships no static
 * archive (`dpkg -L libisal-dev`: libisal.so only), nor does any other
 * Debian 12 package offer a static CRC32C. Everything else links ISA-L
 * (crc32c.c); tracefmt-crc-own checks this code against it on random
 * buffers.
 *
 * Two ways: the SSE4.2 `crc32` instruction (it computes exactly CRC32C,
 * the Castagnoli polynomial; 8 bytes per instruction) when the CPU has it,
 * and a byte-wise table otherwise (other architectures, old x86). The
 * agent sends one sub-buffer per frame, so a few hundred MB/s suffice;
 * ISA-L's folding tricks would be speed the agent does not need.
 */
#include <string.h>

#include "crc32c_own.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#define CRC32C_POLY_REFLECTED 0x82F63B78u

static uint32_t crc_table[256];
static int use_sse42;

/*
 * Set before main() runs, so no call ever races with the setting (the
 * CPU check needs __builtin_cpu_init() first when run from a constructor).
 */
__attribute__((constructor)) static void crc_own_init(void)
{
#if defined(__x86_64__)
	__builtin_cpu_init();
#endif
	use_sse42 = tf_crc32c_own_has_sse42();
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY_REFLECTED : c >> 1;
		crc_table[i] = c;
	}
}

uint32_t tf_crc32c_own_table(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t s = ~crc;

	while (len--)
		s = (s >> 8) ^ crc_table[(s ^ *p++) & 0xff];
	return ~s;
}

#if defined(__x86_64__)
int tf_crc32c_own_has_sse42(void)
{
	return __builtin_cpu_supports("sse4.2");
}

__attribute__((target("sse4.2")))
uint32_t tf_crc32c_own_sse42(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t s = ~crc;

	/* bytes up to an 8-byte boundary, then 8 at a time, then the rest */
	for (; len && ((uintptr_t)p & 7); len--)
		s = _mm_crc32_u8((uint32_t)s, *p++);
	for (; len >= 8; len -= 8, p += 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		s = _mm_crc32_u64(s, w);
	}
	for (; len; len--)
		s = _mm_crc32_u8((uint32_t)s, *p++);
	return ~(uint32_t)s;
}
#else
int tf_crc32c_own_has_sse42(void)
{
	return 0;
}

uint32_t tf_crc32c_own_sse42(uint32_t crc, const void *buf, size_t len)
{
	return tf_crc32c_own_table(crc, buf, len);
}
#endif

uint32_t tf_crc32c_own(uint32_t crc, const void *buf, size_t len)
{
	return use_sse42 ? tf_crc32c_own_sse42(crc, buf, len)
		     : tf_crc32c_own_table(crc, buf, len);
}
