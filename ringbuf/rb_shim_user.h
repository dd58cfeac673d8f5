/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Userspace shim: GCC/Clang __atomic builtins (the C11 memory model, so
 * ThreadSanitizer understands every access), a thread-local "CPU" number,
 * and signal handlers standing in for interrupts.
 *
 * Local operations must be atomic against a signal handler interrupting the
 * same thread, which a plain load/modify/store is not, so they are real
 * atomic read-modify-writes. They are relaxed: only the owning thread and
 * its handlers modify those words, and a thread observes its own operations
 * in program order. The one cross-thread publication is the release store
 * of a slot table entry.
 */
#ifndef VMSCOPE_RB_SHIM_USER_H
#define VMSCOPE_RB_SHIM_USER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <linux/types.h>

/* the ABI's types, so pointers into struct vmscope_rb_ctrl match */
typedef __u8 rb_u8;
typedef __u16 rb_u16;
typedef __u32 rb_u32;
typedef __u64 rb_u64;

#define rb_likely(x)	__builtin_expect(!!(x), 1)
#define rb_unlikely(x)	__builtin_expect(!!(x), 0)

#define RB_EINVAL	EINVAL
#define RB_ENOSPC	ENOSPC
#define RB_E2BIG	E2BIG
#define RB_EAGAIN	EAGAIN
#define RB_EBUSY	EBUSY

#define rb_memcpy(d, s, n)	memcpy((d), (s), (n))

#define rb_load(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define rb_store(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define rb_cas_local(p, oldp, nv)					\
	__atomic_compare_exchange_n((p), (oldp), (nv), false,		\
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED)
/* release: the payload stores of this record may not sink below the add
 * (a signal handler arriving after the add may deliver the sub-buffer). */
#define rb_add_return_local(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
#define rb_inc_local(p)		((void)__atomic_fetch_add((p), 1, __ATOMIC_RELAXED))

#define rb_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define rb_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define rb_cas_shared(p, oldp, nv)					\
	__atomic_compare_exchange_n((p), (oldp), (nv), false,		\
				    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)

/* No preemption to disable: each thread is its own "CPU"; a signal fence
 * keeps the compiler from moving accesses across the section edges. */
#define rb_preempt_disable()	__atomic_signal_fence(__ATOMIC_SEQ_CST)
#define rb_preempt_enable()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

/* The "CPU" a thread writes to; tests and benchmarks set it per thread. */
extern __thread unsigned int vmscope_rb_user_cpu;
#define rb_this_cpu()		(vmscope_rb_user_cpu)

#ifdef VMSCOPE_RB_MOCK_CLOCK
/* Unit tests drive time by hand to exercise the timestamp encoding. */
extern rb_u64 (*vmscope_rb_mock_clock)(void);
static inline rb_u64 rb_clock(void)
{
	return vmscope_rb_mock_clock();
}
#else
/* CLOCK_MONOTONIC through the vDSO: async-signal-safe, monotonic, the
 * same clock LTTng-UST uses, so benchmarks compare like with like. */
static inline rb_u64 rb_clock(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (rb_u64)t.tv_sec * 1000000000ull + (rb_u64)t.tv_nsec;
}
#endif

#endif
