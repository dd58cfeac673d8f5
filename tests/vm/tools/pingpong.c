/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pingpong: two tasks exchange one byte over a pair of pipes N times, both
 * pinned to one CPU, so that every round trip is two voluntary context
 * switches (each side blocks in read() until the other writes).
 *
 *   pingpong N [CPU]
 *
 * Prints "parent PID child PID rounds N" and, read after the exchange, each
 * task's voluntary_ctxt_switches / nonvoluntary_ctxt_switches from
 * /proc/PID/status: the child's after it exited (waitid(WNOWAIT) keeps it
 * readable, unreaped), the parent's last, so that the counts cover each
 * task's whole life up to the print, which does not block (stdout should
 * be a file on tmpfs).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void status(pid_t pid, long *vol, long *invol)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	*vol = *invol = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "voluntary_ctxt_switches: %ld", vol);
		sscanf(line, "nonvoluntary_ctxt_switches: %ld", invol);
	}
	fclose(f);
}

static void xfer(int in, int out, long n, int first)
{
	char c = 'x';

	for (long i = 0; i < n; i++) {
		if (first && write(out, &c, 1) != 1)
			exit(3);
		if (read(in, &c, 1) != 1)
			exit(3);
		if (!first && write(out, &c, 1) != 1)
			exit(3);
	}
}

int main(int argc, char **argv)
{
	int ab[2], ba[2];
	long n, pv, pi, cv, ci;
	cpu_set_t set;
	siginfo_t si;
	pid_t child;

	if (argc < 2 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: pingpong N [CPU]\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(argc > 2 ? atoi(argv[2]) : 0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("pingpong: sched_setaffinity");
		return 1;
	}
	if (pipe(ab) || pipe(ba)) {
		perror("pingpong: pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (child == 0) {
		xfer(ab[0], ba[1], n, 0);
		_exit(0);
	}
	xfer(ba[0], ab[1], n, 1);
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, child, &si, WEXITED | WNOWAIT)) {
		perror("pingpong: waitid");
		return 1;
	}
	status(child, &cv, &ci);
	status(getpid(), &pv, &pi);
	printf("parent %d child %d rounds %ld\n", (int)getpid(), (int)child, n);
	printf("proc %d voluntary %ld nonvoluntary %ld\n", (int)child, cv, ci);
	printf("proc %d voluntary %ld nonvoluntary %ld\n", (int)getpid(), pv, pi);
	fflush(stdout);
	waitpid(child, NULL, 0);
	return si.si_code == CLD_EXITED && si.si_status == 0 ? 0 : 1;
}
