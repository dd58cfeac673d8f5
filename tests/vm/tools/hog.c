/*
 * hog MS [NAME]: a host task that competes for a CPU for a known time:
 * busy-loops for MS milliseconds of CLOCK_MONOTONIC, named NAME (default
 * "vmscope-hog", with prctl, so that the host's sched_switch records
 * carry it), and prints how long it ran in ns. Started with chrt -f and
 * taskset on a vCPU thread's CPU, it preempts that thread for that long
 * (report-sched-hog).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	long long start, end, ms;

	if (argc < 2 || argc > 3 || (ms = atoll(argv[1])) <= 0) {
		fprintf(stderr, "usage: hog MS [NAME]\n");
		return 2;
	}
	if (prctl(PR_SET_NAME, argc == 3 ? argv[2] : "vmscope-hog", 0, 0, 0))
		perror("prctl");
	start = now_ns();
	do
		end = now_ns();
	while (end - start < ms * 1000000);
	printf("hog ran %lld ns\n", end - start);
	return 0;
}
