/*
 * vmscope-capture: a raw reader of the host module's ring buffers, the
 * VM tests' reader of the module's ABI (host-capture, host-capture-unload).
 * It enables probing (optionally for some QEMU processes), starts a
 * session, maps every CPU's buffer, and waits in poll(); each delivered
 * sub-buffer is taken with GET_SUBBUF, checked (sequence continuity,
 * lost_before), every record decoded with the module's own descriptors,
 * optionally appended raw to -o FILE, and given back with PUT_SUBBUF. At
 * the end: per-event record counts and losses.
 */
#include <errno.h>
#include <getopt.h>
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
#include "util_clock.h"
#include "util_signal.h"

#define MAX_BUFS (HB_MAX_CPUS * VMSCOPE_SESSION_CHANNELS)

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope-capture [--pid PID]... [--duration S] [-o FILE [--force]]\n"
		"                       [--subbuf-shift K] [--subbufs-shift K] [--flight]\n"
		"                       [--flush-ms MS] [--keep LIST] [--read-every MS]\n\n"
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
		"                     they are delivered: a reader that falls behind\n",
		VMSCOPE_SESSION_SUBBUF_SHIFT_DEF, VMSCOPE_SESSION_NR_SHIFT_DEF,
		1 << REC_KEEP_NR_SHIFT, (1 << REC_KEEP_SUBBUF_SHIFT) / 1024);
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

enum { OPT_PID = 256, OPT_DURATION, OPT_SB, OPT_NSB, OPT_FLIGHT, OPT_FLUSH, OPT_KEEP,
       OPT_READ_EVERY };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, OPT_PID },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "subbuf-shift", required_argument, NULL, OPT_SB },
		{ "subbufs-shift", required_argument, NULL, OPT_NSB },
		{ "flight", no_argument, NULL, OPT_FLIGHT },
		{ "flush-ms", required_argument, NULL, OPT_FLUSH },
		{ "keep", required_argument, NULL, OPT_KEEP },
		{ "read-every", required_argument, NULL, OPT_READ_EVERY },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct capture c;	/* large: keep it off the stack */
	struct vmscope_session_cfg cfg = { 0 };
	/* UNTIL_CLOSE: probing ends with our fd, also when we are killed */
	struct vmscope_probe_ctl ctl = {
		.flags = VMSCOPE_CTL_ENABLE | VMSCOPE_CTL_UNTIL_CLOSE,
	};
	struct vmscope_version v;
	int fd;
	const char *outpath = NULL, *keep = NULL;
	struct ex_out dst = { .fd = -1 };
	char err[4200];
	bool force = false, ended = false;
	unsigned int duration = 0, read_every_ms = 0;
	unsigned long long val;
	int opt, rc = EXIT_FAILURE_RUNTIME;

	while ((opt = getopt_long(argc, argv, "o:fh", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PID:
			if (args_number("vmscope-capture", "--pid", optarg, 1, ARGS_PID_MAX, &val))
				return EXIT_USAGE;
			if (ctl.nr_pids == VMSCOPE_MAX_PIDS) {
				fprintf(stderr, "vmscope-capture: at most %d --pid\n",
					VMSCOPE_MAX_PIDS);
				return EXIT_USAGE;
			}
			ctl.pids[ctl.nr_pids++] = (int)val;
			break;
		case OPT_DURATION:
		case OPT_SB:
		case OPT_NSB:
		case OPT_FLUSH:
		case OPT_READ_EVERY:
			if (args_number("vmscope-capture", args_opt_name(opts, opt), optarg, 0, UINT32_MAX, &val))
				return EXIT_USAGE;
			if (opt == OPT_DURATION)
				duration = (unsigned int)val;
			else if (opt == OPT_SB)
				cfg.chan[0].subbuf_shift = (uint32_t)val;
			else if (opt == OPT_NSB)
				cfg.chan[0].nr_subbuf_shift = (uint32_t)val;
			else if (opt == OPT_READ_EVERY)
				read_every_ms = (unsigned int)val;
			else
				cfg.flush_ms = (uint32_t)val;
			break;
		case OPT_FLIGHT:
			cfg.chan[0].mode = VMSCOPE_RB_MODE_FLIGHT;
			break;
		case OPT_KEEP:
			keep = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vmscope-capture: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}

	/* refused before the session, not after it */
	if (outpath && (ex_out_file(&dst, outpath, force, err, sizeof(err)) ||
			!(c.out = fdopen(dst.fd, "w")))) {
		fprintf(stderr, "vmscope-capture: -o: %s\n", c.out || !dst.tmp ? err :
			strerror(errno));
		if (dst.tmp)
			ex_out_abort(&dst);
		return EXIT_FAILURE_RUNTIME;
	}
	c.out_name = dst.tmp;
	fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);
	if (fd < 0 || vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v) ||
	    hb_init(&c.h, fd, "vmscope-capture")) {
		if (fd >= 0) {
			fprintf(stderr, "vmscope-capture: cannot read the module's descriptors\n");
			close(fd);
		}
		return finish_out(&c, &dst, false, EXIT_FAILURE_RUNTIME);
	}
	c.h.cfg = cfg;
	if (keep) {
		uint64_t mask;
		char why[160];

		if (vmscope_events_select(keep, c.h.descs, c.h.nev, &mask, why, sizeof(why))) {
			fprintf(stderr, "vmscope-capture: --keep: %s\n", why);
			hb_close(&c.h);
			return finish_out(&c, &dst, false, EXIT_USAGE);
		}
		rec_keep_channel(&c.h.cfg, mask);
	}
	if (hb_start(&c.h))
		goto out;
	util_stop_on_signals();
	if (hb_probes(&c.h, &ctl))
		goto out;
	fprintf(stderr, "capture: recording: %u CPUs", c.h.cfg.nr_cpu_ids);
	for (unsigned int k = 0; k < c.h.cfg.nr_chans; k++)
		fprintf(stderr, ", channel %u: %u x %u-byte sub-buffers, %s", k,
			1u << c.h.cfg.chan[k].nr_subbuf_shift, 1u << c.h.cfg.chan[k].subbuf_shift,
			hb_mode_name(c.h.cfg.chan[k].mode));
	fprintf(stderr, "\n");

	double end = util_mono_s() + duration;
	struct pollfd pfd = { .fd = c.h.fd, .events = POLLIN };

	while (!util_stop_requested && (!duration || util_mono_s() < end)) {
		if (read_every_ms) {
			struct timespec ts = { read_every_ms / 1000,
					       (long)(read_every_ms % 1000) * 1000000 };

			nanosleep(&ts, NULL);	/* EINTR on a signal: fine */
		} else if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			perror("vmscope-capture: poll");
			goto out;
		}
		if (drain_all(&c))
			goto out;
	}
	/* probes off first, then stop: the stop flushes every CPU */
	if (hb_stop(&c.h))
		goto out;
	if (drain_all(&c))
		goto out;
	report(&c);
	ended = true;
	rc = c.undecodable || c.bad_subbufs ? EXIT_FAILURE_RUNTIME : EXIT_OK;
out:
	hb_close(&c.h);
	return finish_out(&c, &dst, ended, rc);
}
