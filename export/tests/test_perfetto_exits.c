// SPDX-License-Identifier: GPL-2.0
/*
 * An exit is labelled in the Perfetto export as the report labels it: a
 * kvm_exit whose details the probe missed (reason_valid 0) is "unknown",
 * without a reason code, in both; one with its details has the report's
 * reason name. The slices are the report's exits: an exit open at a loss
 * is neither counted nor a slice (a pairing of its own, kvm_exit with the
 * thread's next kvm_entry, made one). Its guest RIP is named as the
 * report names it (guest_symbol): from user mode "0x401000 (user)", in
 * the guest kernel "native_cpuid+0x12" from the VM's symbols.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tracefmt/tests/util.h"
#include "out.h"
#include "perfetto.h"
#include "perfetto_subset.pb-c.h"
#include "../../analysis/tests/scen.h"
#include "vmscope_events.h"
#include "walk.h"

#define H 1000000000ull
#define TID 1001

/* VM 0's one vCPU thread: an exit without details, an SVM CPUID exit,
 * then one whose entry follows a loss. */
static void write_trace(const char *dir)
{
	struct mo_origin mh = { .cpu = 1, .tid = TID, .origin = 0, .vcpu = 0 };
	struct vmscope_ev_kvm_exit missed = { .vcpu_id = 0, .reason_valid = 0,
					      .guest_rip = 0x401000 };
	struct vmscope_ev_kvm_exit cpuid = { .vcpu_id = 0, .reason_valid = 1, .isa = 2,
					     .exit_reason = scen_svm_code[0],
					     .guest_rip = 0xffffffff81000012ull };
	struct vmscope_ev_kvm_entry en = { .vcpu_id = 0 };
	Vmscope__Trace__GuestSymbols s = VMSCOPE__TRACE__GUEST_SYMBOLS__INIT;
	uint64_t addr = 0xffffffff81000000ull;
	struct scen_out *o;

	s.addr_delta = &addr;
	s.n_addr_delta = 1;
	s.names.data = (uint8_t *)"native_cpuid";
	s.names.len = sizeof("native_cpuid");
	CHECK_EQ(scen_out_open_syms(&o, dir, 1, 1, &s), 0);
	if (!o)
		return;
	mh.orig_ts = H + 1000;
	scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, H + 1000, &missed, sizeof(missed), &mh);
	mh.orig_ts = H + 2000;
	scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, H + 2000, &en, sizeof(en), &mh);
	mh.orig_ts = H + 3000;
	scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, H + 3000, &cpuid, sizeof(cpuid), &mh);
	mh.orig_ts = H + 4000;
	scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, H + 4000, &en, sizeof(en), &mh);
	mh.orig_ts = H + 5000;
	scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, H + 5000, &cpuid, sizeof(cpuid), &mh);
	scen_out_loss(o, H + 5500);
	mh.orig_ts = H + 6000;
	scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, H + 6000, &en, sizeof(en), &mh);
	CHECK_EQ(scen_out_close(o), 0);
}

/* The report's names of the trace's exit reasons, in the walk's order. */
static size_t report_names(const char *merged, char names[][64], size_t max)
{
	struct an_walk *w;
	char err[256];
	size_t n = 0;

	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w)
		return 0;
	CHECK(an_walk_run(w, &(struct an_hooks){ 0 }, err, sizeof(err)) >= 0);
	CHECK_EQ(an_walk_counts(w)->exits, 2);
	for (uint32_t i = 0; i < an_walk_nr_reasons(w) && n < max; i++)
		snprintf(names[n++], 64, "%s", an_walk_reason_name(w, i));
	an_walk_close(w);
	return n;
}

/*
 * The names packet sequences defined (InternedData), read in file order
 * as Perfetto reads them: event names and annotation names by (sequence,
 * iid).
 */
enum def_kind { D_EVENT, D_ANNOTATION, D_STRING };

struct defined {
	uint32_t seq;
	uint64_t iid;
	enum def_kind kind;
	const char *name;
};
static struct defined defs[64];
static size_t n_defs;

static void define(const Perfetto__Protos__TracePacket *p)
{
	const Perfetto__Protos__InternedData *d = p->interned_data;

	for (size_t i = 0; d && i < d->n_event_names && n_defs < 64; i++)
		defs[n_defs++] = (struct defined){ p->trusted_packet_sequence_id,
			d->event_names[i]->iid, D_EVENT, d->event_names[i]->name };
	for (size_t i = 0; d && i < d->n_debug_annotation_names && n_defs < 64; i++)
		defs[n_defs++] = (struct defined){ p->trusted_packet_sequence_id,
			d->debug_annotation_names[i]->iid, D_ANNOTATION,
			d->debug_annotation_names[i]->name };
	/* the test's labels are short and NUL-free: kept as C strings */
	for (size_t i = 0; d && i < d->n_debug_annotation_string_values && n_defs < 64; i++) {
		static char buf[64][64];
		const ProtobufCBinaryData *v = &d->debug_annotation_string_values[i]->str;

		snprintf(buf[n_defs], sizeof(buf[0]), "%.*s", (int)v->len, (const char *)v->data);
		defs[n_defs] = (struct defined){ p->trusted_packet_sequence_id,
			d->debug_annotation_string_values[i]->iid, D_STRING, buf[n_defs] };
		n_defs++;
	}
}

static const char *lookup(uint32_t seq, uint64_t iid, enum def_kind kind)
{
	for (size_t i = 0; i < n_defs; i++)
		if (defs[i].seq == seq && defs[i].iid == iid && defs[i].kind == kind)
			return defs[i].name ? defs[i].name : "(no name)";
	return "(undefined iid)";
}

static const char *event_name(const Perfetto__Protos__TracePacket *p)
{
	const Perfetto__Protos__TrackEvent *e = p->track_event;

	if (e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME_IID)
		return lookup(p->trusted_packet_sequence_id, e->name_iid, D_EVENT);
	return e->name_field_case == PERFETTO__PROTOS__TRACK_EVENT__NAME_FIELD_NAME && e->name ?
	       e->name : "(no name)";
}

static const Perfetto__Protos__DebugAnnotation *
annotation_of(const Perfetto__Protos__TracePacket *p, const char *name)
{
	const Perfetto__Protos__TrackEvent *e = p->track_event;

	for (size_t i = 0; i < e->n_debug_annotations; i++) {
		const Perfetto__Protos__DebugAnnotation *a = e->debug_annotations[i];
		const char *n = a->name_field_case ==
			PERFETTO__PROTOS__DEBUG_ANNOTATION__NAME_FIELD_NAME_IID ?
			lookup(p->trusted_packet_sequence_id, a->name_iid, D_ANNOTATION) : a->name;

		if (n && !strcmp(n, name))
			return a;
	}
	return NULL;
}

static bool has_annotation(const Perfetto__Protos__TracePacket *p, const char *name)
{
	return annotation_of(p, name) != NULL;
}

/* An annotation's string value, inline or interned; NULL: none. */
static const char *annotation_str(const Perfetto__Protos__TracePacket *p, const char *name)
{
	const Perfetto__Protos__DebugAnnotation *a = annotation_of(p, name);

	if (a && a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE)
		return a->string_value;
	if (a && a->value_case == PERFETTO__PROTOS__DEBUG_ANNOTATION__VALUE_STRING_VALUE_IID)
		return lookup(p->trusted_packet_sequence_id, a->string_value_iid, D_STRING);
	return NULL;
}

int main(void)
{
	char dir[256], merged[512], out[512], names[4][64];
	Perfetto__Protos__Trace *t;
	struct ex_pf_stats st = { 0 };
	size_t len, n_names, slices = 0;
	char err[512];
	uint8_t *img;
	int fd = tf_test_mkdir(dir, sizeof(dir));

	CHECK(fd >= 0);
	if (fd < 0)
		return check_result("perfetto-exits");
	write_trace(dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	snprintf(out, sizeof(out), "%s/out.pftrace", dir);
	n_names = report_names(merged, names, 4);
	CHECK_EQ(n_names, 2);
	CHECK(!strcmp(names[0], "unknown"));
	CHECK_EQ(ex_perfetto(merged, out, &(struct ex_opts){ 0 }, &st, err, sizeof(err)), 0);
	CHECK_EQ(st.slices, 2);
	CHECK_EQ(st.exits_unpaired, 1);
	img = util_read_all(fd, "out.pftrace", &len);
	CHECK(img != NULL);
	t = img ? perfetto__protos__trace__unpack(NULL, len, img) : NULL;
	CHECK(t != NULL);
	for (size_t i = 0; t && i < t->n_packet; i++) {
		const Perfetto__Protos__TrackEvent *e = t->packet[i]->track_event;
		const char *name;

		define(t->packet[i]);
		if (!e || e->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN)
			continue;
		name = event_name(t->packet[i]);
		if (!name)	/* never: said to the compiler */
			name = "";
		CHECK(slices < n_names);
		if (slices >= n_names)
			break;
		/* the slices come in the order of the exits, as the reasons do */
		if (strcmp(name, names[slices]))
			fprintf(stderr, "slice %zu: '%s', the report says '%s'\n", slices, name,
				names[slices]);
		CHECK(!strcmp(name, names[slices]));
		CHECK_EQ(has_annotation(t->packet[i], "exit_reason"), slices != 0);
		{
			const char *got = annotation_str(t->packet[i], "guest_symbol");
			const char *want = slices ? "native_cpuid+0x12" : "0x401000 (user)";

			EXPECT(got && !strcmp(got, want), "slice %zu: guest_symbol '%s', want '%s'",
			       slices, got ? got : "-", want);
		}
		slices++;
	}
	CHECK_EQ(slices, 2);
	if (t)
		perfetto__protos__trace__free_unpacked(t, NULL);
	free(img);
	close(fd);
	tf_test_rmdir(dir);
	return check_result("perfetto-exits");
}
