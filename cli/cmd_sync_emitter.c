/*
 * `vmscope sync-emitter start|stop|status`: control the periodic clock-sync
 * emitter of vmscope_guest.ko, and show what each CPU issued. Until the
 * guest ring buffer exists, `status --samples` is the way to see the
 * guest's t1/t4 of the last exchanges.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "args.h"
#include "commands.h"
#include "device.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope sync-emitter start [--period DURATION]\n"
		"       vmscope sync-emitter stop\n"
		"       vmscope sync-emitter status [--cpu N] [--samples]\n\n"
		"Controls vmscope_guest.ko's periodic clock-sync hypercalls (one per\n"
		"online CPU per period). Run in a KVM guest.\n\n"
		"  --period DURATION  N followed by ns, us, ms or s (default unit ms);\n"
		"                     1ms..1s, default 10ms\n"
		"  --cpu N            status of CPU N only (default: every CPU)\n"
		"  --samples          also print the last samples: seq, t1, t4, ret\n\n"
		"Exit status: 0; 1 when the guest module is missing or refuses (start\n"
		"while started, status of a CPU that fails); 2 on a usage error.\n");
}

/* Parses "10", "10ms", "500us", "1s", "2000000ns" into ns. */
static int parse_period(const char *s, uint64_t *ns)
{
	static const struct { const char *suffix; uint64_t mult; } units[] = {
		{ "", 1000000 }, { "ns", 1 }, { "us", 1000 },
		{ "ms", 1000000 }, { "s", 1000000000 },
	};
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix))
			continue;
		if (v > UINT64_MAX / units[i].mult)
			return -1;
		*ns = v * units[i].mult;
		return 0;
	}
	return -1;
}

static int do_start(int fd, uint64_t period_ns)
{
	struct vmscope_sync_emitter_ctl ctl = { .period_ns = period_ns };

	if (ioctl(fd, VMSCOPE_IOC_SYNC_EMITTER_ENABLE, &ctl) < 0) {
		int err = errno;
		if (err == EOPNOTSUPP)
			fprintf(stderr, "vmscope sync-emitter: this kernel is not running "
				"on KVM: no sync hypercall is possible\n");
		else if (err == EBUSY)
			fprintf(stderr, "vmscope sync-emitter: already running; stop it first\n");
		else if (err == EINVAL)
			fprintf(stderr, "vmscope sync-emitter: the module refused period %" PRIu64
				" ns (allowed %llu..%llu ns)\n", period_ns,
				VMSCOPE_SYNC_PERIOD_MIN_NS, VMSCOPE_SYNC_PERIOD_MAX_NS);
		else
			fprintf(stderr, "vmscope sync-emitter: start failed: %s\n", strerror(err));
		return EXIT_FAILURE_RUNTIME;
	}
	printf("started token=0x%llx period_ns=%" PRIu64 "\n",
	       (unsigned long long)ctl.token, period_ns);
	return EXIT_OK;
}

static int print_cpu(int fd, unsigned int cpu, int samples, int header,
		     unsigned int *nr_cpus)
{
	struct vmscope_sync_emitter_state *st = calloc(1, sizeof(*st));

	if (!st) {
		perror("vmscope sync-emitter");
		return -1;
	}
	st->cpu = cpu;
	if (ioctl(fd, VMSCOPE_IOC_SYNC_EMITTER_STATE, st) < 0) {
		int err = errno;
		free(st);
		if (err == EINVAL)	/* not a possible CPU: skipped */
			return 1;
		fprintf(stderr, "vmscope sync-emitter: status of cpu %u: %s\n", cpu, strerror(err));
		return -1;
	}
	*nr_cpus = st->nr_cpu_ids;
	if (header)
		printf("enabled %u token 0x%llx period_ns %llu\n",
		       !!(st->flags & VMSCOPE_SYNC_EMITTER_ENABLED),
		       (unsigned long long)st->token, (unsigned long long)st->period_ns);
	printf("cpu %u online %u issued %llu missed %llu starts %llu stops %llu\n", cpu,
	       !!(st->flags & VMSCOPE_SYNC_CPU_ONLINE), (unsigned long long)st->issued,
	       (unsigned long long)st->missed, (unsigned long long)st->starts,
	       (unsigned long long)st->stops);
	for (unsigned int i = 0; samples && i < st->nsamples && i < VMSCOPE_SYNC_SAMPLES; i++) {
		const struct vmscope_sync_sample *s = &st->samples[i];
		printf("sample cpu %u seq %llu t1 %llu t4 %llu ret %lld\n", cpu,
		       (unsigned long long)s->seq, (unsigned long long)s->t1,
		       (unsigned long long)s->t4, (long long)s->ret);
	}
	free(st);
	return 0;
}

static int do_status(int fd, long cpu, int samples)
{
	unsigned int nr = 1;
	int header = 1;

	for (unsigned int c = cpu < 0 ? 0 : (unsigned int)cpu; c < nr; c++) {
		int rc = print_cpu(fd, c, samples, header, &nr);
		if (rc < 0)
			return EXIT_FAILURE_RUNTIME;
		if (rc == 0)
			header = 0;
		if (cpu >= 0) {
			if (rc > 0) {
				fprintf(stderr, "vmscope sync-emitter: no cpu %ld\n", cpu);
				return EXIT_FAILURE_RUNTIME;
			}
			break;
		}
		if (rc > 0 && c == 0)
			break;	/* cpu 0 always exists; do not loop on nothing */
	}
	return EXIT_OK;
}

struct emitter_args {
	uint64_t period_ns;
	bool have_period, samples;
	long cpu;	/* -1: every CPU */
};

/* --period: a duration from 1 ms to 1 s into @args (struct emitter_args). */
static int take_period(void *args, const char *arg)
{
	struct emitter_args *a = args;

	if (parse_period(arg, &a->period_ns)) {
		fprintf(stderr, "vmscope sync-emitter: --period: '%s' is not a "
			"duration (N, Nns, Nus, Nms or Ns)\n", arg);
		return EXIT_USAGE;
	}
	if (a->period_ns < VMSCOPE_SYNC_PERIOD_MIN_NS ||
	    a->period_ns > VMSCOPE_SYNC_PERIOD_MAX_NS) {
		fprintf(stderr, "vmscope sync-emitter: --period %s is out of "
			"range: it must be between 1ms and 1s\n", arg);
		return EXIT_USAGE;
	}
	a->have_period = true;
	return 0;
}

static const struct args_opt opts[] = {
	ARGS_FN("period", 0, take_period),
	ARGS_NUM("cpu", 0, struct emitter_args, cpu, 0, UINT32_MAX),
	ARGS_FLAG("samples", 0, struct emitter_args, samples),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope sync-emitter", usage, opts, 1 };

int cmd_sync_emitter(int argc, char **argv)
{
	struct emitter_args a = { .period_ns = VMSCOPE_SYNC_PERIOD_DEFAULT_NS, .cpu = -1 };
	int c = args_run(&spec, &a, argc, argv);

	if (c >= 0)
		return c;
	const char *verb = argv[optind];
	int is_start = !strcmp(verb, "start"), is_stop = !strcmp(verb, "stop");
	int is_status = !strcmp(verb, "status");
	if (!is_start && !is_stop && !is_status) {
		fprintf(stderr, "vmscope sync-emitter: unknown action '%s' (start, stop or status)\n",
			verb);
		return EXIT_USAGE;
	}
	if ((a.have_period && !is_start) || ((a.cpu >= 0 || a.samples) && !is_status)) {
		fprintf(stderr, "vmscope sync-emitter: option not valid with '%s'\n", verb);
		return EXIT_USAGE;
	}

	int fd = vmscope_device_open(VMSCOPE_GUEST_DEVICE, 0);
	if (fd < 0)
		return EXIT_FAILURE_RUNTIME;
	int rc;
	if (is_start) {
		rc = do_start(fd, a.period_ns);
	} else if (is_stop) {
		rc = EXIT_OK;
		if (ioctl(fd, VMSCOPE_IOC_SYNC_EMITTER_DISABLE) < 0) {
			fprintf(stderr, "vmscope sync-emitter: stop failed: %s\n", strerror(errno));
			rc = EXIT_FAILURE_RUNTIME;
		}
	} else {
		rc = do_status(fd, a.cpu, a.samples);
	}
	close(fd);
	return rc;
}
