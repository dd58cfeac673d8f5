/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What record learns about a VM from QEMU's command line and /proc:
 * -name in both spellings (NAME,debug-threads=on and guest=NAME,...),
 * guest-cid= of a vhost-vsock device, and, for a live process (this
 * one, whose threads we name "CPU n/KVM" like QEMU does), its vCPU
 * threads; a pid that does not exist is -ESRCH.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vms.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", \
	__FILE__, __LINE__, #c); failures++; } } while (0)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int named, done;
static pid_t tids[2];

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

int main(void)
{
	static const char a[] = "qemu-system-x86_64\0-name\0g1,debug-threads=on\0"
		"-device\0vhost-vsock-pci,guest-cid=7\0";
	static const char b[] = "qemu\0-name\0guest=dom-two,debug-threads=on\0";
	static struct vm_desc vm;
	pthread_t t[2];

	vm_parse_cmdline(&vm, a, sizeof(a) - 1);
	CHECK(strcmp(vm.name, "g1") == 0);
	CHECK(vm.cid == 7);
	memset(&vm, 0, sizeof(vm));
	vm_parse_cmdline(&vm, b, sizeof(b) - 1);
	CHECK(strcmp(vm.name, "dom-two") == 0);
	CHECK(vm.cid == 0);

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
	CHECK(vm_from_pid(&vm, 0x3ffffffe) == -ESRCH);
	pthread_mutex_lock(&mu);
	done = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "collector-vms: %s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
