// SPDX-License-Identifier: GPL-2.0
/* The streams' min-heap: see heap.h. */
#include "heap.h"

static int less(const struct mh_ent *a, const struct mh_ent *b)
{
	return a->key != b->key ? a->key < b->key : a->idx < b->idx;
}

static void sift_down(struct mh *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct mh_ent tmp;

		if (l < h->n && less(&h->e[l], &h->e[m]))
			m = l;
		if (l + 1 < h->n && less(&h->e[l + 1], &h->e[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = h->e[i];
		h->e[i] = h->e[m];
		h->e[m] = tmp;
		i = m;
	}
}

void mh_build(struct mh *h)
{
	for (size_t i = h->n; i-- > 0;)
		sift_down(h, i);
}

void mh_next(struct mh *h, uint64_t key, int done)
{
	if (done)
		h->e[0] = h->e[--h->n];
	else
		h->e[0].key = key;
	if (h->n)
		sift_down(h, 0);
}

void mh_push(struct mh *h, uint64_t key, size_t idx)
{
	size_t i = h->n++;

	h->e[i].key = key;
	h->e[i].idx = idx;
	while (i) {
		size_t up = (i - 1) / 2;
		struct mh_ent tmp;

		if (!less(&h->e[i], &h->e[up]))
			return;
		tmp = h->e[i];
		h->e[i] = h->e[up];
		h->e[up] = tmp;
		i = up;
	}
}
