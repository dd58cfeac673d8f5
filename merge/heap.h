/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The min-heap both passes merge their streams with: entries are (key,
 * stream index), ordered by key then index (so equal times come out in
 * stream order, deterministically).
 */
#ifndef VMSCOPE_MERGE_HEAP_H
#define VMSCOPE_MERGE_HEAP_H

#include <stddef.h>
#include <stdint.h>

struct mh_ent {
	uint64_t key;
	size_t idx;
};

struct mh {
	struct mh_ent *e;	/* caller's array, room for every stream */
	size_t n;
};

/* Order the n entries the caller put in e[0..n). */
void mh_build(struct mh *h);

/* The top's stream has a new key (@key), or is done (@done): restore. */
void mh_next(struct mh *h, uint64_t key, int done);

/* Add stream @idx with @key (room for it in e[]): a stream that left the
 * heap comes back (wmerge.c's late streams). */
void mh_push(struct mh *h, uint64_t key, size_t idx);

#endif
