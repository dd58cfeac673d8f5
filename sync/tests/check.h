/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* Assertion that names the failing seed so a run can be replayed. */
#ifndef VMSCOPE_SYNC_TEST_CHECK_H
#define VMSCOPE_SYNC_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

extern unsigned long long check_seed;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: CHECK(%s) failed, seed %llu: ", \
				__FILE__, __LINE__, #cond, check_seed);     \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			exit(1);                                            \
		}                                                           \
	} while (0)

#endif
