// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: both exports on merged traces whose event tables and
 * records come from the input. The input becomes (in /dev/shm) a trace
 * folder with a session of 1-2 VMs (with or without vCPU threads) whose
 * host and guest event tables hold 1-8 events each: names from the ones
 * the Perfetto export interprets (sched_switch, kvm_exit, sync_t2, ...)
 * or raw bytes (quotes, backslashes, colons), fields of any valid type,
 * size and offset (overlapping, repeated names, gaps, names that are TSDL
 * keywords or not identifiers), formats that pass the reader's check.
 * From it a merged trace is written through merge/out.h (records of any of
 * those events with raw payloads, origins, CPUs, threads from small sets,
 * non-decreasing times, losses), then exported both ways.
 *
 * Asserts, beyond no crash/leak/UB: both exports succeed on a well-formed
 * merged trace; the Perfetto file unpacks as a perfetto.protos.Trace with
 * as many packets as written, every slice begin has its end and the
 * counts match the export's; the CTF stream holds exactly the records
 * written (its size is the packets' and events' headers plus each
 * payload) and the metadata declares, for every event, fields whose sizes
 * add up to its payload size, each named '_' + identifier characters.
 */
#include <ctype.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../merge/fuzz/fuzz_input.h"
#include "ctf.h"
#include "out.h"
#include "perfetto.h"
#include "perfetto_subset.pb-c.h"
#include "reader.h"
#include "util_fs.h"

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

#define MAX_EV	8

struct table {
	Vmscope__Trace__EventTable t;
	Vmscope__Trace__Origin o;
	Vmscope__Trace__EventDesc ev[MAX_EV], *evp[MAX_EV];
	Vmscope__Trace__FieldDesc f[MAX_EV][VMSCOPE_MAX_FIELDS], *fp[MAX_EV][VMSCOPE_MAX_FIELDS];
	char names[MAX_EV][VMSCOPE_NAME_LEN];
	char fnames[MAX_EV][VMSCOPE_MAX_FIELDS][VMSCOPE_NAME_LEN];
	char fmt[MAX_EV][VMSCOPE_FORMAT_LEN];
};

static const char *const ev_names[] = {
	"sched_switch", "kvm_exit", "kvm_entry", "sync_t2", "sync_t3", "sync_guest", "tick",
};
/* the fields the Perfetto export reads, per name of ev_names (NULL-ended);
 * kvm_exit and kvm_entry as the analysis walk, whose exits it writes,
 * needs them */
static const char *const role_fields[][6] = {
	{ "prev_pid", "next_pid", "prev_comm", "next_comm", "prev_prio", NULL },
	{ "exit_reason", "isa", "guest_rip", "vcpu_id", "reason_valid", NULL },
	{ "vcpu_id", NULL },
	{ "token", "seq", "guest_cpu", "t2", NULL },
	{ "token", "seq", "t2", NULL },
	{ "token", "seq", "cpu", NULL },
	{ NULL },
};
static const char *const f_names[] = {
	"prev_pid", "next_pid", "prev_comm", "next_comm", "prev_prio", "exit_reason", "isa",
	"guest_rip", "token", "seq", "guest_cpu", "t2", "cpu", "event", "align", "9lives",
	"a b", "",
};

static void raw_name(struct in *in, char *out, size_t len)
{
	size_t n = take(in, 1) % (len - 1);

	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)take(in, 1);

		out[i] = c ? (char)c : '"';
	}
	out[n] = 0;
}

static void make_table(struct in *in, struct table *tb, int side, uint32_t vm)
{
	static const uint32_t tsize[] = { 0, 1, 2, 4, 8, 4, 8, 0 };
	unsigned int n = 1 + (unsigned int)(take(in, 1) % MAX_EV);

	vmscope__trace__event_table__init(&tb->t);
	vmscope__trace__origin__init(&tb->o);
	tb->o.side = side;
	tb->o.vm = vm;
	tb->t.origin = &tb->o;
	tb->t.ringbuf_abi = VMSCOPE_RB_ABI_VERSION;
	for (unsigned int i = 0; i < n; i++) {
		Vmscope__Trace__EventDesc *d = &tb->ev[i];
		uint8_t k = (uint8_t)take(in, 1);
		unsigned int nf = (unsigned int)(take(in, 1) % (VMSCOPE_MAX_FIELDS + 1));
		uint32_t psize = (uint32_t)(take(in, 1) % (VMSCOPE_MAX_PAYLOAD + 1));
		size_t fl = 0;

		vmscope__trace__event_desc__init(d);
		/* consecutive events get consecutive names: exit and entry, t2
		 * and t3 meet in small tables */
		unsigned int role = (k + i) % (sizeof(ev_names) / sizeof(ev_names[0])), nr = 0;

		while (role_fields[role][nr])
			nr++;
		if (k < 200)
			snprintf(tb->names[i], sizeof(tb->names[i]), "%s", ev_names[role]);
		else
			raw_name(in, tb->names[i], sizeof(tb->names[i]));
		d->id = (uint32_t)(take(in, 1) % 64);
		d->name = tb->names[i];
		d->system = "fuzz";
		d->tracepoint = "fuzz";
		d->payload_size = psize;
		tb->fmt[i][0] = 0;
		/* now and then the role's fields alone, a byte each in order: a
		 * layout every reader takes, whose small values (vCPU ids below
		 * the walk's bound) let kvm_exit/kvm_entry make exits */
		bool plain = nr && k < 200 && (take(in, 1) & 3) == 0;

		if (plain) {
			nf = nr;
			if (psize < nr)
				d->payload_size = psize = nr;
		}
		for (unsigned int j = 0; j < nf; j++) {
			Vmscope__Trace__FieldDesc *f = &tb->f[i][j];
			uint8_t t = plain ? VMSCOPE_FT_u8 : (uint8_t)(1 + take(in, 1) % 7);
			uint8_t nk = (uint8_t)take(in, 1);

			vmscope__trace__field_desc__init(f);
			f->type = t;
			f->size = t == VMSCOPE_FT_str ? 1 + (uint32_t)(take(in, 1) % 24) : tsize[t];
			f->offset = psize >= f->size ? (uint32_t)(take(in, 1) % (psize - f->size + 1)) : 0;
			if (plain)
				f->offset = j;
			if ((nk < 140 || plain) && k < 200 && nr)	/* the role's own fields, mostly */
				snprintf(tb->fnames[i][j], VMSCOPE_NAME_LEN, "%s",
					 role_fields[role][j % nr]);
			else if (nk < 220)
				snprintf(tb->fnames[i][j], VMSCOPE_NAME_LEN, "%s",
					 f_names[nk % (sizeof(f_names) / sizeof(f_names[0]))]);
			else
				raw_name(in, tb->fnames[i][j], VMSCOPE_NAME_LEN);
			f->name = tb->fnames[i][j];
			tb->fp[i][j] = f;
			fl += (size_t)snprintf(tb->fmt[i] + fl, sizeof(tb->fmt[i]) - fl, "%s ",
					       t == VMSCOPE_FT_str ? "%s" : "%u");
		}
		d->format = tb->fmt[i];
		d->n_fields = nf;
		d->fields = tb->fp[i];
		tb->evp[i] = d;
	}
	tb->t.n_events = n;
	tb->t.events = tb->evp;
}

static int write_meta(struct in *in, int dfd, struct table *tb, uint32_t n_vms, bool tids)
{
	Vmscope__Trace__SessionMetadata m = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__VmInfo vm[2], *vmp[2];
	Vmscope__Trace__VcpuThread vt[2][2], *vtp[2][2];
	static uint8_t sid[16] = { 9 };
	char names[2][8];
	struct tf_writer *w;

	make_table(in, &tb[0], VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
	for (uint32_t v = 0; v < n_vms; v++) {
		make_table(in, &tb[1 + v], VMSCOPE__TRACE__SIDE__SIDE_GUEST, v);
		vmscope__trace__vm_info__init(&vm[v]);
		snprintf(names[v], sizeof(names[v]), "f\"%u\\", v);	/* quotes reach TSDL env */
		vm[v].name = names[v];
		vm[v].qemu_pid = (int32_t)(100 * (v + 1));
		vm[v].guest_events = &tb[1 + v].t;
		for (uint32_t c = 0; c < 2; c++) {
			vmscope__trace__vcpu_thread__init(&vt[v][c]);
			vt[v][c].vcpu = c;
			vt[v][c].tid = (int32_t)(100 * (v + 1) + 1 + c);
			vtp[v][c] = &vt[v][c];
		}
		vm[v].n_vcpus = tids ? 2 : 0;
		vm[v].vcpus = vtp[v];
		vmp[v] = &vm[v];
	}
	m.format_version = 1;
	m.session_id.data = sid;
	m.session_id.len = 16;
	m.host_events = &tb[0].t;
	m.n_vms = n_vms;
	m.vms = vmp;
	if (tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL))
		return -1;
	fh.format_version = 1;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA;
	fh.session_id = m.session_id;
	tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base);
	tf_writer_append_msg(w, TF_FRAME_SESSION, &m.base);
	return tf_writer_close(w);
}

/* Every event block of the TSDL: the declared field bytes add up to the
 * payload size of its event, and every field name is '_' + identifier. */
static void check_tsdl(const char *tsdl, const struct vr_events *ev)
{
	const char *p = tsdl;

	while ((p = strstr(p, "\nevent {"))) {
		unsigned int id;
		const char *f = strstr(p, "\tid = "), *end = strstr(p, "\n};");
		unsigned long bytes = 0;

		ASSERT(f && end && sscanf(f, "\tid = %u;", &id) == 1 && id < ev->n);
		f = strstr(f, "fields := struct {\n");
		ASSERT(f && f < end);
		f = strchr(f, '\n') + 1;
		while (f < end && strncmp(f, "\t};", 3)) {
			const char *nl = strchr(f, '\n'), *sz = strstr(f, "size = ");
			const char *name = nl;
			unsigned long bits = 0, count = 1;

			ASSERT(nl && sz && sz < nl && sscanf(sz, "size = %lu", &bits) == 1);
			while (name > f && name[-1] != ' ')	/* the last word */
				name--;
			ASSERT(name[0] == '_');
			const char *q = name + 1;

			while (isalnum((unsigned char)*q) || *q == '_')
				q++;
			if (*q == '[')
				ASSERT(sscanf(q, "[%lu];", &count) == 1);
			else
				ASSERT(*q == ';');
			bytes += bits / 8 * count;
			f = nl + 1;
		}
		ASSERT(bytes == ev->desc[id].payload_size);
		p = end;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct table tb[3];
	struct in in = { data, size };
	char dir[64] = "/dev/shm/export-fuzz-XXXXXX", ip[96], mp[96], pp[96], cp[112], err[512];
	uint32_t n_vms = 1 + (uint32_t)(take(&in, 1) & 1);
	bool tids = take(&in, 1) & 1;
	uint64_t written = 0, bytes = 0, lost = 0, ts = 1000000;
	struct ex_pf_stats ps;
	struct ex_ctf_stats cs;
	struct vr_trace *t;
	struct mo *m;
	int dfd;

	if (!mkdtemp(dir))
		return 0;
	snprintf(ip, sizeof(ip), "%s/in", dir);
	snprintf(mp, sizeof(mp), "%s/merged", dir);
	snprintf(pp, sizeof(pp), "%s/out.pftrace", dir);
	snprintf(cp, sizeof(cp), "%s/ctf", dir);
	ASSERT(tf_trace_create(ip, &dfd) == 0);
	ASSERT(write_meta(&in, dfd, tb, n_vms, tids) == 0);
	close(dfd);
	ASSERT(vr_trace_open(&t, ip, err, sizeof(err)) == 0);
	ASSERT(mo_create(&m, mp, t, err, sizeof(err)) == 0);
	for (int op = 0; op < 3000 && in.n; op++) {
		uint32_t origin = (uint32_t)(take(&in, 1) % (n_vms + 1));
		const struct vr_events *ev = origin ?
			vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_GUEST, origin - 1) :
			vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
		uint8_t k = (uint8_t)take(&in, 1);
		struct mo_origin o = {
			.cpu = (uint32_t)(take(&in, 1) % 3),
			.tid = (int32_t)(take(&in, 1) % 4) + 100,	/* few threads: pairs form */
			.origin = origin,
			.vcpu = (uint32_t)(take(&in, 1) % 3),
		};
		uint8_t payload[VMSCOPE_MAX_PAYLOAD];

		ts += k & 0x80 ? take(&in, 3) : k & 0x7;
		if (o.tid == 103)
			o.tid = -1;	/* before the first sched_switch of its CPU */
		o.orig_ts = ts ^ take(&in, 2);
		if (k == 0x42) {	/* a loss: CTF discarded events */
			Vmscope__Trace__Origin lo = VMSCOPE__TRACE__ORIGIN__INIT;

			lo.side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
			uint64_t n = take(&in, 1);
			ASSERT(mo_loss(m, &lo, VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD, n, 0,
				       ts, "fuzz") == 0);
			lost += n;
			continue;
		}
		if (!ev || !ev->n)
			continue;
		unsigned int i = (unsigned int)(take(&in, 1) % ev->n);
		int id = mo_id(m, t, origin, &ev->desc[i]);

		if (id < 0 || ev->why[i][0])
			continue;
		for (uint32_t b = 0; b < ev->desc[i].payload_size; b++)
			payload[b] = (uint8_t)val(&in, 0, 1);
		ASSERT(mo_event(m, id, ts, payload, (uint16_t)ev->desc[i].payload_size, &o) == 0);
		written++;
		bytes += 36 + ev->desc[i].payload_size;
	}
	ASSERT(mo_close(m, NULL) == 0);
	vr_trace_close(t);

	/* Perfetto: unpacks, packets and slices add up */
	ASSERT(ex_perfetto(mp, pp, &(struct ex_opts){ 0 }, &ps, err, sizeof(err)) == 0);
	size_t len;
	uint8_t *b = util_read_all(AT_FDCWD, pp, &len);

	ASSERT(b);
	Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(NULL, len, b);

	ASSERT(tr && tr->n_packet == ps.packets && ps.events == written && !ps.bad);
	uint64_t begins = 0, ends = 0;

	for (size_t i = 0; i < tr->n_packet; i++) {
		const Perfetto__Protos__TracePacket *pk = tr->packet[i];

		if (pk->data_case != PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACK_EVENT)
			continue;
		begins += pk->track_event->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
		ends += pk->track_event->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	}
	ASSERT(begins == ps.slices && ends == ps.slices);
	if (getenv("FUZZ_EXPORT_DEBUG"))
		fprintf(stderr, "perfetto %lu packets, %lu sched_switch, %lu slices, %lu flow steps, "
			"%lu flow ends %lu unpaired %lu nothread\n", (unsigned long)ps.packets, (unsigned long)ps.sched_switch,
			(unsigned long)ps.slices, (unsigned long)ps.flow_steps,
			(unsigned long)ps.flow_ends, (unsigned long)ps.exits_unpaired,
			(unsigned long)ps.no_thread);
	perfetto__protos__trace__free_unpacked(tr, NULL);
	free(b);

	/* CTF: every record, the metadata's layouts match the payloads */
	ASSERT(ex_ctf(mp, cp, &(struct ex_opts){ 0 }, &cs, err, sizeof(err)) == 0);
	if (getenv("FUZZ_EXPORT_DEBUG"))
		fprintf(stderr, "ctf %lu/%lu events, %lu skipped, %lu/%lu discarded\n",
			(unsigned long)cs.events, (unsigned long)written, (unsigned long)cs.skipped,
			(unsigned long)cs.discarded, (unsigned long)lost);
	ASSERT(getenv("FUZZ_EXPORT_KEEP") || (cs.events == written && !cs.skipped && cs.discarded == lost));
	char sp[128], mdp[128];
	struct stat st;

	snprintf(sp, sizeof(sp), "%s/%s", cp, CTF_STREAM);
	snprintf(mdp, sizeof(mdp), "%s/%s", cp, CTF_METADATA);
	ASSERT(!stat(sp, &st) && (uint64_t)st.st_size == bytes + cs.packets * 48);
	char *md = (char *)util_read_all(AT_FDCWD, mdp, &len);

	ASSERT(md && vr_trace_open(&t, mp, err, sizeof(err)) == 0);
	check_tsdl(md, vr_trace_events(t, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0));
	vr_trace_close(t);
	free(md);
	if (!getenv("FUZZ_EXPORT_KEEP"))
		nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}
