/* SPDX-License-Identifier: GPL-2.0 */
/* vmscoped's sessions: see sessions.h for the folders, states and rules. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "dmlog.h"
#include "domrun.h"
#include "metrics_feed.h"
#include "spawn.h"
#include "sessions.h"
#include "snapshots.h"
#include "vms.h"
#include "util_clock.h"
#include "util_fs.h"

static const char *const state_names[] = {
	[SS_PENDING] = "pending", [SS_RECORDING] = "recording", [SS_STOPPING] = "stopping",
	[SS_MERGING] = "merging", [SS_DONE] = "done", [SS_FAILED] = "failed",
};

const char *ss_state_name(enum ss_state st)
{
	return state_names[st];
}

/* @src into @dst, cut to fit (messages and names known to fit) */
static void cut(char *dst, size_t cap, const char *src)
{
	size_t l = strnlen(src, cap - 1);

	memcpy(dst, src, l);
	dst[l] = '\0';
}

static int is_active(const struct session *s)
{
	return s->state != SS_DONE && s->state != SS_FAILED;
}

/* a recorder process is alive for @s (ours or a predecessor's) */
static int has_recorder(const struct session *s)
{
	return (s->state == SS_RECORDING || s->state == SS_STOPPING) && s->child > 0;
}

/* Does domain @name have a recorder alive (a restart waits for it)? */
static int domain_has_recorder(const struct sessions *ss, const char *name)
{
	for (unsigned int i = 0; i < ss->n; i++)
		if (has_recorder(&ss->s[i]) && !strcmp(ss->s[i].dom.name, name))
			return 1;
	return 0;
}

unsigned int ss_active(const struct sessions *ss)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < ss->n; i++)
		n += is_active(&ss->s[i]);
	return n;
}

void ss_init(struct sessions *ss, const struct dm_cfg *cfg)
{
	memset(ss, 0, sizeof(*ss));
	ss->cfg = cfg;
}

/* ---- files ---- */

/* One file per session, named by its start time: a domain's restarted
 * session and the one still finalizing each have their own. */
static void registry_path(const struct sessions *ss, const struct session *s, char *out,
			  size_t len)
{
	snprintf(out, len, "%s/active/%020" PRIu64, ss->cfg->state_dir, s->start_ns);
}

/* STATE/active/START_NS: "DIR\nRECORDER_PID\nDOMAIN\n" */
static void registry_write(struct sessions *ss, const struct session *s)
{
	char path[PATH_MAX], dir[PATH_MAX], text[SS_DIR_MAX + VD_NAME_MAX + 32];
	int e;

	snprintf(dir, sizeof(dir), "%s/active", ss->cfg->state_dir);
	registry_path(ss, s, path, sizeof(path));
	snprintf(text, sizeof(text), "%s\n%d\n%s\n", s->dir,
		 (int)(s->state == SS_RECORDING ? s->child : 0), s->dom.name);
	e = util_mkdir_p(dir, 0700);
	if (!e)
		e = util_write_file(path, text);
	if (e)
		dm_log("%s: cannot write %s: %s (a daemon crash now would leave this trace "
		       "unmerged)", s->dom.name, path, strerror(-e));
}

static void registry_remove(struct sessions *ss, const struct session *s)
{
	char path[PATH_MAX];

	registry_path(ss, s, path, sizeof(path));
	unlink(path);
}

/* The last line of @path holding @needle (or the last line), into @out. */
static void last_line(const char *path, const char *needle, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	char line[512];

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (line[0] && (!needle || strstr(line, needle)))
			cut(out, len, line);
	}
	fclose(f);
}

/* ---- children ---- */

static void launch_recorder(struct sessions *ss, struct session *s)
{
	const struct vd_opts *o = &s->dom.opts;
	char pid[16], cid[16], buf[32], dur[32], out[PATH_MAX], log[PATH_MAX];
	struct sp_argbuf sb;
	const char *argv[40];
	int pair[2] = { -1, -1 }, child_fd[2];
	unsigned int n = 0;

	snprintf(pid, sizeof(pid), "%d", (int)s->qemu_pid);
	snprintf(out, sizeof(out), "%s/trace", s->dir);
	snprintf(log, sizeof(log), "%s/record.log", s->dir);
	argv[n++] = ss->cfg->vmscope;
	argv[n++] = "record";
	argv[n++] = "--pid";
	argv[n++] = pid;
	if (s->dom.cid) {
		snprintf(cid, sizeof(cid), "%u", s->dom.cid);
		argv[n++] = "--cid";
		argv[n++] = cid;
	}
	if (o->events[0]) {
		argv[n++] = "--events";
		argv[n++] = o->events;
	}
	if (o->mode != VD_MODE_DEFAULT) {
		argv[n++] = "--mode";
		argv[n++] = o->mode == VD_MODE_FLIGHT ? "flight" : "discard";
	}
	if (o->buffer_size) {
		snprintf(buf, sizeof(buf), "%llu", o->buffer_size);
		argv[n++] = "--buffer-size";
		argv[n++] = buf;
	}
	if (o->duration_s > 0) {
		snprintf(dur, sizeof(dur), "%.3f", o->duration_s);
		argv[n++] = "--duration";
		argv[n++] = dur;
	}
	/* the agents' connections come from the daemon's vsock listener
	 * (ss_handoff): every recording shares the agents' port */
	if (s->dom.cid && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) == 0) {
		argv[n++] = "--guest-handoff";
		argv[n++] = "3";
	}
	child_fd[0] = pair[1];
	child_fd[1] = mf_session_pair(ss, s);
	if (child_fd[1] >= 0) {
		argv[n++] = "--metrics-fd";
		argv[n++] = "4";
		sp_start(ss->cfg, s);
		n += sp_args(ss->cfg, s, argv + n, &sb);
	} else {
		sp_no_feed(ss->cfg, s);
	}
	argv[n++] = "-o";
	argv[n++] = out;
	argv[n] = NULL;
	s->child = dm_spawn(argv, log, child_fd);
	for (int i = 0; i < 2; i++)
		if (child_fd[i] >= 0)
			close(child_fd[i]);
	if (s->child > 0)
		s->handoff_fd = pair[0];
	else if (pair[0] >= 0)
		close(pair[0]);
	if (s->child < 0) {
		s->child = 0;
		mf_session_end(ss, s, true);
		s->state = SS_FAILED;
		snprintf(s->detail, sizeof(s->detail), "fork: %s", strerror(errno));
		registry_remove(ss, s);
		dm_log("%s: not recorded: %s", s->dom.name, s->detail);
		return;
	}
	s->state = SS_RECORDING;
	snprintf(s->detail, sizeof(s->detail), "recorder pid %d, QEMU pid %d, cid %u",
		 (int)s->child, (int)s->qemu_pid, s->dom.cid);
	registry_write(ss, s);
	dm_log("%s: recording (QEMU pid %d, vsock cid %u) into %s", s->dom.name,
	       (int)s->qemu_pid, s->dom.cid, s->dir);
}

static void launch_merge(struct sessions *ss, struct session *s)
{
	char in[PATH_MAX], out[PATH_MAX], log[PATH_MAX], old[PATH_MAX + 32];
	const char *argv[6];
	struct stat st;

	snprintf(in, sizeof(in), "%s/trace", s->dir);
	snprintf(out, sizeof(out), "%s/merged", s->dir);
	snprintf(log, sizeof(log), "%s/merge.log", s->dir);
	/* a merge a crashed daemon left half done: set aside, merged again */
	if (!stat(out, &st)) {
		snprintf(old, sizeof(old), "%s.incomplete-%ld", out, (long)time(NULL));
		rename(out, old);
	}
	argv[0] = ss->cfg->vmscope;
	argv[1] = "merge";
	argv[2] = in;
	argv[3] = "-o";
	argv[4] = out;
	argv[5] = NULL;
	s->adopted = 0;
	s->child = dm_spawn(argv, log, (const int[2]){ -1, -1 });
	if (s->child < 0)
		s->child = 0;
	s->state = SS_MERGING;
}

/* The session's end: summary.txt, fsync, registry entry gone, log line. */
static void finalize(struct sessions *ss, struct session *s, int merge_status)
{
	char path[PATH_MAX], rec[256], merge[256], line[SS_DIR_MAX + 1024];

	snprintf(path, sizeof(path), "%s/record.log", s->dir);
	last_line(path, " events, ", rec, sizeof(rec));
	if (!rec[0])
		last_line(path, NULL, rec, sizeof(rec));
	snprintf(path, sizeof(path), "%s/merge.log", s->dir);
	last_line(path, NULL, merge, sizeof(merge));
	if (merge_status == 0)
		snprintf(line, sizeof(line), "%s: trace finalized in %s: %s; merged", s->dom.name,
			 s->dir, rec[0] ? rec : "(record printed no summary)");
	else
		snprintf(line, sizeof(line), "%s: trace finalized in %s: %s; merge FAILED "
			 "(status %d: %s), the recording is in trace/", s->dom.name, s->dir,
			 rec[0] ? rec : "(record printed no summary)", merge_status, merge);
	snprintf(path, sizeof(path), "%s/trace", s->dir);
	util_fsync_dir_files(path);
	snprintf(path, sizeof(path), "%s/merged", s->dir);
	util_fsync_dir_files(path);
	snprintf(path, sizeof(path), "%s/summary.txt", s->dir);
	strcat(line, "\n");
	if (util_write_file(path, line))
		dm_log("%s: cannot write %s", s->dom.name, path);
	line[strlen(line) - 1] = '\0';
	registry_remove(ss, s);
	s->state = merge_status == 0 ? SS_DONE : SS_FAILED;
	snprintf(s->detail, sizeof(s->detail), "%s", strchr(line, ':') + 2);
	dm_log("%s", line);
}

/* The recorder is gone: merge what it wrote, or fail when it wrote nothing. */
static void recorder_exited(struct sessions *ss, struct session *s, int status)
{
	char path[PATH_MAX], why[400];
	struct stat st;

	s->child = 0;
	if (s->handoff_fd >= 0)
		close(s->handoff_fd);
	s->handoff_fd = -1;
	mf_session_end(ss, s, true);
	snprintf(path, sizeof(path), "%s/trace/metadata.vtf", s->dir);
	if (!stat(path, &st)) {
		launch_merge(ss, s);
		if (!s->child)
			finalize(ss, s, -1);
		return;
	}
	snprintf(path, sizeof(path), "%s/record.log", s->dir);
	last_line(path, NULL, why, sizeof(why));
	s->state = SS_FAILED;
	snprintf(path, sizeof(path), "not recorded (record status %d): %s", status,
		 why[0] ? why : "no output");
	cut(s->detail, sizeof(s->detail), path);
	/* the session's folder says so too: a domain stopped or restarted
	 * before its recorder wrote anything still ends with a summary */
	{
		char line[SS_DIR_MAX + 1024];

		snprintf(line, sizeof(line), "%s: %s\n", s->dom.name, s->detail);
		snprintf(path, sizeof(path), "%s/summary.txt", s->dir);
		if (util_write_file(path, line))
			dm_log("%s: cannot write %s", s->dom.name, path);
	}
	registry_remove(ss, s);
	dm_log("%s: %s", s->dom.name, s->detail);
}

static void child_exited(struct sessions *ss, struct session *s, int status)
{
	if (s->state == SS_MERGING) {
		s->child = 0;
		finalize(ss, s, status);
	} else {
		recorder_exited(ss, s, status);
	}
}

static int wait_status(int w)
{
	return WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
}

static void stop_session(struct sessions *ss, struct session *s, const char *why,
			 double timeout)
{
	if (s->state == SS_PENDING) {
		s->state = SS_STOPPING;	/* never started: finalized as not recorded */
		snprintf(s->detail, sizeof(s->detail), "stopped before recording: %s", why);
		return;
	}
	if (s->state != SS_RECORDING)
		return;
	if (s->child > 0)
		kill(s->child, SIGTERM);
	mf_session_end(ss, s, false);	/* its series end with the domain */
	s->state = SS_STOPPING;
	s->deadline = util_mono_s() + timeout;
	dm_log("%s: stopping (%s)", s->dom.name, why);
}

void ss_tick(struct sessions *ss)
{
	int w;
	pid_t pid;

	while ((pid = waitpid(-1, &w, WNOHANG)) > 0)
		for (unsigned int i = 0; i < ss->n; i++)
			if (ss->s[i].child == pid && !ss->s[i].adopted)
				child_exited(ss, &ss->s[i], wait_status(w));
	for (unsigned int i = 0; i < ss->n; i++) {
		struct session *s = &ss->s[i];

		if (s->adopted && s->child > 0 && kill(s->child, 0) && errno == ESRCH) {
			s->adopted = 0;
			child_exited(ss, s, -1);
		}
		if (s->state == SS_STOPPING && !s->child) {
			/* a pending session that was stopped */
			s->state = SS_FAILED;
			registry_remove(ss, s);
			dm_log("%s: %s", s->dom.name, s->detail);
		}
		if (s->state == SS_STOPPING && s->child > 0 && util_mono_s() > s->deadline) {
			dm_log("%s: recorder %d did not stop in %.0f s: killed (what it wrote "
			       "stays readable)", s->dom.name, (int)s->child,
			       ss->cfg->stop_timeout_s);
			kill(s->child, SIGKILL);
			s->deadline = util_mono_s() + 3600;
		}
		if (s->snap_waiting)
			sp_scan(ss->cfg, s);
		/* QEMU gone without a hook (libvirtd down, kill -9): stop too */
		if (s->state == SS_RECORDING && s->qemu_pid > 0 && kill(s->qemu_pid, 0) &&
		    errno == ESRCH)
			stop_session(ss, s, "its QEMU process exited", ss->cfg->stop_timeout_s);
	}
	for (unsigned int i = 0; i < ss->n; i++) {
		struct session *s = &ss->s[i];

		if (s->state == SS_PENDING && !domain_has_recorder(ss, s->dom.name))
			launch_recorder(ss, s);
	}
}

/* ---- start / stop ---- */

/* A free slot: a new one, or the oldest finished session's. */
static struct session *slot(struct sessions *ss)
{
	unsigned int oldest = SS_MAX;

	if (ss->n < SS_MAX)
		return &ss->s[ss->n++];
	for (unsigned int i = 0; i < ss->n; i++)
		if (!is_active(&ss->s[i]) &&
		    (oldest == SS_MAX || ss->s[i].start_ns < ss->s[oldest].start_ns))
			oldest = i;
	if (oldest == SS_MAX)
		return NULL;
	memmove(&ss->s[oldest], &ss->s[oldest + 1], (ss->n - oldest - 1) * sizeof(ss->s[0]));
	return &ss->s[ss->n - 1];
}

/* OUTPUT/NAME/YYYYmmddTHHMMSSZ[-N], created (never an existing one). */
static int make_trace_dir(struct session *s, const char *base)
{
	char parent[SS_DIR_MAX - 24], stamp[20];
	time_t t = (time_t)(s->start_ns / 1000000000u);
	struct tm tm;
	int e;

	gmtime_r(&t, &tm);
	if (!strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return -EINVAL;
	if (snprintf(parent, sizeof(parent), "%s/%s", base, s->dom.name) >= (int)sizeof(parent))
		return -ENAMETOOLONG;
	if ((e = util_mkdir_p(parent, 0750)))
		return e;
	for (int n = 1; n < 100; n++) {
		if (n == 1)
			snprintf(s->dir, sizeof(s->dir), "%s/%s", parent, stamp);
		else
			snprintf(s->dir, sizeof(s->dir), "%s/%s-%d", parent, stamp, n);
		if (!mkdir(s->dir, 0750))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void write_session_txt(const struct session *s)
{
	const struct vd_opts *o = &s->dom.opts;
	char path[PATH_MAX], text[2048];

	snprintf(path, sizeof(path), "%s/session.txt", s->dir);
	snprintf(text, sizeof(text),
		 "domain %s\nuuid %s\nqemu_pid %d\nvsock_cid %u\nstart_ns %" PRIu64 "\n"
		 "events %s\nmode %s\nbuffer_size %llu\nduration_s %.3f\n",
		 s->dom.name, s->dom.uuid[0] ? s->dom.uuid : "-", (int)s->qemu_pid,
		 s->dom.cid, s->start_ns, o->events[0] ? o->events : "all",
		 o->mode == VD_MODE_FLIGHT ? "flight" : "discard", o->buffer_size,
		 o->duration_s);
	util_write_file(path, text);
}

int ss_start(struct sessions *ss, const struct vd_domain *dom, pid_t pid, char *msg,
	     size_t msglen)
{
	struct session *s, *mine = NULL;
	pid_t qemu = pid;
	int e, pending = 0;

	unsigned int others = 0;

	for (unsigned int i = 0; i < ss->n; i++) {
		struct session *o = &ss->s[i];

		if (!strcmp(o->dom.name, dom->name)) {
			if (is_active(o) && o->state != SS_MERGING)
				mine = o;
		} else {
			others += o->state == SS_PENDING || has_recorder(o);
		}
	}
	/* each recorder is one of the host module's capture sessions */
	if (others >= VMSCOPE_HOST_SESSIONS)
		return vd_why(msg, msglen, -1, "%s not traced: %u other domains are being "
			      "recorded and the host module records at most %d sessions at once",
			      dom->name, others, VMSCOPE_HOST_SESSIONS);
	if (!qemu && (e = vd_read_pid(ss->cfg->pid_dir, dom->name, &qemu)))
		return vd_why(msg, msglen, -1, "%s: no QEMU pid: %s/%s.pid: %s", dom->name,
			    ss->cfg->pid_dir, dom->name, strerror(-e));
	if (kill(qemu, 0) && errno == ESRCH)
		return vd_why(msg, msglen, -1, "%s: QEMU pid %d does not exist", dom->name, (int)qemu);
	if (mine) {
		/* a restart: the old trace ends, this is a new one */
		stop_session(ss, mine, "restarted", ss->cfg->stop_timeout_s);
	}
	/* a restart: the new recorder starts when the old one has exited */
	pending = domain_has_recorder(ss, dom->name);
	s = slot(ss);
	if (!s)
		return vd_why(msg, msglen, -1, "%s: too many sessions (%d)", dom->name, SS_MAX);
	memset(s, 0, sizeof(*s));
	s->handoff_fd = s->metrics_fd = -1;
	s->dom = *dom;
	s->qemu_pid = qemu;
	/* a CID nobody said (`session start` without --cid) is its QEMU's own,
	 * which the recorder would find and listen for on our agents' port */
	if (!s->dom.cid)
		s->dom.cid = vm_cid_of(qemu);
	s->start_ns = util_realtime_ns();
	e = make_trace_dir(s, dom->opts.output[0] ? dom->opts.output : ss->cfg->default_output);
	if (e) {
		vd_why(msg, msglen, -1, "%s: cannot create the trace folder under %s: %s", dom->name,
		     dom->opts.output[0] ? dom->opts.output : ss->cfg->default_output,
		     strerror(-e));
		s->state = SS_FAILED;
		snprintf(s->detail, sizeof(s->detail), "%s", msg);
		return -1;
	}
	write_session_txt(s);
	if (pending) {
		s->state = SS_PENDING;
		registry_write(ss, s);
		snprintf(s->detail, sizeof(s->detail), "waits for its previous recorder to end");
		dm_log("%s: pending: %s", s->dom.name, s->detail);
	} else {
		launch_recorder(ss, s);
		if (s->state == SS_FAILED)
			return vd_why(msg, msglen, -1, "%s: %s", dom->name, s->detail);
	}
	vd_why(msg, msglen, -1, "%s: %s into %s", dom->name, ss_state_name(s->state), s->dir);
	return 0;
}

int ss_stop(struct sessions *ss, const char *name, const char *why, char *msg, size_t msglen)
{
	for (unsigned int i = 0; i < ss->n; i++) {
		struct session *s = &ss->s[i];

		if (strcmp(s->dom.name, name) || (s->state != SS_RECORDING &&
						   s->state != SS_PENDING))
			continue;
		stop_session(ss, s, why, ss->cfg->stop_timeout_s);
		vd_why(msg, msglen, -1, "%s: stopping; the trace will be in %s", name, s->dir);
		return 0;
	}
	return vd_why(msg, msglen, -1, "%s: no session recording", name);
}

void ss_stop_all(struct sessions *ss)
{
	for (unsigned int i = 0; i < ss->n; i++)
		stop_session(ss, &ss->s[i], "daemon stopping", ss->cfg->stop_timeout_s);
}

/* ---- guest connections ---- */

int ss_handoff(struct sessions *ss, int fd, uint32_t cid, char *msg, size_t msglen)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	char one = 'c';
	struct iovec iov = { .iov_base = &one, .iov_len = 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;

	for (unsigned int i = 0; i < ss->n; i++) {
		struct session *s = &ss->s[i];

		if (s->state != SS_RECORDING || s->dom.cid != cid || s->handoff_fd < 0)
			continue;
		memset(&ctl, 0, sizeof(ctl));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(fd));
		if (sendmsg(s->handoff_fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
			return vd_why(msg, msglen, -1, "guest connection from cid %u: handing it "
				      "to %s's recorder: %s", cid, s->dom.name, strerror(errno));
		return vd_why(msg, msglen, 0, "guest connection from cid %u handed to %s's "
			      "recorder", cid, s->dom.name);
	}
	return vd_why(msg, msglen, -1, "guest connection from cid %u refused: no domain "
		      "with that cid is being recorded", cid);
}

/* ---- recovery ---- */

/* Is @pid a `vmscope record ... -o DIR/trace` (a predecessor's recorder)? */
static int is_recorder_of(pid_t pid, const char *dir)
{
	char path[64], buf[8192], want[SS_DIR_MAX + 8];
	ssize_t n;
	int fd, rec = 0, out = 0;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	snprintf(want, sizeof(want), "%s/trace", dir);
	for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
		rec |= !strcmp(p, "record");
		out |= !strcmp(p, want);
	}
	return rec && out;
}

void ss_recover(struct sessions *ss)
{
	char adir[PATH_MAX], path[PATH_MAX + 300], line[SS_DIR_MAX + 2];
	struct dirent *e;
	DIR *d;

	snprintf(adir, sizeof(adir), "%s/active", ss->cfg->state_dir);
	d = opendir(adir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		struct session *s;
		char why[160];
		FILE *f;
		long pid = 0;

		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", adir, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		s = slot(ss);
		if (!s) {
			fclose(f);
			break;
		}
		memset(s, 0, sizeof(*s));
		s->handoff_fd = s->metrics_fd = -1;
		s->start_ns = strtoull(e->d_name, NULL, 10);
		if (fgets(line, sizeof(line), f))
			cut(s->dir, sizeof(s->dir), strtok(line, "\n") ? line : "");
		if (fgets(line, sizeof(line), f))
			pid = strtol(line, NULL, 10);
		if (fgets(line, sizeof(line), f))
			cut(s->dom.name, sizeof(s->dom.name), strtok(line, "\n") ? line : "");
		fclose(f);
		if (s->dir[0] != '/' || vd_check_name(s->dom.name, why, sizeof(why))) {
			dm_log("%s: unreadable, left alone", path);
			s->state = SS_FAILED;
			snprintf(s->detail, sizeof(s->detail), "unreadable registry entry");
			continue;
		}
		s->state = SS_STOPPING;
		s->deadline = util_mono_s() + ss->cfg->stop_timeout_s;
		snprintf(s->detail, sizeof(s->detail), "left by a previous daemon");
		if (pid > 0 && is_recorder_of((pid_t)pid, s->dir)) {
			s->child = (pid_t)pid;
			s->adopted = 1;
			kill(s->child, SIGTERM);
			dm_log("%s: a previous daemon's recorder (pid %ld) still runs: stopping "
			       "and finalizing %s", s->dom.name, pid, s->dir);
		} else {
			dm_log("%s: finalizing %s, left by a previous daemon", s->dom.name, s->dir);
			recorder_exited(ss, s, -1);
		}
	}
	closedir(d);
}

/* ---- description ---- */

void ss_describe(struct sessions *ss, Vmscope__Daemon__Response *r,
		 Vmscope__Daemon__Session **vec, Vmscope__Daemon__Session *store,
		 Vmscope__Daemon__Domain *dstore)
{
	for (unsigned int i = 0; i < ss->n; i++) {
		struct session *s = &ss->s[i];

		vmscope__daemon__session__init(&store[i]);
		vmscope__daemon__domain__init(&dstore[i]);
		dstore[i].name = s->dom.name;
		dstore[i].uuid = s->dom.uuid;
		dstore[i].cid = s->dom.cid;
		dstore[i].pid = s->qemu_pid;
		store[i].domain = &dstore[i];
		store[i].state = (char *)ss_state_name(s->state);
		store[i].path = s->dir;
		store[i].start_ns = s->start_ns;
		store[i].detail = s->detail;
		vec[i] = &store[i];
	}
	r->n_sessions = ss->n;
	r->sessions = vec;
}
