/*
 * xorshift64 (Marsaglia, shifts 13/7/17): the tests' and benchmarks'
 * deterministic pseudo-random numbers, one definition for all of them
 * (fixed seeds give the same data every run; not for anything secret).
 * Userspace only; header only, included by relative path like check.h.
 */
#ifndef VMSCOPE_XORSHIFT_H
#define VMSCOPE_XORSHIFT_H

#include <stdint.h>

/* The next number from *@state (which must not be 0). */
static inline uint64_t vmscope_xorshift64(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#endif
