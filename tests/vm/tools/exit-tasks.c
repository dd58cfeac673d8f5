/*
 * exit-tasks N M: in a KVM guest, as root, two named tasks that cause
 * known exits in known numbers, one after the other: "exit-io" does N
 * port writes (one byte to port 0x80, the POST diagnostic port: every
 * write is an IOIO exit to QEMU) and "exit-cpuid" does M CPUID
 * instructions (each a CPUID exit handled in the host kernel). The port
 * writes go through /dev/port (the kernel's outb, in the task's own
 * context): a userspace `out` after ioperm() took a general protection
 * fault in the nested guest of the TCG test host, twice. Names are set with prctl(PR_SET_NAME) so that the guest's
 * sched_switch records carry them. Prints what each did.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
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
