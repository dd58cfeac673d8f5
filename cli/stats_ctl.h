/*
 * What `vmscope stats` asks of the host module's probe control, decided
 * apart from the ioctl so that it can be tested without the module
 * (tests/test_stats_ctl.c).
 */
#ifndef VMSCOPE_CLI_STATS_CTL_H
#define VMSCOPE_CLI_STATS_CTL_H

#include <stdbool.h>
#include <stdint.h>

/* The control options of the command line. */
struct stats_ctl_opts {
	bool start, stop, reset;
	bool no_reasons, measure;
	bool exit_perf, exit_verify;	/* --exit-reasons=perf|verify */
	bool events;		/* --events: ctl.events holds a selection */
};

/*
 * Whether a VMSCOPE_IOC_PROBE_CTL is sent, and its flags in *flags.
 * enabled: probing is on now (only asked for --reset alone, which keeps
 * it on, with every event and no process filter: the module has no
 * counter-only reset).
 */
bool stats_ctl_flags(const struct stats_ctl_opts *o, bool enabled, uint32_t *flags);

/* Whether stats_ctl_flags() needs to know if probing is on now. */
bool stats_ctl_needs_state(const struct stats_ctl_opts *o);

/*
 * The message for a PROBE_CTL that failed with errno err; EBUSY: an
 * UNTIL_CLOSE enable of another file (record, capture) owns probing.
 */
const char *stats_ctl_error(int err);

#endif
