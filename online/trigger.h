/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Triggers (README.md, "Triggers"): in a closed interval of the pipeline,
 * the longest exit that is not a halt and the worst guest-thread stall, by
 * the walk's and `report sched`'s own definitions (the window's, window.h),
 * against thresholds; what crossed one, as a trigger frame's content
 * (trigger_frame.h) that `vmscope record --metrics-fd` sends to vmscoped.
 */
#ifndef VMSCOPE_ONLINE_TRIGGER_H
#define VMSCOPE_ONLINE_TRIGGER_H

#include "pipe.h"
#include "trigger_frame.h"

/* The thresholds; 0: that trigger is off. */
struct ol_trig_cfg {
	uint64_t exit_ns, stall_ns;
};

/*
 * What of VM @vm in @r's interval crossed @c's thresholds (longer than
 * one): its worst stall first (it names the host task that took the CPU,
 * so a rate limit that admits one trigger keeps that one when a
 * preemption makes both), then its longest exit that is not a halt (a
 * halted vCPU waits for nothing). Returns how many (0..2); 0 for a VM
 * beyond the window's OL_WIN_VMS.
 */
unsigned int ol_trig_scan(const struct ol_report *r, uint32_t vm, const struct ol_trig_cfg *c,
			  struct ol_trig out[2]);

#endif
