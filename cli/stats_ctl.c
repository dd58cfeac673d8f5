/* `vmscope stats`: which probe control to send (stats_ctl.h). */
#include <errno.h>
#include <string.h>

#include <vmscope/events.h>

#include "stats_ctl.h"

bool stats_ctl_needs_state(const struct stats_ctl_opts *o)
{
	return o->reset && !o->start && !o->stop;
}

bool stats_ctl_flags(const struct stats_ctl_opts *o, bool enabled, uint32_t *flags)
{
	bool on = o->start || (stats_ctl_needs_state(o) && enabled);

	*flags = 0;
	if (!o->start && !o->stop && !o->reset)
		return false;	/* only show the counters */
	*flags = (on ? VMSCOPE_CTL_ENABLE : 0) | (o->reset ? VMSCOPE_CTL_RESET : 0) |
		 (o->no_reasons ? VMSCOPE_CTL_NO_EXIT_REASON : 0) |
		 (o->measure ? VMSCOPE_CTL_MEASURE : 0) |
		 (o->events ? VMSCOPE_CTL_EVENTS : 0) |
		 (o->exit_perf ? VMSCOPE_CTL_EXIT_PERF : 0) |
		 (o->exit_verify ? VMSCOPE_CTL_EXIT_VERIFY : 0);
	return true;
}

const char *stats_ctl_error(int err)
{
	if (err == EBUSY)
		return "probing is owned by a running record or capture; stop it first";
	return strerror(err);
}
