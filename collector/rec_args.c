/* SPDX-License-Identifier: GPL-2.0 */
/* record's option values: see rec_args.h. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rec_args.h"

int rec_parse_size(const char *s, unsigned long long *v)
{
	unsigned int shift = 0;
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	if (*end == 'K' || *end == 'k')
		shift = 10, end++;
	else if (*end == 'M' || *end == 'm')
		shift = 20, end++;
	else if (*end == 'G' || *end == 'g')
		shift = 30, end++;
	if (*end || *v > (ULLONG_MAX >> shift))	/* no silent wrap */
		return -1;
	*v <<= shift;
	return 0;
}

int rec_parse_duration(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	/* strtod also takes "nan", "inf" and hex: only plain decimals */
	if (errno || end == s || !(*v >= 0) || isinf(*v) ||
	    s + strspn(s, "0123456789.") != end)
		return -1;
	if (*end == 's')
		end++;
	else if (*end == 'm')
		*v *= 60, end++;
	else if (*end == 'h')
		*v *= 3600, end++;
	return *end || *v > REC_DURATION_MAX_S ? -1 : 0;
}

static unsigned int log2_floor(unsigned long long v)
{
	unsigned int n = 0;

	while (v >>= 1)
		n++;
	return n;
}

int rec_geometry(unsigned long long bytes, struct vmscope_session_cfg *cfg)
{
	unsigned int total = log2_floor(bytes), sb = VMSCOPE_SESSION_SUBBUF_SHIFT_DEF;

	if (total < VMSCOPE_SESSION_SUBBUF_SHIFT_MIN + VMSCOPE_SESSION_NR_SHIFT_MIN ||
	    bytes > VMSCOPE_SESSION_CPU_BYTES_MAX)
		return -1;
	/* smaller sub-buffers to keep at least 8 when the buffer allows it
	 * (below 64 KiB x 8; "total - sb" must not wrap below zero) */
	if (total < sb + 3)
		sb = total >= VMSCOPE_SESSION_SUBBUF_SHIFT_MIN + 3 ?
		     total - 3 : VMSCOPE_SESSION_SUBBUF_SHIFT_MIN;
	if (total - sb > VMSCOPE_SESSION_NR_SHIFT_MAX)
		sb = total - VMSCOPE_SESSION_NR_SHIFT_MAX;
	if (sb > VMSCOPE_SESSION_SUBBUF_SHIFT_MAX)
		return -1;
	cfg->chan[0].subbuf_shift = sb;
	cfg->chan[0].nr_subbuf_shift = total - sb;
	return 0;
}

void rec_keep_channel(struct vmscope_session_cfg *cfg, uint64_t mask)
{
	struct vmscope_chan_cfg *k = &cfg->chan[1];

	memset(k, 0, sizeof(*k));
	cfg->nr_chans = mask ? 2 : 1;
	if (!mask)
		return;
	k->subbuf_shift = REC_KEEP_SUBBUF_SHIFT;
	k->nr_subbuf_shift = REC_KEEP_NR_SHIFT;
	k->mode = VMSCOPE_RB_MODE_DISCARD;
	k->events = mask;
}
