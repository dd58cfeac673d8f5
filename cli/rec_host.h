/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the commands that run a host session share (`record`, `top --pid`):
 * a --pid into the session's filter (`stats` too), the traced processes as VMs, the
 * host module opened. Each says what went wrong on stderr as @who.
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
/* Each process of @o's filter as a VM into @vms (vm_from_pid): 0 or -1 (said). */
int rec_host_vms(const char *who, const struct rec_opts *o, struct vm_desc *vms);
/* The host module's device, its version into @o, its session state into
 * @h (hb_init): 0, or -1 (said). */
int rec_host_open(const char *who, struct hb *h, struct rec_opts *o);

#endif
