/* SPDX-License-Identifier: GPL-2.0 */
/* The agent as a command: `vmscope agent` (cli/main.c) and vmscope-agent (main.c). */
#ifndef VMSCOPE_AGENT_CMD_AGENT_H
#define VMSCOPE_AGENT_CMD_AGENT_H

/* The exit statuses every vmscope command returns (cli/commands.h). */
enum { AGENT_EXIT_OK = 0, AGENT_EXIT_RUNTIME = 1, AGENT_EXIT_USAGE = 2 };

int cmd_agent(int argc, char **argv);

#endif
