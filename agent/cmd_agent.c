/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope agent` (inside a guest): records the guest with vmscope_guest.ko
 * and streams it to the host collector over AF_VSOCK.
 *
 * Start: open /dev/vmscope-guest, choose the events (syscalls only with
 * --syscalls), SESSION_START (the module attaches its probes), enable the
 * sync emitter (its token goes into the hello; not on KVM: no sync, said
 * so), read the state dump, map every CPU's buffer read-only.
 *
 * Loop, poll()-driven (the module wakes readers once per batch of
 * delivered sub-buffers, and its flush timer delivers partial ones):
 * connected, take every delivered sub-buffer, send it as a StreamChunk,
 * give it back. Disconnected (host collector not there, or restarted):
 * leave the data in the ring buffers (which drop and count once full),
 * retry the connection every --retry-ms, and start the next connection
 * with a fresh FileHeader + hello. SIGINT/SIGTERM: stop the session
 * (which flushes every CPU), send what is left, exit.
 *
 * Memory: the maps, one frame buffer of a sub-buffer plus framing, the
 * hello; nothing grows while running.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/vm_sockets.h>

#include <vmscope/ioctl.h>

#include "agent.h"
#include "device.h"
#include "guest_link.h"
#include "tracefmt.h"
#include "vmscope_events.h"
#include "util_args.h"
#include "util_clock.h"

static int sig_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(sig_pipe[1], "x", 1) < 0) {
		/* full pipe: a stop is already pending */
	}
	errno = saved;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope agent [--cid CID] [--port PORT] [--syscalls]\n"
		"                     [--subbuf-shift K] [--subbufs-shift K] [--flush-ms MS]\n"
		"                     [--sync-period MS] [--retry-ms MS] [--duration S] [-v]\n\n"
		"Inside a guest: record it with vmscope_guest.ko and stream the trace to\n"
		"the host collector over AF_VSOCK (host CID 2, port %d). Reconnects when\n"
		"the collector restarts; SIGINT/SIGTERM stop, flush and exit.\n"
		"The same agent is built as the static program vmscope-agent, for\n"
		"guests with nothing but busybox (same options).\n\n"
		"  --cid CID          collector's CID (default 2, the host)\n"
		"  --port PORT        collector's vsock port (default %d)\n"
		"  --syscalls         also record sys_enter/sys_exit (high rate)\n"
		"  --subbuf-shift K   sub-buffers of 2^K bytes (default module's)\n"
		"  --subbufs-shift K  2^K sub-buffers per CPU (default module's)\n"
		"  --flush-ms MS      deliver partly filled sub-buffers every MS ms\n"
		"  --sync-period MS   clock-sync hypercall period, 1..1000 (default 10)\n"
		"  --retry-ms MS      reconnect attempts every MS ms (default 200)\n"
		"  --duration S       stop after S seconds\n"
		"  -v                 say what happens to the connection\n\n"
		"Exit status: 0 after a stop (SIGINT, SIGTERM, --duration) that sent\n"
		"everything or counted what it could not; 1 on a runtime failure (no\n"
		"guest module, the session or its buffers refused); 2 on a usage error.\n",
		VMSCOPE_AGENT_PORT, VMSCOPE_AGENT_PORT);
}

static uint64_t now_ms(void)
{
	return util_mono_ns() / 1000000;
}

static int map_buffers(struct agent *a)
{
	a->cpus = calloc(a->cfg.nr_cpu_ids, sizeof(*a->cpus));
	if (!a->cpus)
		return -ENOMEM;
	for (uint32_t c = 0; c < a->cfg.nr_cpu_ids; c++) {
		void *p = mmap(NULL, a->cfg.chan[0].cpu_stride, PROT_READ, MAP_SHARED,
			       a->dev, (off_t)(c * a->cfg.chan[0].cpu_stride));

		if (p == MAP_FAILED) {
			if (errno == ENXIO)	/* not a possible CPU */
				continue;
			return -errno;
		}
		a->cpus[c].map = p;
	}
	return 0;
}

static void try_connect(struct agent *a)
{
	int e = agent_connect(a);

	if (a->verbose) {
		if (e)
			fprintf(stderr, "vmscope agent: connect to %u:%u: %s\n",
				a->cid, a->port, strerror(-e));
		else
			fprintf(stderr, "vmscope agent: connected to %u:%u "
				"(connection %u)\n", a->cid, a->port,
				a->connection - 1);
	}
}

struct agent_opts {
	struct vmscope_session_cfg cfg;
	uint32_t sync_ms, retry_ms, duration_s;
	int syscalls;
};

static int setup(struct agent *a, const struct agent_opts *o)
{
	struct vmscope_sync_emitter_ctl sc = { .period_ns = (uint64_t)o->sync_ms * 1000000 };
	struct vmscope_version v;
	uint64_t mask = 0;
	int sync_ok, e;

	a->dev = vmscope_device_open(VMSCOPE_GUEST_DEVICE, 0);
	if (a->dev < 0)
		return -1;
	if (vmscope_device_version(a->dev, VMSCOPE_GUEST_DEVICE, &v))
		return -1;
	if (o->syscalls) {
		if (ioctl(a->dev, VMSCOPE_IOC_GUEST_EVENTS, &mask) < 0)
			goto ioctl_err;
		mask |= 1ull << VMSCOPE_EV_sys_enter | 1ull << VMSCOPE_EV_sys_exit;
	}
	if (ioctl(a->dev, VMSCOPE_IOC_GUEST_EVENTS, &mask) < 0)
		goto ioctl_err;
	a->cfg = o->cfg;
	if (ioctl(a->dev, VMSCOPE_IOC_SESSION_START, &a->cfg) < 0) {
		fprintf(stderr, "vmscope agent: cannot start a session: %s%s\n",
			strerror(errno), errno == EBUSY ?
			" (another reader records already)" : "");
		return -1;
	}
	sync_ok = ioctl(a->dev, VMSCOPE_IOC_SYNC_EMITTER_ENABLE, &sc) == 0;
	if (!sync_ok) {
		if (errno == EOPNOTSUPP)
			fprintf(stderr, "vmscope agent: not running on KVM: no clock "
				"sync with the host is possible; tracing anyway\n");
		else
			fprintf(stderr, "vmscope agent: sync emitter: %s; tracing "
				"without clock sync\n", strerror(errno));
	}
	e = map_buffers(a);
	if (!e)
		e = agent_hello_build(a, sc.token, sync_ok, sc.period_ns);
	if (e) {
		fprintf(stderr, "vmscope agent: setup: %s\n", strerror(-e));
		return -1;
	}
	if (agent_frame_alloc(a))
		return -1;
	fprintf(stderr, "vmscope agent: recording %u CPUs, %u x %u KiB each, "
		"%zu tasks, %zu irqs, %zu kernel symbols, %zu modules, sync %s\n",
		a->hello->state->nr_cpus,
		1u << a->cfg.chan[0].nr_subbuf_shift, (1u << a->cfg.chan[0].subbuf_shift) / 1024,
		a->hello->state->n_tasks, a->hello->state->n_irqs,
		a->hello->symbols->n_addr_delta, a->hello->symbols->n_modules,
		sync_ok ? "on" : "off");
	/* a short or empty table is not fatal, but never unsaid */
	if (a->hello->symbols->note[0])
		fprintf(stderr, "vmscope agent: kernel symbols: %s\n",
			a->hello->symbols->note);
	return 0;
ioctl_err:
	fprintf(stderr, "vmscope agent: event selection: %s\n", strerror(errno));
	return -1;
}

static int run(struct agent *a, const struct agent_opts *o)
{
	uint64_t next_try = 0, deadline = o->duration_s ?
		now_ms() + (uint64_t)o->duration_s * 1000 : 0;
	uint64_t failures_said = 0;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = sig_pipe[0], .events = POLLIN },
			{ .fd = a->dev, .events = POLLIN },
		};
		uint64_t t = now_ms();
		int timeout = -1, n;

		if (deadline && t >= deadline)
			return 0;
		if (a->sock < 0 && t >= next_try) {
			try_connect(a);
			next_try = t + o->retry_ms;
		}
		if (a->sock >= 0 && agent_drain(a))
			return -1;
		if (a->sock < 0) {
			if (a->send_failures != failures_said) {
				failures_said = a->send_failures;
				fprintf(stderr, "vmscope agent: connection lost; "
					"retrying every %u ms\n", o->retry_ms);
			}
			timeout = (int)o->retry_ms;
		}
		if (deadline) {
			uint64_t left = deadline > now_ms() ? deadline - now_ms() : 0;

			if (timeout < 0 || left < (uint64_t)timeout)
				timeout = (int)left;
		}
		/* disconnected: the buffers wait, so do not poll them (busy) */
		n = poll(p, a->sock >= 0 ? 2 : 1, timeout);
		if (n < 0 && errno != EINTR) {
			perror("vmscope agent: poll");
			return -1;
		}
		if (n > 0 && (p[0].revents & POLLIN))
			return 0;
		if (a->sock >= 0 && (p[1].revents & (POLLERR | POLLHUP)))
			return -1;
	}
}

/* Stop recording (flushes every CPU), send the rest, once more if need be. */
static void finish(struct agent *a)
{
	ioctl(a->dev, VMSCOPE_IOC_SYNC_EMITTER_DISABLE);
	if (ioctl(a->dev, VMSCOPE_IOC_SESSION_STOP) < 0)
		perror("vmscope agent: SESSION_STOP");
	if (a->sock < 0)
		try_connect(a);
	if (a->sock >= 0)
		agent_drain(a);
	for (uint32_t c = 0; c < a->cfg.nr_cpu_ids && a->sock >= 0; c++)
		if (a->cpus[c].map && agent_send_tail_loss(a, c))
			agent_disconnect(a);
	if (a->sock < 0)
		fprintf(stderr, "vmscope agent: final flush not delivered: "
			"no connection\n");
	else
		shutdown(a->sock, SHUT_WR);
}

/* The command line: where to connect, and the session's options. */
struct agent_args {
	uint32_t cid, port;
	int verbose;
	struct agent_opts o;
};

/* args_run ends a usage error with its own status: the agent's must be it */
_Static_assert(AGENT_EXIT_USAGE == ARGS_EXIT_USAGE && AGENT_EXIT_OK == 0,
	       "usage statuses differ");

static const struct args_opt opts[] = {
	ARGS_NUM("cid", 0, struct agent_args, cid, 2, UINT32_MAX - 1),
	ARGS_NUM("port", 0, struct agent_args, port, 1, UINT32_MAX - 1),
	ARGS_FLAG("syscalls", 0, struct agent_args, o.syscalls),
	ARGS_NUM("subbuf-shift", 0, struct agent_args, o.cfg.chan[0].subbuf_shift,
		 VMSCOPE_SESSION_SUBBUF_SHIFT_MIN, VMSCOPE_SESSION_SUBBUF_SHIFT_MAX),
	ARGS_NUM("subbufs-shift", 0, struct agent_args, o.cfg.chan[0].nr_subbuf_shift,
		 VMSCOPE_SESSION_NR_SHIFT_MIN, VMSCOPE_SESSION_NR_SHIFT_MAX),
	ARGS_NUM("flush-ms", 0, struct agent_args, o.cfg.flush_ms,
		 VMSCOPE_SESSION_FLUSH_MS_MIN, VMSCOPE_SESSION_FLUSH_MS_MAX),
	ARGS_NUM("sync-period", 0, struct agent_args, o.sync_ms, 1, 1000),
	ARGS_NUM("retry-ms", 0, struct agent_args, o.retry_ms, 10, 60000),
	ARGS_NUM("duration", 0, struct agent_args, o.duration_s, 1, 86400 * 365),
	ARGS_FLAG(NULL, 'v', struct agent_args, verbose),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope agent", usage, opts, 0 };

int cmd_agent(int argc, char **argv)
{
	struct agent_args args = { .cid = VMADDR_CID_HOST, .port = VMSCOPE_AGENT_PORT,
				   .o = { .sync_ms = 10, .retry_ms = 200 } };
	struct agent a = { .dev = -1, .sock = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct agent_opts o;
	int ret;

	ret = args_run(&spec, &args, argc, argv);
	if (ret >= 0)
		return ret;
	a.cid = args.cid;
	a.port = args.port;
	a.verbose = args.verbose;
	o = args.o;
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		perror("vmscope agent: pipe");
		return AGENT_EXIT_RUNTIME;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = setup(&a, &o) ? AGENT_EXIT_RUNTIME : AGENT_EXIT_OK;
	if (ret == AGENT_EXIT_OK) {
		if (run(&a, &o))
			ret = AGENT_EXIT_RUNTIME;
		finish(&a);
		fprintf(stderr, "vmscope agent: sent %llu chunks, %llu records, "
			"%llu bytes over %u connections; %llu send failures\n",
			(unsigned long long)a.chunks, (unsigned long long)a.records,
			(unsigned long long)a.bytes, a.connection,
			(unsigned long long)a.send_failures);
		for (uint32_t c = 0; c < a.cfg.nr_cpu_ids; c++)
			if (a.cpus[c].map && a.cpus[c].lost_total)
				fprintf(stderr, "vmscope agent: cpu %u: the ring "
					"buffer dropped %llu events (counted in "
					"the chunks' lost_before)\n", c,
					(unsigned long long)a.cpus[c].lost_total);
	}
	if (a.sock >= 0)
		close(a.sock);
	if (a.cpus)
		for (uint32_t c = 0; c < a.cfg.nr_cpu_ids; c++)
			if (a.cpus[c].map)
				munmap((void *)a.cpus[c].map, a.cfg.chan[0].cpu_stride);
	agent_hello_free(&a);
	free(a.cpus);
	free(a.frame);
	if (a.dev >= 0)
		close(a.dev);
	return ret;
}
