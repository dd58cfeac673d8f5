/*
 * `vmscope list`: every event vmscope can record, which module records it
 * (the descriptor's sides: HOST, GUEST or BOTH), its fields and format,
 * from a loaded module's own descriptors (what a trace will store), or
 * from the table compiled into this tool when no module is loaded. Both
 * modules answer with the whole table (kvm-probes/events.def, one id
 * space), so either one's descriptors list every event.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "args.h"
#include "commands.h"
#include "decode.h"
#include "device.h"
#include "vmscope_events.h"

static void usage(FILE *out)
{
	fprintf(out, "usage: vmscope list [--fields] [--builtin]\n\n"
		"Lists every event: name, which module records it (HOST: vmscope_host,\n"
		"GUEST: vmscope_guest, BOTH), source tracepoint, payload size, format.\n"
		"The descriptors come from the loaded vmscope_host module, else from a\n"
		"loaded vmscope_guest module, else from the table compiled into this\n"
		"tool.\n\n"
		"  --fields   also list each event's fields (type, offset, size)\n"
		"  --builtin  use the compiled-in table even if the module is loaded\n\n"
		"Exit status: 0; 1 when a loaded module's version or descriptors\n"
		"cannot be read; 2 on a usage error.\n");
}

/* The descriptor's sides as a word; "?" for bits no module defines. */
static const char *sides_name(uint32_t sides)
{
	switch (sides) {
	case VMSCOPE_SIDES_HOST: return "HOST";
	case VMSCOPE_SIDES_GUEST: return "GUEST";
	case VMSCOPE_SIDES_BOTH: return "BOTH";
	default: return "?";
	}
}

static void show(const struct vmscope_event_desc *d, int fields)
{
	char source[sizeof(d->system) + sizeof(d->tracepoint) + 1];

	snprintf(source, sizeof(source), "%s:%s", d->system, d->tracepoint);
	printf("%-22s %-5s %-34s %3u bytes  \"%s\"\n", d->name,
	       sides_name(d->sides), source, d->payload_size, d->format);
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

struct list_args {
	bool fields, builtin;
};

static const struct args_opt opts[] = {
	ARGS_FLAG("fields", 0, struct list_args, fields),
	ARGS_FLAG("builtin", 0, struct list_args, builtin),
	ARGS_END,
};

static const struct args_spec spec = { "vmscope list", usage, opts, 0 };

int cmd_list(int argc, char **argv)
{
	struct list_args a = { 0 };
	int rc = args_run(&spec, &a, argc, argv);

	if (rc >= 0)
		return rc;
	/* inside a guest only vmscope_guest is there; it has the same table */
	const char *dev = VMSCOPE_HOST_DEVICE, *module = "vmscope_host";
	int fd = a.builtin ? -1 : vmscope_device_open(dev, 1);
	int host_err = errno;

	if (fd < 0 && !a.builtin) {
		dev = VMSCOPE_GUEST_DEVICE;
		module = "vmscope_guest";
		fd = vmscope_device_open(dev, 1);
	}
	if (fd >= 0) {
		struct vmscope_version v;

		if (vmscope_device_version(fd, dev, &v)) {
			close(fd);
			return EXIT_FAILURE_RUNTIME;
		}
		printf("# events of the loaded %s module %s\n", module, v.release);
		int n = list_from_module(fd, a.fields);
		close(fd);
		if (n < 0)
			return EXIT_FAILURE_RUNTIME;
		printf("# %d events\n", n);
		return EXIT_OK;
	}
	if (a.builtin)
		printf("# events compiled into this tool\n");
	else
		printf("# neither vmscope_host nor vmscope_guest is loaded (%s): "
		       "events compiled into this tool\n", strerror(host_err));
	for (unsigned int i = 0; i < VMSCOPE_NR_EVENTS; i++)
		show(&vmscope_event_descs[i], a.fields);
	printf("# %d events\n", VMSCOPE_NR_EVENTS);
	return EXIT_OK;
}
