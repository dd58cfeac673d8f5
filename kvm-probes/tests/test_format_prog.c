/*
 * The compiled formatter (format_prog.c) against vmscope_format_event(),
 * the snprintf-per-field formatter it replaces in `vmscope dump`: for the
 * compiled-in descriptors and for random descriptors built from every
 * conversion the format syntax accepts (widths, flags, precisions, %%, %c,
 * %o, strings unterminated or not), on random payloads and buffer sizes,
 * both must give the same return value and leave the same bytes in the
 * whole buffer. Also: the compiled-in descriptors take the fast path
 * (otherwise the dump would not be faster at all).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "format_prog.h"
#include "vmscope_events.h"

#include "../../tests/lib/check.h"
#include "../../tests/lib/xorshift.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rng(void)
{
	return vmscope_xorshift64(&rng_state);
}

static void random_payload(const struct vmscope_event_desc *d, uint8_t *p)
{
	for (unsigned int i = 0; i < VMSCOPE_MAX_PAYLOAD; i++)
		p[i] = (uint8_t)rng();
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct vmscope_field_desc *f = &d->fields[i];
		uint64_t v;

		switch (rng() % 4) {
		case 0: /* leave random: strings unterminated, any integer */
			break;
		case 1:
			if (f->type == VMSCOPE_FT_str)
				p[f->offset + rng() % f->size] = 0;
			else
				memset(p + f->offset, 0, f->size);
			break;
		case 2:
			memset(p + f->offset, 0xff, f->size);
			break;
		default:
			v = f->type == VMSCOPE_FT_str ? 0 : rng() % 300;
			if (f->type == VMSCOPE_FT_str)
				p[f->offset] = 0;
			else
				memcpy(p + f->offset, &v, f->size);
			break;
		}
	}
}

/* Both formatters on one payload and buffer size; counts a failure on any difference. */
static int compare(const struct vmscope_fmt_prog *prog, const uint8_t *payload, size_t len,
		   size_t buflen)
{
	char want[1024], got[1024];
	int nw, ng;

	memset(want, 0x5a, sizeof(want));
	memset(got, 0x5a, sizeof(got));
	nw = vmscope_format_event(prog->desc, payload, len, want, buflen);
	ng = vmscope_fmt_run(prog, payload, len, got, buflen);
	EXPECT(nw == ng && !memcmp(want, got, sizeof(want)),
	       "format '%s' buflen %zu: want %d '%.*s', got %d '%.*s'", prog->desc->format,
	       buflen, nw, (int)(buflen ? buflen : 1) - 1, want, ng,
	       (int)(buflen ? buflen : 1) - 1, got);
	return nw == ng && !memcmp(want, got, sizeof(want));
}

static void test_compiled_in(void)
{
	static const size_t buflens[] = { 512, 1, 7, 40, 100 };
	uint8_t payload[VMSCOPE_MAX_PAYLOAD];

	for (unsigned int i = 0; i < VMSCOPE_NR_EVENTS; i++) {
		const struct vmscope_event_desc *d = &vmscope_event_descs[i];
		struct vmscope_fmt_prog prog;

		vmscope_fmt_compile(&prog, d);
		EXPECT(prog.fast && !prog.may_nul, "%s: not on the fast path", d->name);
		EXPECT(prog.max_len < 512, "%s: %zu bytes at most", d->name, prog.max_len);
		for (int k = 0; k < 2000; k++) {
			random_payload(d, payload);
			compare(&prog, payload, d->payload_size, buflens[k % 5]);
		}
		/* a short payload: -1 from both */
		compare(&prog, payload, d->payload_size - 1, 512);
	}
}

static const char *const int_convs[] = {
	"%u", "%d", "%i", "%x", "%X", "%#x", "%#X", "%o", "%#o", "%c", "%-3c", "%05c",
	"%5u", "%-5u", "%05u", "%-05u", "%5d", "%-5d", "%05d", "%0-5d", "%+d", "% d",
	"%+u", "%#d", "%#u", "%#010x", "%#-10X", "%010X", "%#10x", "%20x", "%.3d",
	"%8.3u", "%.0x", "%lld", "%llu", "%hhx", "%zu", "%lu", "%jd", "%ti", "%255u",
	"%256u", "%.255u", "%1x", "%00d", "%--8u", "%##x", "%#0x", "%40d",
};
static const char *const str_convs[] = {
	"%s", "%10s", "%-10s", "%.2s", "%05s", "%-5.3s", "%#s", "%+s", "% s", "%1s",
	"%255s", "%300s", "%ls", "%.0s",
};
static const char *const lits[] = { "", " ", "a=", "100%% ", "%%", "->", "/", "x y z " };

static void random_desc(struct vmscope_event_desc *d)
{
	static const unsigned int sizes[] = { 1, 2, 4, 8, 4, 8 };	/* u8 .. s64 */
	size_t flen = 0;
	unsigned int off = 0;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "random");
	d->nr_fields = 1 + (unsigned int)(rng() % VMSCOPE_MAX_FIELDS);
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		struct vmscope_field_desc *f = &d->fields[i];
		unsigned int t = (unsigned int)(rng() % 7);
		unsigned int sz = t == 6 ? 1 + (unsigned int)(rng() % 20) : sizes[t];
		const char *conv = t == 6 ? str_convs[rng() % (sizeof(str_convs) / sizeof(*str_convs))] :
			int_convs[rng() % (sizeof(int_convs) / sizeof(*int_convs))];
		const char *lit = lits[rng() % (sizeof(lits) / sizeof(*lits))];

		if (off + sz > VMSCOPE_MAX_PAYLOAD) {
			d->nr_fields = i;
			break;
		}
		snprintf(f->name, sizeof(f->name), "f%u", i);
		f->type = (uint16_t)(VMSCOPE_FT_u8 + t);
		f->size = (uint16_t)sz;
		f->offset = (uint16_t)off;
		off += sz;
		flen += (size_t)snprintf(d->format + flen, sizeof(d->format) - flen, "%s%s", lit, conv);
		if (flen >= sizeof(d->format))
			flen = sizeof(d->format) - 1;	/* too long: desc_check decides */
	}
	if (flen + 2 < sizeof(d->format) && rng() % 2)
		strcat(d->format, " .");
	d->payload_size = off;
}

static void test_random_descriptors(void)
{
	static const size_t buflens[] = { 1024, 512, 0, 1, 13, 64, 200 };
	unsigned int checked = 0, fast = 0, slow = 0;
	uint8_t payload[VMSCOPE_MAX_PAYLOAD];
	struct vmscope_event_desc d;
	char why[128];

	for (int k = 0; k < 20000; k++) {
		struct vmscope_fmt_prog prog;

		random_desc(&d);
		vmscope_fmt_compile(&prog, &d);
		if (vmscope_desc_check(&d, why, sizeof(why))) {
			EXPECT(!prog.fast, "'%s' refused (%s) but compiled fast", d.format, why);
			continue;
		}
		checked++;
		fast += prog.fast;
		slow += !prog.fast;
		for (int r = 0; r < 10; r++) {
			random_payload(&d, payload);
			if (!compare(&prog, payload, d.payload_size, buflens[r % 7]))
				break;
		}
	}
	/* the generator must reach both paths, or this test proves little */
	EXPECT(checked > 10000 && fast > 1000 && slow > 1000,
	       "only %u descriptors checked, %u fast, %u slow", checked, fast, slow);
	printf("random descriptors: %u checked, %u fast, %u through snprintf\n", checked, fast,
	       slow);
}

/* A few exact strings, so that a bug common to both formatters shows too. */
static void test_known_text(void)
{
	struct vmscope_event_desc d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	struct vmscope_ev_kvm_cr cr = { .val = 0x1b, .cr = 4, .write = 0 };
	struct vmscope_fmt_prog prog;
	char buf[128];

	snprintf(d.format, sizeof(d.format), "[%%#08llx] [%%-4u] [%%03d] 100%%%%");
	vmscope_fmt_compile(&prog, &d);
	EXPECT(prog.fast, "not fast");
	vmscope_fmt_run(&prog, &cr, sizeof(cr), buf, sizeof(buf));
	EXPECT(!strcmp(buf, "[0x00001b] [4   ] [000] 100%"), "got '%s'", buf);
	cr.val = 0;
	vmscope_fmt_run(&prog, &cr, sizeof(cr), buf, sizeof(buf));
	EXPECT(!strcmp(buf, "[00000000] [4   ] [000] 100%"), "got '%s'", buf);
}

int main(void)
{
	test_known_text();
	test_compiled_in();
	test_random_descriptors();
	return check_result("test_format_prog");
}
