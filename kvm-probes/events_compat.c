// SPDX-License-Identifier: GPL-2.0
/* Older ABIs' event tables: see events_compat.h. */
#include <stdio.h>
#include <string.h>

#include "events_compat.h"

struct added {
	const char *event, *field;
	const char *old_format;	/* the event's format before the field */
};

/* What ABI 0.4 added to the table (events.def). */
static const struct added since_03[] = {
	{ "sync_guest", "steal_ns",
	  "t1 %llu t4 %llu token %#llx seq %llu ret %lld tsc_a %llu tsc_b %llu cpu %u missed %u" },
};

static int drop_field(struct vmscope_event_desc *d, const struct added *a)
{
	unsigned int i, size;

	for (i = 0; i < d->nr_fields && strcmp(d->fields[i].name, a->field); i++)
		;
	if (i == d->nr_fields)
		return -1;
	size = d->fields[i].size;
	for (; i + 1 < d->nr_fields; i++) {
		d->fields[i] = d->fields[i + 1];
		/* fields are packed largest alignment first: moving a later
		 * (no larger) one down by a larger field's size keeps it aligned */
		d->fields[i].offset -= size;
	}
	memset(&d->fields[i], 0, sizeof(d->fields[i]));
	d->nr_fields--;
	d->payload_size -= size;
	snprintf(d->format, sizeof(d->format), "%s", a->old_format);
	return 0;
}

/* Events added since 0.3, at the end of the table (ids never move). */
static const char *const events_since_03[] = { "cpu_task", "kvm_vcpu_wakeup",
						 "irq_vector_entry" };

int vmscope_events_abi03(struct vmscope_event_desc *out)
{
	unsigned int n = VMSCOPE_NR_EVENTS - sizeof(events_since_03) / sizeof(events_since_03[0]);

	for (size_t k = 0; k < sizeof(events_since_03) / sizeof(events_since_03[0]); k++)
		if (strcmp(vmscope_event_descs[n + k].name, events_since_03[k]))
			return -1;
	memset(out, 0, VMSCOPE_NR_EVENTS * sizeof(*out));
	memcpy(out, vmscope_event_descs, n * sizeof(*out));
	for (size_t k = 0; k < sizeof(since_03) / sizeof(since_03[0]); k++) {
		unsigned int e;

		for (e = 0; e < n && strcmp(out[e].name, since_03[k].event); e++)
			;
		if (e == n || drop_field(&out[e], &since_03[k]))
			return -1;
	}
	return (int)n;
}
