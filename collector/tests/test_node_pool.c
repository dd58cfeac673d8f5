/* SPDX-License-Identifier: GPL-2.0 */
/*
 * node_pool: slots up to their size come from the pool (pooled, header
 * zeroed, costing a whole slot in the queue's bound), larger ones and those wanted while every slot is out from
 * malloc; a slot given back is taken again, never twice at once; several
 * taker threads and one giver (the recorder's readers and writer) pass
 * slots around without losing or duplicating one (run under TSan too).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "node_pool.h"
#include "rec_int.h"
#include "tsan_hb.h"

#define SLOTS 8
#define SLOT_LEN 256
#define TAKERS 3
#define ROUNDS 20000

static struct node_pool pool;
static struct cds_wfcq_head qh;
static struct cds_wfcq_tail qt;
static int takers_left = TAKERS;

static void *taker(void *arg)
{
	unsigned char mark = (unsigned char)(long)arg;

	for (int i = 0; i < ROUNDS; i++) {
		struct node *n = node_pool_get(&pool, SLOT_LEN);

		if (!n) {
			check_failures++;
			break;
		}
		/* a slot handed out twice would see another taker's mark */
		memset(n->data, mark, SLOT_LEN);
		n->len = SLOT_LEN;
		n->cpu = mark;
		TSAN_RELEASE(n);
		cds_wfcq_enqueue(&qh, &qt, &n->qn);
	}
	__atomic_sub_fetch(&takers_left, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void threads(void)
{
	pthread_t t[TAKERS];
	long seen = 0, pooled = 0;

	cds_wfcq_init(&qh, &qt);
	CHECK(node_pool_init(&pool, SLOT_LEN, SLOTS) == 0);
	for (long i = 0; i < TAKERS; i++)
		pthread_create(&t[i], NULL, taker, (void *)(i + 1));
	for (;;) {
		struct cds_wfcq_node *qn = __cds_wfcq_dequeue_blocking(&qh, &qt);

		if (!qn) {
			if (!__atomic_load_n(&takers_left, __ATOMIC_ACQUIRE) &&
			    cds_wfcq_empty(&qh, &qt))
				break;
			continue;
		}
		struct node *n = caa_container_of(qn, struct node, qn);

		TSAN_ACQUIRE(n);
		for (int k = 0; k < SLOT_LEN; k++)
			if (n->data[k] != n->cpu) {
				CHECK(!"a slot was written by two takers at once");
				break;
			}
		seen++;
		pooled += n->pooled;
		node_pool_put(&pool, n);
	}
	for (int i = 0; i < TAKERS; i++)
		pthread_join(t[i], NULL);
	CHECK(seen == (long)TAKERS * ROUNDS);
	CHECK(pooled > 0);
	fprintf(stderr, "node-pool: %ld nodes passed, %ld of them pool slots\n", seen, pooled);
	node_pool_fini(&pool);
}

int main(void)
{
	struct node *got[SLOTS + 2];

	CHECK(node_pool_init(&pool, SLOT_LEN, SLOTS) == 0);
	for (int i = 0; i < SLOTS; i++) {
		got[i] = node_pool_get(&pool, i ? SLOT_LEN : 1);
		CHECK(got[i] && got[i]->pooled && got[i]->len == 0 && got[i]->kind == 0);
		for (int k = 0; k < i; k++)
			CHECK(got[k] != got[i]);
		got[i]->len = 7;	/* dirty the header: the next get zeroes it */
	}
	/* a pooled node costs its whole slot in the bound, however little it holds */
	CHECK(node_pool_cost(&pool, got[0]) == SLOT_LEN + sizeof(struct node));
	CHECK(node_pool_need(&pool, 1) == SLOT_LEN + sizeof(struct node));
	CHECK(node_pool_need(&pool, SLOT_LEN + 9) == SLOT_LEN + 9 + sizeof(struct node));
	/* every slot out: malloc, costing its own size */
	got[SLOTS] = node_pool_get(&pool, SLOT_LEN);
	CHECK(got[SLOTS] && !got[SLOTS]->pooled);
	got[SLOTS]->len = 5;
	CHECK(node_pool_cost(&pool, got[SLOTS]) == 5 + sizeof(struct node));
	/* too big for a slot: malloc, whatever is free */
	node_pool_put(&pool, got[0]);
	got[SLOTS + 1] = node_pool_get(&pool, SLOT_LEN + 1);
	CHECK(got[SLOTS + 1] && !got[SLOTS + 1]->pooled);
	memset(got[SLOTS + 1]->data, 1, SLOT_LEN + 1);
	/* the slot given back is the one taken next, header zeroed */
	got[0] = node_pool_get(&pool, SLOT_LEN);
	CHECK(got[0] && got[0]->pooled && got[0]->len == 0);
	for (int i = 0; i < SLOTS + 2; i++)
		node_pool_put(&pool, got[i]);
	node_pool_put(&pool, NULL);
	node_pool_fini(&pool);
	node_pool_fini(&pool);		/* twice: harmless */
	threads();
	fprintf(stderr, "node-pool: %s\n", check_failures ? "FAILED" : "ok");
	return check_failures != 0;
}
