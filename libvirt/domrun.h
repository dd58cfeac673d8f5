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
/* where libvirt's QEMU driver keeps the XML of the domains it defines */
#define VD_CONF_DIR "/etc/libvirt/qemu"

/* NAME.pid: 0 and *pid, or -errno (-ENOENT: not running; -EINVAL: junk). */
int vd_read_pid(const char *run_dir, const char *name, pid_t *pid);

/*
 * The QEMU pid of running domain @name, read as vmscoped reads it
 * (vd_read_pid in @run_dir), and that process alive: 0 and *pid. Else
 * -errno and @why, a sentence that names the domain: -ENOENT no pid file
 * and no NAME.xml in @conf_dir (no such domain, unless a transient one
 * that is not running); -ESRCH defined in @conf_dir but not running, or
 * its pid file names no process (libvirtd did not clean up); -EINVAL a
 * pid file that is not a pid; another -errno if the file is unreadable.
 */
int vd_running_pid(const char *run_dir, const char *conf_dir, const char *name, pid_t *pid,
		   char *why, size_t whylen);

/*
 * The vsock CID from NAME.xml: 0 and *cid (0 when the domain has no vsock
 * device), or -errno / -EINVAL (unreadable XML) with @why.
 */
int vd_read_cid(const char *run_dir, const char *name, uint32_t *cid, char *why,
		size_t whylen);

#endif
