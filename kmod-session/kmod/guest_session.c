// SPDX-License-Identifier: GPL-2.0
/*
 * The capture session code built into vmscope_guest.ko (each module compiles
 * its own objects from its own Kbuild line, as ringbuf/kmod/ does, so the
 * two module builds never share an object file or its .cmd record).
 */
#include "../session.c"
#include "../mmap.c"
