/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Happens-before that ThreadSanitizer cannot see by itself: liburcu's
 * queues and stacks order their users with inline-assembly atomics, which
 * TSan does not instrument, so a node handed from one thread to another
 * through them looks like a race. TSAN_RELEASE(node) before the hand-off
 * and TSAN_ACQUIRE(node) after it tell TSan what liburcu guarantees.
 * Nothing in other builds.
 */
#ifndef VMSCOPE_COLLECTOR_TSAN_HB_H
#define VMSCOPE_COLLECTOR_TSAN_HB_H

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
#define TSAN_RELEASE(p) __tsan_release(p)
#define TSAN_ACQUIRE(p) __tsan_acquire(p)
#else
#define TSAN_RELEASE(p) ((void)(p))
#define TSAN_ACQUIRE(p) ((void)(p))
#endif

#endif
