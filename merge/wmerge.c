// SPDX-License-Identifier: GPL-2.0
/* The online merge's ordering stage: see wmerge.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wmerge.h"

int wm_init(struct wm *m, size_t n, size_t cap, size_t size, uint64_t lag_ns)
{
	size_t per, total;
	uint8_t *p;

	memset(m, 0, sizeof(*m));
	if (!cap || !size)
		return -EINVAL;
	/* keys first (8-byte aligned), then the records, per stream */
	if (cap > SIZE_MAX / (sizeof(uint64_t) + size))
		return -ENOMEM;
	per = cap * (sizeof(uint64_t) + size);
	per = (per + 7) & ~(size_t)7;
	if (n && per > (SIZE_MAX - n * (sizeof(*m->s) + sizeof(*m->heap.e))) / n)
		return -ENOMEM;
	total = n * (sizeof(*m->s) + sizeof(*m->heap.e) + per);
	p = calloc(1, total ? total : 1);
	if (!p)
		return -ENOMEM;
	m->n = n;
	m->cap = cap;
	m->size = size;
	m->lag_ns = lag_ns;
	m->s = (struct wm_stream *)p;
	m->heap.e = (struct mh_ent *)(p + n * sizeof(*m->s));
	p += n * (sizeof(*m->s) + sizeof(*m->heap.e));
	for (size_t i = 0; i < n; i++) {
		m->s[i].key = (uint64_t *)(p + i * per);
		m->s[i].rec = p + i * per + cap * sizeof(uint64_t);
		m->s[i].in_heap = true;
		/* every stream may still deliver anything: watermark 0 */
		m->heap.e[i].key = 0;
		m->heap.e[i].idx = i;
	}
	m->heap.n = n;
	return 0;
}

void wm_free(struct wm *m)
{
	free(m->s);
	memset(m, 0, sizeof(*m));
}

bool wm_full(const struct wm *m, size_t i)
{
	return i < m->n && m->s[i].n == m->cap;
}

int wm_push(struct wm *m, size_t i, uint64_t key, const void *rec)
{
	struct wm_stream *s;
	size_t at;

	if (i >= m->n || m->s[i].ended)
		return -EINVAL;
	s = &m->s[i];
	if (s->n == m->cap)
		return -ENOSPC;
	/* a stream's own order is kept: a key that went back (the two-pass
	 * merge clamps the same way, merge.c) waits at the previous one */
	if (key < s->mark) {
		key = s->mark;
		m->st.clamped++;
	}
	if (m->any_out && key < m->last_out) {
		/* only a late stream gets here: live ones hold last_out back */
		m->st.late++;
		return WM_LATE;
	}
	at = (s->head + s->n) % m->cap;
	s->key[at] = key;
	memcpy(s->rec + at * m->size, rec, m->size);
	s->n++;
	m->queued++;
	if (s->n > m->st.peak)
		m->st.peak = s->n;
	s->mark = key;
	if (!m->any_in || key > m->newest)
		m->newest = key;
	m->any_in = true;
	m->st.pushed++;
	if (s->late) {
		/* it caught up: waited for again (wm_late leaves it in the
		 * heap until it reaches the top) */
		s->late = false;
		if (!s->in_heap) {
			s->in_heap = true;
			mh_push(&m->heap, key, i);
		}
	}
	return 0;
}

void wm_advance(struct wm *m, size_t i, uint64_t key)
{
	if (i < m->n && key > m->s[i].mark)
		m->s[i].mark = key;
}

void wm_late(struct wm *m, size_t i)
{
	/* dropped from the heap when it reaches the top empty (wm_pop) */
	if (i < m->n && !m->s[i].ended && !m->s[i].late) {
		m->s[i].late = true;
		m->st.stalls++;
	}
}

void wm_wait(struct wm *m, size_t i)
{
	struct wm_stream *s;

	if (i >= m->n || m->s[i].ended || !m->s[i].late)
		return;
	s = &m->s[i];
	s->late = false;
	/* it can still deliver anything not below what was released */
	if (m->any_out && s->mark < m->last_out)
		s->mark = m->last_out;
	if (!s->in_heap) {
		s->in_heap = true;
		mh_push(&m->heap, s->n ? s->key[s->head] : s->mark, i);
	}
}

void wm_end(struct wm *m, size_t i)
{
	if (i < m->n)
		m->s[i].ended = true;
}

enum wm_pop wm_pop(struct wm *m, bool force, void *rec, size_t *i, uint64_t *key)
{
	for (;;) {
		struct wm_stream *s;
		uint64_t f;
		size_t top;

		if (!m->heap.n) {
			/* left out only: ended, or late and empty */
			for (size_t k = 0; k < m->n; k++)
				if (!m->s[k].ended)
					return WM_WAIT;
			return WM_DONE;
		}
		top = m->heap.e[0].idx;
		s = &m->s[top];
		if (!s->n && (s->ended || s->late)) {
			s->in_heap = false;
			mh_next(&m->heap, 0, 1);
			continue;
		}
		f = s->n ? s->key[s->head] : s->mark;
		if (m->heap.e[0].key < f) {	/* stale: frontiers only grow */
			mh_next(&m->heap, f, 0);
			continue;
		}
		if (s->n) {
			memcpy(rec, s->rec + s->head * m->size, m->size);
			*i = top;
			*key = f;
			s->head = (s->head + 1) % m->cap;
			s->n--;
			m->queued--;
			m->last_out = f;
			m->any_out = true;
			m->st.released++;
			return WM_ITEM;
		}
		/* an empty live stream holds back everything queued */
		if (!m->queued)
			return WM_WAIT;
		if (!force && !(m->lag_ns && m->newest - f > m->lag_ns))
			return WM_WAIT;
		s->late = true;
		s->in_heap = false;
		m->st.stalls++;
		mh_next(&m->heap, 0, 1);
	}
}

uint64_t wm_frontier(const struct wm *m)
{
	uint64_t f = UINT64_MAX;

	for (size_t i = 0; i < m->n; i++) {
		const struct wm_stream *s = &m->s[i];

		if (s->n && s->key[s->head] < f)
			f = s->key[s->head];
		else if (!s->n && !s->ended && !s->late && s->mark < f)
			f = s->mark;
	}
	return f;
}

size_t wm_blocker(const struct wm *m)
{
	/* wm_pop leaves the stream it waits for at the top */
	return m->heap.n ? m->heap.e[0].idx : SIZE_MAX;
}
