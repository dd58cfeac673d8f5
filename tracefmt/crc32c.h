/* SPDX-License-Identifier: GPL-2.0 */
/* CRC32C (Castagnoli, as in iSCSI/ext4/SCTP), computed by ISA-L. */
#ifndef VMSCOPE_TRACEFMT_CRC32C_H
#define VMSCOPE_TRACEFMT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Standard CRC32C of buf: CRC32C("123456789") == 0xE3069283.
 * Continue a running CRC by passing the previous result as crc (start
 * with 0): tf_crc32c(tf_crc32c(0, a, n), b, m) == CRC32C of a||b.
 */
uint32_t tf_crc32c(uint32_t crc, const void *buf, size_t len);

#endif
