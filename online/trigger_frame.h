/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trigger (README.md, "Triggers"): what `vmscope record --metrics-fd
 * --trigger-exit-us/--trigger-stall-us` saw cross a threshold, sent to
 * vmscoped on the metrics socket beside the snapshots (metrics_frame.h),
 * one message each; the daemon tells the two apart by their magic and
 * parses this one as untrusted input (ol_trig_parse, fuzz-trigger-frame).
 *
 * Frame, little-endian, no padding:
 *   u32 magic "VMST"  u16 version (1)  u8 kind (1 exit, 2 stall)  u8 0
 *   u32 vcpu  u64 start_ns dur_ns threshold_ns
 *   three texts, each u8 length (0..OL_TG_TEXT-1) and that many printable
 *       ASCII bytes: what, task, host_task
 * and nothing after. Version rule as the snapshot's: the version fixes
 * the layout; magic and version are checked before any length. libc only.
 */
#ifndef VMSCOPE_ONLINE_TRIGGER_FRAME_H
#define VMSCOPE_ONLINE_TRIGGER_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define OL_TG_MAGIC	0x54534d56u	/* "VMST" */
#define OL_TG_VERSION	1u
#define OL_TG_TEXT	64
#define OL_TG_HEAD	36u
#define OL_TG_FRAME_MAX	(OL_TG_HEAD + 3u * OL_TG_TEXT)

enum ol_tg_kind { OL_TG_EXIT = 1, OL_TG_STALL = 2 };

struct ol_trig {
	uint8_t kind;			/* enum ol_tg_kind */
	uint32_t vcpu;
	uint64_t start_ns, dur_ns;	/* host time: the exit's or stall's */
	uint64_t threshold_ns;		/* the threshold it crossed (dur_ns > it) */
	/* an exit: its reason; a stall: "running" or "runnable" (the guest
	 * thread's state) and "preempted" or "blocked in host" */
	char what[OL_TG_TEXT];
	char task[OL_TG_TEXT];		/* the guest task, "comm/tid", or "(unknown task)" */
	/* a stall: the host task that had the CPU longest, "comm/tid", or
	 * "(blocked in host)"; an exit: its vCPU thread, "comm/tid" */
	char host_task[OL_TG_TEXT];
};

/* @t into @buf (at least OL_TG_FRAME_MAX bytes): its length. Texts are cut
 * to OL_TG_TEXT - 1 bytes; bytes that are not printable become '?'. */
size_t ol_trig_encode(const struct ol_trig *t, uint8_t *buf);

/* The frame @buf[@len] into @t: 0, or -1 with @why saying what is wrong. */
int ol_trig_parse(const uint8_t *buf, size_t len, struct ol_trig *t, char *why, size_t whylen);

#endif
