// SPDX-License-Identifier: GPL-2.0
/* A guest CPU's spilled exchanges, in seq order (merge.h). */
#include <string.h>

#include "merge.h"

void mg_accq_init(struct mg_accq *q, FILE *f)
{
	memset(q, 0, sizeof(*q));
	q->f = f;
	if (f)
		rewind(f);
}

static void fill(struct mg_accq *q)
{
	while (q->f && !q->eof && q->n < MG_ACC_BUF) {
		struct mg_acc a;
		unsigned int i;

		if (fread(&a, sizeof(a), 1, q->f) != 1) {
			q->eof = true;
			q->err = ferror(q->f);
			break;
		}
		for (i = q->n; i > 0 && q->buf[i - 1].seq > a.seq; i--)
			q->buf[i] = q->buf[i - 1];
		q->buf[i] = a;
		q->n++;
	}
}

static void pop(struct mg_accq *q, unsigned int i)
{
	memmove(&q->buf[i], &q->buf[i + 1], (q->n - i - 1) * sizeof(q->buf[0]));
	q->n--;
}

bool mg_accq_find(struct mg_accq *q, uint64_t seq, uint64_t token, uint64_t t1,
		  struct mg_acc *out)
{
	for (;;) {
		fill(q);
		if (!q->n || q->buf[0].seq >= seq)
			break;
		pop(q, 0);	/* an exchange whose record is not here */
	}
	for (unsigned int i = 0; i < q->n && q->buf[i].seq == seq; i++)
		if (q->buf[i].token == token && q->buf[i].t1 == t1) {
			*out = q->buf[i];
			pop(q, i);
			return true;
		}
	return false;
}
