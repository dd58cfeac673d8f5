/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped's control protocol (schemas/daemon.proto): a client connects to
 * the root-only SOCK_SEQPACKET socket, sends one Request message, reads one
 * Response message. SOCK_SEQPACKET keeps message boundaries, so a message
 * needs no framing of its own; protobuf-c because every other message of
 * vmscope is one (no second hand-written format to parse and fuzz).
 *
 * Everything a request carries is checked here, once, into a plain struct
 * (dm_req_parse); the daemon uses nothing else of it.
 */
#ifndef VMSCOPE_DAEMON_PROTO_H
#define VMSCOPE_DAEMON_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon.pb-c.h"
#include "domxml.h"

#define DM_SOCKET_DEFAULT "/run/vmscope/vmscoped.sock"
#define DM_MSG_MAX (64u << 10)
#define DM_PROTO_VERSION 1

enum dm_op {
	DM_STATUS = VMSCOPE__DAEMON__OP__OP_STATUS,
	DM_LIST = VMSCOPE__DAEMON__OP__OP_LIST,
	DM_START = VMSCOPE__DAEMON__OP__OP_START,
	DM_STOP = VMSCOPE__DAEMON__OP__OP_STOP,
	DM_HOOK = VMSCOPE__DAEMON__OP__OP_HOOK,
};

/* The libvirt qemu hook operations the daemon acts on. */
enum dm_hook {
	DM_HOOK_NONE = 0,
	DM_HOOK_STARTED,
	DM_HOOK_STOPPED,
	DM_HOOK_RELEASE,
	DM_HOOK_RECONNECT,
};

struct dm_req {
	enum dm_op op;
	enum dm_hook hook;	/* DM_HOOK only */
	struct vd_domain dom;	/* name, uuid, cid, opts (START, STOP, HOOK) */
	pid_t pid;		/* 0: libvirt's pid file */
};

/* "started" -> DM_HOOK_STARTED ...; DM_HOOK_NONE for any other operation. */
enum dm_hook dm_hook_from_name(const char *op);
const char *dm_hook_name(enum dm_hook h);

/*
 * Decode and check one request: 0, or -1 with a one-line reason (bad
 * protobuf, other version, unknown op, a field out of range or missing).
 */
int dm_req_parse(const uint8_t *buf, size_t len, struct dm_req *r, char *why, size_t whylen);

/* Encode @r into @buf (DM_MSG_MAX bytes): the length, or 0 if too long. */
size_t dm_req_pack(const struct dm_req *r, uint8_t *buf);

/*
 * One round trip to the daemon at @sock_path, within @timeout_ms for
 * connect, send and receive. 0 and *resp (free with
 * vmscope__daemon__response__free_unpacked), or -errno with @why
 * (-ENOENT / -ECONNREFUSED: no daemon; -ETIMEDOUT).
 */
int dm_call(const char *sock_path, const struct dm_req *r, int timeout_ms,
	    Vmscope__Daemon__Response **resp, char *why, size_t whylen);

/* The socket path: $VMSCOPE_SOCKET when set, else DM_SOCKET_DEFAULT. */
const char *dm_socket_path(void);

#endif
