/*
 * libFuzzer target: the compiled formatter (format_prog.c) against
 * vmscope_format_event() on descriptors built from the input, as a damaged
 * or hostile trace could store them (the reader checks them with
 * vmscope_desc_check() first, so only those that pass are formatted).
 *
 *   byte 0: number of fields (mod VMSCOPE_MAX_FIELDS + 1); per field one
 *     type byte (u8 .. str) and one size byte (strings: 1..32); fields are
 *     laid out one after the other (cut at VMSCOPE_MAX_PAYLOAD);
 *   then the format up to a NUL (at most VMSCOPE_FORMAT_LEN - 1 bytes);
 *   then the payload, zero-filled if short.
 *
 * Oracle: for several buffer sizes, the same return value and the same
 * bytes in the whole buffer; no out-of-bounds access (ASan).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "format_prog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t buflens[] = { 512, 0, 1, 9, 64, 160 };
	struct vmscope_event_desc d;
	struct vmscope_fmt_prog prog;
	uint8_t payload[VMSCOPE_MAX_PAYLOAD];
	size_t i = 1, off = 0, flen;
	char why[128];

	if (!size)
		return 0;
	memset(&d, 0, sizeof(d));
	strcpy(d.name, "fuzz");
	d.nr_fields = data[0] % (VMSCOPE_MAX_FIELDS + 1);
	for (unsigned int k = 0; k < d.nr_fields; k++) {
		static const unsigned int sizes[] = { 1, 2, 4, 8, 4, 8 };
		unsigned int t = i < size ? data[i] % 7 : 0;
		unsigned int sz = t == 6 ? 1 + (i + 1 < size ? data[i + 1] % 32 : 0) : sizes[t];

		i += 2;
		if (off + sz > VMSCOPE_MAX_PAYLOAD) {
			d.nr_fields = k;
			break;
		}
		d.fields[k].type = (uint16_t)(VMSCOPE_FT_u8 + t);
		d.fields[k].size = (uint16_t)sz;
		d.fields[k].offset = (uint16_t)off;
		d.fields[k].name[0] = 'f';
		off += sz;
	}
	d.payload_size = (uint32_t)off;
	for (flen = 0; i < size && data[i] && flen < sizeof(d.format) - 1; i++)
		d.format[flen++] = (char)data[i];
	i++;
	memset(payload, 0, sizeof(payload));
	if (i < size)
		memcpy(payload, data + i, size - i < sizeof(payload) ? size - i : sizeof(payload));
	if (vmscope_desc_check(&d, why, sizeof(why)))
		return 0;
	vmscope_fmt_compile(&prog, &d);
	for (size_t b = 0; b < sizeof(buflens) / sizeof(*buflens); b++) {
		char want[512], got[512];

		memset(want, 0x5a, sizeof(want));
		memset(got, 0x5a, sizeof(got));
		if (vmscope_format_event(&d, payload, d.payload_size, want, buflens[b]) !=
		    vmscope_fmt_run(&prog, payload, d.payload_size, got, buflens[b]) ||
		    memcmp(want, got, sizeof(want)))
			abort();
	}
	return 0;
}
