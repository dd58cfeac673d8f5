#include "device.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <vmscope/version.h>

int vmscope_device_open(const char *path, int quiet)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0 || quiet)
		return fd;

	int err = errno;
	const char *module = strstr(path, "guest") ? "vmscope_guest" : "vmscope_host";
	if (err == ENOENT || err == ENXIO || err == ENODEV)
		fprintf(stderr, "vmscope: %s does not exist: is %s.ko loaded? "
			"(insmod %s.ko)\n", path, module, module);
	else if (err == EACCES || err == EPERM)
		fprintf(stderr, "vmscope: %s: permission denied: the device is "
			"root-only; run as root\n", path);
	else
		fprintf(stderr, "vmscope: cannot open %s: %s\n", path, strerror(err));
	errno = err;
	return -1;
}

int vmscope_device_version(int fd, const char *path, struct vmscope_version *v)
{
	memset(v, 0, sizeof(*v));
	if (ioctl(fd, VMSCOPE_IOC_GET_VERSION, v) < 0) {
		fprintf(stderr, "vmscope: %s: version ioctl failed: %s\n", path,
			strerror(errno));
		return -1;
	}
	/* a variable: with minor 0, "< VMSCOPE_ABI_MINOR" is a comparison
	 * that -Wtype-limits refuses as always false */
	const unsigned int tool_abi_minor = VMSCOPE_ABI_MINOR;

	v->release[sizeof(v->release) - 1] = '\0';
	v->kernel[sizeof(v->kernel) - 1] = '\0';
	if (v->abi_major != VMSCOPE_ABI_MAJOR) {
		fprintf(stderr, "vmscope: %s speaks ABI %u.%u, this tool speaks "
			"%d.%d: load the module built with this tool\n", path,
			v->abi_major, v->abi_minor, VMSCOPE_ABI_MAJOR,
			VMSCOPE_ABI_MINOR);
		return -1;
	}
	if (v->abi_minor < tool_abi_minor) {
		fprintf(stderr, "vmscope: %s speaks ABI %u.%u, older than this "
			"tool's %d.%d: load the module built with this tool\n",
			path, v->abi_major, v->abi_minor, VMSCOPE_ABI_MAJOR,
			VMSCOPE_ABI_MINOR);
		return -1;
	}
	return 0;
}
