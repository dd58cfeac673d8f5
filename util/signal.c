/* The stop flag set by SIGINT and SIGTERM (util_signal.h). */
#include "util_signal.h"

volatile sig_atomic_t util_stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	util_stop_requested = 1;
}

void util_stop_on_signals(void)
{
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
}
