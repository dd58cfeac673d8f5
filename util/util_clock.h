/* Clock readings the programs share. */
#ifndef VMSCOPE_UTIL_CLOCK_H
#define VMSCOPE_UTIL_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in seconds: for deadlines and elapsed times. */
double util_mono_s(void);

/* CLOCK_MONOTONIC in nanoseconds: for whole-unit deadlines (ms) without rounding. */
uint64_t util_mono_ns(void);

/* CLOCK_REALTIME in nanoseconds since the epoch: for names and wall times. */
uint64_t util_realtime_ns(void);

#endif
