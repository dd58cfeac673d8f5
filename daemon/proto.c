/* SPDX-License-Identifier: GPL-2.0 */
/* vmscoped's requests: checked decoding, encoding, one client call. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "pb_str.h"
#include "proto.h"
#include "rec_args.h"
#include "util_clock.h"

static const char *const hook_names[] = {
	[DM_HOOK_STARTED] = "started",
	[DM_HOOK_STOPPED] = "stopped",
	[DM_HOOK_RELEASE] = "release",
	[DM_HOOK_RECONNECT] = "reconnect",
};

enum dm_hook dm_hook_from_name(const char *op)
{
	for (unsigned int i = 1; i < sizeof(hook_names) / sizeof(hook_names[0]); i++)
		if (!strcmp(op, hook_names[i]))
			return (enum dm_hook)i;
	return DM_HOOK_NONE;
}

const char *dm_hook_name(enum dm_hook h)
{
	return h > DM_HOOK_NONE && h <= DM_HOOK_RECONNECT ? hook_names[h] : "none";
}

static int parse_opts(const Vmscope__Daemon__TraceOptions *o, struct vd_opts *v, char *why,
		      size_t whylen)
{
	struct vmscope_session_cfg cfg;

	if (!o)
		return 0;
	if (pb_str_copy(v->events, sizeof(v->events), o->events) ||
	    vd_check_events(v->events, why, whylen))
		return *why ? -1 : vd_why(why, whylen, -1, "events too long");
	if (o->mode > VD_MODE_FLIGHT)
		return vd_why(why, whylen, -1, "mode %u unknown", o->mode);
	v->mode = (enum vd_mode)o->mode;
	if (o->buffer_size && rec_geometry(o->buffer_size, &cfg))
		return vd_why(why, whylen, -1, "buffer size %llu: 8K to 64M per CPU",
			    (unsigned long long)o->buffer_size);
	v->buffer_size = o->buffer_size;
	/* NaN fails every comparison: written so that it is refused */
	if (!(o->duration_s >= 0 && o->duration_s <= 366.0 * 86400))
		return vd_why(why, whylen, -1, "duration out of range");
	v->duration_s = o->duration_s;
	if (pb_str_copy(v->output, sizeof(v->output), o->output))
		return vd_why(why, whylen, -1, "output too long");
	v->trigger_exit_us = o->trigger_exit_us;
	v->trigger_stall_us = o->trigger_stall_us;
	v->snapshot_before_ms = o->snapshot_before_ms;
	v->snapshot_after_ms = o->snapshot_after_ms;
	return vd_check_output(v->output, why, whylen) ||
	       vd_check_triggers(v, why, whylen) ? -1 : 0;
}

static int parse_domain(const Vmscope__Daemon__Domain *d, struct dm_req *r, char *why,
			size_t whylen)
{
	if (!d)
		return vd_why(why, whylen, -1, "no domain");
	if (pb_str_copy(r->dom.name, sizeof(r->dom.name), d->name))
		return vd_why(why, whylen, -1, "domain name too long");
	if (vd_check_name(r->dom.name, why, whylen))
		return -1;
	if (pb_str_copy(r->dom.uuid, sizeof(r->dom.uuid), d->uuid) ||
	    vd_check_uuid(r->dom.uuid, why, whylen))
		return *why ? -1 : vd_why(why, whylen, -1, "uuid too long");
	if (d->cid && (d->cid < 3 || d->cid == 0xffffffffu))
		return vd_why(why, whylen, -1, "vsock cid %u reserved", d->cid);
	r->dom.cid = d->cid;
	if (d->pid < 0 || d->pid > 0x3fffffff)
		return vd_why(why, whylen, -1, "pid %d out of range", d->pid);
	r->pid = d->pid;
	return 0;
}

int dm_req_parse(const uint8_t *buf, size_t len, struct dm_req *r, char *why, size_t whylen)
{
	Vmscope__Daemon__Request *m;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (whylen)
		why[0] = '\0';
	if (len > DM_MSG_MAX)
		return vd_why(why, whylen, -1, "request longer than %u bytes", DM_MSG_MAX);
	/* no repeated fields: what protobuf-c allocates is bounded by @len */
	m = vmscope__daemon__request__unpack(NULL, len, buf);
	if (!m)
		return vd_why(why, whylen, -1, "not a request message");
	if (m->version != DM_PROTO_VERSION) {
		vd_why(why, whylen, -1, "protocol version %u, this daemon speaks %u", m->version,
		     DM_PROTO_VERSION);
		goto out;
	}
	switch (m->op) {
	case VMSCOPE__DAEMON__OP__OP_STATUS:
	case VMSCOPE__DAEMON__OP__OP_LIST:
		r->op = (enum dm_op)m->op;
		rc = 0;
		break;
	case VMSCOPE__DAEMON__OP__OP_HOOK:
		r->hook = dm_hook_from_name(m->hook_event ? m->hook_event : "");
		if (r->hook == DM_HOOK_NONE) {
			vd_why(why, whylen, -1, "hook event '%.20s' unknown", m->hook_event);
			break;
		}
		/* a hook event names a domain like start and stop */
		__attribute__((fallthrough));
	case VMSCOPE__DAEMON__OP__OP_START:
	case VMSCOPE__DAEMON__OP__OP_STOP:
		r->op = (enum dm_op)m->op;
		if (!parse_domain(m->domain, r, why, whylen) &&
		    !parse_opts(m->options, &r->dom.opts, why, whylen))
			rc = 0;
		r->dom.traced = 1;
		break;
	default:
		vd_why(why, whylen, -1, "operation %d unknown", (int)m->op);
	}
out:
	vmscope__daemon__request__free_unpacked(m, NULL);
	return rc;
}

size_t dm_req_pack(const struct dm_req *r, uint8_t *buf)
{
	Vmscope__Daemon__Request m = VMSCOPE__DAEMON__REQUEST__INIT;
	Vmscope__Daemon__Domain d = VMSCOPE__DAEMON__DOMAIN__INIT;
	Vmscope__Daemon__TraceOptions o = VMSCOPE__DAEMON__TRACE_OPTIONS__INIT;

	m.version = DM_PROTO_VERSION;
	m.op = (Vmscope__Daemon__Op)r->op;
	if (r->op == DM_HOOK)
		m.hook_event = (char *)dm_hook_name(r->hook);
	if (r->op == DM_START || r->op == DM_STOP || r->op == DM_HOOK) {
		d.name = (char *)r->dom.name;
		d.uuid = (char *)r->dom.uuid;
		d.cid = r->dom.cid;
		d.pid = r->pid;
		o.events = (char *)r->dom.opts.events;
		o.mode = r->dom.opts.mode;
		o.buffer_size = r->dom.opts.buffer_size;
		o.duration_s = r->dom.opts.duration_s;
		o.output = (char *)r->dom.opts.output;
		o.trigger_exit_us = r->dom.opts.trigger_exit_us;
		o.trigger_stall_us = r->dom.opts.trigger_stall_us;
		o.snapshot_before_ms = r->dom.opts.snapshot_before_ms;
		o.snapshot_after_ms = r->dom.opts.snapshot_after_ms;
		m.domain = &d;
		m.options = &o;
	}
	if (vmscope__daemon__request__get_packed_size(&m) > DM_MSG_MAX)
		return 0;
	return vmscope__daemon__request__pack(&m, buf);
}

const char *dm_socket_path(void)
{
	const char *p = getenv("VMSCOPE_SOCKET");

	return p && *p ? p : DM_SOCKET_DEFAULT;
}


/* Wait for @ev on @fd until @deadline (ms): 0, or -ETIMEDOUT / -errno. */
static int wait_fd(int fd, short ev, double deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };

	for (;;) {
		double left = deadline - util_mono_s() * 1e3;
		int n;

		if (left <= 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)left + 1);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/*
 * connect() @fd to @a by @deadline (ms): 0, or -1 with errno. A local
 * socket's connect fails with EAGAIN while the daemon's queue of
 * connections is full (many domains starting at once): tried again until
 * the deadline, never taken for a daemon that is not there.
 */
static int connect_in_time(int fd, const struct sockaddr_un *a, double deadline)
{
	for (;;) {
		if (!connect(fd, (const struct sockaddr *)a, sizeof(*a)) || errno == EINPROGRESS)
			return 0;
		if (errno != EAGAIN || util_mono_s() * 1e3 + 10 >= deadline)
			return -1;
		usleep(10000);
	}
}

int dm_call(const char *sock_path, const struct dm_req *r, int timeout_ms,
	    Vmscope__Daemon__Response **resp, char *why, size_t whylen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	double deadline = util_mono_s() * 1e3 + timeout_ms;
	uint8_t *buf = malloc(DM_MSG_MAX);
	size_t n = buf ? dm_req_pack(r, buf) : 0;
	ssize_t got;
	int fd = -1, e;

	*resp = NULL;
	if (!n) {
		e = -ENOMEM;
		vd_why(why, whylen, -1, "request too long or out of memory");
		goto out;
	}
	if (strlen(sock_path) >= sizeof(a.sun_path)) {
		e = -ENAMETOOLONG;
		vd_why(why, whylen, -1, "socket path too long");
		goto out;
	}
	strcpy(a.sun_path, sock_path);
	/* non-blocking throughout: a daemon that hangs costs at most the timeout */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		e = -errno;
		vd_why(why, whylen, -1, "socket: %s", strerror(errno));
		goto out;
	}
	if (connect_in_time(fd, &a, deadline)) {
		e = -errno;
		vd_why(why, whylen, -1, "cannot reach vmscoped at %s: %s", sock_path,
		       errno == EAGAIN ? "its queue of connections stayed full" : strerror(errno));
		goto out;
	}
	if ((e = wait_fd(fd, POLLOUT, deadline)) || (send(fd, buf, n, MSG_NOSIGNAL) < 0 &&
						      (e = -errno))) {
		vd_why(why, whylen, -1, "sending to vmscoped: %s", strerror(-e));
		goto out;
	}
	if ((e = wait_fd(fd, POLLIN, deadline))) {
		vd_why(why, whylen, -1, "no answer from vmscoped within %d ms: %s", timeout_ms,
		     strerror(-e));
		goto out;
	}
	got = recv(fd, buf, DM_MSG_MAX, MSG_TRUNC);
	if (got <= 0 || (size_t)got > DM_MSG_MAX) {
		e = got < 0 ? -errno : -EPROTO;
		vd_why(why, whylen, -1, "reading vmscoped's answer: %s",
		     got < 0 ? strerror(errno) : got ? "too long" : "connection closed");
		goto out;
	}
	*resp = vmscope__daemon__response__unpack(NULL, (size_t)got, buf);
	e = *resp ? 0 : -EPROTO;
	if (e)
		vd_why(why, whylen, -1, "vmscoped's answer is not a response");
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return e;
}
