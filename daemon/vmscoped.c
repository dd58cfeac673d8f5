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
#include "metrics_feed.h"
#include "metrics_http.h"
#include "proto.h"
#include "rec_args.h"
#include "sessions.h"
#include "snapshots.h"
#include "util_args.h"
#include "util_clock.h"
#include "util_number.h"

/* clients served at once; more wait in the listening socket's queue */
#define MAX_CLIENTS 64
/* the listening socket's queue: a host starting its domains together
 * calls the hook for each at once */
#define LISTEN_QUEUE 256
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
		"                [--vmscope PATH] [--stop-timeout SECONDS] [--guest-port P]\n"
		"                [--metrics [ADDR:]PORT [--trigger-exit-us N]\n"
		"                [--trigger-stall-us N] [--trigger-interval S]\n"
		"                [--snapshot-before-ms N] [--snapshot-after-ms N]\n"
		"                [--snapshot-cap-mb N] [--snapshot-quota-mb N]]\n\n"
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
		"                       side by side\n"
		"  --metrics [ADDR:]PORT  serve /metrics (Prometheus text format) over\n"
		"                       HTTP on ADDR (numeric; default 127.0.0.1, [::1]\n"
		"                       for IPv6): each recorded domain's exits, exit\n"
		"                       latency and vCPU time, from its recorder's\n"
		"                       live pipeline (`vmscope record --metrics-fd`);\n"
		"                       off by default\n"
		"  --trigger-exit-us N  with --metrics: a domain's exit that is not a halt\n"
		"                       longer than N microseconds is a trigger: logged,\n"
		"                       counted (vmscope_triggers_total) and, admitted by\n"
		"                       the rate limit, saved: the domain's recorder\n"
		"                       writes the seconds around it as a trace in\n"
		"                       STATE/snapshots/DOMAIN/TIME/ (logged, counted in\n"
		"                       vmscope_snapshots_total)\n"
		"  --trigger-stall-us N  with --metrics: the same for a guest-thread stall\n"
		"                       (its vCPU thread off its host CPU); both, and the\n"
		"                       window's sizes below, are defaults: a domain's\n"
		"                       <vmscope:trace> may set its own\n"
		"  --trigger-interval S  at most one trigger per domain per S seconds\n"
		"                       (default 60); the others are counted\n"
		"                       (vmscoped_triggers_suppressed_total)\n"
		"  --snapshot-before-ms N, --snapshot-after-ms N  a snapshot holds N ms\n"
		"                       before the trigger's start (default %llu) and\n"
		"                       after its end (default %llu)\n"
		"  --snapshot-cap-mb N  a recorder keeps at most N MiB per stream for\n"
		"                       them (default %llu)\n"
		"  --snapshot-quota-mb N  every domain's snapshots together take at most\n"
		"                       N MiB on disk, the oldest removed first (default\n"
		"                       %llu)\n",
		DM_SOCKET_DEFAULT, VMSCOPE_BINDIR "/vmscope", VMSCOPE_AGENT_PORT,
		OL_SNAP_DEFAULT_BEFORE_NS / 1000000ull, OL_SNAP_DEFAULT_AFTER_NS / 1000000ull,
		OL_SNAP_DEFAULT_CAP >> 20, DM_SNAP_QUOTA_MB);
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
	if (e || chmod(path, 0600) || listen(fd, LISTEN_QUEUE)) {
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

/* Send @r to the client on @fd: 0, or -1 when it was not sent (said). */
static int answer(int fd, Vmscope__Daemon__Response *r)
{
	static uint8_t buf[DM_MSG_MAX];
	size_t n = vmscope__daemon__response__get_packed_size(r);

	if (n > sizeof(buf)) {
		dm_log("response of %zu bytes too long; sent without sessions", n);
		r->n_sessions = 0;
		n = vmscope__daemon__response__get_packed_size(r);
	}
	vmscope__daemon__response__pack(r, buf);
	if (send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
		return 0;
	dm_log("answering a client: %s", strerror(errno));
	return -1;
}

/* Whether the client on @fd has closed its end: it stopped waiting. */
static int client_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLRDHUP };

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * Start @q's domain for the client on @fd, and answer. A client that
 * stopped waiting (the hook's budget is short, and many domains starting
 * at once queue their hooks) has told its caller the domain is not
 * traced: a request read after that starts nothing, and a session
 * started while its client gave up is stopped, so that what the hook
 * said holds.
 */
static void start_and_answer(struct sessions *ss, int fd, const struct dm_req *q, int stopping,
			     Vmscope__Daemon__Response *r, char *msg, size_t msglen)
{
	if (client_gone(fd)) {
		dm_log("%s: its client stopped waiting before the request was read: not started",
		       q->dom.name);
		return;
	}
	if (stopping) {
		r->status = ESHUTDOWN;
		snprintf(msg, msglen, "%s: not traced, the daemon is stopping", q->dom.name);
	} else if (ss_start(ss, &q->dom, q->pid, msg, msglen)) {
		r->status = EAGAIN;
		dm_log("%s", msg);
	}
	if (answer(fd, r) && !r->status)
		ss_stop(ss, q->dom.name, "its client stopped waiting for the answer", msg, msglen);
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
			if (ss_stop(ss, q.dom.name, "its domain stopped", msg, sizeof(msg)))
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
		start_and_answer(ss, fd, &q, stopping, &r, msg, sizeof(msg));
		return;
	case DM_STOP:
		if (ss_stop(ss, q.dom.name, "stop requested", msg, sizeof(msg)))
			r.status = ENOENT;
		break;
	}
out:
	answer(fd, &r);
}

/* The daemon's descriptors and clients, for one poll loop. */
struct daemon {
	struct sessions ss;
	int lfd, sfd, vfd;		/* control socket, signalfd, vsock (-1) */
	uint32_t guest_port;
	double vsock_retry;		/* when to try the vsock listener again */
	struct client cl[MAX_CLIENTS];
	unsigned int ncl;
	int stopping;
};

/* What the command line sets: the daemon's configuration, its socket, vsock port and /metrics. */
struct daemon_args {
	struct dm_cfg cfg;
	const char *sock;
	unsigned long long guest_port;
	struct sockaddr_storage metrics;	/* ss_family 0: off */
	unsigned long long trigger_exit_us, trigger_stall_us, trigger_interval_s;
	unsigned long long snap_quota_mb;
};

/* --stop-timeout S: args_value_fn. */
static int take_stop_timeout(void *args, const char *arg)
{
	struct daemon_args *a = args;
	char *end;

	a->cfg.stop_timeout_s = strtod(arg, &end);
	if (*end || end == arg || !(a->cfg.stop_timeout_s > 0 && a->cfg.stop_timeout_s < 86400)) {
		fprintf(stderr, "vmscoped: --stop-timeout: seconds, 0 to 86400\n");
		return ARGS_EXIT_USAGE;
	}
	return 0;
}

/* --metrics [ADDR:]PORT: args_value_fn. */
static int take_metrics(void *args, const char *arg)
{
	struct daemon_args *a = args;
	char why[160];

	if (mh_parse_addr(arg, &a->metrics, why, sizeof(why))) {
		fprintf(stderr, "vmscoped: --metrics %s\n", why);
		return ARGS_EXIT_USAGE;
	}
	return 0;
}

static const struct args_opt opts[] = {
	ARGS_STR("socket", 0, struct daemon_args, sock),
	ARGS_STR("state-dir", 0, struct daemon_args, cfg.state_dir),
	ARGS_STR("pid-dir", 0, struct daemon_args, cfg.pid_dir),
	ARGS_STR("vmscope", 0, struct daemon_args, cfg.vmscope),
	ARGS_FN("stop-timeout", 0, take_stop_timeout),
	ARGS_NUM("guest-port", 0, struct daemon_args, guest_port, 0, 0xfffffffeull),
	ARGS_FN("metrics", 0, take_metrics),
	/* as `vmscope record` takes them (rec_args.h); an interval of at
	 * most a day: anything longer is a typo */
	ARGS_NUM("trigger-exit-us", 0, struct daemon_args, trigger_exit_us, 1, REC_TRIGGER_US_MAX),
	ARGS_NUM("trigger-stall-us", 0, struct daemon_args, trigger_stall_us, 1,
		 REC_TRIGGER_US_MAX),
	ARGS_NUM("trigger-interval", 0, struct daemon_args, trigger_interval_s, 0, 86400),
	ARGS_NUM("snapshot-before-ms", 0, struct daemon_args, cfg.snap.before_ms, 0,
		 REC_SNAP_MS_MAX),
	ARGS_NUM("snapshot-after-ms", 0, struct daemon_args, cfg.snap.after_ms, 0,
		 REC_SNAP_MS_MAX),
	ARGS_NUM("snapshot-cap-mb", 0, struct daemon_args, cfg.snap.cap_mb, 1, 65536),
	ARGS_NUM("snapshot-quota-mb", 0, struct daemon_args, snap_quota_mb, 1, 1ull << 30),
	ARGS_END,
};

/* The command line into @a (defaults set): -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct daemon_args *a)
{
	static const struct args_spec spec = { "vmscoped", usage, opts, 0 };
	int rc = args_run(&spec, a, argc, argv);

	if (rc >= 0)
		return rc;
	if (a->cfg.state_dir[0] != '/' || access(a->cfg.vmscope, X_OK)) {
		fprintf(stderr, "vmscoped: --state-dir must be absolute and --vmscope (%s) "
			"executable\n", a->cfg.vmscope);
		return ARGS_EXIT_USAGE;
	}
	/* the triggers are found by the recorders' live pipeline, which runs
	 * for the metrics feed */
	if (!a->metrics.ss_family && (a->trigger_exit_us || a->trigger_stall_us)) {
		fprintf(stderr, "vmscoped: --trigger-exit-us and --trigger-stall-us go with "
			"--metrics\n");
		return ARGS_EXIT_USAGE;
	}
	a->cfg.trigger.exit_ns = a->trigger_exit_us * 1000u;
	a->cfg.trigger.stall_ns = a->trigger_stall_us * 1000u;
	a->cfg.trigger.min_gap_s = (double)a->trigger_interval_s;
	a->cfg.snap.quota_bytes = a->snap_quota_mb << 20;
	return -1;
}

/* SIGCHLD is the sessions' (ss_tick reaps); any other stops every session once. */
static void read_signals(struct daemon *d)
{
	struct signalfd_siginfo si;

	while (read(d->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGCHLD && !d->stopping) {
			d->stopping = 1;
			dm_log("signal %u: stopping every session, then exiting", si.ssi_signo);
			ss_stop_all(&d->ss);
		}
	}
}

/* Each client's one request (@p: their poll results), then it is closed. */
static void serve_clients(struct daemon *d, const struct pollfd *p)
{
	unsigned int kept = 0;

	for (unsigned int i = 0; i < d->ncl; i++) {
		if (p[i].revents & POLLIN)
			handle(&d->ss, d->cl[i].fd, d->stopping);
		if (p[i].revents || util_mono_s() - d->cl[i].since > CLIENT_TIMEOUT_S) {
			close(d->cl[i].fd);
			d->cl[i].fd = -1;
		}
	}
	for (unsigned int i = 0; i < d->ncl; i++)
		if (d->cl[i].fd >= 0)
			d->cl[kept++] = d->cl[i];
	d->ncl = kept;
}

static void accept_clients(struct daemon *d)
{
	int c;

	while (d->ncl < MAX_CLIENTS &&
	       (c = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct ucred uc;
		socklen_t l = sizeof(uc);

		/* the file mode already says root only; the peer's
		 * credentials say it again */
		if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &uc, &l) || uc.uid != geteuid()) {
			close(c);
			continue;
		}
		d->cl[d->ncl++] = (struct client){ .fd = c, .since = util_mono_s() };
	}
}

/* The recorders' metrics feeds into @p: how many. */
static unsigned int poll_feeds(const struct daemon *d, struct pollfd *p)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < d->ss.n; i++)
		if (d->ss.s[i].metrics_fd >= 0)
			p[n++] = (struct pollfd){ .fd = d->ss.s[i].metrics_fd, .events = POLLIN };
	return n;
}

/* Each feed @p says is readable, found by its fd (before anything can
 * move the sessions). */
static void read_feeds(struct daemon *d, const struct pollfd *p, unsigned int n)
{
	for (unsigned int k = 0; k < n; k++) {
		if (!p[k].revents)
			continue;
		for (unsigned int i = 0; i < d->ss.n; i++)
			if (d->ss.s[i].metrics_fd == p[k].fd)
				mf_session_read(&d->ss, &d->ss.s[i]);
	}
}

/* Until a signal stopped every session and the last one is finalized. */
static void serve(struct daemon *d)
{
	for (;;) {
		struct pollfd p[3 + MAX_CLIENTS + SS_MAX];
		unsigned int nf;

		if (d->vfd < 0 && util_mono_s() >= d->vsock_retry) {
			d->vfd = vsock_listen(d->guest_port, d->vsock_retry == 0);
			d->vsock_retry = util_mono_s() + 10;
		}
		p[0] = (struct pollfd){ .fd = d->lfd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = d->sfd, .events = POLLIN };
		for (unsigned int i = 0; i < d->ncl; i++)
			p[2 + i] = (struct pollfd){ .fd = d->cl[i].fd, .events = POLLIN };
		p[2 + d->ncl] = (struct pollfd){ .fd = d->vfd, .events = POLLIN };
		nf = poll_feeds(d, p + 3 + d->ncl);
		poll(p, 3 + d->ncl + nf, 200);
		read_feeds(d, p + 3 + d->ncl, nf);
		if (p[2 + d->ncl].revents & POLLIN)
			hand_over(&d->ss, d->vfd);
		read_signals(d);
		serve_clients(d, p + 2);
		if (p[0].revents & POLLIN)
			accept_clients(d);
		ss_tick(&d->ss);
		if (d->stopping && !ss_active(&d->ss))
			break;
	}
}

int main(int argc, char **argv)
{
	static struct daemon d = { .vfd = -1 };
	static char default_output[PATH_MAX];
	static struct daemon_args a = {
		.cfg = {
			.state_dir = "/var/lib/vmscope",
			.pid_dir = VD_RUN_DIR,
			.vmscope = VMSCOPE_BINDIR "/vmscope",
			.stop_timeout_s = 60,
			.snap = { .before_ms = OL_SNAP_DEFAULT_BEFORE_NS / 1000000ull,
				  .after_ms = OL_SNAP_DEFAULT_AFTER_NS / 1000000ull,
				  .cap_mb = OL_SNAP_DEFAULT_CAP >> 20 },
		},
		.sock = DM_SOCKET_DEFAULT,
		.guest_port = VMSCOPE_AGENT_PORT,
		.trigger_interval_s = (unsigned long long)TG_DEFAULT_MIN_GAP_S,
		.snap_quota_mb = DM_SNAP_QUOTA_MB,
	};
	static char snap_root[PATH_MAX];
	struct dm_cfg *cfg = &a.cfg;
	static struct mstore store;
	struct mh_server *http = NULL;
	sigset_t mask;
	int rc;

	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	d.guest_port = (uint32_t)a.guest_port;
	snprintf(default_output, sizeof(default_output), "%s/traces", cfg->state_dir);
	cfg->default_output = default_output;
	snprintf(snap_root, sizeof(snap_root), "%s/snapshots", cfg->state_dir);
	cfg->snap.root = snap_root;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	d.lfd = listen_on(a.sock);
	if (d.sfd < 0 || d.lfd < 0)
		return 1;
	if (a.metrics.ss_family) {
		char why[200];

		ms_init(&store);
		http = mh_start(&a.metrics, &store, why, sizeof(why));
		if (!http) {
			dm_log("--metrics: %s", why);
			unlink(a.sock);
			return 1;
		}
		cfg->metrics = &store;
		dm_log("metrics: serving /metrics on port %u", (unsigned int)mh_port(http));
	}
	ss_init(&d.ss, cfg);
	dm_log("listening on %s (pid %d, version %s)", a.sock, (int)getpid(),
	       VMSCOPE_VERSION_STRING);
	ss_recover(&d.ss);
	serve(&d);
	mh_stop(http);
	unlink(a.sock);
	dm_log("stopped: every session finalized");
	return 0;
}
