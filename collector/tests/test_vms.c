/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What record learns about a VM from QEMU's command line and /proc:
 * -name in both spellings (NAME,debug-threads=on and guest=NAME,...),
 * guest-cid= of a vhost-vsock device, and, for a live process (this
 * one, whose threads we name "CPU n/KVM" like QEMU does), its vCPU
 * threads, and a vCPU thread that appears later added once by
 * vm_add_vcpus (the recorder's rescan); a pid that does not exist is
 * -ESRCH. KVM's per-vCPU TSC
 * relation from a debugfs-shaped tree: signed offsets, the optional
 * scaling files, malformed files and foreign entries left out, a process
 * with two VMs refused, no directory -ENOENT. vm_find_kvm (`top --all`)
 * on a /proc-shaped tree: the processes with a link to KVM's VM inode
 * among their fds, in pid order; a vCPU fd alone, other links, no fd
 * folder and names that are not pids left out; more than asked counted.
 */
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "vms.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int named, done;
static pid_t tids[3];

static void *vcpu(void *arg)
{
	char name[16];
	int i = (int)(long)arg;

	snprintf(name, sizeof(name), "CPU %d/KVM", i);
	pthread_setname_np(pthread_self(), name);
	pthread_mutex_lock(&mu);
	tids[i] = (pid_t)syscall(SYS_gettid);
	named++;
	pthread_cond_broadcast(&cv);
	while (!done)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void put(const char *root, const char *rel, const char *text)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = strchr(path + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		mkdir(path, 0700);
		*slash = '/';
	}
	f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *w)
{
	(void)st, (void)flag, (void)w;
	return remove(p);
}

/* A link @root/@path -> @target, its folders made. */
static void link_at(const char *root, const char *path, const char *target)
{
	char p[512];

	put(root, path, "");	/* the folders, and a file that the link replaces */
	snprintf(p, sizeof(p), "%s/%s", root, path);
	unlink(p);
	CHECK(symlink(target, p) == 0);
}

static void test_find_kvm(void)
{
	char root[] = "/tmp/test_vms-XXXXXX", missing[64];
	pid_t pids[4] = { 0 };

	CHECK(mkdtemp(root) != NULL);
	link_at(root, "4100/fd/0", "/dev/null");
	link_at(root, "4100/fd/12", VM_KVM_FD_LINK);		/* a QEMU */
	link_at(root, "4100/fd/13", "anon_inode:kvm-vcpu:0");
	link_at(root, "77/fd/5", VM_KVM_FD_LINK);		/* another */
	link_at(root, "560/fd/3", "anon_inode:kvm-vcpu:0");	/* a vCPU fd alone */
	link_at(root, "561/fd/3", "anon_inode:kvm-vm-extra");	/* not the VM inode */
	put(root, "900/status", "no fd folder\n");
	link_at(root, "12ab/fd/1", VM_KVM_FD_LINK);		/* not a pid */
	CHECK(vm_find_kvm(root, pids, 4) == 2);
	CHECK(pids[0] == 77 && pids[1] == 4100);
	CHECK(vm_find_kvm(root, pids, 1) == 2);		/* counted, one stored */
	CHECK(pids[0] == 77 || pids[0] == 4100);
	nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	snprintf(missing, sizeof(missing), "%s/none", root);
	CHECK(vm_find_kvm(missing, pids, 4) == -ENOENT);
}

static const struct vm_tsc *tsc_of(const struct vm_tscs *t, uint32_t id)
{
	for (unsigned int i = 0; i < t->n; i++)
		if (t->v[i].vcpu_id == id)
			return &t->v[i];
	return NULL;
}

static void test_tsc(void)
{
	static struct vm_tscs t;
	char root[] = "/tmp/test_vms-XXXXXX";
	const struct vm_tsc *v;

	CHECK(mkdtemp(root) != NULL);
	put(root, "4242-11/vcpu0/tsc-offset", "-123456789012\n");
	put(root, "4242-11/vcpu0/tsc-scaling-ratio", "281474976710656\n");
	put(root, "4242-11/vcpu0/tsc-scaling-ratio-frac-bits", "48\n");
	put(root, "4242-11/vcpu1/tsc-offset", "77\n");
	put(root, "4242-11/vcpu2/tsc-offset", "12abc\n");		/* malformed */
	put(root, "4242-11/vcpu3/tsc-offset", "");		/* empty */
	put(root, "4242-11/vcpux/tsc-offset", "5\n");		/* not a vCPU */
	put(root, "4242-11/vcpu1/tsc-scaling-ratio", "-1\n");	/* no frac: none */
	put(root, "42-3/vcpu0/tsc-offset", "9\n");		/* another pid */
	put(root, "4242x-3/vcpu0/tsc-offset", "9\n");		/* not "<pid>-<fd>" */
	CHECK(vm_tsc_read(&t, 4242, root) == 2);
	v = tsc_of(&t, 0);
	CHECK(v && v->offset == (uint64_t)-123456789012ll && v->ratio == 1ull << 48 &&
	      v->frac_bits == 48);
	v = tsc_of(&t, 1);
	CHECK(v && v->offset == 77 && v->ratio == 0 && v->frac_bits == 0);
	CHECK(vm_tsc_read(&t, 42, root) == 1 && t.v[0].offset == 9);
	CHECK(vm_tsc_read(&t, 7, root) == -ENOENT);
	put(root, "4242-12/vcpu0/tsc-offset", "1\n");		/* a second VM */
	CHECK(vm_tsc_read(&t, 4242, root) == -EEXIST && t.n == 0);
	nftw(root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	CHECK(vm_tsc_read(&t, 4242, root) == -ENOENT);
}

int main(void)
{
	static const char a[] = "qemu-system-x86_64\0-name\0g1,debug-threads=on\0"
		"-device\0vhost-vsock-pci,guest-cid=7\0";
	static const char b[] = "qemu\0-name\0guest=dom-two,debug-threads=on\0";
	/* libvirt 9 with QEMU 7: -device as JSON */
	static const char c[] = "qemu\0-name\0guest=dom3,debug-threads=on\0-device\0"
		"{\"driver\":\"vhost-vsock-pci\",\"id\":\"vsock0\",\"guest-cid\":42,"
		"\"vhostfd\":\"28\",\"bus\":\"pci.0\",\"addr\":\"0x8\"}\0";
	static struct vm_desc vm;
	pthread_t t[3];

	vm_parse_cmdline(&vm, a, sizeof(a) - 1);
	CHECK(strcmp(vm.name, "g1") == 0);
	CHECK(vm.cid == 7);
	memset(&vm, 0, sizeof(vm));
	vm_parse_cmdline(&vm, b, sizeof(b) - 1);
	CHECK(strcmp(vm.name, "dom-two") == 0);
	CHECK(vm.cid == 0);
	memset(&vm, 0, sizeof(vm));
	vm_parse_cmdline(&vm, c, sizeof(c) - 1);
	CHECK(strcmp(vm.name, "dom3") == 0);
	CHECK(vm.cid == 42);

	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, vcpu, (void *)i);
	pthread_mutex_lock(&mu);
	while (named < 2)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	CHECK(vm_from_pid(&vm, getpid()) == 0);
	CHECK(vm.nvcpus == 2);
	for (unsigned int k = 0; k < vm.nvcpus; k++)
		CHECK(vm.tid[k] == tids[vm.vcpu[k]]);
	CHECK(strcmp(vm.name, "test_vms") == 0);	/* no -name: comm */
	/* nothing new: nothing added, the map unchanged */
	CHECK(vm_add_vcpus(&vm) == 0);
	CHECK(vm.nvcpus == 2);
	/* a vCPU hot-plugged while recording: added once, with its thread */
	pthread_create(&t[2], NULL, vcpu, (void *)2L);
	pthread_mutex_lock(&mu);
	while (named < 3)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	CHECK(vm_add_vcpus(&vm) == 1);
	CHECK(vm.nvcpus == 3 && vm.vcpu[2] == 2 && vm.tid[2] == tids[2]);
	CHECK(vm_add_vcpus(&vm) == 0);
	CHECK(vm.nvcpus == 3);
	CHECK(vm_from_pid(&vm, 0x3ffffffe) == -ESRCH);
	vm.pid = 0x3ffffffe;
	CHECK(vm_add_vcpus(&vm) == -ESRCH);
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	test_tsc();
	test_find_kvm();
	fprintf(stderr, "collector-vms: %s\n", check_failures ? "FAILED" : "ok");
	return check_failures != 0;
}
