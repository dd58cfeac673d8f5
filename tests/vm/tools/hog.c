/*
 * hog MS [NAME [FILE]]: a task busy for a known time: busy-loops for MS
 * milliseconds of CLOCK_MONOTONIC, named NAME (default "vmscope-hog",
 * with prctl; the first switch to it may still carry the name it was
 * exec'ed with), creates FILE once it spins (so that a test knows it
 * runs), and prints its pid and how long it ran in ns. Started in the test
 * host with chrt -f and taskset on a vCPU thread's CPU, it preempts that
 * thread for that long; in a guest it is the busy guest thread
 * (report-sched-hog).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long long start, end, ms;

	if (argc < 2 || argc > 4 || (ms = atoll(argv[1])) <= 0) {
		fprintf(stderr, "usage: hog MS [NAME [FILE]]\n");
		return 2;
	}
	if (prctl(PR_SET_NAME, argc >= 3 ? argv[2] : "vmscope-hog", 0, 0, 0))
		perror("prctl");
	start = now_ns();
	if (argc == 4) {
		int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
		close(fd);
	}
	do
		end = now_ns();
	while (end - start < ms * 1000000);
	printf("hog pid %d ran %lld ns\n", (int)getpid(), end - start);
	return 0;
}
