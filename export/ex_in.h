/* SPDX-License-Identifier: GPL-2.0 */
/* The input of an export: a merged trace (merge/out.h) and its one event
 * table, opened with errors a user can act on. */
#ifndef VMSCOPE_EXPORT_IN_H
#define VMSCOPE_EXPORT_IN_H

#include <stddef.h>

#include "out.h"

/* Open the merged trace @in and its (union) event table. 0, or -errno
 * with @err ("not a merged trace", no metadata). */
int ex_in_open(struct mr **m, const struct vr_events **ev, const char *in,
	       char *err, size_t errlen);

/* The (union) event table of the open merged trace @m, or -EINVAL with
 * @err (no metadata): for an input opened through the analysis walk. */
int ex_in_events(struct mr *m, const struct vr_events **ev, const char *in,
		 char *err, size_t errlen);

/* After the last item: 0 when the merged stream ended clean and nothing
 * else is wrong with the trace (mr_damage()), else -EINVAL with @err (an
 * export of a damaged trace is refused, not half written). */
int ex_in_check_end(struct mr *m, const char *in, char *err, size_t errlen);

#endif
