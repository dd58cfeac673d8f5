/*
 * vmtest-wait [--timeout S] [--pid PID] --file PATH
 * vmtest-wait [--timeout S] [--pid PID] --line FILE PREFIX
 * vmtest-wait [--timeout S] --exit PID
 *
 * The VM tests' waits, in one process: until PATH exists, until FILE has a
 * line starting with PREFIX, or until process PID has ended (pidfd, no
 * polling). Exit status 0 when it happened, 1 after S seconds (default
 * 300), 2 when --pid PID ended first, 3 on a usage error.
 *
 * Why not a shell loop of `[ -e ]; sleep 0.2`: every `sleep` is an exec,
 * and an exec costs 0.1-0.2 s of CPU in the TCG test host and 0.5-1 s in
 * a nested guest (tests/vm/README.md), so a guest waiting on the test
 * host kept one of the test host's two vCPUs busy with its own polling
 * while the test host had work to do. Here a wait is one exec, and the
 * pauses between looks are sleeps (on the pidfd with --pid): the vCPU
 * idles.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 100

static int usage(void)
{
	fprintf(stderr, "usage: vmtest-wait [--timeout S] [--pid PID] --file PATH\n"
			"       vmtest-wait [--timeout S] [--pid PID] --line FILE PREFIX\n"
			"       vmtest-wait [--timeout S] --exit PID\n");
	return 3;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* FILE has a line that starts with prefix (the last line may be partial) */
static int has_line(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0, n = strlen(prefix);
	int found = 0;

	if (!f)
		return 0;
	while (!found && getline(&line, &cap, f) >= 0)
		found = !strncmp(line, prefix, n);
	free(line);
	fclose(f);
	return found;
}

/*
 * A pidfd of @pid (which the kernel makes readable once the process has
 * exited, reaped or not): -1 and *gone when it has already gone. The
 * kernel's own word, where kill(PID, 0) and /proc/PID/stat's state letter
 * race with the process's exit and reaping.
 */
static int pid_fd(long pid, int *gone)
{
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

	*gone = fd < 0 && errno == ESRCH;
	return fd;
}

/* Has the process of @fd (pid_fd) exited, waiting at most @ms for it? */
static int ended(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) > 0;
}

static int wait_exit(long pid, double timeout)
{
	int gone, r, fd = pid_fd(pid, &gone);

	if (fd < 0)
		return gone ? 0 : (perror("vmtest-wait: pidfd_open"), 3);
	r = ended(fd, (int)(timeout * 1000));
	close(fd);
	return r ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *file = NULL, *prefix = NULL;
	double timeout = 300, end;
	long pid = 0, exit_pid = 0;
	int i, pfd = -1, gone = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout = atof(argv[++i]);
		else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = atol(argv[++i]);
		else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			exit_pid = atol(argv[++i]);
		else if (!strcmp(argv[i], "--file") && i + 1 < argc)
			file = argv[++i];
		else if (!strcmp(argv[i], "--line") && i + 2 < argc) {
			file = argv[++i];
			prefix = argv[++i];
		} else
			return usage();
	}
	if (timeout <= 0 || (exit_pid > 0) == (file != NULL) || (exit_pid && pid))
		return usage();
	if (exit_pid)
		return wait_exit(exit_pid, timeout);
	if (pid > 0 && (pfd = pid_fd(pid, &gone)) < 0 && !gone) {
		perror("vmtest-wait: pidfd_open");
		return 3;
	}
	end = now_s() + timeout;
	for (;;) {
		struct timespec ms = { 0, POLL_MS * 1000000L };

		if (prefix ? has_line(file, prefix) : access(file, F_OK) == 0)
			return 0;
		if (gone)
			return 2;
		if (now_s() >= end)
			return 1;
		/* the pause between two looks: on the process when there is one */
		if (pfd >= 0)
			gone = ended(pfd, POLL_MS);
		else
			nanosleep(&ms, NULL);
	}
}
