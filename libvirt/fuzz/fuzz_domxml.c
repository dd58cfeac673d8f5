/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vd_parse on any bytes (the hook's stdin is whatever a domain's definer
 * wrote): no crash, no hang, bounded memory, and what it returns holds
 * the promises of domxml.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "domxml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vd_domain d;
	char why[160];
	int rc = vd_parse((const char *)data, size, &d, why, sizeof(why));

	if (rc != VD_OK && rc != VD_MALFORMED && rc != VD_REFUSED)
		abort();
	if (rc != VD_OK && (d.traced || !why[0]))
		abort();
	if (rc == VD_OK) {
		/* everything the daemon would be sent passes its own checks */
		if (vd_check_name(d.name, why, sizeof(why)) ||
		    vd_check_uuid(d.uuid, why, sizeof(why)) ||
		    vd_check_events(d.opts.events, why, sizeof(why)) ||
		    vd_check_output(d.opts.output, why, sizeof(why)) ||
		    vd_check_triggers(&d.opts, why, sizeof(why)))
			abort();
		if (d.cid && d.cid < 3)
			abort();
	}
	return 0;
}
