/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The vsock port the guest agents (`vmscope agent`) connect to on the host:
 * where `vmscope record` listens, or vmscoped for all its recordings.
 */
#ifndef VMSCOPE_AGENT_PORT_H
#define VMSCOPE_AGENT_PORT_H

#define VMSCOPE_AGENT_PORT	5643

#endif
