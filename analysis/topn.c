// SPDX-License-Identifier: GPL-2.0
/* Bounded top-N: see topn.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topn.h"

int an_topn_init(struct an_topn *t, size_t cap, size_t item_size)
{
	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->item_size = item_size;
	if (!cap)
		return 0;
	t->key = calloc(cap, sizeof(*t->key));
	t->item = calloc(cap, item_size);
	if (!t->key || !t->item) {
		an_topn_free(t);
		return -ENOMEM;
	}
	return 0;
}

void an_topn_free(struct an_topn *t)
{
	free(t->key);
	free(t->item);
	t->key = NULL;
	t->item = NULL;
	t->cap = t->n = 0;
}

static void swap(struct an_topn *t, size_t a, size_t b)
{
	unsigned char tmp[256];
	unsigned char *pa = t->item + a * t->item_size, *pb = t->item + b * t->item_size;
	uint64_t k = t->key[a];

	t->key[a] = t->key[b];
	t->key[b] = k;
	for (size_t off = 0; off < t->item_size; off += sizeof(tmp)) {
		size_t len = t->item_size - off < sizeof(tmp) ? t->item_size - off : sizeof(tmp);

		memcpy(tmp, pa + off, len);
		memcpy(pa + off, pb + off, len);
		memcpy(pb + off, tmp, len);
	}
}

/* Restore the min-heap below @i within the first @n. */
static void sift_down(struct an_topn *t, size_t i, size_t n)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < n && t->key[l] < t->key[m])
			m = l;
		if (r < n && t->key[r] < t->key[m])
			m = r;
		if (m == i)
			return;
		swap(t, i, m);
		i = m;
	}
}

void an_topn_add(struct an_topn *t, uint64_t key, const void *item)
{
	size_t i;

	if (!t->cap)
		return;
	if (t->n < t->cap) {
		i = t->n++;
		t->key[i] = key;
		memcpy(t->item + i * t->item_size, item, t->item_size);
		while (i && t->key[(i - 1) / 2] > t->key[i]) {
			swap(t, i, (i - 1) / 2);
			i = (i - 1) / 2;
		}
		return;
	}
	if (key <= t->key[0])
		return;
	t->key[0] = key;
	memcpy(t->item, item, t->item_size);
	sift_down(t, 0, t->n);
}

size_t an_topn_sort(struct an_topn *t)
{
	/* heap sort: moving the minimum to the end leaves the largest first */
	for (size_t n = t->n; n > 1; n--) {
		swap(t, 0, n - 1);
		sift_down(t, 0, n - 1);
	}
	return t->n;
}
