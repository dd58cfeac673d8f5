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
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "commands.h"
#include "decode.h"
#include "device.h"
#include "rb_decode.h"

#define MAX_CPUS 1024

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
		"until `vmscope record` exists: checks sub-buffer continuity, decodes\n"
		"every record with the module's descriptors and prints per-event record\n"
		"counts and losses. Runs until --duration or SIGINT/SIGTERM; prints\n"
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
	int fd;
	FILE *out;
	struct vmscope_session_cfg cfg;
	unsigned int nev;
	struct vmscope_event_desc descs[VMSCOPE_MAX_EVENTS];
	unsigned int ncpu;
	const unsigned char *map[MAX_CPUS];
	unsigned long long next_seq[MAX_CPUS];
	unsigned long long last_lost[MAX_CPUS];
	unsigned long long counts[VMSCOPE_MAX_EVENTS];
	unsigned long long records, undecodable, bad_subbufs, subbufs;
	unsigned long long seq_gaps, lost_seen;
};

static int load_descs(struct capture *c)
{
	struct vmscope_event_desc_req req;
	char why[160];

	for (c->nev = 0; c->nev < VMSCOPE_MAX_EVENTS; c->nev++) {
		memset(&req, 0, sizeof(req));
		req.index = c->nev;
		if (ioctl(c->fd, VMSCOPE_IOC_GET_EVENT_DESC, &req) < 0)
			return errno == ENOENT ? 0 : -1;
		if (vmscope_desc_check(&req.desc, why, sizeof(why))) {
			fprintf(stderr, "vmscope capture: bad descriptor: %s\n", why);
			return -1;
		}
		c->descs[c->nev] = req.desc;
	}
	return 0;
}

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
		if (rec.id >= c->nev || rec.size != c->descs[rec.id].payload_size ||
		    vmscope_format_event(&c->descs[rec.id], rec.payload, rec.size,
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
	size_t sb_size = (size_t)1 << c->cfg.subbuf_shift;
	struct vmscope_subbuf_req req;
	struct vmscope_rb_subbuf_hdr hdr;

	for (;;) {
		memset(&req, 0, sizeof(req));
		req.cpu = cpu;
		if (ioctl(c->fd, VMSCOPE_IOC_GET_SUBBUF, &req) < 0) {
			if (errno == EAGAIN)
				return 0;
			perror("vmscope capture: GET_SUBBUF");
			return -1;
		}
		const unsigned char *sb = c->map[cpu] + req.offset;

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
		if (ioctl(c->fd, VMSCOPE_IOC_PUT_SUBBUF, &cpu) < 0) {
			perror("vmscope capture: PUT_SUBBUF");
			return -1;
		}
	}
}

static int drain_all(struct capture *c)
{
	for (unsigned int cpu = 0; cpu < c->ncpu; cpu++)
		if (c->map[cpu] && drain_cpu(c, cpu))
			return -1;
	return 0;
}

static int map_cpus(struct capture *c)
{
	c->ncpu = c->cfg.nr_cpu_ids < MAX_CPUS ? c->cfg.nr_cpu_ids : MAX_CPUS;
	for (unsigned int cpu = 0; cpu < c->ncpu; cpu++) {
		void *p = mmap(NULL, c->cfg.cpu_bytes, PROT_READ, MAP_SHARED, c->fd,
			       (off_t)(cpu * c->cfg.cpu_stride));

		if (p == MAP_FAILED) {
			if (errno == ENXIO)	/* not a possible CPU */
				continue;
			perror("vmscope capture: mmap");
			return -1;
		}
		c->map[cpu] = p;
	}
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

	for (unsigned int cpu = 0; cpu < c->ncpu; cpu++) {
		const struct vmscope_rb_ctrl *ctrl = (const void *)c->map[cpu];

		if (!ctrl)
			continue;
		full += __atomic_load_n(&ctrl->lost_full, __ATOMIC_RELAXED);
		big += __atomic_load_n(&ctrl->lost_too_big, __ATOMIC_RELAXED);
		over += __atomic_load_n(&ctrl->lost_overwritten, __ATOMIC_RELAXED);
	}
	for (unsigned int e = 0; e < c->nev; e++)
		if (c->counts[e])
			printf("event %-22s %llu\n", c->descs[e].name, c->counts[e]);
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
	struct vmscope_probe_ctl ctl = { .flags = VMSCOPE_CTL_ENABLE };
	struct vmscope_version v;
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
				c.cfg.subbuf_shift = val;
			else if (opt == OPT_NSB)
				c.cfg.nr_subbuf_shift = val;
			else
				c.cfg.flush_ms = val;
			break;
		case OPT_FLIGHT:
			c.cfg.mode = VMSCOPE_RB_MODE_FLIGHT;
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

	c.fd = vmscope_device_open(VMSCOPE_HOST_DEVICE, 0);
	if (c.fd < 0)
		return EXIT_FAILURE_RUNTIME;
	if (vmscope_device_version(c.fd, VMSCOPE_HOST_DEVICE, &v) || load_descs(&c)) {
		fprintf(stderr, "vmscope capture: cannot read the module's descriptors\n");
		return EXIT_FAILURE_RUNTIME;
	}
	if (outpath && !(c.out = fopen(outpath, "wb"))) {
		perror(outpath);
		return EXIT_FAILURE_RUNTIME;
	}
	if (ioctl(c.fd, VMSCOPE_IOC_SESSION_START, &c.cfg) < 0) {
		fprintf(stderr, "vmscope capture: cannot start a session: %s%s\n",
			strerror(errno), errno == EBUSY ? " (another one is recording)" : "");
		return EXIT_FAILURE_RUNTIME;
	}
	if (map_cpus(&c))
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (ioctl(c.fd, VMSCOPE_IOC_PROBE_CTL, &ctl) < 0) {
		perror("vmscope capture: enable probing");
		goto out;
	}
	fprintf(stderr, "capture: recording: %u CPUs, %u x %u-byte sub-buffers, %s\n",
		c.cfg.nr_cpu_ids, 1u << c.cfg.nr_subbuf_shift, 1u << c.cfg.subbuf_shift,
		c.cfg.mode == VMSCOPE_RB_MODE_FLIGHT ? "flight" : "discard");

	double end = now_s() + duration;
	struct pollfd pfd = { .fd = c.fd, .events = POLLIN };

	while (!stop_requested && (!duration || now_s() < end)) {
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			perror("vmscope capture: poll");
			goto out;
		}
		if (drain_all(&c))
			goto out;
	}
	/* probes off first, then stop: the stop flushes every CPU */
	ctl.flags = 0;
	ctl.nr_pids = 0;
	if (ioctl(c.fd, VMSCOPE_IOC_PROBE_CTL, &ctl) < 0)
		perror("vmscope capture: disable probing");
	if (ioctl(c.fd, VMSCOPE_IOC_SESSION_STOP) < 0) {
		perror("vmscope capture: SESSION_STOP");
		goto out;
	}
	if (drain_all(&c))
		goto out;
	report(&c);
	rc = c.undecodable || c.bad_subbufs ? EXIT_FAILURE_RUNTIME : EXIT_OK;
out:
	if (c.out && fclose(c.out)) {
		perror(outpath);
		rc = EXIT_FAILURE_RUNTIME;
	}
	close(c.fd);
	return rc;
}
