/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped's request parser: every op round trips through dm_req_pack and
 * dm_req_parse (a domain's trigger options too); each field out of range
 * (a trigger option too), a wrong version, an unknown op or hook event,
 * bytes that are not a request, and an oversize message are refused with
 * a reason. The client: no daemon fails at once; a daemon whose queue of
 * connections is full is tried again until the budget ends.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "proto.h"

static uint8_t buf[DM_MSG_MAX + 16];

static struct dm_req sample(void)
{
	struct dm_req r = { .op = DM_HOOK, .hook = DM_HOOK_STARTED, .pid = 4242 };

	strcpy(r.dom.name, "web1");
	strcpy(r.dom.uuid, "6a1f0c1e-6c38-4b0e-9a4a-2f3d9c7e5b10");
	r.dom.cid = 9;
	strcpy(r.dom.opts.events, "kvm,sched");
	r.dom.opts.mode = VD_MODE_FLIGHT;
	r.dom.opts.buffer_size = 1 << 20;
	r.dom.opts.duration_s = 2.5;
	strcpy(r.dom.opts.output, "/srv/t");
	r.dom.opts.trigger_exit_us = VD_TRIGGER_OFF;
	r.dom.opts.trigger_stall_us = 45000;
	r.dom.opts.snapshot_before_ms = 600000;
	r.dom.opts.snapshot_after_ms = 1;
	return r;
}

static void round_trips(void)
{
	static const enum dm_op ops[] = { DM_STATUS, DM_LIST, DM_START, DM_STOP, DM_HOOK };
	char why[200];

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct dm_req r = sample(), back;
		size_t n;
		int rc;

		r.op = ops[i];
		n = dm_req_pack(&r, buf);
		rc = dm_req_parse(buf, n, &back, why, sizeof(why));
		EXPECT(n > 0 && rc == 0, "op %d: packed %zu, parse %d (%s)", ops[i], n, rc, why);
		EXPECT(back.op == ops[i], "op %d came back as %d", ops[i], back.op);
		if (ops[i] == DM_STATUS || ops[i] == DM_LIST)
			continue;
		EXPECT(!strcmp(back.dom.name, "web1") && back.dom.cid == 9 && back.pid == 4242 &&
		       !strcmp(back.dom.uuid, r.dom.uuid), "op %d: domain changed", ops[i]);
		EXPECT(!strcmp(back.dom.opts.events, "kvm,sched") &&
		       back.dom.opts.mode == VD_MODE_FLIGHT &&
		       back.dom.opts.buffer_size == 1 << 20 && back.dom.opts.duration_s == 2.5 &&
		       !strcmp(back.dom.opts.output, "/srv/t"), "op %d: options changed", ops[i]);
		EXPECT(back.dom.opts.trigger_exit_us == VD_TRIGGER_OFF &&
		       back.dom.opts.trigger_stall_us == 45000 &&
		       back.dom.opts.snapshot_before_ms == 600000 &&
		       back.dom.opts.snapshot_after_ms == 1, "op %d: triggers changed", ops[i]);
		EXPECT(ops[i] != DM_HOOK || back.hook == DM_HOOK_STARTED, "hook %d", back.hook);
	}
	for (int h = DM_HOOK_STARTED; h <= DM_HOOK_RECONNECT; h++)
		EXPECT(dm_hook_from_name(dm_hook_name((enum dm_hook)h)) == (enum dm_hook)h,
		       "hook name %d", h);
	EXPECT(dm_hook_from_name("prepare") == DM_HOOK_NONE, "prepare is acted on");
}

/* Pack @m as the raw message (bypassing dm_req_pack's struct). */
static size_t raw(Vmscope__Daemon__Request *m)
{
	return vmscope__daemon__request__pack(m, buf);
}

static void refused(void)
{
	Vmscope__Daemon__Request m = VMSCOPE__DAEMON__REQUEST__INIT;
	Vmscope__Daemon__Domain d = VMSCOPE__DAEMON__DOMAIN__INIT;
	Vmscope__Daemon__TraceOptions o = VMSCOPE__DAEMON__TRACE_OPTIONS__INIT;
	struct dm_req r;
	char why[200], longname[300], longevents[600];
	int rc;

#define REFUSED(desc) do { \
		why[0] = '\0'; \
		rc = dm_req_parse(buf, raw(&m), &r, why, sizeof(why)); \
		EXPECT(rc == -1 && why[0], "%s: rc %d", desc, rc); \
	} while (0)
#define RESET() do { \
		m.version = DM_PROTO_VERSION; m.op = VMSCOPE__DAEMON__OP__OP_START; \
		m.domain = &d; m.options = &o; m.hook_event = (char *)""; \
		d.name = (char *)"vm"; d.uuid = (char *)""; d.cid = 0; d.pid = 0; \
		o.events = (char *)""; o.mode = 0; o.buffer_size = 0; o.duration_s = 0; \
		o.output = (char *)""; o.trigger_exit_us = 0; o.trigger_stall_us = 0; \
		o.snapshot_before_ms = 0; o.snapshot_after_ms = 0; \
	} while (0)

	RESET();
	rc = dm_req_parse(buf, raw(&m), &r, why, sizeof(why));
	EXPECT(rc == 0, "the base request is refused: %s", why);

	RESET(); m.version = 2; REFUSED("version 2");
	RESET(); m.version = 0; REFUSED("version 0");
	RESET(); m.op = 0; REFUSED("op none");
	RESET(); m.op = 77; REFUSED("op 77");
	RESET(); m.domain = NULL; REFUSED("start without domain");
	RESET(); d.name = (char *)""; REFUSED("empty name");
	RESET(); d.name = (char *)"../etc"; REFUSED("name with /");
	RESET(); d.name = (char *)".hidden"; REFUSED("name with a dot first");
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	RESET(); d.name = longname; REFUSED("name too long");
	RESET(); d.uuid = (char *)"xyz"; REFUSED("bad uuid");
	RESET(); d.uuid = longname; REFUSED("uuid too long");
	RESET(); d.cid = 2; REFUSED("cid 2");
	RESET(); d.cid = 0xffffffffu; REFUSED("cid -1");
	RESET(); d.pid = -5; REFUSED("negative pid");
	RESET(); d.pid = 0x40000000; REFUSED("pid too large");
	RESET(); o.mode = 3; REFUSED("mode 3");
	RESET(); o.buffer_size = 4096; REFUSED("buffer 4K");
	RESET(); o.buffer_size = 1ull << 40; REFUSED("buffer 1T");
	RESET(); o.duration_s = -1; REFUSED("negative duration");
	RESET(); o.duration_s = NAN; REFUSED("NaN duration");
	RESET(); o.duration_s = INFINITY; REFUSED("infinite duration");
	RESET(); o.events = (char *)"kvm;reboot"; REFUSED("events alphabet");
	memset(longevents, 'k', sizeof(longevents) - 1);
	longevents[sizeof(longevents) - 1] = '\0';
	RESET(); o.events = longevents; REFUSED("events too long");
	RESET(); o.output = (char *)"rel"; REFUSED("relative output");
	RESET(); o.output = (char *)"/a/../b"; REFUSED("output with ..");
	RESET(); o.trigger_exit_us = 3600000001ull; REFUSED("exit threshold over an hour");
	RESET(); o.trigger_stall_us = VD_TRIGGER_OFF - 1; REFUSED("stall threshold 2^64-2");
	RESET(); o.snapshot_before_ms = 600001; REFUSED("window before 600001 ms");
	RESET(); o.snapshot_after_ms = VD_TRIGGER_OFF; REFUSED("window after 2^64-1 ms");
	RESET(); o.trigger_exit_us = VD_TRIGGER_OFF; o.trigger_stall_us = 1;
	rc = dm_req_parse(buf, raw(&m), &r, why, sizeof(why));
	EXPECT(rc == 0 && r.dom.opts.trigger_exit_us == VD_TRIGGER_OFF &&
	       r.dom.opts.trigger_stall_us == 1, "off and 1 us: rc %d (%s)", rc, why);
	RESET(); m.op = VMSCOPE__DAEMON__OP__OP_HOOK; m.hook_event = (char *)"prepare";
	REFUSED("hook prepare");
	RESET(); m.op = VMSCOPE__DAEMON__OP__OP_HOOK; m.hook_event = (char *)"";
	REFUSED("hook without event");

	/* bytes that are not a request */
	static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0x0f };

	EXPECT(dm_req_parse(junk, sizeof(junk), &r, why, sizeof(why)) == -1, "junk accepted");
	EXPECT(dm_req_parse(buf, 0, &r, why, sizeof(why)) == -1 && strstr(why, "version"),
	       "empty message: %s", why);
	memset(buf, 0, sizeof(buf));
	EXPECT(dm_req_parse(buf, DM_MSG_MAX + 1, &r, why, sizeof(why)) == -1 &&
	       strstr(why, "longer"), "oversize: %s", why);
}

static void client_errors(void)
{
	struct dm_req r = sample();
	Vmscope__Daemon__Response *resp;
	char why[200];
	int e = dm_call("/nonexistent/vmscoped.sock", &r, 100, &resp, why, sizeof(why));

	EXPECT(e == -ENOENT && !resp && strstr(why, "cannot reach"), "no daemon: %d %s", e,
	       why);
}

/* What full_listener() made, gone: its sockets (those >= 0), its socket
 * file and its folder (@path is cut to the folder's). */
static void full_listener_remove(int l, int filler, char *path)
{
	if (filler >= 0)
		close(filler);
	if (l >= 0)
		close(l);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

/* A listener whose queue holds one connection (listen(0): the kernel
 * queues while the queue is not longer than the backlog), filled by a
 * client nobody accepts: on its own path under a fresh folder. */
static int full_listener(char *path, size_t len, int *filler)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[] = "/tmp/test-proto.XXXXXX";
	int l, e;

	if (!mkdtemp(dir))
		return -1;
	snprintf(path, len, "%s/s", dir);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	*filler = -1;
	l = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 0))
		goto fail;
	*filler = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*filler < 0 || connect(*filler, (struct sockaddr *)&a, sizeof(a)))
		goto fail;
	return l;
fail:
	e = errno;
	full_listener_remove(l, *filler, path);
	errno = e;
	return -1;
}

/* The child's daemon: after @delay_ms, accepts what is queued and
 * answers the first request it reads; exits 0 once it answered. */
static void late_daemon(int l, int delay_ms)
{
	Vmscope__Daemon__Response r = VMSCOPE__DAEMON__RESPONSE__INIT;
	uint8_t msg[DM_MSG_MAX];

	r.message = "late but there";
	usleep((useconds_t)delay_ms * 1000);
	for (int i = 0; i < 8; i++) {
		int c = accept(l, NULL, NULL);
		struct pollfd p = { .fd = c, .events = POLLIN };

		if (c < 0)
			_exit(2);
		if (poll(&p, 1, 500) == 1 && recv(c, msg, sizeof(msg), 0) > 0) {
			size_t n = vmscope__daemon__response__pack(&r, msg);

			_exit(send(c, msg, n, MSG_NOSIGNAL) == (ssize_t)n ? 0 : 3);
		}
	}
	_exit(4);
}

/* A daemon whose queue of connections is full (many hooks at once): the
 * client tries again within its budget, and says so when it runs out. */
static void full_queue(void)
{
	struct dm_req r = sample();
	Vmscope__Daemon__Response *resp;
	char path[108], why[300];
	int filler, l = full_listener(path, sizeof(path), &filler), e, st = -1;
	pid_t child;

	EXPECT(l >= 0, "listener: %s", strerror(errno));
	if (l < 0)
		return;
	e = dm_call(path, &r, 300, &resp, why, sizeof(why));
	EXPECT(e == -EAGAIN && !resp && strstr(why, "its queue of connections stayed full"),
	       "full queue, nobody accepts: %d %s", e, why);
	child = fork();
	if (child == 0)
		late_daemon(l, 200);
	e = dm_call(path, &r, 3000, &resp, why, sizeof(why));
	EXPECT(e == 0 && resp && resp->message && !strcmp(resp->message, "late but there"),
	       "full queue, accepted 200 ms later: %d %s", e, e ? why : "");
	if (!e)
		vmscope__daemon__response__free_unpacked(resp, NULL);
	waitpid(child, &st, 0);
	EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the late daemon: status %d", st);
	full_listener_remove(l, filler, path);
}

int main(void)
{
	round_trips();
	refused();
	client_errors();
	full_queue();
	if (check_failures)
		fprintf(stderr, "%d failures\n", check_failures);
	return check_failures ? 1 : 0;
}
