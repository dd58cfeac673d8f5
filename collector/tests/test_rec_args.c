/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ring geometry `vmscope record --buffer-size` asks the module for:
 * for every power of two and a few sizes between, from below the minimum
 * to above the maximum, either refused or a geometry the module accepts
 * (the same ranges as kmod-session's check) that fits the size, with at
 * least 8 sub-buffers whenever 8 one-page ones fit, and 64 KiB ones
 * when that still leaves 8. Then the keep channel: its geometry and
 * mode, and "none" as one channel. Sizes parse with their suffixes;
 * durations up to a year and no further.
 */
#include <stdio.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "rec_args.h"

static unsigned int sizes;

/* What kmod-session's session_chan_cfg_check() accepts. */
static int module_accepts(const struct vmscope_chan_cfg *c)
{
	return c->subbuf_shift >= VMSCOPE_SESSION_SUBBUF_SHIFT_MIN &&
	       c->subbuf_shift <= VMSCOPE_SESSION_SUBBUF_SHIFT_MAX &&
	       c->nr_subbuf_shift >= VMSCOPE_SESSION_NR_SHIFT_MIN &&
	       c->nr_subbuf_shift <= VMSCOPE_SESSION_NR_SHIFT_MAX;
}

static void geometry(unsigned long long bytes)
{
	struct vmscope_session_cfg cfg;
	const struct vmscope_chan_cfg *c = &cfg.chan[0];
	int in_range = bytes >= 8192 && bytes <= VMSCOPE_SESSION_CPU_BYTES_MAX;
	unsigned int sb, n;

	sizes++;
	memset(&cfg, 0, sizeof(cfg));
	if (rec_geometry(bytes, &cfg)) {
		if (in_range)
			fprintf(stderr, "%llu bytes refused\n", bytes);
		CHECK(!in_range);
		return;
	}
	CHECK(in_range);
	sb = c->subbuf_shift;
	n = c->nr_subbuf_shift;
	if (!module_accepts(c))
		fprintf(stderr, "%llu bytes: 2^%u x 2^%u\n", bytes, n, sb);
	CHECK(module_accepts(c));
	CHECK((1ull << (sb + n)) <= bytes);		/* fits */
	CHECK((2ull << (sb + n)) > bytes);		/* uses it */
	if (bytes >= 8ull << VMSCOPE_SESSION_SUBBUF_SHIFT_MIN)
		CHECK(n >= 3);
	if (bytes >= 8ull << VMSCOPE_SESSION_SUBBUF_SHIFT_DEF)
		CHECK(sb == VMSCOPE_SESSION_SUBBUF_SHIFT_DEF);
}

int main(void)
{
	struct vmscope_session_cfg cfg;
	unsigned long long v;

	for (unsigned int shift = 0; shift < 40; shift++) {
		geometry(1ull << shift);
		geometry((1ull << shift) + 1);
		geometry((3ull << shift) / 2);
		if (shift)
			geometry((1ull << shift) - 1);
	}
	/* durations: up to a year; beyond it (or beyond what a double's
	 * nanoseconds hold in 64 bits) refused */
	double d;

	CHECK(rec_parse_duration("1.5h", &d) == 0 && d == 5400);
	CHECK(rec_parse_duration("8784h", &d) == 0 && d == REC_DURATION_MAX_S);
	CHECK(rec_parse_duration("8785h", &d) != 0);
	CHECK(rec_parse_duration("31622401", &d) != 0);
	CHECK(rec_parse_duration("99999999999999999999999", &d) != 0);
	/* the sizes the --help names */
	CHECK(rec_parse_size("8K", &v) == 0 && v == 8192 && rec_geometry(v, &cfg) == 0);
	CHECK(cfg.chan[0].subbuf_shift == 12 && cfg.chan[0].nr_subbuf_shift == 1);
	CHECK(rec_parse_size("2M", &v) == 0 && rec_geometry(v, &cfg) == 0);
	CHECK(cfg.chan[0].subbuf_shift == 16 && cfg.chan[0].nr_subbuf_shift == 5);
	CHECK(rec_parse_size("64M", &v) == 0 && rec_geometry(v, &cfg) == 0);
	CHECK(rec_parse_size("65M", &v) == 0 && rec_geometry(v, &cfg) != 0);
	CHECK(rec_parse_size("4K", &v) == 0 && rec_geometry(v, &cfg) != 0);

	/* the keep channel: discard, its geometry, the mask; then none */
	memset(&cfg, 0, sizeof(cfg));
	cfg.chan[0].mode = VMSCOPE_RB_MODE_FLIGHT;
	rec_keep_channel(&cfg, 0x30);
	CHECK(cfg.nr_chans == 2);
	CHECK(cfg.chan[0].mode == VMSCOPE_RB_MODE_FLIGHT);
	CHECK(cfg.chan[1].mode == VMSCOPE_RB_MODE_DISCARD);
	CHECK(cfg.chan[1].events == 0x30);
	CHECK(cfg.chan[1].subbuf_shift == REC_KEEP_SUBBUF_SHIFT);
	CHECK(cfg.chan[1].nr_subbuf_shift == REC_KEEP_NR_SHIFT);
	CHECK(module_accepts(&cfg.chan[1]));
	rec_keep_channel(&cfg, 0);
	CHECK(cfg.nr_chans == 1);
	CHECK(cfg.chan[1].events == 0 && cfg.chan[1].subbuf_shift == 0);

	printf("rec_args: geometry of %u sizes\n", sizes);
	return check_result("rec_args");
}
