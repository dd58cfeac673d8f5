/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stats_ctl.c: the probe control `vmscope stats` sends for each
 * combination of --start/--stop/--reset (and the options that go with
 * --start), and the message it prints when the module refuses.
 *
 * Asserted: no control without --start/--stop/--reset (plain stats only
 * reads); --reset alone asks whether probing is on and keeps it on or
 * off (flags ENABLE|RESET or RESET); --start and --stop never ask;
 * --start's options reach the flags; EBUSY gives the "owned by a
 * running record or capture" message, other errors strerror's text.
 */
#include <errno.h>
#include <string.h>

#include <vmscope/events.h>

#include "../../tests/lib/check.h"
#include "stats_ctl.h"

/* flags sent for o with probing on/off; ~0u when nothing is sent */
static uint32_t sent(struct stats_ctl_opts o, bool enabled)
{
	uint32_t flags = 12345;

	if (!stats_ctl_flags(&o, enabled, &flags)) {
		EXPECT(flags == 0, "nothing sent but flags %#x", flags);
		return ~0u;
	}
	return flags;
}

int main(void)
{
	const uint32_t EN = VMSCOPE_CTL_ENABLE, RS = VMSCOPE_CTL_RESET;
	struct stats_ctl_opts none = { 0 }, o;

	/* plain `stats`: reads only, whatever the state */
	EXPECT(sent(none, false) == ~0u, "plain stats sent a control");
	EXPECT(sent(none, true) == ~0u, "plain stats sent a control (enabled)");
	EXPECT(!stats_ctl_needs_state(&none), "plain stats asks for the state");

	/* --start: enable; --start --reset: reset first */
	o = none;
	o.start = true;
	EXPECT(sent(o, false) == EN, "--start: %#x", sent(o, false));
	EXPECT(!stats_ctl_needs_state(&o), "--start asks for the state");
	o.reset = true;
	EXPECT(sent(o, false) == (EN | RS), "--start --reset: %#x", sent(o, false));
	EXPECT(!stats_ctl_needs_state(&o), "--start --reset asks for the state");

	/* --stop: off, never UNTIL_CLOSE or ENABLE, also when probing is on */
	o = none;
	o.stop = true;
	EXPECT(sent(o, true) == 0, "--stop: %#x", sent(o, true));
	o.reset = true;
	EXPECT(sent(o, true) == RS, "--stop --reset: %#x", sent(o, true));
	EXPECT(!stats_ctl_needs_state(&o), "--stop --reset asks for the state");

	/* --reset alone keeps probing as it is */
	o = none;
	o.reset = true;
	EXPECT(stats_ctl_needs_state(&o), "--reset alone does not ask for the state");
	EXPECT(sent(o, true) == (EN | RS), "--reset, probing on: %#x", sent(o, true));
	EXPECT(sent(o, false) == RS, "--reset, probing off: %#x", sent(o, false));

	/* --start's options */
	o = none;
	o.start = o.no_reasons = o.measure = o.events = true;
	EXPECT(sent(o, false) == (EN | VMSCOPE_CTL_NO_EXIT_REASON | VMSCOPE_CTL_MEASURE |
				  VMSCOPE_CTL_EVENTS), "--start with options: %#x",
	       sent(o, false));

	/* --exit-reasons=perf|verify */
	o = none;
	o.start = o.exit_perf = true;
	EXPECT(sent(o, false) == (EN | VMSCOPE_CTL_EXIT_PERF), "--exit-reasons=perf: %#x",
	       sent(o, false));
	o.exit_perf = false;
	o.exit_verify = true;
	EXPECT(sent(o, false) == (EN | VMSCOPE_CTL_EXIT_VERIFY), "--exit-reasons=verify: %#x",
	       sent(o, false));

	/* stats never ties probing to its own short-lived file */
	for (unsigned int m = 0; m < 64; m++) {
		struct stats_ctl_opts x = {
			.start = m & 1, .stop = m & 2, .reset = m & 4,
			.no_reasons = m & 8, .measure = m & 16, .events = m & 32,
		};
		uint32_t f = sent(x, m & 1);

		EXPECT(f == ~0u || !(f & VMSCOPE_CTL_UNTIL_CLOSE), "UNTIL_CLOSE for %#x", m);
	}

	/* the refusals */
	EXPECT(!strcmp(stats_ctl_error(EBUSY),
		       "probing is owned by a running record or capture; stop it first"),
	       "EBUSY: %s", stats_ctl_error(EBUSY));
	EXPECT(!strcmp(stats_ctl_error(EINVAL), strerror(EINVAL)), "EINVAL: %s",
	       stats_ctl_error(EINVAL));

	return check_failures ? 1 : 0;
}
