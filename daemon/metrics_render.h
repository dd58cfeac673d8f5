/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Prometheus text exposition format (version 0.0.4) of the domains'
 * snapshots (README.md, "Metrics"): each family's HELP and TYPE once,
 * then its samples, domains sorted by name; labels domain (libvirt's
 * name) and uuid, reason for the exit families, state and cause for the
 * stalls. Times in seconds,
 * written as exact decimals of the nanosecond counts.
 */
#ifndef VMSCOPE_DAEMON_METRICS_RENDER_H
#define VMSCOPE_DAEMON_METRICS_RENDER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "metrics_store.h"

/* The Content-Type of what mr_render writes. */
#define MR_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* @n entries @e (any order) and the store's own counters into @out. */
void mr_render(FILE *out, const struct ms_entry *e, size_t n, uint64_t refused,
	       uint64_t bad_frames, uint64_t triggers_suppressed);

#endif
