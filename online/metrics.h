/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The metrics view of the online pipeline (README.md, "Metrics"): one VM's
 * figures in the cumulative window, reduced to a snapshot
 * (metrics_frame.h) that vmscoped serves at /metrics.
 */
#ifndef VMSCOPE_ONLINE_METRICS_H
#define VMSCOPE_ONLINE_METRICS_H

#include "metrics_frame.h"
#include "pipe.h"

/*
 * @s := VM @vm of @r's cumulative window (seq, events_lost and the bound
 * are the caller's): its exits, time split and preempted time; the
 * guest's steal (known once a vCPU's span had two readings); its guest
 * threads' stalls by class, known when the VM has its guest side. Exit reasons in the walk's order, which is the order
 * it first saw them in: reasons beyond the first OL_MX_REASONS - 1 count
 * in OL_MX_OTHER, so a reason's series never moves. Returns the exits
 * whose latency had no histogram bucket (out of memory: counted in count
 * only, +Inf), normally 0.
 */
uint64_t ol_msnap_of(struct ol_msnap *s, const struct ol_report *r, uint32_t vm);

#endif
