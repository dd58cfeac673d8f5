/*
 * exit-tasks N M: in a KVM guest, as root, two named tasks that cause
 * known exits in known numbers, one after the other: "exit-io" does N
 * port writes (outb to port 0x80, the POST diagnostic port no device
 * answers in the guest: every write is an IOIO exit to QEMU) and
 * "exit-cpuid" does M CPUID instructions (each a CPUID exit handled in the
 * host kernel). Names are set with prctl(PR_SET_NAME) so that the guest's
 * sched_switch records carry them. Prints what each did.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static void port_writes(long n)
{
	/* per process: a fork does not inherit it */
	if (ioperm(0x80, 1, 1)) {
		perror("ioperm(0x80) (needs root)");
		_exit(1);
	}
	for (long i = 0; i < n; i++)
		outb(0, 0x80);
}

static void cpuids(long n)
{
	for (long i = 0; i < n; i++) {
		unsigned int a = 0, b, c = 0, d;

		__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
	}
}

/* Run @fn(@n) in a child named @name; 0 when it succeeded. */
static int task(const char *name, void (*fn)(long), long n)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		return -1;
	}
	if (!pid) {
		if (prctl(PR_SET_NAME, name, 0, 0, 0))
			_exit(2);
		fn(n);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "%s failed\n", name);
		return -1;
	}
	printf("%s pid %d: %ld\n", name, (int)pid, n);
	return 0;
}

int main(int argc, char **argv)
{
	long n, m;

	if (argc != 3 || (n = atol(argv[1])) <= 0 || (m = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: exit-tasks N-PORT-WRITES M-CPUIDS\n");
		return 2;
	}
	if (task("exit-io", port_writes, n) || task("exit-cpuid", cpuids, m))
		return 1;
	return 0;
}
