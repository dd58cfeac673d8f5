// SPDX-License-Identifier: GPL-2.0
/* The host session's command-line side, shared: see rec_host.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "device.h"
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

int rec_host_vms(const char *who, const struct rec_opts *o, struct vm_desc *vms)
{
	for (unsigned int i = 0; i < o->ctl.nr_pids; i++) {
		int e = vm_from_pid(&vms[i], o->ctl.pids[i]);

		if (e) {
			fprintf(stderr, "%s: pid %d: %s\n", who, o->ctl.pids[i],
				e == -ESRCH ? "no such process" : strerror(-e));
			return -1;
		}
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
