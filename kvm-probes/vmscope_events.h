/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Everything generated from events.def that both the module and userspace
 * use: event ids, payload structs, and the compiled-in descriptor table.
 */
#ifndef VMSCOPE_KVM_PROBES_EVENTS_H
#define VMSCOPE_KVM_PROBES_EVENTS_H

#include <linux/types.h>
#include <vmscope/events.h>


/* Event ids: VMSCOPE_EV_<name>, in table order. */
#define VMSCOPE_EVENT(ev_, sides_, sys_, tp_, fmt_) VMSCOPE_EV_##ev_,
#define VMSCOPE_FIELD(ev_, ty_, f_)
#define VMSCOPE_STR(ev_, f_, len_)
#define VMSCOPE_EVENT_END(ev_)
enum vmscope_event_id {
#include "events.def"
	VMSCOPE_NR_EVENTS
};
#undef VMSCOPE_EVENT
#undef VMSCOPE_FIELD
#undef VMSCOPE_STR
#undef VMSCOPE_EVENT_END

_Static_assert(VMSCOPE_NR_EVENTS <= VMSCOPE_MAX_EVENTS,
		      "raise VMSCOPE_MAX_EVENTS (an ABI change)");

/* Payloads: struct vmscope_ev_<name>. */
#define VMSCOPE_EVENT(ev_, sides_, sys_, tp_, fmt_) struct vmscope_ev_##ev_ {
#define VMSCOPE_FIELD(ev_, ty_, f_) __##ty_ f_;
#define VMSCOPE_STR(ev_, f_, len_) char f_[len_];
#define VMSCOPE_EVENT_END(ev_) };
#include "events.def"
#undef VMSCOPE_EVENT
#undef VMSCOPE_FIELD
#undef VMSCOPE_STR
#undef VMSCOPE_EVENT_END

/*
 * No holes: the sum of the field sizes, rounded up to the struct's
 * alignment, is its size, so a payload is its fields back to back plus at
 * most tail padding.
 * Also: it fits the fixed-size slots of the ABI.
 */
#define VMSCOPE_EVENT(ev_, sides_, sys_, tp_, fmt_) _Static_assert(((0
#define VMSCOPE_FIELD(ev_, ty_, f_) + sizeof(__##ty_)
#define VMSCOPE_STR(ev_, f_, len_) + (len_)
#define VMSCOPE_EVENT_END(ev_) ) + _Alignof(struct vmscope_ev_##ev_) - 1) / \
	_Alignof(struct vmscope_ev_##ev_) * _Alignof(struct vmscope_ev_##ev_) == \
	sizeof(struct vmscope_ev_##ev_) && \
	sizeof(struct vmscope_ev_##ev_) <= VMSCOPE_MAX_PAYLOAD, \
	"payload of " #ev_ " has holes or is too large: reorder its fields");
#include "events.def"
#undef VMSCOPE_EVENT
#undef VMSCOPE_FIELD
#undef VMSCOPE_STR
#undef VMSCOPE_EVENT_END

/* Host events fit GET_LAST's fixed payload (struct vmscope_last_event). */
#define VMSCOPE_EVENT(ev_, sides_, sys_, tp_, fmt_) _Static_assert(	\
	!(VMSCOPE_SIDES_##sides_ & VMSCOPE_SIDES_HOST) ||		\
	sizeof(struct vmscope_ev_##ev_) <= VMSCOPE_LAST_PAYLOAD,	\
	"host event " #ev_ " does not fit VMSCOPE_LAST_PAYLOAD");
#define VMSCOPE_FIELD(ev_, ty_, f_)
#define VMSCOPE_STR(ev_, f_, len_)
#define VMSCOPE_EVENT_END(ev_)
#include "events.def"
#undef VMSCOPE_EVENT
#undef VMSCOPE_FIELD
#undef VMSCOPE_STR
#undef VMSCOPE_EVENT_END

/* The compiled-in descriptors, indexed by event id (events_desc.c). */
extern const struct vmscope_event_desc vmscope_event_descs[VMSCOPE_NR_EVENTS];

#endif /* VMSCOPE_KVM_PROBES_EVENTS_H */
