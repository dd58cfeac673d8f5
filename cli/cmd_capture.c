/*
 * `vmscope capture`: a raw reader of the host module's ring buffers, until
 * issue 5's `record` writes real traces. It enables probing (optionally for
 * some QEMU processes), starts a session, maps every CPU's buffer, and
 * waits in poll(); each delivered sub-buffer is taken with GET_SUBBUF,
 * checked (sequence continuity, lost_before), every record decoded with the
 * module's own descriptors, optionally appended raw to -o FILE, and given
 * back with PUT_SUBBUF. At the end: per-event record counts and losses.
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

#include "commands.h"
#include "decode.h"
#include "device.h"
#include "host_bufs.h"
#include "rb_decode.h"

#define MAX_CPUS HB_MAX_CPUS

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope capture [--pid PID]... [--duration S] [-o FILE]\n"
		"                       [--subbuf-shift K] [--subbufs-shift K] [--flight]\n"
		"                       [--flush-ms MS]\n\n"
		"Raw capture from the host module's per-CPU ring buffers (mmap + poll),\n"
		"a test reader of the module's ABI: checks sub-buffer continuity, decodes\n"
		"every record with the module's descriptors and prints per-event record\n"
		"counts ('event'), what the module handed this session ('handed': each\n"
		"one read or counted lost) and losses. Runs until --duration or\n"
		"SIGINT/SIGTERM; prints\n"
		"'capture: recording' on stderr once the session is live.\n\n"
		"  --pid PID          record events of this process (QEMU); repeatable\n"
		"  --duration S       stop after S seconds\n"
		"  -o FILE            append each sub-buffer raw (not a trace format:\n"
		"                     'VSCP' cpu size, then the sub-buffer bytes)\n"
		"  --subbuf-shift K   sub-buffers of 2^K bytes (default %d)\n"
		"  --subbufs-shift K  2^K sub-buffers per CPU (default %d)\n"
		"  --flight           overwrite the oldest sub-buffers (default discard)\n"
		"  --flush-ms MS      deliver partly filled sub-buffers every MS ms\n",
		VMSCOPE_SESSION_SUBBUF_SHIFT_DEF, VMSCOPE_SESSION_NR_SHIFT_DEF);
}

struct capture {
	struct hb h;
	FILE *out;
	unsigned long long next_seq[MAX_CPUS];
	unsigned long long last_lost[MAX_CPUS];
	unsigned long long counts[VMSCOPE_MAX_EVENTS];
	unsigned long long records, undecodable, bad_subbufs, subbufs;
	unsigned long long seq_gaps, lost_seen;
};

/* Every record decodes: known id, payload size as described, formattable. */
static void check_subbuf(struct capture *c, unsigned int cpu, const void *sb, size_t len)
{
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec rec;
	char text[512];
	int ret = vmscope_rb_iter_init(&it, sb, len);

	if (ret < 0) {
		fprintf(stderr, "vmscope capture: cpu %u: bad sub-buffer (%d)\n", cpu, -ret);
		c->bad_subbufs++;
		return;
	}
	while ((ret = vmscope_rb_iter_next(&it, &rec)) > 0) {
		c->records++;
		if (rec.id >= c->h.nev || rec.size != c->h.descs[rec.id].payload_size ||
		    vmscope_format_event(&c->h.descs[rec.id], rec.payload, rec.size,
					 text, sizeof(text)) < 0) {
			c->undecodable++;
			continue;
		}
		c->counts[rec.id]++;
	}
	if (ret < 0) {
		fprintf(stderr, "vmscope capture: cpu %u seq %llu: malformed record (%d)\n",
			cpu, (unsigned long long)it.hdr.seq, -ret);
		c->bad_subbufs++;
	}
}

/* Takes every delivered sub-buffer of @cpu. 0, or -1 on an ioctl error. */
static int drain_cpu(struct capture *c, unsigned int cpu)
{
	size_t sb_size = (size_t)1 << c->h.cfg.subbuf_shift;
	struct vmscope_subbuf_req req;
	struct vmscope_rb_subbuf_hdr hdr;
	const unsigned char *sb;
	int got;

	for (;;) {
		got = hb_get(&c->h, cpu, &req, &sb);
		if (got <= 0)
			return got;
		memcpy(&hdr, sb, sizeof(hdr));
		c->subbufs++;
		if (hdr.seq != req.seq)
			c->bad_subbufs++;
		if (req.seq != c->next_seq[cpu]) {
			fprintf(stderr, "vmscope capture: cpu %u: sub-buffers %llu..%llu missing\n",
				cpu, c->next_seq[cpu], (unsigned long long)req.seq - 1);
			c->seq_gaps += req.seq - c->next_seq[cpu];
		}
		c->next_seq[cpu] = req.seq + 1;
		if (hdr.lost_before != c->last_lost[cpu]) {
			c->lost_seen += hdr.lost_before - c->last_lost[cpu];
			c->last_lost[cpu] = hdr.lost_before;
		}
		check_subbuf(c, cpu, sb, sb_size);
		if (c->out) {
			unsigned int h[3] = { 0x50435356u /* "VSCP" */, cpu,
					      (unsigned int)sb_size };

			if (fwrite(h, sizeof(h), 1, c->out) != 1 ||
			    fwrite(sb, sb_size, 1, c->out) != 1) {
				perror("vmscope capture: write");
				return -1;
			}
		}
		if (hb_put(&c->h, cpu))
			return -1;
	}
}

static int drain_all(struct capture *c)
{
	for (unsigned int cpu = 0; cpu < c->h.ncpu; cpu++)
		if (c->h.map[cpu] && drain_cpu(c, cpu))
			return -1;
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const struct capture *c)
{
	unsigned long long full = 0, big = 0, over = 0;

	for (unsigned int cpu = 0; cpu < c->h.ncpu; cpu++) {
		struct hb_losses l;

		hb_losses(&c->h, cpu, &l);
		full += l.full;
		big += l.too_big;
		over += l.overwritten;
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

static int parse_u32(const char *s, unsigned int *v)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(s, &end, 10);
	if (errno || end == s || *end || x > 0xffffffffUL || s[0] == '-')
		return -1;
	*v = (unsigned int)x;
	return 0;
}

enum { OPT_PID = 256, OPT_DURATION, OPT_SB, OPT_NSB, OPT_FLIGHT, OPT_FLUSH };

int cmd_capture(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, OPT_PID },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "subbuf-shift", required_argument, NULL, OPT_SB },
		{ "subbufs-shift", required_argument, NULL, OPT_NSB },
		{ "flight", no_argument, NULL, OPT_FLIGHT },
		{ "flush-ms", required_argument, NULL, OPT_FLUSH },
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
	const char *outpath = NULL;
	unsigned int duration = 0, val;
	int opt, rc = EXIT_FAILURE_RUNTIME;

	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case OPT_PID:
			if (parse_u32(optarg, &val) || !val) {
				fprintf(stderr, "vmscope capture: bad pid '%s'\n", optarg);
				return EXIT_USAGE;
			}
			if (ctl.nr_pids == VMSCOPE_MAX_PIDS) {
				fprintf(stderr, "vmscope capture: at most %d --pid\n",
					VMSCOPE_MAX_PIDS);
				return EXIT_USAGE;
			}
			ctl.pids[ctl.nr_pids++] = (int)val;
			break;
		case OPT_DURATION:
		case OPT_SB:
		case OPT_NSB:
		case OPT_FLUSH:
			if (parse_u32(optarg, &val)) {
				fprintf(stderr, "vmscope capture: '%s' is not an unsigned number\n",
					optarg);
				return EXIT_USAGE;
			}
			if (opt == OPT_DURATION)
				duration = val;
			else if (opt == OPT_SB)
				cfg.subbuf_shift = val;
			else if (opt == OPT_NSB)
				cfg.nr_subbuf_shift = val;
			else
				cfg.flush_ms = val;
			break;
		case OPT_FLIGHT:
			cfg.mode = VMSCOPE_RB_MODE_FLIGHT;
			break;
		case 'o':
			outpath = optarg;
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
		fprintf(stderr, "vmscope capture: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}

	fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);
	if (fd < 0)
		return EXIT_FAILURE_RUNTIME;
	if (vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v) ||
	    hb_init(&c.h, fd, "vmscope capture")) {
		fprintf(stderr, "vmscope capture: cannot read the module's descriptors\n");
		close(fd);
		return EXIT_FAILURE_RUNTIME;
	}
	c.h.cfg = cfg;
	if (outpath && !(c.out = fopen(outpath, "wb"))) {
		perror(outpath);
		hb_close(&c.h);
		return EXIT_FAILURE_RUNTIME;
	}
	if (hb_start(&c.h))
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (hb_probes(&c.h, &ctl))
		goto out;
	fprintf(stderr, "capture: recording: %u CPUs, %u x %u-byte sub-buffers, %s\n",
		c.h.cfg.nr_cpu_ids, 1u << c.h.cfg.nr_subbuf_shift, 1u << c.h.cfg.subbuf_shift,
		c.h.cfg.mode == VMSCOPE_RB_MODE_FLIGHT ? "flight" : "discard");

	double end = now_s() + duration;
	struct pollfd pfd = { .fd = c.h.fd, .events = POLLIN };

	while (!stop_requested && (!duration || now_s() < end)) {
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			perror("vmscope capture: poll");
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
	rc = c.undecodable || c.bad_subbufs ? EXIT_FAILURE_RUNTIME : EXIT_OK;
out:
	if (c.out && fclose(c.out)) {
		perror(outpath);
		rc = EXIT_FAILURE_RUNTIME;
	}
	hb_close(&c.h);
	return rc;
}
