/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The libvirt domain XML a hook receives on stdin, reduced to what vmscope
 * needs: the domain's name, UUID, vsock CID, and whether (and how) it asked
 * to be traced, through vmscope's element in <metadata> (the schema is in
 * libvirt/README.md):
 *
 *   <metadata>
 *     <vmscope:trace xmlns:vmscope="http://vmscope.org/xmlns/trace/1"
 *                    events="kvm,sched" mode="flight" buffer-size="4M"
 *                    duration="10m" output="/srv/traces"
 *                    trigger-stall-us="20000" snapshot-before-ms="3000"/>
 *   </metadata>
 *
 * The XML is input from whoever may define domains: parsed with libxml2
 * without network access, without entity substitution, refusing any DTD,
 * and at most VD_XML_MAX bytes.
 */
#ifndef VMSCOPE_LIBVIRT_DOMXML_H
#define VMSCOPE_LIBVIRT_DOMXML_H

#include <stddef.h>
#include <stdint.h>

#define VD_NS_URI "http://vmscope.org/xmlns/trace/1"
#define VD_XML_MAX (1u << 20)

#define VD_NAME_MAX 128		/* libvirt allows longer; a path component here */
#define VD_EVENTS_MAX 512
#define VD_PATH_MAX 512

enum vd_mode { VD_MODE_DEFAULT = 0, VD_MODE_DISCARD, VD_MODE_FLIGHT };

/* A trigger threshold the domain turned off ("off"): none for it, whatever
 * the daemon's option says. */
#define VD_TRIGGER_OFF UINT64_MAX

/* A traced domain's options; zero/empty fields mean "the default". */
struct vd_opts {
	char events[VD_EVENTS_MAX];	/* as `record --events`; "": all */
	enum vd_mode mode;
	unsigned long long buffer_size;	/* bytes per host CPU; 0: default */
	double duration_s;		/* 0: until the domain stops */
	char output[VD_PATH_MAX];	/* base folder; "": /var/lib/vmscope/traces */
	/* triggered windows (daemon/README.md); 0: the daemon's option */
	uint64_t trigger_exit_us, trigger_stall_us;	/* or VD_TRIGGER_OFF */
	uint64_t snapshot_before_ms, snapshot_after_ms;
};

struct vd_domain {
	char name[VD_NAME_MAX];
	char uuid[37];			/* "": none given */
	uint32_t cid;			/* 0: no vsock device (or not assigned) */
	int traced;			/* the element is there and not enabled="no" */
	struct vd_opts opts;
};

enum {
	VD_OK = 0,
	VD_MALFORMED = -1,	/* not a domain XML we can read */
	VD_REFUSED = -2,	/* a domain that opted in with a bad option */
};

/*
 * Parse @len bytes of @xml into @d. VD_OK (d->traced says whether the
 * domain opted in), or VD_MALFORMED / VD_REFUSED with a one-line reason in
 * @why; then d->traced is 0. On VD_REFUSED the name, UUID and CID are
 * filled in (for messages).
 */
int vd_parse(const char *xml, size_t len, struct vd_domain *d, char *why, size_t whylen);

/* A one-line reason into @why (printf-style); returns @rc. Shared by the
 * parsers of the XML and of the daemon's requests, and the daemon. */
__attribute__((format(printf, 4, 5)))
int vd_why(char *why, size_t whylen, int rc, const char *fmt, ...);

/*
 * The option checks vd_parse applies, shared with the daemon's request
 * parser (a request carries the same options): 0, or -1 with @why.
 */
int vd_check_name(const char *name, char *why, size_t whylen);
int vd_check_events(const char *events, char *why, size_t whylen);
int vd_check_output(const char *path, char *why, size_t whylen);
int vd_check_uuid(const char *uuid, char *why, size_t whylen);
/* The triggered windows' values of @o: each 0, or in rec_args.h's range
 * (a threshold also VD_TRIGGER_OFF). */
int vd_check_triggers(const struct vd_opts *o, char *why, size_t whylen);
/*
 * A triggered window's value @val of @name ("trigger-exit-us",
 * "trigger-stall-us", "snapshot-before-ms", "snapshot-after-ms": the
 * metadata's attributes, `vmscope session start`'s options) into @o: 0,
 * -1 with a reason in @why, or 1 when @name is not one. A threshold is 1 us
 * to an hour, or "off" (none for this domain whatever the daemon's
 * option); a window 1 ms to 10 minutes (0 is not taken: in @o it means the
 * daemon's option).
 */
int vd_set_trigger(const char *name, const char *val, struct vd_opts *o, char *why,
		   size_t whylen);

#endif
