/* Stopping a program that runs until SIGINT or SIGTERM. */
#ifndef VMSCOPE_UTIL_SIGNAL_H
#define VMSCOPE_UTIL_SIGNAL_H

#include <signal.h>

/* 1 once SIGINT or SIGTERM came after util_stop_on_signals(). */
extern volatile sig_atomic_t util_stop_requested;

/*
 * SIGINT and SIGTERM only set util_stop_requested: the program's own loop
 * checks it and stops in order (buffers drained, files closed).
 */
void util_stop_on_signals(void);

#endif
