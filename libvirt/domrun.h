/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A running libvirt domain's QEMU pid and vsock CID from the files
 * libvirt's QEMU driver keeps for it in its run folder
 * (/run/libvirt/qemu): NAME.pid and the status XML NAME.xml
 * (<domstatus><domain>...). No libvirt API call: the hook must never call
 * libvirt, and `record --domain` needs no connection either.
 */
#ifndef VMSCOPE_LIBVIRT_DOMRUN_H
#define VMSCOPE_LIBVIRT_DOMRUN_H

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#define VD_RUN_DIR "/run/libvirt/qemu"

/* NAME.pid: 0 and *pid, or -errno (-ENOENT: not running; -EINVAL: junk). */
int vd_read_pid(const char *run_dir, const char *name, pid_t *pid);

/*
 * The vsock CID from NAME.xml: 0 and *cid (0 when the domain has no vsock
 * device), or -errno / -EINVAL (unreadable XML) with @why.
 */
int vd_read_cid(const char *run_dir, const char *name, uint32_t *cid, char *why,
		size_t whylen);

#endif
