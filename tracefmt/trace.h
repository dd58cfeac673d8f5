/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The trace folder: creating it (never over an existing one) and the
 * names of the files in it, so that every writer and reader agrees.
 *
 *   TRACE/metadata.vtf              session metadata, statistics, summary
 *   TRACE/host-cpu<N>.vtf           host CPU N's chunks and losses
 *   TRACE/guest<V>-cpu<N>.vtf       CPU N of the VM at index V of
 *                                   SessionMetadata.vms
 *   TRACE/sync-guest<V>.vtf         sync samples of VM V
 */
#ifndef VMSCOPE_TRACEFMT_TRACE_H
#define VMSCOPE_TRACEFMT_TRACE_H

#include <stddef.h>
#include <stdint.h>

#define TF_TRACE_METADATA	"metadata.vtf"
#define TF_TRACE_SUFFIX		".vtf"

/*
 * Create the folder path (mode 0755) and return an O_DIRECTORY fd in
 * *dirfd. -EEXIST if anything is at path already: a trace is never
 * silently overwritten or merged into. The parent directory is fsynced
 * so the folder survives a crash. 0 or a negative errno.
 */
int tf_trace_create(const char *path, int *dirfd);

/* fsync the folder holding @path, so that a new or renamed entry in it is
 * durable. 0 or a negative errno. */
int tf_trace_sync_parent(const char *path);

/* Open an existing trace folder for reading. 0 or a negative errno. */
int tf_trace_open(const char *path, int *dirfd);

/* Stream file names; return snprintf's result (truncated if >= len). */
/* host channel 0: host-cpuN.vtf; channel k >= 1: host-chK-cpuN.vtf */
int tf_trace_host_name(char *buf, size_t len, uint32_t chan, uint32_t cpu);
int tf_trace_guest_name(char *buf, size_t len, uint32_t vm, uint32_t cpu);
int tf_trace_sync_name(char *buf, size_t len, uint32_t vm);

#endif
