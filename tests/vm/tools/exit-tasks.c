/*
 * exit-tasks [--pinned] N M: in a KVM guest, as root, two named tasks that
 * cause known exits in known numbers, one after the other: "exit-io" does N
 * port writes (one byte to port 0x80, the POST diagnostic port: every
 * write is an IOIO exit to QEMU) and "exit-cpuid" does M CPUID
 * instructions (each a CPUID exit handled in the host kernel). The port
 * writes go through /dev/port (the kernel's outb, in the task's own
 * context): a userspace `out` after ioperm() took a general protection
 * fault in the nested guest of the TCG test host, twice. Names are set with prctl(PR_SET_NAME) so that the guest's
 * sched_switch records carry them. Prints what each did.
 * --pinned: both at once, exit-io bound to CPU 0 and exit-cpuid to CPU 1,
 * so that each vCPU runs one named task while the other runs the other:
 * a tracer that mixed up the vCPUs' current tasks would charge one task's
 * exits to the other.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void port_writes(long n)
{
	const unsigned char zero = 0;
	int fd = open("/dev/port", O_WRONLY);

	if (fd < 0) {
		perror("/dev/port (needs root)");
		_exit(1);
	}
	for (long i = 0; i < n; i++)
		if (pwrite(fd, &zero, 1, 0x80) != 1) {
			perror("/dev/port: write to port 0x80");
			_exit(1);
		}
	close(fd);
}

static void cpuids(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned int a = 0, b, c = 0, d;

		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	}
}

/* Start @fn(@n) in a child named @name, bound to CPU @cpu unless it is
 * negative: its pid, or -1. */
static pid_t task_start(const char *name, void (*fn)(long), long n, int cpu)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (!pid) {
		cpu_set_t set;

		CPU_ZERO(&set);
		if (cpu >= 0)
			CPU_SET(cpu, &set);
		if (cpu >= 0 && sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "%s: cannot bind to CPU %d: %s\n", name, cpu,
				strerror(errno));
			_exit(3);
		}
		if (prctl(PR_SET_NAME, name, 0, 0, 0))
			_exit(2);
		fn(n);
		_exit(0);
	}
	return pid;
}

/* Wait for @name's child @pid; 0 when it succeeded (then says so). */
static int task_wait(const char *name, pid_t pid, long n)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "%s failed\n", name);
		return -1;
	}
	printf("%s pid %d: %ld\n", name, (int)pid, n);
	return 0;
}

int main(int argc, char **argv)
{
	int pinned = argc == 4 && !strcmp(argv[1], "--pinned");
	long n, m;
	pid_t io, cpuid;
	int e;

	argv += pinned;
	argc -= pinned;
	if (argc != 3 || (n = atol(argv[1])) <= 0 || (m = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: exit-tasks [--pinned] N-PORT-WRITES M-CPUIDS\n");
		return 2;
	}
	if (!pinned)
		return task_wait("exit-io", task_start("exit-io", port_writes, n, -1), n) ||
		       task_wait("exit-cpuid", task_start("exit-cpuid", cpuids, m, -1), m);
	io = task_start("exit-io", port_writes, n, 0);
	cpuid = task_start("exit-cpuid", cpuids, m, 1);
	/* both waited for, whichever failed */
	e = task_wait("exit-io", io, n);
	e |= task_wait("exit-cpuid", cpuid, m);
	return e ? 1 : 0;
}
