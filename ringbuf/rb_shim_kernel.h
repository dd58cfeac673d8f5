/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Kernel shim. Writers of a per-CPU buffer run with preemption disabled on
 * that CPU; interrupts and NMIs may nest. local64_t operations are atomic
 * against such nesting without a LOCK prefix on x86. Words of struct
 * vmscope_rb_ctrl are __u64 in the ABI header (userspace maps them) and are
 * used as local64_t here; the kernel builds with -fno-strict-aliasing and
 * local64_t is a single 64-bit word on 64-bit kernels.
 *
 * The slot table is modified by the reader from another CPU, so it uses
 * cmpxchg64() (fully ordered) and smp_load_acquire/smp_store_release.
 */
#ifndef VMSCOPE_RB_SHIM_KERNEL_H
#define VMSCOPE_RB_SHIM_KERNEL_H

#include <linux/types.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/atomic.h>
#include <linux/trace_clock.h>
#include <asm/barrier.h>
#include <asm/local64.h>

typedef u8 rb_u8;
typedef u16 rb_u16;
typedef u32 rb_u32;
typedef u64 rb_u64;

#define rb_likely(x)	likely(x)
#define rb_unlikely(x)	unlikely(x)

#define rb_load(p)		READ_ONCE(*(p))
#define rb_store(p, v)		WRITE_ONCE(*(p), (v))

static __always_inline bool rb_cas_local(u64 *p, u64 *oldp, u64 nv)
{
	u64 prev = (u64)local64_cmpxchg((local64_t *)p, (s64)*oldp, (s64)nv);

	if (prev == *oldp)
		return true;
	*oldp = prev;
	return false;
}

static __always_inline u64 rb_add_return_local(u64 *p, u64 v)
{
	barrier();	/* payload stores before the commit, on this CPU */
	return (u64)local64_add_return((s64)v, (local64_t *)p);
}

#define rb_inc_local(p)		local64_inc((local64_t *)(p))

#define rb_load_acquire(p)	smp_load_acquire(p)
#define rb_store_release(p, v)	smp_store_release((p), (v))

static __always_inline bool rb_cas_shared(u64 *p, u64 *oldp, u64 nv)
{
	u64 prev = cmpxchg64(p, *oldp, nv);

	if (prev == *oldp)
		return true;
	*oldp = prev;
	return false;
}

#define rb_preempt_disable()	preempt_disable_notrace()
#define rb_preempt_enable()	preempt_enable_notrace()
#define rb_this_cpu()		raw_smp_processor_id()

/*
 * trace_clock_local(): sched_clock based, NMI-safe, monotonic on one CPU,
 * which is all the per-CPU timestamp encoding needs. The session records
 * the clock's identity once; the control path may switch to another clock
 * here (e.g. ktime_get_mono_fast_ns) without touching the core.
 */
static __always_inline u64 rb_clock(void)
{
	return trace_clock_local();
}

#endif
