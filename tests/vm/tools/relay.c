/*
 * relay: a hand-over of a CPU among host tasks while a vCPU thread waits
 * preempted there, for report-sched-hog. The module must see every switch
 * on that CPU while the vCPU thread waits, also after another traced thread
 * was preempted there and then migrated away.
 *
 *   relay wait CPU      the traced helper (T): on CPU, SCHED_FIFO 40,
 *                       prints its pid, sleeps until SIGUSR1, then is busy
 *                       until it finds itself on another CPU (at most
 *                       10 s) and exits
 *   relay run CPU TPID MS
 *                       the driver (H), untraced: SCHED_FIFO 50 on CPU
 *                       (the vCPU thread there is preempted), wakes T and
 *                       sleeps 2 ms (T runs), preempts T and moves it to
 *                       another CPU (T waited preempted here, then left),
 *                       forks U ("vmscope-relayu": same CPU and priority)
 *                       that is busy for MS ms, waits for it (H -> U is a
 *                       switch between two untraced tasks), gives the CPU
 *                       back and prints, in ns:
 *                         relay pid H held cpu CPU for N ns of CPU time
 *                         relay-u pid U held cpu CPU for N ns of CPU time
 *                         relay window W ns of wall time, helper T ran N ns
 *
 * CPU times come from the scheduler's clock, which on a host whose TSC is
 * unstable (the test host) is held back when ticks come late: under load
 * it can count less than the trace clock saw (measured: 4.5 ms of CPU time
 * for stints of 5.8 ms in the trace). The window, CLOCK_MONOTONIC from
 * just before H moves to CPU to just after it left, holds all of H's time
 * there, U's and T's: W minus their CPU times bounds H's from above in a
 * clock that is not held back.
 *
 * U is born on CPU and never leaves it, so its whole CPU time (wait4's
 * rusage) is time it held that CPU; H's is measured from just before it
 * moves there to just after it leaves, as in hog.c. Start both with CPU
 * outside the caller's affinity, so that their fork and exec run elsewhere.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Thread @pid's CPU time so far (schedstat's first field), or -1. */
static long long runtime_ns(pid_t pid)
{
	char path[64];
	long long ns = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &ns) != 1)
		ns = -1;
	fclose(f);
	return ns;
}

static void busy_ms(long long ms)
{
	long long start = clock_ns(CLOCK_MONOTONIC);

	while (clock_ns(CLOCK_MONOTONIC) - start < ms * 1000000)
		;
}

static int fifo_on(int prio, int cpu)
{
	struct sched_param sp = { .sched_priority = prio };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setscheduler(0, SCHED_FIFO, &sp) || sched_setaffinity(0, sizeof(set), &set)) {
		perror("relay: SCHED_FIFO on the CPU");
		return -1;
	}
	return 0;
}

static volatile sig_atomic_t woken;

static void on_usr1(int sig)
{
	(void)sig;
	woken = 1;
}

static int relay_wait(int cpu)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &block, &old) || sigaction(SIGUSR1, &sa, NULL) ||
	    fifo_on(40, cpu))
		return 1;
	printf("relay-t pid %d\n", (int)getpid());
	fflush(stdout);
	while (!woken)
		sigsuspend(&old);
	/* busy until moved: the driver preempts it here, whatever its delays */
	long long start = clock_ns(CLOCK_MONOTONIC);

	while (sched_getcpu() == cpu)
		if (clock_ns(CLOCK_MONOTONIC) - start > 10000000000LL) {
			fprintf(stderr, "relay: not moved off CPU %d within 10 s\n", cpu);
			return 1;
		}
	return 0;
}

static int relay_run(int cpu, pid_t t, long long ms)
{
	struct timespec nap = { .tv_nsec = 2000000 };
	struct sched_param other = { .sched_priority = 0 };
	long long h0, h1, w0, w1, t0, t1;
	cpu_set_t home, rest;
	struct rusage ru;
	int status;
	pid_t u;

	if (sched_getaffinity(0, sizeof(home), &home))
		return 1;
	rest = home;
	CPU_CLR(cpu, &rest);
	if (CPU_COUNT(&rest) == 0) {
		fprintf(stderr, "relay: the caller's CPUs must include one other than %d\n", cpu);
		return 1;
	}
	t0 = runtime_ns(t);
	w0 = clock_ns(CLOCK_MONOTONIC);
	h0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	if (fifo_on(50, cpu))
		return 1;
	if (kill(t, SIGUSR1)) {
		perror("relay: waking the helper");
		return 1;
	}
	nanosleep(&nap, NULL);
	if (sched_setaffinity(t, sizeof(rest), &rest)) {
		perror("relay: moving the helper away");
		return 1;
	}
	t1 = runtime_ns(t);
	u = fork();
	if (u < 0) {
		perror("relay: fork");
		return 1;
	}
	if (u == 0) {
		prctl(PR_SET_NAME, "vmscope-relayu", 0, 0, 0);
		busy_ms(ms);
		_exit(0);
	}
	while (wait4(u, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("relay: wait4");
			return 1;
		}
	if (sched_setscheduler(0, SCHED_OTHER, &other) ||
	    sched_setaffinity(0, sizeof(rest), &rest)) {
		perror("relay: giving the CPU back");
		return 1;
	}
	h1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	w1 = clock_ns(CLOCK_MONOTONIC);
	if (t0 < 0 || t1 < 0) {
		fprintf(stderr, "relay: cannot read the helper's schedstat\n");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "relay: the busy child failed (status %#x)\n", status);
		return 1;
	}
	printf("relay pid %d held cpu %d for %lld ns of CPU time\n", (int)getpid(), cpu, h1 - h0);
	printf("relay-u pid %d held cpu %d for %lld ns of CPU time\n", (int)u, cpu,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL);
	printf("relay window %lld ns of wall time, helper %d ran %lld ns\n", w1 - w0, (int)t,
	       t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "wait"))
		return relay_wait(atoi(argv[2]));
	if (argc == 5 && !strcmp(argv[1], "run") && atoll(argv[4]) > 0)
		return relay_run(atoi(argv[2]), (pid_t)atoi(argv[3]), atoll(argv[4]));
	fprintf(stderr, "usage: relay wait CPU | relay run CPU TPID MS\n");
	return 2;
}
