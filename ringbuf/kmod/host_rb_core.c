// SPDX-License-Identifier: GPL-2.0
/*
 * The ring buffer core built into vmscope_host.ko. Each module compiles its
 * own object (from its own Kbuild object line) so the two module builds
 * never share an object file or its .cmd record.
 */
#include "../rb_core.c"
