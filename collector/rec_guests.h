/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest side of a recording: a listener on AF_VSOCK (any CID, the
 * agent's port), or a socket on which vmscoped hands over the connections
 * it accepted there (rec_opts.guest_handoff_fd), taking connections only
 * from the vsock CIDs of the session's VMs, and one thread per connection feeding guest_link and the
 * recording's queue. Data is attributed by the peer CID the kernel reports
 * for the connection, never by anything the guest says.
 */
#ifndef VMSCOPE_COLLECTOR_REC_GUESTS_H
#define VMSCOPE_COLLECTOR_REC_GUESTS_H

#include <stdint.h>

#include "guest.pb-c.h"
#include "rec_int.h"

/* Listen (when some VM has a CID). 0, or -1 after printing why. */
int rg_start(struct rec *r, uint32_t port);
/* Stop accepting and reading (r->draining is set), join every thread. */
void rg_stop(struct rec *r);
/* The VM's last hello (a copy: free with
 * vmscope__trace__guest_hello__free_unpacked), or NULL. */
Vmscope__Trace__GuestHello *rg_hello(struct rec *r, unsigned int vm);
/* Connections live now (all VMs, or one: vm < nvms). */
unsigned int rg_connected(struct rec *r, int vm);
void rg_free(struct rec *r);

#endif
