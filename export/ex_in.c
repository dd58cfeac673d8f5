// SPDX-License-Identifier: GPL-2.0
/* The input of an export: ex_in.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ex_in.h"

int ex_in_open(struct an_walk **w, const struct vr_events **ev, const char *in,
	       const struct ex_opts *o, char *err, size_t errlen)
{
	int e = an_trace_is_merged(in) ?
		an_walk_open(w, in, AN_WALK_ANY_TRACE, err, errlen) :
		an_walk_open_raw_exact(w, in, AN_WALK_ANY_TRACE, o->spill_dir, err, errlen);
	char *hint;

	/* a damaged raw trace: the walk names the reports' --accept-damage,
	 * which an export has not (it writes nothing of a damaged trace) */
	if (e == -EBADMSG && (hint = strstr(err, " (--accept-damage")))
		snprintf(hint, errlen - (size_t)(hint - err), ": not exported");
	if (e)
		return e;
	*ev = an_walk_events(*w);
	if (!*ev) {
		snprintf(err, errlen, "%s: no event table (metadata missing or damaged)", in);
		an_walk_close(*w);
		*w = NULL;
		return -EINVAL;
	}
	return 0;
}

/* A merged input: its stream and its account (mr_damage()). */
static int check_merged(struct mr *m, const char *in, char *err, size_t errlen)
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

int ex_in_check_end(struct an_walk *w, int run, const char *in, const struct ex_opts *o,
		    char *err, size_t errlen)
{
	if (an_walk_merge_result(w) && o->merge_report) {
		/* what `vmscope merge` would have printed is not lost */
		fprintf(o->merge_report, "vmscope export: %s: a raw trace, merged as `vmscope "
			"merge` merges it (no merged trace written):\n", in);
		an_walk_merge_report(o->merge_report, w);
		if (an_walk_note(w))
			fprintf(o->merge_report, "vmscope export: %s: %s\n", in, an_walk_note(w));
	}
	if (run < 0)
		return run;	/* @err says it */
	if (an_walk_reader(w))
		return check_merged(an_walk_reader(w), in, err, errlen);
	if (an_walk_damage(w)) {
		snprintf(err, errlen, "%s: not exported", an_walk_damage(w));
		return -EINVAL;
	}
	return 0;
}
