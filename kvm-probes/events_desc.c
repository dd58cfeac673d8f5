// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The descriptor table, generated from events.def; compiled into the module
 * (exported by ioctl) and into userspace (vmscope list without a module).
 */
#ifdef __KERNEL__
#include <linux/stddef.h>
#else
#include <stddef.h>
#endif
#include "vmscope_events.h"

/* One field's descriptor: the same in both tables below. */
#define DESC_FIELD(ev_, ty_, f_) \
	{ .name = #f_, .type = VMSCOPE_FT_##ty_, \
	  .offset = offsetof(struct vmscope_ev_##ev_, f_), \
	  .size = sizeof(__##ty_) },
#define DESC_STR(ev_, f_, len_) \
	{ .name = #f_, .type = VMSCOPE_FT_str, \
	  .offset = offsetof(struct vmscope_ev_##ev_, f_), .size = (len_) },

/* Per event: its field descriptors. */
#define VMSCOPE_EVENT(ev_, sides_, sys_, tp_, fmt_) \
	static const struct vmscope_field_desc vmscope_fields_##ev_[] = {
#define VMSCOPE_FIELD(ev_, ty_, f_) DESC_FIELD(ev_, ty_, f_)
#define VMSCOPE_STR(ev_, f_, len_) DESC_STR(ev_, f_, len_)
#define VMSCOPE_EVENT_END(ev_) };
#include "events.def"
#undef VMSCOPE_EVENT
#undef VMSCOPE_FIELD
#undef VMSCOPE_STR
#undef VMSCOPE_EVENT_END

/*
 * The events. C cannot initialise an array member from another array, so
 * the fields are listed again inline (DESC_FIELD); the arrays above give their
 * count only. More than VMSCOPE_MAX_FIELDS fields is an "excess elements" error.
 */
#define VMSCOPE_EVENT(ev_, sides_, sys_, tp_, fmt_) \
	[VMSCOPE_EV_##ev_] = { .id = VMSCOPE_EV_##ev_, \
		.payload_size = sizeof(struct vmscope_ev_##ev_), \
		.nr_fields = sizeof(vmscope_fields_##ev_) / \
			     sizeof(vmscope_fields_##ev_[0]), \
		.sides = VMSCOPE_SIDES_##sides_, \
		.name = #ev_, .system = sys_, .tracepoint = tp_, .format = fmt_, \
		.fields = {
#define VMSCOPE_FIELD(ev_, ty_, f_) DESC_FIELD(ev_, ty_, f_)
#define VMSCOPE_STR(ev_, f_, len_) DESC_STR(ev_, f_, len_)
#define VMSCOPE_EVENT_END(ev_) } },
const struct vmscope_event_desc vmscope_event_descs[VMSCOPE_NR_EVENTS] = {
#include "events.def"
};
#undef VMSCOPE_EVENT
#undef VMSCOPE_FIELD
#undef VMSCOPE_STR
#undef VMSCOPE_EVENT_END
