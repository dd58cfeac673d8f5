/* SPDX-License-Identifier: GPL-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util_fs.h"
#include "vms.h"


void vm_parse_cmdline(struct vm_desc *vm, const char *buf, size_t len)
{
	const char *end = buf + len, *prev = NULL;

	for (const char *a = buf; a < end; a += strlen(a) + 1) {
		/* keyval (guest-cid=N) or, as libvirt writes -device for
		 * QEMU >= 6, JSON ("guest-cid":N) */
		const char *cid = strstr(a, "guest-cid=");
		const char *jcid = strstr(a, "\"guest-cid\":");

		if (cid && !vm->cid)
			vm->cid = (uint32_t)strtoul(cid + 10, NULL, 10);
		if (jcid && !vm->cid)
			vm->cid = (uint32_t)strtoul(jcid + 12, NULL, 10);
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

/* A whole decimal number (optionally signed) and a newline at most. */
static bool parse_num(const char *s, bool is_signed, uint64_t *v)
{
	char *end;

	errno = 0;
	if (is_signed)
		*v = (uint64_t)strtoll(s, &end, 10);
	else
		*v = strtoull(s, &end, 10);
	if (errno || end == s || (!is_signed && s[strspn(s, " ")] == '-'))
		return false;
	return !*end || !strcmp(end, "\n");
}

static bool read_num(const char *dir, const char *file, bool is_signed, uint64_t *v)
{
	char path[512], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return util_read_small(path, buf, sizeof(buf)) > 0 && parse_num(buf, is_signed, v);
}

/* The one "<pid>-<fd>" entry of @root into @out. */
static int vm_dir(const char *root, pid_t pid, char *out, size_t len)
{
	struct dirent *de;
	int found = 0;
	DIR *d = opendir(root);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long p = strtol(de->d_name, &end, 10);

		if (p != pid || *end != '-' || !end[1] || end[1 + strspn(end + 1, "0123456789")])
			continue;
		if (found++)
			break;
		snprintf(out, len, "%s/%s", root, de->d_name);
	}
	closedir(d);
	return found == 1 ? 0 : found ? -EEXIST : -ENOENT;
}

int vm_tsc_read(struct vm_tscs *out, pid_t pid, const char *root)
{
	char dir[512], vdir[800];
	struct dirent *de;
	int e;
	DIR *d;

	out->n = 0;
	e = vm_dir(root, pid, dir, sizeof(dir));
	if (e)
		return e;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && out->n < VM_MAX_VCPUS) {
		struct vm_tsc *t = &out->v[out->n];
		uint64_t id, ratio, frac;
		char *end;

		if (strncmp(de->d_name, "vcpu", 4) || !de->d_name[4])
			continue;
		errno = 0;
		id = strtoull(de->d_name + 4, &end, 10);
		if (errno || *end || id > UINT32_MAX)
			continue;
		snprintf(vdir, sizeof(vdir), "%s/%s", dir, de->d_name);
		if (!read_num(vdir, "tsc-offset", true, &t->offset))
			continue;
		t->vcpu_id = (uint32_t)id;
		t->ratio = 0;
		t->frac_bits = 0;
		if (read_num(vdir, "tsc-scaling-ratio", false, &ratio) &&
		    read_num(vdir, "tsc-scaling-ratio-frac-bits", false, &frac) &&
		    frac > 0 && frac < 64 && ratio) {
			t->ratio = ratio;
			t->frac_bits = (uint32_t)frac;
		}
		out->n++;
	}
	closedir(d);
	return (int)out->n;
}

/* Whether @fd_dir holds a link to KVM's VM inode. */
static bool holds_kvm_vm(const char *fd_dir)
{
	char link[64];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(fd_dir);

	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n > 0) {
			link[n] = 0;
			found = !strcmp(link, VM_KVM_FD_LINK);
		}
	}
	closedir(d);
	return found;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

int vm_find_kvm(const char *proc, pid_t *pids, unsigned int max)
{
	char fd_dir[512];
	struct dirent *de;
	unsigned int n = 0;
	DIR *d = opendir(proc);

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (pid <= 0 || *end || de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(fd_dir, sizeof(fd_dir), "%s/%s/fd", proc, de->d_name);
		if (!holds_kvm_vm(fd_dir))
			continue;
		if (n < max)
			pids[n] = (pid_t)pid;
		n++;
	}
	closedir(d);
	qsort(pids, n < max ? n : max, sizeof(*pids), cmp_pid);
	return (int)n;
}

/* @pid's command line into @vm (pid, name, CID): 0, or -errno (-ESRCH:
 * no such process). */
static int read_cmdline(struct vm_desc *vm, pid_t pid)
{
	static char buf[1 << 16];
	char path[64];
	ssize_t n;

	memset(vm, 0, sizeof(*vm));
	vm->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	n = util_read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	vm_parse_cmdline(vm, buf, (size_t)n);
	return 0;
}

uint32_t vm_cid_of(pid_t pid)
{
	struct vm_desc vm;

	return read_cmdline(&vm, pid) ? 0 : vm.cid;
}

int vm_from_pid(struct vm_desc *vm, pid_t pid)
{
	char path[64];
	int e = read_cmdline(vm, pid);

	if (e)
		return e;
	if (!vm->name[0]) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (util_read_small(path, vm->name, sizeof(vm->name)) > 0)
			vm->name[strcspn(vm->name, "\n")] = 0;
	}
	e = vm_add_vcpus(vm);
	return e < 0 ? e : 0;
}

static bool vcpu_known(const struct vm_desc *vm, unsigned int cpu)
{
	for (unsigned int k = 0; k < vm->nvcpus; k++)
		if (vm->vcpu[k] == cpu)
			return true;
	return false;
}

int vm_add_vcpus(struct vm_desc *vm)
{
	char path[64];
	struct dirent *de;
	int added = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)vm->pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d)) && vm->nvcpus < VM_MAX_VCPUS) {
		char comm[32], tpath[320];
		unsigned int cpu;

		if (de->d_name[0] == '.')
			continue;
		snprintf(tpath, sizeof(tpath), "/proc/%d/task/%s/comm", (int)vm->pid,
			 de->d_name);
		if (util_read_small(tpath, comm, sizeof(comm)) <= 0)
			continue;
		if (sscanf(comm, "CPU %u/KVM", &cpu) == 1 && !vcpu_known(vm, cpu)) {
			vm->vcpu[vm->nvcpus] = cpu;
			vm->tid[vm->nvcpus] = atoi(de->d_name);
			vm->nvcpus++;
			added++;
		}
	}
	closedir(d);
	return added;
}
