/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped's child processes (recorders and merges, sessions.c): the
 * daemon's signal mask undone, a session of their own, stdin /dev/null,
 * stdout and stderr appended to a log file.
 */
#ifndef VMSCOPE_DAEMON_SPAWN_H
#define VMSCOPE_DAEMON_SPAWN_H

#include <sys/types.h>

/*
 * Run @argv (argv[0] a path) with output to @log_path; @fd[0] and @fd[1]
 * (each >= 0, or -1) become its fds 3 and 4, open across exec. The
 * child's pid, or -1 (errno).
 */
pid_t dm_spawn(const char *const argv[], const char *log_path, const int fd[2]);

#endif
