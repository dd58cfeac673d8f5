/* Clock readings the programs share. */
#ifndef VMSCOPE_UTIL_CLOCK_H
#define VMSCOPE_UTIL_CLOCK_H

/* CLOCK_MONOTONIC in seconds: for deadlines and elapsed times. */
double util_mono_s(void);

#endif
