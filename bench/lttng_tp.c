// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Instantiates the LTTng-UST probe for lttng_tp.h. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "lttng_tp.h"
