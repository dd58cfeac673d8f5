/*
 * vmscope-capture: a raw reader of the host module's ring buffers, the
 * VM tests' reader of the module's ABI (host-capture, host-capture-unload).
 * It enables probing (optionally for some QEMU processes), starts a
 * session, maps every CPU's buffer, and waits in poll(); each delivered
 * sub-buffer is taken with GET_SUBBUF, checked (sequence continuity,
 * lost_before), every record decoded with the module's own descriptors,
 * optionally appended raw to -o FILE, and given back with PUT_SUBBUF. At
 * the end: per-event record counts and losses. --sessions N runs N such
 * sessions of the same filter in this one process (a test of the
 * module's session limit without a process per session).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "args.h"
#include "commands.h"
#include "decode.h"
#include "device.h"
#include "event_select.h"
#include "ex_out.h"
#include "host_bufs.h"
#include "rb_decode.h"
#include "rec_args.h"
#include "rec_host.h"
#include "util_clock.h"
#include "util_signal.h"

#define MAX_BUFS (HB_MAX_CPUS * VMSCOPE_SESSION_CHANNELS)

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope-capture [--pid PID]... [--duration S] [-o FILE [--force]]\n"
		"                       [--subbuf-shift K] [--subbufs-shift K] [--flight]\n"
		"                       [--flush-ms MS] [--keep LIST] [--read-every MS]\n"
		"                       [--sessions N]\n\n"
		"Raw capture from the host module's per-CPU ring buffers (mmap + poll),\n"
		"a test reader of the module's ABI: checks sub-buffer continuity, decodes\n"
		"every record with the module's descriptors and prints per-event record\n"
		"counts ('event'), what the module handed this session ('handed': each\n"
		"one read or counted lost) and losses. Runs until --duration or\n"
		"SIGINT/SIGTERM; prints\n"
		"'capture: recording' on stderr once the session is live.\n\n"
		"  --pid PID          record events of this process (QEMU); repeatable\n"
		"  --duration S       stop after S seconds\n"
		"  -o FILE            write each sub-buffer raw (not a trace format:\n"
		"                     'VSCP', channel << 16 | cpu, size, then the\n"
		"                     sub-buffer bytes) into the new FILE, as\n"
		"                     .FILE.partial-XXXXXX beside it until the capture\n"
		"                     ends well (then renamed; else removed)\n"
		"  -f, --force        replace an existing FILE (default: refused)\n"
		"  --subbuf-shift K   sub-buffers of 2^K bytes (default %d)\n"
		"  --subbufs-shift K  2^K sub-buffers per CPU (default %d)\n"
		"  --flight           overwrite the oldest sub-buffers (default discard)\n"
		"  --flush-ms MS      deliver partly filled sub-buffers every MS ms\n"
		"  --keep LIST        these events (names or systems, comma-separated)\n"
		"                     into a second channel of their own: discard mode,\n"
		"                     %d x %d KiB sub-buffers per CPU (the session's\n"
		"                     first channel records the others); its counts are\n"
		"                     printed on 'channel 1' lines\n"
		"  --read-every MS    take sub-buffers only every MS ms, not as soon as\n"
		"                     they are delivered (a reader that falls behind)\n"
		"  --sessions N       N sessions of this filter and geometry (1..%d),\n"
		"                     each reported after a 'session K' line; not with -o\n",
		VMSCOPE_SESSION_SUBBUF_SHIFT_DEF, VMSCOPE_SESSION_NR_SHIFT_DEF,
		1 << REC_KEEP_NR_SHIFT, (1 << REC_KEEP_SUBBUF_SHIFT) / 1024,
		VMSCOPE_HOST_SESSIONS);
}

struct capture {
	struct hb h;
	FILE *out;
	const char *out_name;	/* its temporary name */
	unsigned long long next_seq[MAX_BUFS];
	unsigned long long last_lost[MAX_BUFS];
	unsigned long long counts[VMSCOPE_MAX_EVENTS];
	unsigned long long records, undecodable, bad_subbufs, subbufs;
	unsigned long long seq_gaps, lost_seen;
	/* by channel: records read */
	unsigned long long chan_records[VMSCOPE_SESSION_CHANNELS];
};

/*
 * Every record decodes: known id, payload size as described, formattable;
 * and it is an event of the buffer's channel.
 */
static void check_subbuf(struct capture *c, unsigned int buf, const void *sb, size_t len)
{
	unsigned int cpu = hb_cpu(&c->h, buf), chan = hb_chan(&c->h, buf);
	uint64_t mine = c->h.cfg.chan[chan].events;
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec rec;
	char text[512];
	int ret = vmscope_rb_iter_init(&it, sb, len);

	if (ret < 0) {
		fprintf(stderr, "vmscope-capture: cpu %u: bad sub-buffer (%d)\n", cpu, -ret);
		c->bad_subbufs++;
		return;
	}
	while ((ret = vmscope_rb_iter_next(&it, &rec)) > 0) {
		c->records++;
		c->chan_records[chan]++;
		if (rec.id >= c->h.nev || rec.id >= 64 || !(mine >> rec.id & 1) ||
		    rec.size != c->h.descs[rec.id].payload_size ||
		    vmscope_format_event(&c->h.descs[rec.id], rec.payload, rec.size,
					 text, sizeof(text)) < 0) {
			c->undecodable++;
			continue;
		}
		c->counts[rec.id]++;
	}
	if (ret < 0) {
		fprintf(stderr, "vmscope-capture: cpu %u seq %llu: malformed record (%d)\n",
			cpu, (unsigned long long)it.hdr.seq, -ret);
		c->bad_subbufs++;
	}
}

/* Takes every delivered sub-buffer of buffer @buf. 0, or -1 on an ioctl error. */
static int drain_buf(struct capture *c, unsigned int buf)
{
	size_t sb_size = hb_subbuf_size(&c->h, buf);
	unsigned int cpu = hb_cpu(&c->h, buf), chan = hb_chan(&c->h, buf);
	struct vmscope_subbuf_req req;
	struct vmscope_rb_subbuf_hdr hdr;
	const unsigned char *sb;
	int got;

	for (;;) {
		got = hb_get(&c->h, buf, &req, &sb);
		if (got <= 0)
			return got;
		memcpy(&hdr, sb, sizeof(hdr));
		c->subbufs++;
		if (hdr.seq != req.seq)
			c->bad_subbufs++;
		if (req.seq != c->next_seq[buf]) {
			fprintf(stderr, "vmscope-capture: channel %u cpu %u: sub-buffers "
				"%llu..%llu missing\n", chan, cpu, c->next_seq[buf],
				(unsigned long long)req.seq - 1);
			c->seq_gaps += req.seq - c->next_seq[buf];
		}
		c->next_seq[buf] = req.seq + 1;
		if (hdr.lost_before != c->last_lost[buf]) {
			c->lost_seen += hdr.lost_before - c->last_lost[buf];
			c->last_lost[buf] = hdr.lost_before;
		}
		check_subbuf(c, buf, sb, sb_size);
		if (c->out) {
			unsigned int h[3] = { 0x50435356u /* "VSCP" */, cpu | chan << 16,
					      (unsigned int)sb_size };

			if (fwrite(h, sizeof(h), 1, c->out) != 1 ||
			    fwrite(sb, sb_size, 1, c->out) != 1) {
				fprintf(stderr, "vmscope-capture: writing %s: %s\n", c->out_name,
					strerror(errno));
				return -1;
			}
		}
		if (hb_put(&c->h, buf))
			return -1;
	}
}

static int drain_all(struct capture *c)
{
	for (unsigned int i = 0; i < c->h.nbuf && i < MAX_BUFS; i++)
		if (c->h.map[i] && drain_buf(c, i))
			return -1;
	return 0;
}


static void report(const struct capture *c)
{
	unsigned long long full = 0, big = 0, over = 0;
	struct hb_losses ch[VMSCOPE_SESSION_CHANNELS] = { 0 };

	for (unsigned int i = 0; i < c->h.nbuf; i++) {
		struct hb_losses l, *k = &ch[hb_chan(&c->h, i)];

		hb_losses(&c->h, i, &l);
		k->full += l.full;
		k->too_big += l.too_big;
		k->overwritten += l.overwritten;
	}
	for (unsigned int k = 0; k < c->h.cfg.nr_chans; k++) {
		full += ch[k].full;
		big += ch[k].too_big;
		over += ch[k].overwritten;
		if (c->h.cfg.nr_chans > 1)
			printf("channel %u %s records %llu lost %llu (full %llu too_big %llu "
			       "overwritten %llu)\n", k,
			       hb_mode_name(c->h.cfg.chan[k].mode),
			       c->chan_records[k], (unsigned long long)(ch[k].full +
			       ch[k].too_big + ch[k].overwritten), (unsigned long long)ch[k].full,
			       (unsigned long long)ch[k].too_big,
			       (unsigned long long)ch[k].overwritten);
	}
	for (unsigned int e = 0; e < c->h.nev; e++)
		if (c->counts[e])
			printf("event %-22s %llu\n", c->h.descs[e].name, c->counts[e]);
	/* what the module handed this session (each one read above or lost) */
	for (unsigned int e = 0; c->h.have_handed && e < c->h.nev; e++)
		if (c->h.handed[e])
			printf("handed %-21s %llu\n", c->h.descs[e].name,
			       (unsigned long long)c->h.handed[e]);
	printf("records %llu undecodable %llu subbufs %llu bad_subbufs %llu\n",
	       c->records, c->undecodable, c->subbufs, c->bad_subbufs);
	printf("lost %llu (full %llu too_big %llu overwritten %llu) "
	       "seq_gaps %llu lost_before_seen %llu\n",
	       full + big + over, full, big, over, c->seq_gaps, c->lost_seen);
}

/*
 * -o FILE: in place when the capture ran to its end (@ended; whatever its
 * checks found: the raw sub-buffers show it) and every write went
 * through, else removed. Returns @rc, or EXIT_FAILURE_RUNTIME when the
 * file could not be finished.
 */
static int finish_out(struct capture *c, struct ex_out *o, bool ended, int rc)
{
	char err[4200] = "";
	bool ok;

	if (!c->out)
		return rc;
	ok = !fflush(c->out) && !ferror(c->out);
	if (!ok)
		snprintf(err, sizeof(err), "writing %s: %s", o->tmp, strerror(errno));
	o->fd = dup(fileno(c->out));	/* ex_out syncs and closes its own */
	if (fclose(c->out) && ok) {
		snprintf(err, sizeof(err), "closing %s: %s", o->tmp, strerror(errno));
		ok = false;
	}
	c->out = NULL;
	if (ok && o->fd < 0) {
		snprintf(err, sizeof(err), "%s: %s", o->tmp, strerror(errno));
		ok = false;
	}
	if (ok && ended && !ex_out_commit(o, err, sizeof(err)))
		return rc;
	ex_out_abort(o);
	if (err[0])
		fprintf(stderr, "vmscope-capture: -o: %s\n", err);
	return err[0] ? EXIT_FAILURE_RUNTIME : rc;
}

/* The command line. */
struct capture_args {
	/* UNTIL_CLOSE: probing ends with our fd, also when we are killed */
	struct vmscope_probe_ctl ctl;
	struct vmscope_session_cfg cfg;
	const char *outpath, *keep;
	bool force;
	unsigned int duration, read_every_ms, sessions;
};

static int take_pid(void *args, const char *arg)
{
	return rec_host_ctl_pid("vmscope-capture", arg, &((struct capture_args *)args)->ctl);
}

/* --flight sets the first channel's mode to 1 */
_Static_assert(VMSCOPE_RB_MODE_FLIGHT == 1, "--flight's mode");

static const struct args_opt opts[] = {
	ARGS_FN("pid", 0, take_pid),
	ARGS_NUM("duration", 0, struct capture_args, duration, 0, UINT32_MAX),
	ARGS_NUM("subbuf-shift", 0, struct capture_args, cfg.chan[0].subbuf_shift, 0, UINT32_MAX),
	ARGS_NUM("subbufs-shift", 0, struct capture_args, cfg.chan[0].nr_subbuf_shift, 0,
		 UINT32_MAX),
	ARGS_FLAG("flight", 0, struct capture_args, cfg.chan[0].mode),
	ARGS_NUM("flush-ms", 0, struct capture_args, cfg.flush_ms, 0, UINT32_MAX),
	ARGS_STR("keep", 0, struct capture_args, keep),
	ARGS_NUM("read-every", 0, struct capture_args, read_every_ms, 0, UINT32_MAX),
	ARGS_NUM("sessions", 0, struct capture_args, sessions, 1, VMSCOPE_HOST_SESSIONS),
	ARGS_STR(NULL, 'o', struct capture_args, outpath),
	ARGS_FLAG("force", 'f', struct capture_args, force),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope-capture", usage, opts, 0 };

/*
 * -o FILE reserved (refused before the session, not after it) and open as
 * @c->out; 0, or -1 (said).
 */
static int open_out(struct capture *c, const struct capture_args *a, struct ex_out *dst)
{
	char err[4200];

	if (!a->outpath)
		return 0;
	if (ex_out_file(dst, a->outpath, a->force, err, sizeof(err)) ||
	    !(c->out = fdopen(dst->fd, "w"))) {
		fprintf(stderr, "vmscope-capture: -o: %s\n", c->out || !dst->tmp ? err :
			strerror(errno));
		if (dst->tmp)
			ex_out_abort(dst);
		return -1;
	}
	c->out_name = dst->tmp;
	return 0;
}

/*
 * The module opened, --keep's channel added, the session started and
 * probing on: 0, or the exit status (said; c->h closed unless 1 after
 * hb_init).
 */
static int start(struct capture *c, struct capture_args *a)
{
	struct vmscope_version v;
	int fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);

	if (fd < 0 || vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v) ||
	    hb_init(&c->h, fd, "vmscope-capture")) {
		if (fd >= 0) {
			fprintf(stderr, "vmscope-capture: cannot read the module's descriptors\n");
			close(fd);
		}
		return EXIT_FAILURE_RUNTIME;
	}
	c->h.cfg = a->cfg;
	if (a->keep) {
		uint64_t mask;
		char why[160];

		if (vmscope_events_select(a->keep, c->h.descs, c->h.nev, &mask, why,
					  sizeof(why))) {
			fprintf(stderr, "vmscope-capture: --keep: %s\n", why);
			hb_close(&c->h);
			return EXIT_USAGE;
		}
		rec_keep_channel(&c->h.cfg, mask);
	}
	if (hb_start(&c->h))
		return -1;
	util_stop_on_signals();
	if (hb_probes(&c->h, &a->ctl))
		return -1;
	fprintf(stderr, "capture: recording: %u CPUs", c->h.cfg.nr_cpu_ids);
	for (unsigned int k = 0; k < c->h.cfg.nr_chans; k++)
		fprintf(stderr, ", channel %u: %u x %u-byte sub-buffers, %s", k,
			1u << c->h.cfg.chan[k].nr_subbuf_shift,
			1u << c->h.cfg.chan[k].subbuf_shift, hb_mode_name(c->h.cfg.chan[k].mode));
	fprintf(stderr, "\n");
	return 0;
}

/* Sub-buffers of the @n sessions taken until --duration or a signal,
 * then the stops' last ones; 0 or -1 (said). */
static int run(struct capture *c, unsigned int n, const struct capture_args *a)
{
	double end = util_mono_s() + a->duration;
	struct pollfd *pfd = calloc(n, sizeof(*pfd));
	int ret = 0;

	if (!pfd) {
		perror("vmscope-capture");
		return -1;
	}
	for (unsigned int k = 0; k < n; k++)
		pfd[k] = (struct pollfd){ .fd = c[k].h.fd, .events = POLLIN };
	while (!ret && !util_stop_requested && (!a->duration || util_mono_s() < end)) {
		if (a->read_every_ms) {
			struct timespec ts = { a->read_every_ms / 1000,
					       (long)(a->read_every_ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);	/* EINTR on a signal: fine */
		} else if (poll(pfd, n, 100) < 0 && errno != EINTR) {
			perror("vmscope-capture: poll");
			ret = -1;
		}
		for (unsigned int k = 0; k < n && !ret; k++)
			ret = drain_all(&c[k]);
	}
	free(pfd);
	if (ret)
		return -1;
	/* probes off first, then stop: the stop flushes every CPU */
	for (unsigned int k = 0; k < n; k++)
		if (hb_stop(&c[k].h) || drain_all(&c[k]))
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct capture_args a = {
		.ctl = { .flags = VMSCOPE_CTL_ENABLE | VMSCOPE_CTL_UNTIL_CLOSE },
		.sessions = 1,
	};
	struct ex_out dst = { .fd = -1 };
	struct capture *c;	/* [a.sessions], large: not on the stack */
	bool ended = false;
	unsigned int n = 0;
	int rc = args_run(&spec, &a, argc, argv);

	if (rc >= 0)
		return rc;
	if (a.sessions > 1 && a.outpath) {
		fprintf(stderr, "vmscope-capture: -o goes with one session, not --sessions %u\n",
			a.sessions);
		return EXIT_USAGE;
	}
	c = calloc(a.sessions, sizeof(*c));
	if (!c) {
		perror("vmscope-capture");
		return EXIT_FAILURE_RUNTIME;
	}
	for (unsigned int k = 0; k < a.sessions; k++)
		c[k].h.fd = -1;
	if (open_out(&c[0], &a, &dst)) {
		free(c);
		return EXIT_FAILURE_RUNTIME;
	}
	/* every session started, or none runs */
	for (rc = 0; n < a.sessions && !rc; n++)
		rc = start(&c[n], &a);
	if (rc > 0)	/* the last one's hb is not open (or already closed) */
		n--;
	if (!rc && !run(c, n, &a)) {
		rc = EXIT_OK;
		for (unsigned int k = 0; k < n; k++) {
			if (n > 1)
				printf("session %u\n", k + 1);
			report(&c[k]);
			if (c[k].undecodable || c[k].bad_subbufs)
				rc = EXIT_FAILURE_RUNTIME;
		}
		ended = true;
	} else if (rc <= 0) {	/* > 0: start()'s own exit status */
		rc = EXIT_FAILURE_RUNTIME;
	}
	for (unsigned int k = 0; k < n; k++)
		hb_close(&c[k].h);
	rc = finish_out(&c[0], &dst, ended, rc);
	free(c);
	return rc;
}
