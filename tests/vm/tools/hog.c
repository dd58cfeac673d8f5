/*
 * hog MS [NAME [FILE [CPU]]]: a task busy for a known time: busy-loops for
 * MS milliseconds of CLOCK_MONOTONIC, named NAME (default "vmscope-hog",
 * with prctl), creates FILE once it spins (so that a test knows it runs;
 * "-": none), and prints its pid and how long it ran in ns. With CPU it
 * first makes itself SCHED_FIFO 50 and moves to that CPU, so that, once
 * loaded, it takes a vCPU thread's CPU for that long in one piece
 * (`chrt`/`taskset` in front would take it in pieces while the next
 * program is exec'ed from the test host's 9p root), and when done it gives
 * that CPU back (SCHED_OTHER, the CPUs it had before, less that one)
 * before it prints, so the time it prints (from its arrival on that CPU to
 * the end of its loop) is the time it held that CPU, but for the system
 * calls that move it. A CI run failed when the vCPU was kept off 347 ms
 * by a hog whose loop ran 300 ms: it went on holding the CPU while it
 * printed to the 9p export and exited. In a guest it is
 * the busy guest thread (report-sched-hog).
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
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

/* Leave CPU cpu: back to SCHED_OTHER on the CPUs in home other than cpu. */
static int give_back(int cpu, const cpu_set_t *home)
{
	struct sched_param sp = { .sched_priority = 0 };
	cpu_set_t rest = *home;

	CPU_CLR(cpu, &rest);
	if (sched_setscheduler(0, SCHED_OTHER, &sp))
		return -1;
	if (CPU_COUNT(&rest) > 0 && sched_setaffinity(0, sizeof(rest), &rest))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	long long start, end, ms;
	int cpu = -1;
	cpu_set_t home;

	if (argc < 2 || argc > 5 || (ms = atoll(argv[1])) <= 0) {
		fprintf(stderr, "usage: hog MS [NAME [FILE [CPU]]]\n");
		return 2;
	}
	if (prctl(PR_SET_NAME, argc >= 3 ? argv[2] : "vmscope-hog", 0, 0, 0))
		perror("prctl");
	if (argc == 5) {
		struct sched_param sp = { .sched_priority = 50 };
		cpu_set_t set;

		cpu = atoi(argv[4]);
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_getaffinity(0, sizeof(home), &home) ||
		    sched_setscheduler(0, SCHED_FIFO, &sp) ||
		    sched_setaffinity(0, sizeof(set), &set)) {
			perror("SCHED_FIFO on the CPU");
			return 1;
		}
	}
	start = now_ns();
	if (argc >= 4 && strcmp(argv[3], "-")) {
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
	if (cpu >= 0 && give_back(cpu, &home)) {
		perror("giving the CPU back");
		return 1;
	}
	printf("hog pid %d ran %lld ns\n", (int)getpid(), end - start);
	return 0;
}
