/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Primitives the ring buffer core needs, so that rb_core.c is one source
 * for the kernel modules and for userspace (tests, benchmark).
 *
 * Every shim provides:
 *   types      rb_u8 rb_u16 rb_u32 rb_u64, bool
 *   local ops  (writers of one buffer run on one CPU, possibly nested by
 *              interrupts/NMIs or signal handlers; a reader on another CPU
 *              only loads these words)
 *     rb_load(p)                 relaxed load, readable from other CPUs
 *     rb_store(p, v)             relaxed store
 *     rb_cas_local(p, &old, new) atomic w.r.t. nesting on this CPU; on
 *                                failure, old receives the current value
 *     rb_add_return_local(p, v)  returns the new value; orders the
 *                                caller's earlier stores before it on this
 *                                CPU (a compiler barrier at least)
 *     rb_inc_local(p)
 *   shared ops (slot table: writer and reader CPUs both modify it)
 *     rb_load_acquire(p), rb_store_release(p, v),
 *     rb_cas_shared(p, &old, new)  full barrier, cross-CPU atomic
 *   context
 *     rb_preempt_disable() / rb_preempt_enable()
 *     rb_this_cpu()              current CPU (userspace: a thread-local)
 *     rb_clock()                 trace clock in ns, per-CPU monotonic,
 *                                safe in NMI / signal handlers
 *   misc       rb_likely/rb_unlikely, RB_EINVAL, RB_ENOSPC, RB_E2BIG,
 *              RB_EAGAIN, RB_EBUSY, rb_memcpy
 */
#ifndef VMSCOPE_RB_SHIM_H
#define VMSCOPE_RB_SHIM_H

#ifdef __KERNEL__
#include "rb_shim_kernel.h"
#else
#include "rb_shim_user.h"
#endif

/* The same in both: each shim includes its errno values and memcpy. */
#define RB_EINVAL	EINVAL
#define RB_ENOSPC	ENOSPC
#define RB_E2BIG	E2BIG
#define RB_EAGAIN	EAGAIN
#define RB_EBUSY	EBUSY

#define rb_memcpy(d, s, n)	memcpy((d), (s), (n))

#endif
