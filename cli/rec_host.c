// SPDX-License-Identifier: GPL-2.0
/* The host session's command-line side, shared: see rec_host.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "device.h"
#include "domrun.h"
#include "domxml.h"
#include "rec_args.h"
#include "rec_host.h"

int rec_host_ctl_pid(const char *who, const char *arg, struct vmscope_probe_ctl *ctl)
{
	unsigned long long ull;

	if (args_number(who, "--pid", arg, 1, ARGS_PID_MAX, &ull))
		return EXIT_USAGE;
	if (ctl->nr_pids == VMSCOPE_MAX_PIDS) {
		fprintf(stderr, "%s: at most %d --pid\n", who, VMSCOPE_MAX_PIDS);
		return EXIT_USAGE;
	}
	ctl->pids[ctl->nr_pids++] = (int)ull;
	return 0;
}

int rec_host_pid(const char *who, const char *arg, struct rec_opts *o)
{
	return rec_host_ctl_pid(who, arg, &o->ctl);
}

int rec_host_duration(const char *who, const char *arg, struct rec_opts *o)
{
	if (rec_parse_duration(arg, &o->duration_s) || o->duration_s == 0) {
		fprintf(stderr, "%s: --duration: '%s' is not a duration above 0 and at most "
			"%.0f s\n", who, arg, REC_DURATION_MAX_S);
		return EXIT_USAGE;
	}
	return 0;
}

int rec_host_domain(const char *who, const char *name, struct rec_opts *o,
		    struct rec_host_doms *d)
{
	unsigned int i = o->ctl.nr_pids;
	char why[400];
	pid_t p;

	if (i == VMSCOPE_MAX_PIDS) {
		fprintf(stderr, "%s: at most %d --pid/--domain\n", who, VMSCOPE_MAX_PIDS);
		return EXIT_USAGE;
	}
	if (vd_check_name(name, why, sizeof(why))) {
		fprintf(stderr, "%s: --domain '%s': %s\n", who, name, why);
		return EXIT_USAGE;
	}
	if (vd_running_pid(VD_RUN_DIR, VD_CONF_DIR, name, &p, why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", who, why);
		return EXIT_FAILURE_RUNTIME;
	}
	/* without the status XML, the CID comes from QEMU's command line */
	d->cid[i] = 0;
	if (vd_read_cid(VD_RUN_DIR, name, &d->cid[i], why, sizeof(why)))
		fprintf(stderr, "%s: domain %s: no vsock CID from its XML: %s\n", who, name, why);
	d->name[i] = name;
	o->ctl.pids[i] = (int)p;
	o->ctl.nr_pids++;
	return 0;
}

int rec_host_all(const char *who, struct rec_opts *o)
{
	pid_t pids[VMSCOPE_MAX_PIDS];
	int n = vm_find_kvm("/proc", pids, VMSCOPE_MAX_PIDS);

	if (n < 0) {
		fprintf(stderr, "%s: --all: /proc: %s\n", who, strerror(-n));
		return EXIT_FAILURE_RUNTIME;
	}
	if (n == 0) {
		fprintf(stderr, "%s: --all: no KVM VM is running (no process holds a KVM VM "
			"file descriptor, %s in /proc/PID/fd)\n", who, VM_KVM_FD_LINK);
		return EXIT_FAILURE_RUNTIME;
	}
	if (n > VMSCOPE_MAX_PIDS) {
		fprintf(stderr, "%s: --all: %d KVM VMs are running, at most %d can be traced "
			"at once: choose with --pid\n", who, n, VMSCOPE_MAX_PIDS);
		return EXIT_FAILURE_RUNTIME;
	}
	for (int i = 0; i < n; i++)
		o->ctl.pids[i] = (int)pids[i];
	o->ctl.nr_pids = (unsigned int)n;
	return 0;
}

int rec_host_vms(const char *who, const struct rec_opts *o, const struct rec_host_doms *d,
		 struct vm_desc *vms)
{
	for (unsigned int i = 0; i < o->ctl.nr_pids; i++) {
		int e = vm_from_pid(&vms[i], o->ctl.pids[i]);

		if (e) {
			fprintf(stderr, "%s: pid %d: %s\n", who, o->ctl.pids[i],
				e == -ESRCH ? "no such process" : strerror(-e));
			return -1;
		}
		if (d && d->name[i])	/* the domain's name, whatever QEMU's -name */
			snprintf(vms[i].name, sizeof(vms[i].name), "%s", d->name[i]);
		if (d && d->cid[i])	/* the domain's own XML says */
			vms[i].cid = d->cid[i];
	}
	return 0;
}

int rec_host_open(const char *who, struct hb *h, struct rec_opts *o)
{
	/* static: o->module_version points into it for the whole run */
	static struct vmscope_version v;
	int fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);

	if (fd < 0)
		return -1;
	if (vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v) || hb_init(h, fd, who)) {
		close(fd);
		return -1;
	}
	o->module_version = v.release;
	return 0;
}
