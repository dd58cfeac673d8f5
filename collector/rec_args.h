/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The values `vmscope record` takes on its command line, parsed once for
 * every place that takes them (record, a libvirt domain's metadata, the
 * daemon's requests).
 */
#ifndef VMSCOPE_COLLECTOR_REC_ARGS_H
#define VMSCOPE_COLLECTOR_REC_ARGS_H

#include <stdint.h>

#include <vmscope/ioctl.h>
#include <vmscope/ringbuf_abi.h>

/* "2M", "512K", "1G", "65536": 0, or -1 when @s is not a size. */
int rec_parse_size(const char *s, unsigned long long *v);

/* The longest duration: a year, which also keeps its nanoseconds far
 * inside 64 bits. */
#define REC_DURATION_MAX_S (366.0 * 86400)

/* "30", "30s", "10m", "1.5h" (seconds, at most REC_DURATION_MAX_S): 0,
 * or -1. */
int rec_parse_duration(const char *s, double *v);

/*
 * Triggered windows (`record --trigger-exit-us/--trigger-stall-us`,
 * `--snapshot-before-ms/--snapshot-after-ms`; vmscoped's options and a
 * domain's metadata take the same values): a threshold of 1 us to an hour
 * (a longer one is a typo), a window of at most 10 minutes each side (the
 * recorder keeps it in memory).
 */
#define REC_TRIGGER_US_MAX 3600000000ull
#define REC_SNAP_MS_MAX 600000ull

/*
 * Per-CPU ring buffer bytes -> sub-buffer size and count (powers of two in
 * the module's range, at least 8 sub-buffers when the size allows): 0, or
 * -1 when @bytes is out of range (8 KiB .. 64 MiB).
 */
int rec_geometry(unsigned long long bytes, struct vmscope_session_cfg *cfg);

/*
 * The events `vmscope record --mode flight` keeps apart by default: the
 * clock-sync records and KVM's TSC offset writes, which the merge needs
 * from the whole recording, not only from its last ring's worth.
 */
#define REC_KEEP_DEFAULT "vmscope,kvm_write_tsc_offset"

/*
 * A second channel in @cfg for the events of @mask (bit per id): discard
 * mode, REC_KEEP_BYTES per CPU in small sub-buffers, so that what
 * channel 0 overwrites or drops never touches them. @mask 0: one channel.
 */
#define REC_KEEP_SUBBUF_SHIFT	14	/* 16 KiB */
#define REC_KEEP_NR_SHIFT	4	/* 16 of them: 256 KiB per CPU */
void rec_keep_channel(struct vmscope_session_cfg *cfg, uint64_t mask);

#endif
