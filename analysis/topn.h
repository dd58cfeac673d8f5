/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The N largest items seen, by a 64-bit key, in bounded memory: a min-heap
 * of capacity N whose root is the smallest kept; a new item replaces the
 * root only when its key is larger. Items are copied in (fixed size).
 */
#ifndef VMSCOPE_ANALYSIS_TOPN_H
#define VMSCOPE_ANALYSIS_TOPN_H

#include <stddef.h>
#include <stdint.h>

struct an_topn {
	size_t cap, n, item_size;
	uint64_t *key;		/* [cap] */
	unsigned char *item;	/* [cap * item_size] */
};

/* 0 or -ENOMEM. @cap 0 keeps nothing. */
int an_topn_init(struct an_topn *t, size_t cap, size_t item_size);
void an_topn_free(struct an_topn *t);
void an_topn_add(struct an_topn *t, uint64_t key, const void *item);

/* Sort the kept items by key, largest first (the heap is gone after).
 * Returns the number of items; item i is at an_topn_item(t, i). */
size_t an_topn_sort(struct an_topn *t);

static inline const void *an_topn_item(const struct an_topn *t, size_t i)
{
	return t->item + i * t->item_size;
}

#endif
