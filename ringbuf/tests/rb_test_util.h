/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Small helpers shared by the ring buffer tests. */
#ifndef VMSCOPE_RB_TEST_UTIL_H
#define VMSCOPE_RB_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#include "../../tests/lib/check.h"
#include "../ringbuf.h"
#include "../rb_decode.h"

/* Allocate and initialise a buffer; free with rb_test_free(). */
static inline struct vmscope_rb_buf *rb_test_new(unsigned sb_shift,
						  unsigned n_shift,
						  unsigned mode, unsigned cpu)
{
	struct vmscope_rb_buf *b = calloc(1, sizeof(*b));
	size_t bytes = ((size_t)vmscope_rb_mem_bytes(sb_shift, n_shift, 4096) + 4095) & ~(size_t)4095;
	void *mem = aligned_alloc(4096, bytes);

	if (!b || !mem || vmscope_rb_init(b, mem, sb_shift, n_shift, mode, cpu, 4096)) {
		fprintf(stderr, "rb_test_new failed\n");
		exit(2);
	}
	return b;
}

static inline void rb_test_free(struct vmscope_rb_buf *b)
{
	free(b->ctrl);
	free(b);
}

#endif
