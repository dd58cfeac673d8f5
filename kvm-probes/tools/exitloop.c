/*
 * vmscope-exitloop: an exit-heavy workload for tests and measurements, run
 * inside a KVM guest. Each write of one byte to port 0x80 and each `cpuid`
 * is one VM exit (an I/O intercept, a CPUID intercept), so the host can
 * compare its counts with KVM's. Prints what it did and the rate.
 *
 * Port writes go through /dev/port (the kernel's outb) rather than ioperm()
 * and a user-mode outb: QEMU TCG's nested SVM does not honour the TSS I/O
 * bitmap, so a user outb takes a #GP there.
 *
 * --syscall N is the opposite: N getppid() system calls, no exit at all
 * (a guest with vmscope_guest.ko recording syscalls makes two events of
 * each); a way to make millions of guest events quickly under nested TCG,
 * where every exit is expensive (the collector memory benchmark).
 *
 *   vmscope-exitloop [--pio N] [--cpuid N] [--syscall N]
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util_args.h"
#include "util_clock.h"

static void cpuid0(void)
{
	unsigned int a = 0, b, c = 0, d;

	__asm__ volatile("cpuid" : "+a"(a), "=b"(b), "+c"(c), "=d"(d));
}

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope-exitloop [--pio N] [--cpuid N] [--syscall N]\n\n"
		"In a KVM guest: N one-byte writes to port 0x80, N cpuid, N getppid()\n"
		"system calls (0x: hexadecimal), then what was done and the rates.\n\n"
		"Exit status: 0; 1 when /dev/port cannot be written; 2 on a usage error.\n");
}

struct loop_args {
	unsigned long pio, cpuid, sys;
};

static const struct args_opt opts[] = {
	ARGS_CNUM("pio", 0, struct loop_args, pio, 0, ULONG_MAX),
	ARGS_CNUM("cpuid", 0, struct loop_args, cpuid, 0, ULONG_MAX),
	ARGS_CNUM("syscall", 0, struct loop_args, sys, 0, ULONG_MAX),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope-exitloop", usage, opts, 0 };

/* The loops @a asks for, timed; the exit status. */
static int run(const struct loop_args *a)
{
	unsigned long pio = a->pio, cpuid = a->cpuid, sys = a->sys;

	/* Port 0x80 is the POST diagnostic port: writes have no effect. */
	int fd = -1;

	if (pio) {
		fd = open("/dev/port", O_WRONLY | O_CLOEXEC);
		if (fd < 0) {
			perror("/dev/port");
			return 1;
		}
	}
	double t0 = util_mono_s();
	for (unsigned long i = 0; i < pio; i++) {
		unsigned char b = (unsigned char)i;

		if (pwrite(fd, &b, 1, 0x80) != 1) {
			perror("pwrite /dev/port");
			return 1;
		}
	}
	double t1 = util_mono_s();
	for (unsigned long i = 0; i < cpuid; i++)
		cpuid0();
	double t2 = util_mono_s();
	/* the raw system call: no libc wrapper may answer from a cache */
	for (unsigned long i = 0; i < sys; i++)
		syscall(SYS_getppid);
	double t3 = util_mono_s();
	if (fd >= 0)
		close(fd);
	printf("pio=%lu pio_s=%.3f pio_rate=%.0f cpuid=%lu cpuid_s=%.3f cpuid_rate=%.0f",
	       pio, t1 - t0, pio ? pio / (t1 - t0) : 0.0,
	       cpuid, t2 - t1, cpuid ? cpuid / (t2 - t1) : 0.0);
	if (sys)
		printf(" syscall=%lu syscall_s=%.3f syscall_rate=%.0f",
		       sys, t3 - t2, sys / (t3 - t2));
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct loop_args a = { 0 };
	int rc = args_run(&spec, &a, argc, argv);

	return rc >= 0 ? rc : run(&a);
}
