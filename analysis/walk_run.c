// SPDX-License-Identifier: GPL-2.0
/*
 * The walk's pass over its input (walk.h): the next record in host time
 * from the merged trace, merge's pass 2 or the online merge; the loop;
 * what the input's end says (damage, notes); and the accessors.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "walk_int.h"

/* The next record in host time, from the merged trace or the online
 * merge: as mr_next(). */
static int next(struct an_walk *w, struct vr_item *it, struct mo_origin *o, bool *has_o)
{
	const struct om_rec *r = &w->rec;
	int e;

	if (w->mr)
		return mr_next(w->mr, it, o, has_o);
	if (w->p2) {
		struct mg_p2_rec p;

		/* each record as the merged trace would give it back */
		do {
			if (mg_p2_next(w->p2, &p) != 1)
				return 0;
		} while (!mg_p2_as_merged(&p, w->raw, &w->uni, w->uev, it, has_o));
		*o = p.o;
		return 1;
	}
	if (!w->om)
		return 0;
	e = om_next(w->om, &w->rec);
	if (e != 1)
		return e;
	om_rec_item(r, it);
	*o = r->o;
	*has_o = true;
	return 1;
}

/* After the last record of a raw trace: its damage, and what the online
 * merge could not place (left out: a note). 0 or 1 as mr_damage(). */
static int raw_damage(struct an_walk *w)
{
	const struct om_stats *st = w->om ? om_stats(w->om) : NULL;
	uint64_t unconverted = st ? st->unconverted : w->mg ? w->mg->n.unconverted : 0;

	if (vr_damage_describe(w->raw, w->path, w->damage, sizeof(w->damage)))
		return 1;
	/* left out as `vmscope merge` leaves them (its report says so):
	 * said, not damage */
	if (unconverted)
		snprintf(w->note, sizeof(w->note), "%llu guest records without a clock segment "
			 "(no sync exchange of their VM) left out",
			 (unsigned long long)unconverted);
	/* the two passes' unusable records are the reader's damage, said
	 * above, as in the merged trace */
	if (st && (st->bad || st->late)) {
		snprintf(w->damage, sizeof(w->damage), "%s: %llu unusable records, %llu late",
			 w->path, (unsigned long long)st->bad, (unsigned long long)st->late);
		return 1;
	}
	return 0;
}

int an_walk_run(struct an_walk *w, const struct an_hooks *h, char *err, size_t errlen)
{
	const struct vr_stream_stats *st;
	struct mo_origin o;
	struct vr_item it;
	bool has_o;
	int r = 0;

	while (!w->stop && (r = next(w, &it, &o, &has_o)) == 1)
		an_walk_one(w, h, &it, &o, has_o);
	an_walk_count_open(w, h);
	if (h->end)
		h->end(h->ctx, w->last_ts);
	if (w->stop)
		return 0;
	if (r < 0) {
		snprintf(err, errlen, "reading the %s stream: %s", w->mr ? "merged" : "raw trace's",
			 strerror(-r));
		return r;
	}
	if (w->p2) {
		r = mg_p2_close(w->p2, err, errlen);
		w->p2 = NULL;
		if (r)
			return r;
	}
	if (!w->mr) {
		if (!raw_damage(w) || (w->flags & MR_ACCEPT_DAMAGE))
			return 0;
		snprintf(err, errlen, "%s: the report covers what was read", w->damage);
		return 1;
	}
	st = mr_stats(w->mr);
	if (!mr_damage(w->mr, w->damage, sizeof(w->damage)) && st->end.kind != TF_END_CLEAN)
		snprintf(w->damage, sizeof(w->damage), "the merged stream ended %s",
			 tf_end_str(st->end.kind));
	if (!w->damage[0] || (w->flags & MR_ACCEPT_DAMAGE))
		return 0;
	if (st->end.kind != TF_END_CLEAN)
		snprintf(err, errlen, "the merged stream ended %s: the report covers what was read",
			 tf_end_str(st->end.kind));
	else
		snprintf(err, errlen, "%s: the report covers what was read", w->damage);
	return 1;
}

struct mr *an_walk_reader(const struct an_walk *w)
{
	return w->mr;
}

const struct vr_events *an_walk_events(const struct an_walk *w)
{
	return w->ev;
}

const Vmscope__Trace__SessionMetadata *an_walk_session(const struct an_walk *w)
{
	return w->sess;
}

void an_walk_stop(struct an_walk *w)
{
	w->stop = true;
}

const char *an_walk_note(const struct an_walk *w)
{
	return w->note[0] ? w->note : NULL;
}

const char *an_walk_damage(const struct an_walk *w)
{
	return w->damage[0] ? w->damage : NULL;
}
