// SPDX-License-Identifier: GPL-2.0
/*
 * The CTF 1.8 metadata (TSDL) of an export, generated from the event
 * descriptors the merged trace stores (ctf.h). Written by hand because no
 * Debian package writes CTF 1.8 metadata from C (babeltrace2's library
 * writes CTF through its own trace IR and sink graph, a far larger
 * dependency for one text file; lttng-ust writes only its own events).
 *
 * Everything is byte aligned (align = 8 bits), so a record's fields follow
 * each other in the stream exactly as declared: a payload is copied byte
 * for byte when its stored layout is declared field by field in offset
 * order with padding arrays for gaps. A descriptor comes from a trace
 * file, so nothing in it is trusted: names are reduced to identifier
 * characters and prefixed with '_' (CTF 1.8 readers drop one leading
 * underscore, so "_seq" shows as "seq" and no name can be a TSDL
 * keyword); an event whose fields overlap, repeat a name or have a type
 * and size that disagree is declared as one byte array instead.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ctf.h"

/* A TSDL string literal's contents: printable ASCII without '"' and '\'. */
static void literal(char *out, size_t len, const char *in, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < max && in[i] && n + 1 < len; i++) {
		unsigned char c = (unsigned char)in[i];

		out[n++] = c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? (char)c : '_';
	}
	out[n] = 0;
}

/* '_' + the name with every non-identifier character as '_'. */
static void ident(char *out, size_t len, const char *in, size_t max)
{
	size_t n = 0;

	out[n++] = '_';
	for (size_t i = 0; i < max && in[i] && n + 1 < len; i++) {
		unsigned char c = (unsigned char)in[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_';

		out[n++] = ok ? (char)c : '_';
	}
	out[n] = 0;
}

static const char *int_type(const struct vmscope_field_desc *f)
{
	static const struct { uint16_t type, size; const char *tsdl; } t[] = {
		{ VMSCOPE_FT_u8, 1, "integer { size = 8; align = 8; signed = false; }" },
		{ VMSCOPE_FT_u16, 2, "integer { size = 16; align = 8; signed = false; }" },
		{ VMSCOPE_FT_u32, 4, "integer { size = 32; align = 8; signed = false; }" },
		{ VMSCOPE_FT_u64, 8, "integer { size = 64; align = 8; signed = false; }" },
		{ VMSCOPE_FT_s32, 4, "integer { size = 32; align = 8; signed = true; }" },
		{ VMSCOPE_FT_s64, 8, "integer { size = 64; align = 8; signed = true; }" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].type == f->type && t[i].size == f->size)
			return t[i].tsdl;
	return NULL;
}

#define BYTE "integer { size = 8; align = 8; signed = false; }"
#define CHAR "integer { size = 8; align = 8; signed = false; encoding = UTF8; }"

/* Field indexes of @d in offset order, or false when they cannot tile the
 * payload (overlap, bad type/size, past the end, repeated names). */
static bool layout(const struct vmscope_event_desc *d, unsigned int *order,
		   char (*names)[VMSCOPE_NAME_LEN + 2])
{
	unsigned int n = d->nr_fields;
	uint32_t at = 0;

	if (n > VMSCOPE_MAX_FIELDS || d->payload_size > VMSCOPE_MAX_PAYLOAD)
		return false;
	for (unsigned int i = 0; i < n; i++)
		order[i] = i;
	for (unsigned int i = 1; i < n; i++)	/* insertion sort by offset */
		for (unsigned int j = i; j > 0 && d->fields[order[j]].offset <
						  d->fields[order[j - 1]].offset; j--) {
			unsigned int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (unsigned int i = 0; i < n; i++) {
		const struct vmscope_field_desc *f = &d->fields[order[i]];

		if (f->offset < at || !f->size || (uint32_t)f->offset + f->size > d->payload_size)
			return false;
		if (f->type != VMSCOPE_FT_str && !int_type(f))
			return false;
		at = (uint32_t)f->offset + f->size;
		ident(names[i], sizeof(names[i]), f->name, sizeof(f->name));
		for (unsigned int k = 0; k < i; k++)
			if (!strcmp(names[k], names[i]))
				return false;
	}
	return true;
}

static void event(FILE *f, const struct vmscope_event_desc *d, unsigned int id, bool *raw)
{
	unsigned int order[VMSCOPE_MAX_FIELDS];
	char names[VMSCOPE_MAX_FIELDS][VMSCOPE_NAME_LEN + 2], name[VMSCOPE_NAME_LEN + 1];
	uint32_t at = 0, pad = 0;

	literal(name, sizeof(name), d->name, sizeof(d->name));
	fprintf(f, "event {\n\tname = \"%s\";\n\tid = %u;\n\tstream_id = 0;\n"
		"\tfields := struct {\n", name, id);
	*raw = !layout(d, order, names);
	if (*raw) {
		if (d->payload_size)
			fprintf(f, "\t\t" BYTE " _raw[%u];\n", d->payload_size);
		fprintf(f, "\t};\n};\n\n");
		return;
	}
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct vmscope_field_desc *fd = &d->fields[order[i]];

		if (fd->offset > at)
			fprintf(f, "\t\t" BYTE " _vmscope_pad%u[%u];\n", pad++, fd->offset - at);
		if (fd->type == VMSCOPE_FT_str)
			fprintf(f, "\t\t" CHAR " %s[%u];\n", names[i], fd->size);
		else
			fprintf(f, "\t\t%s %s;\n", int_type(fd), names[i]);
		at = (uint32_t)fd->offset + fd->size;
	}
	if (d->payload_size > at)
		fprintf(f, "\t\t" BYTE " _vmscope_pad%u[%u];\n", pad, d->payload_size - at);
	fprintf(f, "\t};\n};\n\n");
}

int ctf_tsdl(FILE *f, const struct vr_events *ev, const Vmscope__Trace__SessionMetadata *s,
	     bool *raw)
{
	int n_raw = 0;
	char v[256];

	fprintf(f, "/* CTF 1.8 */\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } magic;\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } stream_id;\n"
		"\t};\n};\n\n");
	fprintf(f, "env {\n\ttracer_name = \"vmscope\";\n\tvmscope_input = \"merged\";\n");
	for (size_t i = 0; s && i < s->n_vms && i < 1024; i++) {
		literal(v, sizeof(v), s->vms[i]->name ? s->vms[i]->name : "", 128);
		fprintf(f, "\tvm%zu_name = \"%s\";\n", i, v);
	}
	/* the session's start in both clocks places the trace clock in
	 * wall-clock time, so readers show times of day (cycles stay the
	 * merged trace's ns: babeltrace2 --clock-cycles) */
	uint64_t off = 0, start = s ? vr_clock_ns(s->host_clock, s->start_ts) : 0;

	if (s && s->start_realtime_ns && s->start_ts && s->start_realtime_ns >= start)
		off = s->start_realtime_ns - start;
	fprintf(f, "};\n\n"
		"clock {\n\tname = \"host\";\n"
		"\tdescription = \"vmscope host trace clock; guest events converted to it by vmscope merge\";\n"
		"\tfreq = 1000000000;\n\toffset_s = %" PRIu64 ";\n\toffset = %" PRIu64 ";\n};\n\n"
		"typealias integer { size = 64; align = 8; signed = false; map = clock.host.value; }"
		" := vmscope_clock_t;\n\n", off / 1000000000, off % 1000000000);
	fprintf(f, "stream {\n\tid = 0;\n"
		"\tpacket.context := struct {\n"
		"\t\tvmscope_clock_t timestamp_begin;\n"
		"\t\tvmscope_clock_t timestamp_end;\n"
		"\t\tinteger { size = 64; align = 8; signed = false; } content_size;\n"
		"\t\tinteger { size = 64; align = 8; signed = false; } packet_size;\n"
		"\t\tinteger { size = 64; align = 8; signed = false; } events_discarded;\n"
		"\t};\n"
		"\tevent.header := struct {\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } id;\n"
		"\t\tvmscope_clock_t timestamp;\n"
		"\t};\n"
		"\t/* where the record came from: origin 0 host, n VM n-1; cpu: host CPU\n"
		"\t * or guest vCPU; tid: the thread on that CPU (-1 unknown); vcpu: for\n"
		"\t * host events on a vCPU thread, that vCPU (else 0xffffffff); orig_ts:\n"
		"\t * the record's timestamp in its own clock */\n"
		"\tevent.context := struct {\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } _origin;\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } _cpu;\n"
		"\t\tinteger { size = 32; align = 8; signed = true; } _tid;\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } _vcpu;\n"
		"\t\tinteger { size = 64; align = 8; signed = false; } _orig_ts;\n"
		"\t};\n};\n\n");
	for (unsigned int i = 0; i < ev->n; i++) {
		raw[i] = false;
		if (ev->why[i][0])
			continue;	/* its records are not decoded: none written */
		event(f, &ev->desc[i], i, &raw[i]);
		n_raw += raw[i];
	}
	return ferror(f) ? -EIO : n_raw;
}
