// SPDX-License-Identifier: GPL-2.0
/* The input of an export: ex_in.h. */
#include <errno.h>
#include <stdio.h>

#include "ex_in.h"

int ex_in_open(struct mr **m, const struct vr_events **ev, const char *in,
	       char *err, size_t errlen)
{
	int e = mr_open(m, in, 0, err, errlen);

	if (e)
		return e;
	e = ex_in_events(*m, ev, in, err, errlen);
	if (e)
		mr_close(*m);
	return e;
}

int ex_in_events(struct mr *m, const struct vr_events **ev, const char *in,
		 char *err, size_t errlen)
{
	*ev = vr_trace_events(mr_trace(m), VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
	if (!*ev) {
		snprintf(err, errlen, "%s: no event table (metadata missing or damaged)", in);
		return -EINVAL;
	}
	return 0;
}

int ex_in_check_end(struct mr *m, const char *in, char *err, size_t errlen)
{
	enum tf_end k = mr_stats(m)->end.kind;

	char why[1024];

	if (k != TF_END_CLEAN) {
		snprintf(err, errlen, "%s: the merged stream does not end clean (%s): not exported",
			 in, tf_end_str(k));
		return -EINVAL;
	}
	if (mr_damage(m, why, sizeof(why))) {
		snprintf(err, errlen, "%s: not exported", why);
		return -EINVAL;
	}
	return 0;
}
