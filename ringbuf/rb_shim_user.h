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

#define rb_load(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define rb_store(p, v)		__atomic_store_n((p), (v), __ATOMIC_RELAXED)

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RB_USER_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define RB_USER_TSAN 1
#endif

#if defined(__x86_64__) && !defined(RB_USER_TSAN) && !defined(VMSCOPE_RB_USER_LOCKED_OPS)
/*
 * x86-64: the same trick as the kernel's local_t. Without a LOCK prefix,
 * cmpxchg/xadd/inc are still single instructions, so a signal handler
 * (delivered only between instructions) sees them all-or-nothing, and the
 * aligned 8-byte store they make is atomic for a reader thread. Only the
 * owning thread modifies these words, so the bus lock buys nothing; it
 * costs ~6 ns per operation on the benchmark machine vs ~3 ns.
 * ThreadSanitizer cannot see inline asm, so TSan builds (and
 * -DVMSCOPE_RB_USER_LOCKED_OPS) use the __atomic builtins below.
 */
static inline bool rb_cas_local(rb_u64 *p, rb_u64 *oldp, rb_u64 nv)
{
	rb_u64 prev = *oldp;
	bool ok;

	__asm__ __volatile__("cmpxchgq %3, %1"
			     : "+a"(prev), "+m"(*p), "=@ccz"(ok)
			     : "r"(nv)
			     : "memory");
	*oldp = prev;
	return ok;
}

/* "memory" clobber: payload stores stay before the commit. */
static inline rb_u64 rb_add_return_local(rb_u64 *p, rb_u64 v)
{
	rb_u64 r = v;

	__asm__ __volatile__("xaddq %0, %1" : "+r"(r), "+m"(*p) : : "memory", "cc");
	return r + v;
}

static inline void rb_inc_local(rb_u64 *p)
{
	__asm__ __volatile__("incq %0" : "+m"(*p) : : "memory", "cc");
}
#else
#define rb_cas_local(p, oldp, nv)					\
	__atomic_compare_exchange_n((p), (oldp), (nv), false,		\
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED)
/* release: the payload stores of this record may not sink below the add
 * (a signal handler arriving after the add may deliver the sub-buffer). */
#define rb_add_return_local(p, v) __atomic_add_fetch((p), (v), __ATOMIC_RELEASE)
#define rb_inc_local(p)		((void)__atomic_fetch_add((p), 1, __ATOMIC_RELAXED))
#endif

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
