/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the commands that run a host session share (`record`, `top`): a
 * --pid into the session's filter (`stats` too), a --domain's QEMU as
 * vmscoped finds it, every KVM VM (`top --all`), the traced processes as
 * VMs, the host module opened. Each says what went wrong on stderr as @who.
 */
#ifndef VMSCOPE_CLI_REC_HOST_H
#define VMSCOPE_CLI_REC_HOST_H

#include "host_bufs.h"
#include "record.h"
#include "vms.h"

/* --pid @arg into the probe control's process filter (`record`, `top`,
 * `stats --start`): 0, or EXIT_USAGE (said). */
int rec_host_ctl_pid(const char *who, const char *arg, struct vmscope_probe_ctl *ctl);
/* The same into @o's filter. */
int rec_host_pid(const char *who, const char *arg, struct rec_opts *o);
/* --duration @arg (above 0) into @o: 0, or EXIT_USAGE (said). */
int rec_host_duration(const char *who, const char *arg, struct rec_opts *o);
/* What --domain says of the filter's processes, by their index there. */
struct rec_host_doms {
	const char *name[VMSCOPE_MAX_PIDS];	/* NULL: not a --domain's */
	uint32_t cid[VMSCOPE_MAX_PIDS];		/* 0: none in its status XML */
};

/*
 * --domain @name: the running libvirt domain's QEMU pid into @o's filter
 * (vd_running_pid on libvirt's files, VD_RUN_DIR and VD_CONF_DIR: no
 * libvirt connection), its name and vsock CID into @d at the same index.
 * 0, EXIT_USAGE (a name libvirt cannot have; too many) or
 * EXIT_FAILURE_RUNTIME (unknown, not running), said naming the domain.
 */
int rec_host_domain(const char *who, const char *name, struct rec_opts *o,
		    struct rec_host_doms *d);
/* Every process holding a KVM VM (vm_find_kvm on /proc) into @o's
 * filter: 0, or EXIT_FAILURE_RUNTIME (none, too many: said). */
int rec_host_all(const char *who, struct rec_opts *o);
/* Each process of @o's filter as a VM into @vms (vm_from_pid), named and
 * given the CID of its --domain where @d has one: 0 or -1 (said). */
int rec_host_vms(const char *who, const struct rec_opts *o, const struct rec_host_doms *d,
		 struct vm_desc *vms);
/* The host module's device, its version into @o, its session state into
 * @h (hb_init): 0, or -1 (said). */
int rec_host_open(const char *who, struct hb *h, struct rec_opts *o);

#endif
