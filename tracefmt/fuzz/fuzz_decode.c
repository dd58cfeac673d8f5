/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libFuzzer target: decoding each stored message type from hostile bytes
 * (the first byte chooses the frame type, all of them reachable), with the
 * allocation budget and semantic checks. Oracle: whatever decodes and
 * passes the checks re-encodes into something that decodes and passes
 * again (within the same budget) and re-encodes to the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tracefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ProtobufCMessage *m, *m2;
	uint16_t type;
	size_t budget, n;
	uint8_t *a, *b;

	if (size < 1)
		return 0;
	type = (uint16_t)(1 + data[0] % TF_FRAME_MSG_LAST);
	budget = tf_msg_budget(type, size - 1);
	if (tf_msg_decode(type, data + 1, size - 1, budget, &m, NULL, 0))
		return 0;
	n = protobuf_c_message_get_packed_size(m);
	a = malloc(n + 1);
	b = malloc(n + 1);
	if (protobuf_c_message_pack(m, a) != n)
		abort();
	if (tf_msg_decode(type, a, n, budget, &m2, NULL, 0))
		abort();
	if (protobuf_c_message_get_packed_size(m2) != n ||
	    protobuf_c_message_pack(m2, b) != n || memcmp(a, b, n) != 0)
		abort();
	tf_msg_free(m2);
	tf_msg_free(m);
	free(a);
	free(b);
	return 0;
}
