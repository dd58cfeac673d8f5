/* SPDX-License-Identifier: GPL-2.0 */
/* A libvirt domain XML reduced to vmscope's facts: see domxml.h. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "domxml.h"
#include "rec_args.h"
#include "util_number.h"

int vd_why(char *why, size_t whylen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return rc;
}

static int is_el(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && !n->ns && !strcmp((const char *)n->name, name);
}

static xmlNode *child(xmlNode *parent, const char *name)
{
	for (xmlNode *c = parent ? parent->children : NULL; c; c = c->next)
		if (is_el(c, name))
			return c;
	return NULL;
}

/* An element's text into @out (trimmed); -1 when it does not fit. */
static int text_of(xmlNode *n, char *out, size_t len)
{
	xmlChar *t = xmlNodeGetContent(n);
	const char *s = t ? (const char *)t : "";
	size_t l;
	int rc = 0;

	while (isspace((unsigned char)*s))
		s++;
	l = strlen(s);
	while (l && isspace((unsigned char)s[l - 1]))
		l--;
	if (l >= len)
		rc = -1;
	else
		memcpy(out, s, l), out[l] = '\0';
	xmlFree(t);
	return rc;
}

int vd_check_name(const char *name, char *why, size_t whylen)
{
	size_t l = strlen(name);

	/* the name becomes a folder of the trace's path */
	if (!l || l >= VD_NAME_MAX || name[0] == '.')
		return vd_why(why, whylen, -1, "domain name empty, too long or starting with '.'");
	for (const char *p = name; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return vd_why(why, whylen, -1, "domain name with '/' or a control character");
	return 0;
}

int vd_check_uuid(const char *uuid, char *why, size_t whylen)
{
	static const char form[] = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";

	if (!*uuid)
		return 0;
	if (strlen(uuid) != sizeof(form) - 1)
		return vd_why(why, whylen, -1, "uuid '%.40s' is not 8-4-4-4-12 hex digits", uuid);
	for (size_t i = 0; form[i]; i++)
		if (form[i] == '-' ? uuid[i] != '-' : !isxdigit((unsigned char)uuid[i]))
			return vd_why(why, whylen, -1, "uuid '%.40s' is not 8-4-4-4-12 hex digits",
				    uuid);
	return 0;
}

int vd_check_events(const char *events, char *why, size_t whylen)
{
	/* names are checked against the module's table when recording
	 * starts; here only their alphabet and the list's shape */
	size_t l = strlen(events);

	if (l >= VD_EVENTS_MAX)
		return vd_why(why, whylen, -1, "events list longer than %d", VD_EVENTS_MAX - 1);
	if (events[strspn(events, "abcdefghijklmnopqrstuvwxyz0123456789_,")])
		return vd_why(why, whylen, -1, "events '%.60s': only names, commas", events);
	if (l && (events[0] == ',' || events[l - 1] == ',' || strstr(events, ",,")))
		return vd_why(why, whylen, -1, "events '%.60s': an empty name", events);
	return 0;
}

int vd_check_output(const char *path, char *why, size_t whylen)
{
	const char *p = path;

	if (!*path)
		return 0;
	if (path[0] != '/' || strlen(path) >= VD_PATH_MAX)
		return vd_why(why, whylen, -1, "output must be an absolute path under %d bytes",
			    VD_PATH_MAX);
	for (; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return vd_why(why, whylen, -1, "output with a control character");
	/* no way up: the folder is the one written, not a step away */
	for (p = path; (p = strstr(p, "..")); p += 2)
		if (p[-1] == '/' && (p[2] == '/' || !p[2]))
			return vd_why(why, whylen, -1, "output '%.60s' has a '..' component", path);
	return 0;
}

static int check_us(const char *what, uint64_t v, char *why, size_t whylen)
{
	if (v && v != VD_TRIGGER_OFF && v > REC_TRIGGER_US_MAX)
		return vd_why(why, whylen, -1, "%s %llu: microseconds, 1 to %llu, or off", what,
			    (unsigned long long)v, REC_TRIGGER_US_MAX);
	return 0;
}

static int check_ms(const char *what, uint64_t v, char *why, size_t whylen)
{
	if (v > REC_SNAP_MS_MAX)
		return vd_why(why, whylen, -1, "%s %llu: milliseconds, 1 to %llu", what,
			    (unsigned long long)v, REC_SNAP_MS_MAX);
	return 0;
}

int vd_check_triggers(const struct vd_opts *o, char *why, size_t whylen)
{
	return check_us("trigger-exit-us", o->trigger_exit_us, why, whylen) ||
	       check_us("trigger-stall-us", o->trigger_stall_us, why, whylen) ||
	       check_ms("snapshot-before-ms", o->snapshot_before_ms, why, whylen) ||
	       check_ms("snapshot-after-ms", o->snapshot_after_ms, why, whylen) ? -1 : 0;
}

int vd_set_trigger(const char *name, const char *val, struct vd_opts *o, char *why,
		   size_t whylen)
{
	unsigned long long v;
	uint64_t *us = !strcmp(name, "trigger-exit-us") ? &o->trigger_exit_us :
		       !strcmp(name, "trigger-stall-us") ? &o->trigger_stall_us : NULL;
	uint64_t *ms = !strcmp(name, "snapshot-before-ms") ? &o->snapshot_before_ms :
		       !strcmp(name, "snapshot-after-ms") ? &o->snapshot_after_ms : NULL;

	if (us && !strcmp(val, "off"))
		*us = VD_TRIGGER_OFF;
	else if (us && !util_parse_ull(val, 1, REC_TRIGGER_US_MAX, &v))
		*us = v;
	else if (us)
		return vd_why(why, whylen, -1, "%s='%.24s': microseconds, 1 to %llu, or off",
			    name, val, REC_TRIGGER_US_MAX);
	else if (ms && !util_parse_ull(val, 1, REC_SNAP_MS_MAX, &v))
		*ms = v;
	else if (ms)
		return vd_why(why, whylen, -1, "%s='%.24s': milliseconds, 1 to %llu", name, val,
			    REC_SNAP_MS_MAX);
	else
		return 1;
	return 0;
}

/* One attribute of vmscope:trace into @o. */
static int trace_attr(const char *name, const char *val, struct vd_domain *d, char *why,
		      size_t whylen)
{
	struct vd_opts *o = &d->opts;
	struct vmscope_session_cfg cfg;

	if (!strcmp(name, "enabled")) {
		if (strcmp(val, "yes") && strcmp(val, "no"))
			return vd_why(why, whylen, -1, "enabled='%.20s': yes or no", val);
		d->traced = !strcmp(val, "yes");
	} else if (!strcmp(name, "events")) {
		if (vd_check_events(val, why, whylen))
			return -1;
		strcpy(o->events, val);
	} else if (!strcmp(name, "mode")) {
		if (!strcmp(val, "discard"))
			o->mode = VD_MODE_DISCARD;
		else if (!strcmp(val, "flight"))
			o->mode = VD_MODE_FLIGHT;
		else
			return vd_why(why, whylen, -1, "mode='%.20s': discard or flight", val);
	} else if (!strcmp(name, "buffer-size")) {
		if (rec_parse_size(val, &o->buffer_size) || rec_geometry(o->buffer_size, &cfg))
			return vd_why(why, whylen, -1, "buffer-size='%.20s': 8K to 64M per CPU",
				    val);
	} else if (!strcmp(name, "duration")) {
		if (rec_parse_duration(val, &o->duration_s) || o->duration_s <= 0 ||
		    o->duration_s > 366.0 * 86400)
			return vd_why(why, whylen, -1, "duration='%.20s': seconds (s, m, h), "
				    "above 0, at most a year", val);
	} else if (!strcmp(name, "output")) {
		if (vd_check_output(val, why, whylen))
			return -1;
		strcpy(o->output, val);
	} else {
		int rc = vd_set_trigger(name, val, o, why, whylen);

		if (rc == 1)
			return vd_why(why, whylen, -1, "unknown attribute '%.40s' of vmscope:trace",
				    name);
		return rc;
	}
	return 0;
}

static int parse_trace(xmlNode *t, struct vd_domain *d, char *why, size_t whylen)
{
	d->traced = 1;
	if (t->children) {
		for (xmlNode *c = t->children; c; c = c->next)
			if (c->type == XML_ELEMENT_NODE)
				return vd_why(why, whylen, -1, "vmscope:trace takes no elements");
	}
	for (xmlAttr *a = t->properties; a; a = a->next) {
		xmlChar *v;
		int rc;

		if (a->ns)
			return vd_why(why, whylen, -1, "namespaced attribute '%.40s' of vmscope:trace",
				    (const char *)a->name);
		v = xmlNodeListGetString(t->doc, a->children, 1);
		rc = trace_attr((const char *)a->name, v ? (const char *)v : "", d, why, whylen);
		xmlFree(v);
		if (rc)
			return -1;
	}
	return 0;
}

/* <metadata>: exactly zero or one vmscope:trace; other namespaces ignored. */
static int parse_metadata(xmlNode *md, struct vd_domain *d, char *why, size_t whylen)
{
	xmlNode *trace = NULL;

	for (xmlNode *c = md ? md->children : NULL; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || !c->ns || !c->ns->href ||
		    strcmp((const char *)c->ns->href, VD_NS_URI))
			continue;
		if (strcmp((const char *)c->name, "trace"))
			return vd_why(why, whylen, -1, "unknown element '%.40s' in vmscope's namespace",
				    (const char *)c->name);
		if (trace)
			return vd_why(why, whylen, -1, "more than one vmscope:trace element");
		trace = c;
	}
	return trace ? parse_trace(trace, d, why, whylen) : 0;
}

static int parse_cid(xmlNode *dom, struct vd_domain *d, char *why, size_t whylen)
{
	xmlNode *cid = child(child(child(dom, "devices"), "vsock"), "cid");
	xmlChar *a = cid ? xmlGetNoNsProp(cid, (const xmlChar *)"address") : NULL;
	unsigned long long v = 0;
	int rc = 0;

	if (a) {
		const char *s = (const char *)a;

		/* 0-2 are reserved; libvirt writes decimal */
		if (util_parse_ull(s, 3, 0xfffffffeull, &v))
			rc = vd_why(why, whylen, VD_MALFORMED, "vsock cid address '%.20s'", s);
		else
			d->cid = (uint32_t)v;
	}
	xmlFree(a);
	return rc;
}

static int parse_domain(xmlDoc *doc, struct vd_domain *d, char *why, size_t whylen)
{
	xmlNode *dom = xmlDocGetRootElement(doc), *n;

	if (dom && is_el(dom, "domstatus"))	/* libvirt's status file form */
		dom = child(dom, "domain");
	if (!dom || !is_el(dom, "domain"))
		return vd_why(why, whylen, VD_MALFORMED, "the root element is not <domain>");
	n = child(dom, "name");
	if (!n || text_of(n, d->name, sizeof(d->name)) ||
	    vd_check_name(d->name, why, whylen)) {
		if (n && !*why)
			vd_why(why, whylen, 0, "domain name too long");
		else if (!n)
			vd_why(why, whylen, 0, "no <name>");
		return VD_MALFORMED;
	}
	n = child(dom, "uuid");
	if (n && (text_of(n, d->uuid, sizeof(d->uuid)) || vd_check_uuid(d->uuid, why, whylen))) {
		if (!*why)
			vd_why(why, whylen, 0, "uuid too long");
		return VD_MALFORMED;
	}
	if (parse_cid(dom, d, why, whylen))
		return VD_MALFORMED;
	return parse_metadata(child(dom, "metadata"), d, why, whylen) ? VD_REFUSED : VD_OK;
}

static int has(const char *buf, size_t len, const char *needle)
{
	return memmem(buf, len, needle, strlen(needle)) != NULL;
}

int vd_parse(const char *xml, size_t len, struct vd_domain *d, char *why, size_t whylen)
{
	xmlParserCtxtPtr ctxt;
	xmlDoc *doc;
	int rc;

	memset(d, 0, sizeof(*d));
	if (whylen)
		why[0] = '\0';
	if (len > VD_XML_MAX)
		return vd_why(why, whylen, VD_MALFORMED, "domain XML larger than %u bytes",
			    VD_XML_MAX);
	/* libvirt never writes a DTD; without one there are no entities to
	 * expand or fetch (the parser would bound them, this never asks) */
	if (has(xml, len, "<!DOCTYPE") || has(xml, len, "<!ENTITY"))
		return vd_why(why, whylen, VD_MALFORMED, "a DTD in the domain XML");
	ctxt = xmlNewParserCtxt();
	if (!ctxt)
		return vd_why(why, whylen, VD_MALFORMED, "out of memory");
	/* UTF-8 forced, so no other encoding hides a DTD from the check
	 * above; NONET: no network; no NOENT, no DTDLOAD: no entity
	 * substitution, no external subset */
	doc = xmlCtxtReadMemory(ctxt, xml, (int)len, "domain.xml", "UTF-8",
				XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc) {
		const xmlError *e = xmlCtxtGetLastError(ctxt);
		int line = e ? e->line : 0;
		char msg[120];

		snprintf(msg, sizeof(msg), "%s", e && e->message ? e->message : "unreadable");
		msg[strcspn(msg, "\n")] = '\0';
		xmlFreeParserCtxt(ctxt);	/* owns *e */
		return vd_why(why, whylen, VD_MALFORMED, "not well-formed XML (line %d): %s",
			    line, msg);
	}
	if (doc->intSubset || doc->extSubset)
		rc = vd_why(why, whylen, VD_MALFORMED, "a DTD in the domain XML");
	else
		rc = parse_domain(doc, d, why, whylen);
	xmlFreeDoc(doc);
	xmlFreeParserCtxt(ctxt);
	if (rc != VD_OK)
		d->traced = 0;
	return rc;
}
