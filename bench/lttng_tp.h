/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* LTTng-UST tracepoint provider for the benchmark: one event carrying the
 * same 32-byte payload as the vmscope side, copied as one array field. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER vmscope_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(VMSCOPE_BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define VMSCOPE_BENCH_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(vmscope_bench, payload32,
	LTTNG_UST_TP_ARGS(const uint8_t *, p),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_array(uint8_t, payload, p, 32)
	)
)

#endif

#include <lttng/tracepoint-event.h>
