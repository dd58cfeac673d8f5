// SPDX-License-Identifier: GPL-2.0
/*
 * The ring buffer core (ringbuf/, one source for kernel and userspace)
 * built into vmscope_host.ko, from this module's own object (see
 * session.c for why).
 */
#include "../ringbuf/rb_core.c"
