/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's chunk buffers, allocated and touched once, at the start.
 *
 * A chunk on its way from a reader to the writer lives in a node. The
 * queue's bound (rec.qcap) already caps what is queued; taking the nodes
 * from a pool sized to that bound, instead of malloc per chunk, makes the
 * collector's memory the bound from the first second: flat however long
 * it records and however the backlog comes and goes, rather than growing
 * to the deepest backlog one run happened to see (memory once used stays
 * resident). It also fails at the start, not hours in, when that memory
 * is not there.
 *
 * Readers take (any thread), the writer gives back; a node too large for
 * a slot, or wanted when every slot is queued (a guest's drain slack),
 * comes from malloc and goes back to free.
 */
#ifndef VMSCOPE_COLLECTOR_NODE_POOL_H
#define VMSCOPE_COLLECTOR_NODE_POOL_H

#include <stddef.h>
#include <urcu/lfstack.h>

struct node;

struct node_pool {
	struct cds_lfs_stack free;	/* the slots not in use */
	size_t slot_len;		/* payload bytes a slot holds */
	size_t n;
	struct node **slots;		/* [n], for node_pool_fini */
};

/* @n slots of @slot_len payload bytes, each written once (so resident).
 * 0, or -ENOMEM. */
int node_pool_init(struct node_pool *p, size_t slot_len, size_t n);

/* A zeroed node header with room for @len payload bytes, or NULL. */
struct node *node_pool_get(struct node_pool *p, size_t len);

/*
 * What a node costs in the queue's bound: its slot when pooled (a small
 * chunk holds a whole slot), else its own size. node_pool_need() is the
 * most a node for @len payload bytes can cost, for waiting on the bound
 * before taking one. Counting slots makes the bound the pool's size, so
 * a backlog of small chunks cannot empty the pool into malloc.
 */
size_t node_pool_cost(const struct node_pool *p, const struct node *n);
size_t node_pool_need(const struct node_pool *p, size_t len);

/* Back to the pool (or to free, when it did not come from it). */
void node_pool_put(struct node_pool *p, struct node *n);

void node_pool_fini(struct node_pool *p);

#endif
