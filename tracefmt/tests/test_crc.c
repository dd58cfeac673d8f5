/* SPDX-License-Identifier: GPL-2.0 */
/* CRC32C through ISA-L: standard check value, RFC 3720 vectors, chaining. */
#include <string.h>

#include "util.h"

int main(void)
{
	uint8_t buf[48];

	CHECK_EQ(tf_crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(tf_crc32c(0, "", 0), 0);
	/* RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of ones, incrementing */
	memset(buf, 0, 32);
	CHECK_EQ(tf_crc32c(0, buf, 32), 0x8A9136AAu);
	memset(buf, 0xff, 32);
	CHECK_EQ(tf_crc32c(0, buf, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	CHECK_EQ(tf_crc32c(0, buf, 32), 0x46DD794Eu);
	/* a running CRC equals the CRC of the concatenation, at every split */
	for (size_t k = 0; k <= 9; k++)
		CHECK_EQ(tf_crc32c(tf_crc32c(0, "123456789", k), &"123456789"[k], 9 - k),
			 0xE3069283u);
	return check_result("tracefmt-crc");
}
