/*
 * `vmscope sync-once`: ask vmscope_guest.ko to issue one clock-sync
 * hypercall. A diagnostic: it shows that the hypercall path from the guest
 * kernel to the host's kvm_hypercall tracepoint works.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <vmscope/ioctl.h>
#include <vmscope/sync_abi.h>

#include "args.h"
#include "commands.h"
#include "device.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope sync-once [--token N] [--seq N]\n\n"
		"Issues one vmscope clock-sync hypercall (nr 0x%lx) from the guest\n"
		"kernel and prints: cpu, token, seq, t1, t4 (guest clock, ns) and the\n"
		"hypervisor's return value. Needs vmscope_guest.ko, in a KVM guest.\n\n"
		"  --token N  session token to send (default 0)\n"
		"  --seq N    sequence number to send (default 0)\n\n"
		"Exit status: 0 when the hypercall was issued; 1 without the guest\n"
		"module or off KVM; 2 on a usage error.\n",
		VMSCOPE_SYNC_HC_NR);
}

/* The hypercall's token and sequence number, the ioctl's own fields. */
static const struct args_opt opts[] = {
	ARGS_CNUM("token", 0, struct vmscope_sync_once, token, 0, UINT64_MAX),
	ARGS_CNUM("seq", 0, struct vmscope_sync_once, seq, 0, UINT64_MAX),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope sync-once", usage, opts, 0 };

int cmd_sync_once(int argc, char **argv)
{
	struct vmscope_sync_once s;
	int c;

	memset(&s, 0, sizeof(s));
	c = args_run(&spec, &s, argc, argv);
	if (c >= 0)
		return c;

	int fd = vmscope_device_open(VMSCOPE_GUEST_DEVICE, 0);
	if (fd < 0)
		return EXIT_FAILURE_RUNTIME;
	int rc = ioctl(fd, VMSCOPE_IOC_SYNC_ONCE, &s);
	int err = errno;
	close(fd);
	if (rc < 0) {
		if (err == EOPNOTSUPP)
			fprintf(stderr, "vmscope sync-once: this kernel is not running "
				"on KVM: no sync hypercall is possible\n");
		else
			fprintf(stderr, "vmscope sync-once: ioctl failed: %s\n", strerror(err));
		return EXIT_FAILURE_RUNTIME;
	}
	printf("cpu=%u token=0x%llx seq=%llu t1=%llu t4=%llu ret=%lld\n", s.cpu,
	       (unsigned long long)s.token, (unsigned long long)s.seq,
	       (unsigned long long)s.t1, (unsigned long long)s.t4,
	       (long long)s.ret);
	return EXIT_OK;
}
