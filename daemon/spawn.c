// SPDX-License-Identifier: GPL-2.0
/* vmscoped's child processes: see spawn.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "spawn.h"

pid_t dm_spawn(const char *const argv[], const char *log_path, const int fd[2])
{
	pid_t pid = fork();
	int high[2] = { -1, -1 };

	if (pid)
		return pid;
	/* the daemon blocks signals for its signalfd: not the child's */
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	setsid();	/* not in the daemon's terminal's process group */
	int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int out = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);

	if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(126);
	/* above 4 first, so that neither lands on the other's place; dup2()
	 * leaves the copy open across exec */
	for (int i = 0; i < 2; i++)
		if (fd[i] >= 0 && (high[i] = fcntl(fd[i], F_DUPFD_CLOEXEC, 10)) < 0)
			_exit(126);
	for (int i = 0; i < 2; i++)
		if (high[i] >= 0 && dup2(high[i], 3 + i) < 0)
			_exit(126);
	execv(argv[0], (char *const *)argv);
	dprintf(2, "vmscoped: exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}
