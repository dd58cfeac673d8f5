/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vmscoped: owns the tracing sessions of libvirt domains (sessions.h),
 * answers the hook and `vmscope daemon|session` on a root-only socket
 * (proto.h). One thread, one poll loop: the listening socket, clients
 * that have connected, a signalfd (SIGCHLD, SIGTERM, SIGINT) and a 200 ms
 * tick. A request is answered at once; recorders and merges are child
 * processes whose ends the loop notices.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <linux/vm_sockets.h>
#include <vmscope/agent_port.h>
#include <vmscope/version.h>

#include "dmlog.h"
#include "domrun.h"
#include "proto.h"
#include "sessions.h"
#include "util_clock.h"
#include "util_number.h"

#define MAX_CLIENTS 16
#define CLIENT_TIMEOUT_S 2.0

void dm_log(const char *fmt, ...)
{
	va_list ap;

	fputs("vmscoped: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/*
 * The guest agents' port, for every recording (sessions.h): a non-blocking
 * listener, or -1 (no vsock transport yet: vhost_vsock not loaded; the
 * caller retries). @loud: say why it failed (the first try only).
 */
static int vsock_listen(uint32_t port, int loud)
{
	struct sockaddr_vm a = { .svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_ANY,
				 .svm_port = port };
	int fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) && !listen(fd, 16)) {
		dm_log("guest agents: listening on vsock port %u", port);
		return fd;
	}
	if (loud)
		dm_log("guest agents: cannot listen on vsock port %u: %s (retried every "
		       "10 s; until then no guest events are recorded)", port, strerror(errno));
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Every pending agent connection to its domain's recorder, or closed. */
static void hand_over(struct sessions *ss, int vfd)
{
	struct sockaddr_vm peer;
	socklen_t plen = sizeof(peer);
	char msg[256];
	int c;

	while ((c = accept4(vfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC)) >= 0) {
		ss_handoff(ss, c, peer.svm_cid, msg, sizeof(msg));
		dm_log("%s", msg);
		close(c);
		plen = sizeof(peer);
	}
}

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscoped [--socket PATH] [--state-dir DIR] [--pid-dir DIR]\n"
		"                [--vmscope PATH] [--stop-timeout SECONDS] [--guest-port P]\n\n"
		"The vmscope daemon: traces libvirt domains that opted in (the hook\n"
		"/etc/libvirt/hooks/qemu.d/vmscope tells it when they start and stop) and\n"
		"those `vmscope session start` names. Each trace goes to\n"
		"OUTPUT/DOMAIN/START-TIME/ (OUTPUT: the domain's output option, default\n"
		"STATE/traces), recorded by `vmscope record` and merged by `vmscope merge`\n"
		"when the domain stops. Runs in the foreground, logs to stderr.\n\n"
		"  --socket PATH        control socket (default %s; its folder is\n"
		"                       created mode 0700, the socket is 0600, root only)\n"
		"  --state-dir DIR      default /var/lib/vmscope (registry in DIR/active)\n"
		"  --pid-dir DIR        libvirt's QEMU pid files (default /run/libvirt/qemu)\n"
		"  --vmscope PATH       the vmscope command (default %s)\n"
		"  --stop-timeout S     a recorder that does not stop in S seconds after\n"
		"                       SIGTERM is killed (default 60)\n"
		"  --guest-port P       vsock port the guest agents connect to (default\n"
		"                       %d): the daemon listens there and hands each\n"
		"                       connection to the recorder of the domain with the\n"
		"                       peer's vsock CID, so that domains are recorded\n"
		"                       side by side\n",
		DM_SOCKET_DEFAULT, VMSCOPE_BINDIR "/vmscope", VMSCOPE_AGENT_PORT);
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[sizeof(a.sun_path)], *slash;
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		dm_log("socket path too long: %s", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST) {
			dm_log("mkdir %s: %s", dir, strerror(errno));
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	/* a socket that answers belongs to a running daemon: never steal it */
	if (!lstat(path, &st) && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

		if (probe >= 0 && !connect(probe, (struct sockaddr *)&a, sizeof(a))) {
			dm_log("another vmscoped listens on %s", path);
			close(probe);
			close(fd);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	mode_t old = umask(0077);
	int e = bind(fd, (struct sockaddr *)&a, sizeof(a));

	umask(old);
	if (e || chmod(path, 0600) || listen(fd, MAX_CLIENTS)) {
		dm_log("listening on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

struct client {
	int fd;
	double since;
};

static void answer(int fd, Vmscope__Daemon__Response *r)
{
	static uint8_t buf[DM_MSG_MAX];
	size_t n = vmscope__daemon__response__get_packed_size(r);

	if (n > sizeof(buf)) {
		dm_log("response of %zu bytes too long; sent without sessions", n);
		r->n_sessions = 0;
		n = vmscope__daemon__response__get_packed_size(r);
	}
	vmscope__daemon__response__pack(r, buf);
	if (send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		dm_log("answering a client: %s", strerror(errno));
}

static void handle(struct sessions *ss, int fd, int stopping)
{
	static Vmscope__Daemon__Session store[SS_MAX], *vec[SS_MAX];
	static Vmscope__Daemon__Domain dstore[SS_MAX];
	static uint8_t buf[DM_MSG_MAX + 1];
	Vmscope__Daemon__Response r = VMSCOPE__DAEMON__RESPONSE__INIT;
	struct dm_req q;
	char msg[PATH_MAX + 256] = "", why[200];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	if (n <= 0)	/* nothing, or a peer that only connected (a probe) */
		return;
	r.daemon_pid = (uint32_t)getpid();
	r.version = VMSCOPE_VERSION_STRING;
	r.message = msg;
	if (dm_req_parse(buf, (size_t)n, &q, why, sizeof(why))) {
		r.status = EINVAL;
		snprintf(msg, sizeof(msg), "bad request: %s", why);
		dm_log("%s", msg);
		answer(fd, &r);
		return;
	}
	switch (q.op) {
	case DM_STATUS:
		snprintf(msg, sizeof(msg), "vmscoped %s, pid %d, %u active session%s%s",
			 VMSCOPE_VERSION_STRING, (int)getpid(), ss_active(ss),
			 ss_active(ss) == 1 ? "" : "s", stopping ? ", stopping" : "");
		break;
	case DM_LIST:
		ss_describe(ss, &r, vec, store, dstore);
		snprintf(msg, sizeof(msg), "%u session%s", ss->n, ss->n == 1 ? "" : "s");
		break;
	case DM_HOOK:
		dm_log("%s: hook %s", q.dom.name, dm_hook_name(q.hook));
		if (q.hook == DM_HOOK_STOPPED || q.hook == DM_HOOK_RELEASE) {
			if (ss_stop(ss, q.dom.name, msg, sizeof(msg)))
				snprintf(msg, sizeof(msg), "%s: nothing recording", q.dom.name);
			break;
		}
		if (q.hook == DM_HOOK_RECONNECT) {
			/* libvirtd restarted: a session that still records goes on */
			for (unsigned int i = 0; i < ss->n; i++)
				if (!strcmp(ss->s[i].dom.name, q.dom.name) &&
				    ss->s[i].state == SS_RECORDING) {
					snprintf(msg, sizeof(msg), "%s: still recording into %s",
						 q.dom.name, ss->s[i].dir);
					goto out;
				}
		}
		/* started, or reconnect to a domain not recorded */
		__attribute__((fallthrough));
	case DM_START:
		if (stopping) {
			r.status = ESHUTDOWN;
			snprintf(msg, sizeof(msg), "%s: not traced, the daemon is stopping",
				 q.dom.name);
		} else if (ss_start(ss, &q.dom, q.pid, msg, sizeof(msg))) {
			r.status = EAGAIN;
			dm_log("%s", msg);
		}
		break;
	case DM_STOP:
		if (ss_stop(ss, q.dom.name, msg, sizeof(msg)))
			r.status = ENOENT;
		break;
	}
out:
	answer(fd, &r);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "pid-dir", required_argument, NULL, 'p' },
		{ "vmscope", required_argument, NULL, 'v' },
		{ "stop-timeout", required_argument, NULL, 't' },
		{ "guest-port", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct sessions ss;
	static char default_output[PATH_MAX];
	struct dm_cfg cfg = {
		.state_dir = "/var/lib/vmscope",
		.pid_dir = VD_RUN_DIR,
		.vmscope = VMSCOPE_BINDIR "/vmscope",
		.stop_timeout_s = 60,
	};
	const char *sock = DM_SOCKET_DEFAULT;
	struct client cl[MAX_CLIENTS];
	unsigned int ncl = 0;
	int opt, lfd, sfd, vfd = -1, stopping = 0;
	unsigned long long guest_port = VMSCOPE_AGENT_PORT;
	double vsock_retry = 0;
	sigset_t mask;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': sock = optarg; break;
		case 'd': cfg.state_dir = optarg; break;
		case 'p': cfg.pid_dir = optarg; break;
		case 'v': cfg.vmscope = optarg; break;
		case 't': {
			char *end;

			cfg.stop_timeout_s = strtod(optarg, &end);
			if (*end || end == optarg || !(cfg.stop_timeout_s > 0 &&
						       cfg.stop_timeout_s < 86400)) {
				fprintf(stderr, "vmscoped: --stop-timeout: seconds, 0 to 86400\n");
				return 2;
			}
			break;
		}
		case 'g':
			if (util_parse_ull(optarg, 0, 0xfffffffeull, &guest_port)) {
				fprintf(stderr, "vmscoped: --guest-port: a vsock port number\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vmscoped: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (cfg.state_dir[0] != '/' || access(cfg.vmscope, X_OK)) {
		fprintf(stderr, "vmscoped: --state-dir must be absolute and --vmscope (%s) "
			"executable\n", cfg.vmscope);
		return 2;
	}
	snprintf(default_output, sizeof(default_output), "%s/traces", cfg.state_dir);
	cfg.default_output = default_output;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	lfd = listen_on(sock);
	if (sfd < 0 || lfd < 0)
		return 1;
	ss_init(&ss, &cfg);
	dm_log("listening on %s (pid %d, version %s)", sock, (int)getpid(),
	       VMSCOPE_VERSION_STRING);
	ss_recover(&ss);

	for (;;) {
		struct pollfd p[3 + MAX_CLIENTS];
		struct signalfd_siginfo si;

		if (vfd < 0 && util_mono_s() >= vsock_retry) {
			vfd = vsock_listen((uint32_t)guest_port, vsock_retry == 0);
			vsock_retry = util_mono_s() + 10;
		}
		p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		for (unsigned int i = 0; i < ncl; i++)
			p[2 + i] = (struct pollfd){ .fd = cl[i].fd, .events = POLLIN };
		p[2 + ncl] = (struct pollfd){ .fd = vfd, .events = POLLIN };
		poll(p, 3 + ncl, 200);
		if (p[2 + ncl].revents & POLLIN)
			hand_over(&ss, vfd);
		while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo != SIGCHLD && !stopping) {
				stopping = 1;
				dm_log("signal %u: stopping every session, then exiting",
				       si.ssi_signo);
				ss_stop_all(&ss);
			}
		}
		for (unsigned int i = 0; i < ncl; i++) {
			if (p[2 + i].revents & POLLIN)
				handle(&ss, cl[i].fd, stopping);
			if (p[2 + i].revents || util_mono_s() - cl[i].since > CLIENT_TIMEOUT_S) {
				close(cl[i].fd);
				cl[i].fd = -1;
			}
		}
		unsigned int kept = 0;

		for (unsigned int i = 0; i < ncl; i++)
			if (cl[i].fd >= 0)
				cl[kept++] = cl[i];
		ncl = kept;
		if (p[0].revents & POLLIN) {
			int c;

			while (ncl < MAX_CLIENTS &&
			       (c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
				struct ucred uc;
				socklen_t l = sizeof(uc);

				/* the file mode already says root only; the peer's
				 * credentials say it again */
				if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &uc, &l) ||
				    uc.uid != geteuid()) {
					close(c);
					continue;
				}
				cl[ncl++] = (struct client){ .fd = c, .since = util_mono_s() };
			}
		}
		ss_tick(&ss);
		if (stopping && !ss_active(&ss))
			break;
	}
	unlink(sock);
	dm_log("stopped: every session finalized");
	return 0;
}
