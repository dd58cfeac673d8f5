/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `vmscope export --ctf`: a merged trace (merge/out.h), or a raw one
 * merged as it is read (ex_in.h), as a CTF 1.8 trace
 * folder (TSDL "metadata" + one binary stream "stream"), readable by
 * babeltrace2. The TSDL is generated from the event descriptors the trace
 * stores (ctf_tsdl.c), so no event has code of its own; payloads are
 * copied byte for byte. See README.md for the layout and why one stream.
 */
#ifndef VMSCOPE_EXPORT_CTF_H
#define VMSCOPE_EXPORT_CTF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ex_in.h"
#include "reader.h"

#define CTF_METADATA	"metadata"
#define CTF_STREAM	"stream"

struct ex_ctf_stats {
	uint64_t events;	/* written */
	uint64_t packets;
	uint64_t discarded;	/* the merged trace's counted losses */
	uint64_t skipped;	/* records of events without a usable descriptor */
	uint64_t bad;		/* items the reader could not use (vmscope dump says) */
	unsigned int raw_layouts; /* events written as raw bytes (see ctf_tsdl.c) */
};

/* Export the trace @in (merged or raw: ex_in.h) as the folder @out
 * (refused if it exists, unless o->force and it holds only an export's
 * files). 0, or -errno with @err. */
int ex_ctf(const char *in, const char *out, const struct ex_opts *o,
	   struct ex_ctf_stats *st, char *err, size_t errlen);

/*
 * The TSDL metadata for the events of @ev (the merged table) into @f.
 * @raw[i] is set for events whose stored layout is not expressible field
 * by field (overlapping, unknown types): their payload is one byte array.
 * Returns how many such events; -EIO on a write error.
 */
int ctf_tsdl(FILE *f, const struct vr_events *ev, const Vmscope__Trace__SessionMetadata *s,
	     bool *raw);

#endif
