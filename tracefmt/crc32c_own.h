/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CRC32C without ISA-L, for the statically linked `vmscope-agent` only
 * (crc32c_own.c says why). Same contract as tf_crc32c() (crc32c.h):
 * standard CRC32C, continue a running value by passing it back in.
 */
#ifndef VMSCOPE_TRACEFMT_CRC32C_OWN_H
#define VMSCOPE_TRACEFMT_CRC32C_OWN_H

#include <stddef.h>
#include <stdint.h>

/* The SSE4.2 instruction where the CPU has it, else the table. */
uint32_t tf_crc32c_own(uint32_t crc, const void *buf, size_t len);

/* The two ways, for the unit test that checks both against ISA-L. */
uint32_t tf_crc32c_own_table(uint32_t crc, const void *buf, size_t len);
/* 1 if tf_crc32c_own_sse42() may be called on this CPU. */
int tf_crc32c_own_has_sse42(void);
uint32_t tf_crc32c_own_sse42(uint32_t crc, const void *buf, size_t len);

#endif
