/* Event lists (`--events kvm_exit,sched`) to selection masks. */
#include <stdio.h>
#include <string.h>

#include "event_select.h"

/* Bits of the events that @item names; 0 when it names none. */
static uint64_t item_mask(const char *item, size_t len,
			  const struct vmscope_event_desc *descs, unsigned int n)
{
	uint64_t m = 0;

	for (unsigned int i = 0; i < n; i++) {
		const struct vmscope_event_desc *d = &descs[i];
		int all = len == 3 && !memcmp(item, "all", 3);
		int by_name = strnlen(d->name, sizeof(d->name)) == len &&
			      !memcmp(d->name, item, len);
		int by_system = strnlen(d->system, sizeof(d->system)) == len &&
				!memcmp(d->system, item, len);

		if ((all || by_name || by_system) && d->id < 64)
			m |= UINT64_C(1) << d->id;
	}
	return m;
}

int vmscope_events_select(const char *list, const struct vmscope_event_desc *descs,
			  unsigned int n, uint64_t *mask, char *why, size_t whylen)
{
	const char *p = list;
	uint64_t m = 0;

	for (;;) {
		size_t len = strcspn(p, ",");
		uint64_t bits;

		if (!len) {
			snprintf(why, whylen, "empty item in event list '%s'", list);
			return -1;
		}
		bits = item_mask(p, len, descs, n);
		if (!bits) {
			snprintf(why, whylen, "unknown event or system '%.*s' "
				 "(`vmscope list` shows the names)", (int)len, p);
			return -1;
		}
		m |= bits;
		if (!p[len])
			break;
		p += len + 1;
	}
	*mask = m;
	return 0;
}
