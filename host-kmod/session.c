// SPDX-License-Identifier: GPL-2.0
/*
 * The capture session code (kmod-session/, shared by both modules) built
 * into vmscope_host.ko. Each module compiles its own objects from its own
 * Kbuild line, so the two module builds never share an object file or its
 * .cmd record.
 */
#include "../kmod-session/session.c"
#include "../kmod-session/mmap.c"
