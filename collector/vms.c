/* SPDX-License-Identifier: GPL-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vms.h"

/* Read a small /proc file; returns bytes read or -errno. */
static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1 && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = 0;
	return total;
}

void vm_parse_cmdline(struct vm_desc *vm, const char *buf, size_t len)
{
	const char *end = buf + len, *prev = NULL;

	for (const char *a = buf; a < end; a += strlen(a) + 1) {
		const char *cid = strstr(a, "guest-cid=");

		if (cid && !vm->cid)
			vm->cid = (uint32_t)strtoul(cid + 10, NULL, 10);
		/* -name NAME[,debug-threads=on] or -name guest=NAME,... */
		if (prev && !strcmp(prev, "-name")) {
			const char *n = !strncmp(a, "guest=", 6) ? a + 6 : a;
			size_t l = strcspn(n, ",");

			if (l >= sizeof(vm->name))
				l = sizeof(vm->name) - 1;
			memcpy(vm->name, n, l);
			vm->name[l] = 0;
		}
		prev = a;
	}
}

int vm_from_pid(struct vm_desc *vm, pid_t pid)
{
	static char buf[1 << 16];
	char path[64];
	struct dirent *de;
	ssize_t n;
	DIR *d;

	memset(vm, 0, sizeof(*vm));
	vm->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = slurp(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	vm_parse_cmdline(vm, buf, (size_t)n);
	if (!vm->name[0]) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (slurp(path, vm->name, sizeof(vm->name)) > 0)
			vm->name[strcspn(vm->name, "\n")] = 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && vm->nvcpus < VM_MAX_VCPUS) {
		char comm[32], tpath[320];
		unsigned int cpu;

		if (de->d_name[0] == '.')
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/comm", (int)pid, de->d_name);
		if (slurp(tpath, comm, sizeof(comm)) <= 0)
			continue;
		if (sscanf(comm, "CPU %u/KVM", &cpu) == 1) {
			vm->vcpu[vm->nvcpus] = cpu;
			vm->tid[vm->nvcpus] = atoi(de->d_name);
			vm->nvcpus++;
		}
	}
	closedir(d);
	return 0;
}
