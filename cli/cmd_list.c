/*
 * `vmscope list`: every event the host module can record, with its fields
 * and format, from the module's own descriptors (what a trace will store),
 * or from the table compiled into this tool when no module is loaded.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "commands.h"
#include "decode.h"
#include "device.h"
#include "vmscope_events.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope list [--fields] [--builtin]\n\n"
		"Lists the host events: name, source tracepoint, payload size, format.\n"
		"The descriptors come from the loaded vmscope_host module, or from the\n"
		"table compiled into this tool when the module is not loaded.\n\n"
		"  --fields   also list each event's fields (type, offset, size)\n"
		"  --builtin  use the compiled-in table even if the module is loaded\n");
}

static void show(const struct vmscope_event_desc *d, int fields)
{
	printf("%-22s %s:%-22s %3u bytes  \"%s\"\n", d->name, d->system,
	       d->tracepoint, d->payload_size, d->format);
	if (!fields)
		return;
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct vmscope_field_desc *f = &d->fields[i];

		printf("    %-20s %-4s offset %2u size %2u\n", f->name,
		       vmscope_field_type_name(f->type), f->offset, f->size);
	}
}

/* Returns the number of events listed from the module, or -1. */
static int list_from_module(int fd, int fields)
{
	struct vmscope_event_desc_req req;
	char why[160];
	int n = 0;

	for (unsigned int i = 0;; i++) {
		memset(&req, 0, sizeof(req));
		req.index = i;
		if (ioctl(fd, VMSCOPE_IOC_GET_EVENT_DESC, &req) < 0) {
			if (errno == ENOENT && i > 0)
				return n;
			fprintf(stderr, "vmscope list: descriptor %u: %s\n", i, strerror(errno));
			return -1;
		}
		if (vmscope_desc_check(&req.desc, why, sizeof(why))) {
			fprintf(stderr, "vmscope list: the module's descriptor %u is unusable: %s\n",
				i, why);
			return -1;
		}
		show(&req.desc, fields);
		n++;
	}
}

int cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fields", no_argument, NULL, 'f' },
		{ "builtin", no_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int fields = 0, builtin = 0, c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': fields = 1; break;
		case 'b': builtin = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vmscope list: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}

	int fd = builtin ? -1 : vmscope_device_open(VMSCOPE_HOST_DEVICE, 1);
	if (fd >= 0) {
		struct vmscope_version v;

		if (vmscope_device_version(fd, VMSCOPE_HOST_DEVICE, &v)) {
			close(fd);
			return EXIT_FAILURE_RUNTIME;
		}
		printf("# events of the loaded vmscope_host module %s\n", v.release);
		int n = list_from_module(fd, fields);
		close(fd);
		if (n < 0)
			return EXIT_FAILURE_RUNTIME;
		printf("# %d events\n", n);
		return EXIT_OK;
	}
	if (builtin)
		printf("# events compiled into this tool\n");
	else
		printf("# vmscope_host is not loaded (%s): events compiled into this tool\n",
		       strerror(errno));
	for (unsigned int i = 0; i < VMSCOPE_NR_EVENTS; i++)
		show(&vmscope_event_descs[i], fields);
	printf("# %d events\n", VMSCOPE_NR_EVENTS);
	return EXIT_OK;
}
