/*
 * hog MS [NAME [FILE [CPU]]]: a task busy for a known time: busy-loops for
 * MS milliseconds of CLOCK_MONOTONIC, named NAME (default "vmscope-hog",
 * with prctl), creates FILE once it spins (so that a test knows it runs;
 * "-": none), and prints its pid and how long it ran in ns.
 *
 * With CPU it first makes itself SCHED_FIFO 50 and moves to that CPU, so
 * that it takes a vCPU thread's CPU in one piece (`chrt`/`taskset` in front
 * would take it in pieces while the next program is exec'ed), and when done
 * it gives that CPU back (SCHED_OTHER, the CPUs it had before, less that
 * one) before it prints. It then also prints two readings of the CPU time
 * it used (CLOCK_THREAD_CPUTIME_ID, the scheduler's own sum_exec_runtime)
 * that bound the time it held that CPU: from just after it arrived there
 * to just before it leaves (all of it on that CPU, less the ends of the
 * two moves), and from just before the move there to just after it left
 * (all of its time there, plus the starts and ends of the moves spent on
 * the CPU it came from). On an idle machine the two are microseconds
 * apart; where the test host's own vCPUs are starved they are not. These
 * bound everything it took from that CPU only if it never ran there
 * otherwise, so a test starts it with that CPU outside its affinity (e.g.
 * from a shell pinned away from it): its fork, exec and start-up then run
 * elsewhere.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static long long clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
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
	long long start, end, ms, cpu_start = 0, cpu_in = 0, cpu_out = 0, cpu_end = 0;
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
		    sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("SCHED_FIFO");
			return 1;
		}
		cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("moving to the CPU");
			return 1;
		}
		cpu_in = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	start = clock_ns(CLOCK_MONOTONIC);
	if (argc >= 4 && strcmp(argv[3], "-")) {
		int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0) {
			perror(argv[3]);
			return 1;
		}
		close(fd);
	}
	do
		end = clock_ns(CLOCK_MONOTONIC);
	while (end - start < ms * 1000000);
	if (cpu >= 0) {
		cpu_out = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		if (give_back(cpu, &home)) {
			perror("giving the CPU back");
			return 1;
		}
		cpu_end = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	}
	printf("hog pid %d ran %lld ns\n", (int)getpid(), end - start);
	if (cpu >= 0)
		printf("hog held cpu %d for %lld to %lld ns of CPU time\n", cpu,
		       cpu_out - cpu_in, cpu_end - cpu_start);
	return 0;
}
