/* `vmscope version`: which tool and which modules are we talking to. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <vmscope/ioctl.h>
#include <vmscope/version.h>

#include "args.h"
#include "commands.h"
#include "device.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope version [--require host|guest]\n\n"
		"Prints this tool's version and ABI, and the version of each vmscope\n"
		"module whose device exists.\n\n"
		"  --require SIDE  exit 1 unless that side's module is loaded, readable\n"
		"                  and speaks this tool's ABI\n\n"
		"Exit status: 0; 1 when --require's module is not loaded, not readable\n"
		"or speaks another ABI; 2 on a usage error.\n");
}

/* Returns 1 when the module answered with a compatible ABI, else 0. */
static int show_device(const char *label, const char *path, int required)
{
	int fd = vmscope_device_open(path, !required);
	if (fd < 0) {
		printf("%-6s module: %s\n", label,
		       errno == ENOENT ? "not loaded" : strerror(errno));
		return 0;
	}
	struct vmscope_version v;
	int ok = vmscope_device_version(fd, path, &v) == 0;
	close(fd);
	if (ok)
		printf("%-6s module: %s (ABI %u.%u) on kernel %s\n", label,
		       v.release, v.abi_major, v.abi_minor, v.kernel);
	return ok;
}

static const char *const sides[] = { "host", "guest" };

struct version_args {
	int require;	/* an index of sides, -1: none */
};

static const struct args_opt opts[] = {
	ARGS_CHOICE("require", 0, struct version_args, require, sides, 2),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope version", usage, opts, 0 };

int cmd_version(int argc, char **argv)
{
	struct version_args a = { .require = -1 };
	int c = args_run(&spec, &a, argc, argv);

	if (c >= 0)
		return c;
	printf("vmscope %s (ABI %d.%d)\n", VMSCOPE_VERSION_STRING,
	       VMSCOPE_ABI_MAJOR, VMSCOPE_ABI_MINOR);
	int need_host = a.require == 0, need_guest = a.require == 1;
	int host_ok = show_device("host", VMSCOPE_HOST_DEVICE, need_host);
	int guest_ok = show_device("guest", VMSCOPE_GUEST_DEVICE, need_guest);
	if ((need_host && !host_ok) || (need_guest && !guest_ok))
		return EXIT_FAILURE_RUNTIME;
	return EXIT_OK;
}
