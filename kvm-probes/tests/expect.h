/* A non-fatal assertion for the event-table tests: count and go on. */
#ifndef VMSCOPE_KVM_PROBES_TEST_EXPECT_H
#define VMSCOPE_KVM_PROBES_TEST_EXPECT_H

#include <stdio.h>

static int failures;

#define EXPECT(cond, ...) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} \
} while (0)

#endif
