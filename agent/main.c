/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscope-agent: `vmscope agent` (cmd_agent.c) as a program of its own,
 * linked statically (meson.build), for guests that have nothing but
 * busybox. The same code as the subcommand; only the entry differs.
 */
#include "cmd_agent.h"

int main(int argc, char **argv)
{
	return cmd_agent(argc, argv);
}
