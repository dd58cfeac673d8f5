/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped's /metrics endpoint (`--metrics ADDR:PORT`): an HTTP server
 * from Debian's libmicrohttpd (README.md, "Choices") on its own thread,
 * answering GET /metrics with the store rendered (metrics_render.h);
 * anything else is 404 (another path) or 405 (another method).
 */
#ifndef VMSCOPE_DAEMON_METRICS_HTTP_H
#define VMSCOPE_DAEMON_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "metrics_store.h"

struct mh_server;

/*
 * ADDR:PORT, [IPv6]:PORT or PORT alone (loopback: 127.0.0.1) into @sa:
 * numeric addresses only (no name lookup). 0, or -1 with @why.
 */
int mh_parse_addr(const char *arg, struct sockaddr_storage *sa, char *why, size_t whylen);

/* Serve @st on @sa. NULL with @why when it cannot listen. */
struct mh_server *mh_start(const struct sockaddr_storage *sa, struct mstore *st, char *why,
			   size_t whylen);
/* The port it listens on (the one asked, or the kernel's choice for 0). */
uint16_t mh_port(const struct mh_server *m);
void mh_stop(struct mh_server *m);

#endif
