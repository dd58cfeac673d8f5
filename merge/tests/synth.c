// SPDX-License-Identifier: GPL-2.0
/* Synthetic traces for the merge's tests and benchmark: see synth.h. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <vmscope/ringbuf_abi.h>

#include "events_compat.h"
#include "merge.h"
#include "out.h"
#include "rb_decode.h"
#include "reader.h"
#include "synth.h"
#include "tracefmt.h"
#include "vmscope_events.h"

/* ---- deterministic randomness: one hash per (what, who, k) ---- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t rnd(const struct synth *s, uint64_t a, uint64_t b, uint64_t c)
{
	return mix(mix(mix(s->seed ^ a) ^ b) ^ c);
}

static double unit(uint64_t r)
{
	return ((double)(r >> 11) + 0.5) / 9007199254740992.0;
}

static uint64_t expo(uint64_t r, double mean, uint64_t cap)
{
	double d = -mean * log(unit(r));

	return d > (double)cap ? cap : (uint64_t)d;
}

/* ---- clocks ---- */

/* VM @vm's clock at true time @tau, as its CPU @v reads it. */
static uint64_t guest_at(const struct synth *s, unsigned int vm, unsigned int v, uint64_t tau)
{
	uint64_t g;

	/* stands still at the value it reaches at the freeze's end (another
	 * CPU's reading that ran ahead, as a global last value returns it) */
	if (vm == 0 && v == 0 && s->freeze_ns && tau >= s->tau_freeze &&
	    tau < s->tau_freeze + s->freeze_ns)
		tau = s->tau_freeze + s->freeze_ns;
	g = s->G0[vm] + (uint64_t)floorl((long double)tau * (1.0L + s->drift[vm]));
	if (vm == 0 && s->step && tau >= s->tau_step)
		g += (uint64_t)s->step_ns;
	if (vm == 0 && s->ustep_ns && s->flips && tau >= s->tau_ustep) {
		uint64_t k = (tau - s->tau_ustep) / s->flip_ns;
		uint64_t held = s->G0[vm] + s->ustep_ns + (uint64_t)floorl(
			(long double)(s->tau_ustep + k * s->flip_ns) * (1.0L + s->drift[vm]));

		if (k < 2 * s->flips && !(k & 1))
			g += s->ustep_ns;
		else if (k < 2 * s->flips && g < held)
			g = held;
	} else if (vm == 0 && s->ustep_ns && tau >= s->tau_ustep) {
		g += s->ustep_ns;
	}
	return g;
}

long double synth_g2h(const struct synth *s, unsigned int vm, uint64_t g)
{
	long double G = (long double)(g - s->G0[vm]);

	if (vm == 0 && s->step && g - s->G0[vm] >=
	    (uint64_t)((long double)s->tau_step * (1.0L + s->drift[vm])) + (uint64_t)s->step_ns)
		G -= (long double)s->step_ns;
	if (vm == 0 && s->ustep_ns && s->flips) {
		/* inside an ahead window, or the clock's own line (a value
		 * held while the truth caught up maps to the hold's end) */
		long double tau = (G - (long double)s->ustep_ns) / (1.0L + s->drift[vm]);

		if (tau >= (long double)s->tau_ustep) {
			uint64_t k = (uint64_t)((tau - (long double)s->tau_ustep) /
						(long double)s->flip_ns);

			if (k < 2 * s->flips && !(k & 1))
				return (long double)s->H0 + tau;
		}
		return (long double)s->H0 + G / (1.0L + s->drift[vm]);
	}
	if (vm == 0 && s->ustep_ns && g - s->G0[vm] >=
	    (uint64_t)((long double)s->tau_ustep * (1.0L + s->drift[vm])) + s->ustep_ns)
		G -= (long double)s->ustep_ns;
	return (long double)s->H0 + G / (1.0L + s->drift[vm]);
}

static uint64_t host_tsc(const struct synth *s, uint64_t h)
{
	return s->tsc0 + (h - s->H0) * 5 / 2;
}

static uint64_t token_of(const struct synth *s, unsigned int vm)
{
	return rnd(s, 1, vm, 0) | 1;
}

/* ---- exchanges ---- */

struct xch {
	uint64_t t1, t2, t3, t4, seq, token, t1_claim;
	bool guest_rec;		/* the guest writes a record */
	uint64_t grec_ts;	/* when (guest clock) */
	uint64_t g_tsc;		/* the guest's TSC at t1 */
	enum synth_forge kind;
};

static uint64_t window(const struct synth *s)
{
	return s->period_ns / 64;
}

static bool forged_k(const struct synth *s, unsigned int vm, uint64_t k)
{
	uint64_t K = s->tau_step / s->period_ns;

	if (!s->forge_every || k % s->forge_every != s->forge_every - 1)
		return false;
	/* keep attacks away from the clock step */
	return !(vm == 0 && s->step && k + 2 >= K && k <= K + 1);
}

static uint64_t tau_of(const struct synth *s, unsigned int vm, unsigned int v, uint64_t k)
{
	return s->period_ns + k * s->period_ns + v * s->period_ns / s->vcpus +
	       (uint64_t)(unit(rnd(s, 2, vm * 64 + v, k)) * (double)(s->period_ns / 16));
}

/* The honest exchange k of (vm, v). */
static void honest(const struct synth *s, unsigned int vm, unsigned int v, uint64_t k,
		   struct xch *x)
{
	uint64_t tau = tau_of(s, vm, v, k), w = window(s);
	uint64_t d1 = 300 + expo(rnd(s, 3, vm * 64 + v, k), 200, w);
	uint64_t r = 800 + expo(rnd(s, 4, vm * 64 + v, k), 400, w);
	uint64_t d2 = 300 + expo(rnd(s, 5, vm * 64 + v, k), 200, w);

	if (vm == 0 && s->step && s->skew_ns) {
		if (tau < s->tau_step)
			d1 += s->skew_ns;
		else
			d2 += s->skew_ns;
	}
	memset(x, 0, sizeof(*x));
	x->t1 = x->t1_claim = guest_at(s, vm, v, tau);
	x->g_tsc = host_tsc(s, s->H0 + tau) + s->tsc_off[vm] + (uint64_t)s->tsc_lie;
	x->t2 = s->H0 + tau + d1;
	x->t3 = x->t2 + r;
	x->t4 = guest_at(s, vm, v, tau + d1 + r + d2);
	x->seq = 2 * (k + 1);
	x->token = token_of(s, vm);
	if (vm == 0 && v == 0 && s->short_k && k == s->short_k) {
		/* 100 us in the host (the recording's 77 us), 10 ns less in
		 * the guest: within the 1000 ppm prior's 100 ns */
		x->t3 = x->t2 + 100000;
		x->t4 = x->t1 + 100000 - 10;
	}
	x->guest_rec = true;
	x->grec_ts = x->t4;
}

/* The forged exchange after honest exchange k (when forged_k). */
static void forged(const struct synth *s, unsigned int vm, unsigned int v, uint64_t k,
		   struct xch *x)
{
	uint64_t tau = tau_of(s, vm, v, k) + s->period_ns / 2;
	struct xch h;

	honest(s, vm, v, k, &h);
	memset(x, 0, sizeof(*x));
	/* one kind per vCPU at a time: four lying exchanges of a guest
	 * kernel in a row would form a segment of their own (the sync
	 * library's documented limit) */
	x->kind = (enum synth_forge)(1 + (k / s->forge_every + v) % (SF_NKINDS - 1));
	x->t2 = s->H0 + tau + 500;
	x->t3 = x->t2 + 900;
	x->token = h.token;
	switch (x->kind) {
	case SF_TOKEN:
		x->token ^= 0x5555;
		x->seq = h.seq + 2;
		x->t1_claim = guest_at(s, vm, v, tau);
		break;
	case SF_MISMATCH:
		x->seq = h.seq + 2;	/* the next honest one's */
		x->t1_claim = guest_at(s, vm, v, tau) + 12345;
		break;
	case SF_REPLAY:
		x->seq = h.seq;
		x->t1_claim = h.t1;
		break;
	default:	/* SF_WILD */
		x->seq = h.seq + 1;
		x->t1 = x->t1_claim = guest_at(s, vm, v, tau) + 10000000;
		x->t4 = guest_at(s, vm, v, tau + 2000) + 10000000;
		x->guest_rec = true;
		x->grec_ts = guest_at(s, vm, v, tau + 2100);
		break;
	}
}

/* ---- a stream file ---- */


static void sw_flush(struct synth_stream *w)
{
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	int e;

	if (!w->n)
		return;
	c.origin = &w->o;
	if (w->losses && w->seq == 3)
		w->lost += 17;	/* the ring buffer dropped records before it */
	if (w->losses && w->seq == 6)
		w->seq++;	/* a sub-buffer that never reached the file */
	c.lost_before = w->lost;
	c.seq = w->seq++;
	c.begin_ts = w->begin;
	c.end_ts = w->prev;
	c.nr_records = w->n;
	c.records.data = w->recs;
	c.records.len = w->len;
	e = tf_writer_append_msg(w->w, TF_FRAME_CHUNK, &c.base);
	if (e && !w->err)
		w->err = e;
	w->n = 0;
	w->len = 0;
}

void synth_stream_rec(struct synth_stream *w, uint64_t ts, unsigned int id, const void *p,
		      uint16_t size)
{
	if (w->len + 24 + size > sizeof(w->recs))
		sw_flush(w);
	if (!w->n)
		w->begin = w->prev = ts;
	w->len += vmscope_rb_rec_encode(w->recs + w->len, w->prev, ts, id, p, size);
	w->prev = ts;
	w->n++;
}

int synth_stream_open(struct synth_stream *w, int dfd, const char *name, int side, uint32_t vm,
		   uint32_t cpu)
{
	return synth_stream_open_chan(w, dfd, name, side, vm, cpu, 0);
}

int synth_stream_open_chan(struct synth_stream *w, int dfd, const char *name, int side,
			   uint32_t vm, uint32_t cpu, uint32_t chan)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	static uint8_t sid[16] = { 7, 7, 7 };
	int e;

	memset(w, 0, sizeof(*w));
	vmscope__trace__origin__init(&w->o);
	w->o.side = side;
	w->o.vm = vm;
	w->o.cpu = cpu;
	w->o.channel = chan;
	/* a chunk frame fits; the default 1 MiB would cost the fuzz target
	 * most of its time in page faults */
	struct tf_writer_opts wo = { .buf_size = 128 << 10 };

	e = tf_writer_create(&w->w, dfd, name, &wo);
	if (e)
		return e;
	fh.format_version = 1;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fh.origin = &w->o;
	fh.session_id.data = sid;
	fh.session_id.len = 16;
	return tf_writer_append_msg(w->w, TF_FRAME_FILE_HEADER, &fh.base);
}

int synth_stream_close(struct synth_stream *w)
{
	int e;

	sw_flush(w);
	e = tf_writer_close(w->w);
	return w->err ? w->err : e;
}

/* ---- the guest event table (ids unlike the host's, to test renumbering) ---- */


static Vmscope__Trace__FieldDesc gf[13];
static Vmscope__Trace__FieldDesc *gfp[13];
static Vmscope__Trace__EventDesc gev[3];
static Vmscope__Trace__EventDesc *gevp[3];

static void gfield(int i, const char *name, int type, uint32_t off, uint32_t size)
{
	vmscope__trace__field_desc__init(&gf[i]);
	gf[i].name = (char *)name;
	gf[i].type = type;
	gf[i].offset = off;
	gf[i].size = size;
	gfp[i] = &gf[i];
}

static void gevent(int i, uint32_t id, const char *name, const char *fmt, uint32_t size,
		   int f0, int nf)
{
	vmscope__trace__event_desc__init(&gev[i]);
	gev[i].id = id;
	gev[i].name = (char *)name;
	gev[i].system = "synth";
	gev[i].tracepoint = (char *)name;
	gev[i].format = (char *)fmt;
	gev[i].payload_size = size;
	gev[i].fields = &gfp[f0];
	gev[i].n_fields = (size_t)nf;
	gevp[i] = &gev[i];
}

static void guest_table(Vmscope__Trace__EventTable *t, Vmscope__Trace__Origin *o, bool tsc,
			bool steal)
{
	enum { U32 = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U32,
	       U64 = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U64,
	       S32 = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_S32,
	       S64 = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_S64 };

	gfield(0, "prev_pid", S32, 0, 4);
	gfield(1, "next_pid", S32, 4, 4);
	gfield(2, "n", U32, 0, 4);
	gfield(3, "t1", U64, 0, 8);
	gfield(4, "t4", U64, 8, 8);
	gfield(5, "token", U64, 16, 8);
	gfield(6, "seq", U64, 24, 8);
	gfield(7, "ret", S64, 32, 8);
	gfield(8, "cpu", U32, 40, 4);
	gfield(9, "tsc_a", U64, 48, 8);
	gfield(10, "tsc_b", U64, 56, 8);
	gevent(0, SYNTH_GID_SWITCH, "sched_switch", "prev %d next %d", 8, 0, 2);
	gevent(1, SYNTH_GID_TICK, SYNTH_GUEST_TICK, "n %u", 4, 2, 1);
	if (steal) {
		/* ABI 0.4's layout: cpu past the 64 bytes of before */
		gfield(3, "t1", U64, 0, 8);
		gfield(4, "t4", U64, 8, 8);
		gfield(5, "token", U64, 16, 8);
		gfield(6, "seq", U64, 24, 8);
		gfield(7, "ret", S64, 32, 8);
		gfield(8, "tsc_a", U64, 40, 8);
		gfield(9, "tsc_b", U64, 48, 8);
		gfield(10, "steal_ns", U64, 56, 8);
		gfield(11, "cpu", U32, 64, 4);
		gfield(12, "missed", U32, 68, 4);
		gevent(2, SYNTH_GID_SYNC, "sync_guest", "t1 %llu t4 %llu token %#llx seq %llu "
		       "ret %lld tsc_a %llu tsc_b %llu steal_ns %llu cpu %u missed %u", 72, 3, 10);
	} else if (tsc) {
		/* missed (44..47) is not described: bytes a reader skips */
		gevent(2, SYNTH_GID_SYNC, "sync_guest", "t1 %llu t4 %llu token %#llx seq %llu "
		       "ret %lld cpu %u tsc_a %llu tsc_b %llu", 64, 3, 8);
	} else {
		gevent(2, SYNTH_GID_SYNC, "sync_guest", "t1 %llu t4 %llu token %#llx seq %llu "
		       "ret %lld cpu %u", 44, 3, 6);
	}
	vmscope__trace__event_table__init(t);
	t->origin = o;
	t->ringbuf_abi = VMSCOPE_RB_ABI_VERSION;
	t->n_events = 3;
	t->events = gevp;
}

#define SYNTH_MAX_FILES	64

/*
 * The stream files already in @dfd, with their frames and bytes, as the
 * collector's Summary lists them. Returns how many (names in @names).
 */
static size_t list_streams(int dfd, Vmscope__Trace__FileSummary *fs,
			   char (*names)[64])
{
	struct dirent *de;
	size_t n = 0;
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d)) && n < SYNTH_MAX_FILES) {
		size_t len = strlen(de->d_name);
		struct tf_reader *r;
		struct tf_frame f;

		if (len < 5 || len >= 64 || strcmp(de->d_name + len - 4, TF_TRACE_SUFFIX) ||
		    !strcmp(de->d_name, TF_TRACE_METADATA) ||
		    tf_reader_open(&r, dfd, de->d_name))
			continue;
		vmscope__trace__file_summary__init(&fs[n]);
		snprintf(names[n], sizeof(names[n]), "%s", de->d_name);
		fs[n].name = names[n];
		fs[n].role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
		fs[n].closed_cleanly = true;
		while (tf_reader_next(r, &f) == 1)
			fs[n].frames++;
		fs[n].bytes = tf_reader_end(r)->size;
		tf_reader_close(r);
		n++;
	}
	closedir(d);
	return n;
}

int synth_write_meta(struct synth *s, int dfd)
{
	static Vmscope__Trace__FileSummary fs[SYNTH_MAX_FILES], *fsp[SYNTH_MAX_FILES];
	static char fnames[SYNTH_MAX_FILES][64];
	static struct vr_pb_events hostev, guestev;
	static struct vmscope_event_desc abi03[VMSCOPE_NR_EVENTS];
	Vmscope__Trace__SessionMetadata m = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	Vmscope__Trace__VmInfo vm[4], *vmp[4];
	Vmscope__Trace__VcpuThread vt[4][8], *vtp[4][8];
	Vmscope__Trace__VcpuTsc vts[4][8], *vtsp[4][8];
	Vmscope__Trace__EventTable gt;
	Vmscope__Trace__Origin go = VMSCOPE__TRACE__ORIGIN__INIT;
	static uint8_t sid[16] = { 7, 7, 7 };
	static char names[4][16];
	struct tf_writer *w;
	int e;

	vr_events_to_pb(&hostev, vmscope_event_descs, VMSCOPE_NR_EVENTS,
			VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, "synth");
	int n03 = s->guest_abi03 ? vmscope_events_abi03(abi03) : 0;

	if (n03 < 0)
		return -EINVAL;
	vr_events_to_pb(&guestev, s->guest_abi03 ? abi03 : vmscope_event_descs,
			s->guest_abi03 ? (unsigned int)n03 : VMSCOPE_NR_EVENTS,
			VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0, "synth");
	guest_table(&gt, &go, s->tsc, s->steal);
	go.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
	clk.name = "synth";
	clk.unit = "ns";
	clk.ns_mul = clk.ns_div = 1;
	clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	clk.ts_bits = 64;
	clk.monotonic = true;
	for (unsigned int v = 0; v < s->n_vms; v++) {
		vmscope__trace__vm_info__init(&vm[v]);
		snprintf(names[v], sizeof(names[v]), "synth%u", v);
		vm[v].name = names[v];
		vm[v].qemu_pid = (int32_t)(1000 * (v + 1));
		vm[v].guest_clock = &clk;
		vm[v].guest_events = s->real_guest_table ? &guestev.table : &gt;
		if (s->last_vm_no_agent && v == s->n_vms - 1)
			vm[v].guest_events = NULL;
		for (unsigned int c = 0; c < s->vcpus && !s->no_tid_map; c++) {
			vmscope__trace__vcpu_thread__init(&vt[v][c]);
			vt[v][c].vcpu = c;
			vt[v][c].tid = (int32_t)(1000 * (v + 1) + 1 + c);
			vtp[v][c] = &vt[v][c];
		}
		vm[v].n_vcpus = s->no_tid_map ? 0 : s->vcpus;
		for (unsigned int c = 0; c < s->vcpus && s->tsc && s->tsc_session; c++) {
			vmscope__trace__vcpu_tsc__init(&vts[v][c]);
			vts[v][c].vcpu_id = c;
			vts[v][c].offset = s->tsc_off[v];
			vtsp[v][c] = &vts[v][c];
		}
		vm[v].n_tsc = s->tsc && s->tsc_session ? s->vcpus : 0;
		vm[v].tsc = vtsp[v];
		vm[v].vcpus = vtp[v];
		vmp[v] = &vm[v];
	}
	m.format_version = 1;
	m.session_id.data = sid;
	m.session_id.len = 16;
	m.host_clock = &clk;
	m.host_events = &hostev.table;
	m.n_vms = s->n_vms;
	m.vms = vmp;
	m.start_ts = s->H0;
	e = tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL);
	if (e)
		return e;
	fh.format_version = 1;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA;
	fh.session_id = m.session_id;
	tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base);
	tf_writer_append_msg(w, TF_FRAME_SESSION, &m.base);
	sum.stop_ts = s->H0 + s->duration_ns;
	sum.stop_realtime_ns = 1;
	sum.n_files = list_streams(dfd, fs, fnames);
	for (size_t i = 0; i < sum.n_files; i++)
		fsp[i] = &fs[i];
	sum.files = fsp;
	tf_writer_append_msg(w, TF_FRAME_SUMMARY, &sum.base);
	return tf_writer_close(w);
}

/* ---- host stream of CPU h ---- */

struct hq {		/* pending host records of one vCPU, in time order */
	unsigned int vm, v;
	uint64_t k;
	unsigned int n, i;
	struct { uint64_t ts; bool t3; struct xch x; } r[4];
};

static void hq_fill(struct synth *s, struct hq *q)
{
	struct xch x;

	q->n = q->i = 0;
	honest(s, q->vm, q->v, q->k, &x);
	q->r[q->n].ts = x.t2, q->r[q->n].t3 = false, q->r[q->n++].x = x;
	q->r[q->n].ts = x.t3, q->r[q->n].t3 = true, q->r[q->n++].x = x;
	if (forged_k(s, q->vm, q->k)) {
		forged(s, q->vm, q->v, q->k, &x);
		q->r[q->n].ts = x.t2, q->r[q->n].t3 = false, q->r[q->n++].x = x;
		q->r[q->n].ts = x.t3, q->r[q->n].t3 = true, q->r[q->n++].x = x;
	}
	q->k++;
}

static const char *off_comm(int32_t tid)
{
	return tid > 9000 ? "hog" : tid ? "CPU/KVM" : "swapper";
}

/* synth.stalls: a host switch from @prev (@prev_state) to @next at @ts: a
 * vCPU thread off its CPU (to host task "hog", or to the idle task), or
 * back on it */
static void host_off(struct synth *s, struct synth_stream *w, uint64_t ts, int32_t prev,
		     uint32_t prev_state, int32_t next)
{
	struct vmscope_ev_sched_switch e = { .prev_pid = prev, .prev_tgid = prev - prev % 1000,
					     .prev_state = prev_state, .next_pid = next,
					     .next_tgid = next - next % 1000 };

	snprintf(e.prev_comm, sizeof(e.prev_comm), "%s", off_comm(prev));
	snprintf(e.next_comm, sizeof(e.next_comm), "%s", off_comm(next));
	synth_stream_rec(w, ts, VMSCOPE_EV_sched_switch, &e, sizeof(e));
	s->n_host_events++;
}

static void host_switch(struct synth *s, struct synth_stream *w, uint64_t ts, int32_t tid)
{
	struct vmscope_ev_sched_switch e = { .prev_pid = 1, .next_pid = tid,
					     .next_tgid = tid - tid % 1000 };

	/* what follows it may be in the other stream: not at the same time */
	synth_stream_rec(w, s->keep_channel ? ts - 1 : ts, VMSCOPE_EV_sched_switch, &e, sizeof(e));
	s->n_host_events++;
}

/* With details: what exit @ex (the @pair-th of this stream) accessed,
 * recorded at its kvm_exit's time @ts, after it. */
static void host_detail(struct synth *s, struct synth_stream *w, uint64_t ts,
			const struct vmscope_ev_kvm_exit *ex, uint64_t pair)
{
	if (ex->exit_reason == 0x7b) {
		struct vmscope_ev_kvm_pio p = { .write = (uint32_t)(pair >> 1 & 1),
						.port = (uint32_t)(0x3f8 + pair / 3 % 4),
						.size = 1u << (pair / 5 % 3), .count = 1 };

		synth_stream_rec(w, ts, VMSCOPE_EV_kvm_pio, &p, sizeof(p));
		s->n_host_events++;
	} else if (ex->exit_reason == 0x400) {
		/* pages 0..3 and 5 of 0xfebf0000: two regions; every third
		 * one MMIO */
		uint64_t page = pair / 3 % 6;
		struct vmscope_ev_kvm_page_fault f = {
			.address = 0xfebf0000 + (page == 4 ? 5 : page) * 4096 + pair % 4096,
			.error_code = pair & 2, .vcpu_id = ex->vcpu_id };

		synth_stream_rec(w, ts, VMSCOPE_EV_kvm_page_fault, &f, sizeof(f));
		s->n_host_events++;
		if (pair / 3 % 3 == 0) {
			struct vmscope_ev_kvm_mmio m = { .gpa = f.address, .len = 4,
							 .type = pair & 2 ? 2 : 1 };

			synth_stream_rec(w, ts, VMSCOPE_EV_kvm_mmio, &m, sizeof(m));
			s->n_host_events++;
		}
	}
}

/*
 * The host's filler between exchanges, at *@fill: an exit or an entry
 * (the @nfill-th), of the vCPU the walkable story names or of the thread
 * @on_cpu running here, as KVM writes them.
 */
static void host_fill(struct synth *s, struct synth_stream *w, uint64_t *fill, uint64_t *nfill,
		      int32_t on_cpu)
{
	/* AMD SVM (isa 2) exit code 0x7b: an I/O port access */
	struct vmscope_ev_kvm_exit ex = { .exit_reason = 0x7b, .isa = 2, .reason_valid = 1 };
	struct vmscope_ev_kvm_entry en = { .rip = 0x1000 };

	if (s->walkable) {
		/* exit then entry of one vCPU: IOIO, CPUID, HLT */
		static const uint32_t code[3] = { 0x7b, 0x72, 0x78 };
		uint64_t pair = (*nfill)++ / 2;

		ex.vcpu_id = en.vcpu_id = (uint32_t)(pair % s->vcpus);
		ex.exit_reason = s->details && pair % 3 == 1 ? 0x400 : code[pair % 3];
		if (*nfill & 1) {
			synth_stream_rec(w, *fill, VMSCOPE_EV_kvm_exit, &ex, sizeof(ex));
			if (s->details)
				host_detail(s, w, *fill, &ex, pair);
		} else
			synth_stream_rec(w, *fill, VMSCOPE_EV_kvm_entry, &en, sizeof(en));
		/* exits of 1, 2 or 3 gaps: durations differ by reason */
		*fill += s->host_gap_ns * (*nfill & 1 ? 1 + pair % 3 : 1);
	} else {
		/* as KVM writes them: the vCPU of the thread running here */
		uint32_t vcpu = on_cpu > 0 ? (uint32_t)(on_cpu % 1000 - 1) : 0;

		if ((*nfill)++ & 1) {
			en.vcpu_id = vcpu;
			synth_stream_rec(w, *fill, VMSCOPE_EV_kvm_entry, &en, sizeof(en));
		} else {
			ex.vcpu_id = vcpu;
			synth_stream_rec(w, *fill, VMSCOPE_EV_kvm_exit, &ex, sizeof(ex));
		}
		*fill += s->host_gap_ns;
	}
}

/* The next host record of @p's exchange (sync_t2, or sync_t3) on @sk. */
static void host_sync(struct synth *s, struct synth_stream *w, struct synth_stream *sk,
		      struct hq *p, int32_t *on_cpu)
{
	const struct xch *x = &p->r[p->i].x;
	int32_t tid = (int32_t)(1000 * (p->vm + 1) + 1 + p->v);

	if (p->r[p->i].t3) {
		struct vmscope_ev_sync_t3 r3 = {
			.t2 = x->t2, .t3 = x->t3, .token = x->token,
			.seq = x->seq, .tid = tid, .vcpu_id = p->v };
		synth_stream_rec(sk, x->t3, VMSCOPE_EV_sync_t3, &r3, sizeof(r3));
		if (x->kind)
			s->n_forged[x->kind]++;
		else
			s->n_exchanges++;
	} else {
		if (s->host_switch)
			host_switch(s, w, x->t2, *on_cpu = tid);
		struct vmscope_ev_sync_t2 r2 = {
			.t2 = x->t2, .token = x->token, .seq = x->seq,
			.t1 = x->t1_claim, .guest_cpu = p->v, .tid = tid,
			.vcpu_id = p->v };

		if (s->tsc) {
			r2.tsc_a = host_tsc(s, x->t2) - 3;
			r2.tsc_b = host_tsc(s, x->t2) + 3;
		}
		synth_stream_rec(sk, x->t2, VMSCOPE_EV_sync_t2, &r2, sizeof(r2));
	}
	if (++p->i == p->n)
		hq_fill(s, p);
}

static int write_host(struct synth *s, int dfd, unsigned int h)
{
	struct vmscope_ev_kvm_write_tsc_offset tw = { .next_tsc_offset = 42 };
	struct hq q[32];
	unsigned int nq = 0;
	uint64_t end = s->H0 + s->duration_ns, fill = s->H0 + s->period_ns / 3 + h * 7;
	uint64_t nfill = 0;
	int32_t on_cpu = -1;	/* the vCPU thread the last switch here ran */
	/* synth.stalls: the vCPU thread off its CPU until back (UINT64_MAX:
	 * none), and who has the CPU meanwhile */
	uint64_t back = UINT64_MAX, nslot = 0;
	int32_t off_tid = 0, off_by = 0;
	bool tsc_done = !(s->step && h == 0);
	uint64_t storm = s->tsc_storm && h == 1 && s->n_vms > 1 ? s->H0 + s->period_ns / 3 : UINT64_MAX;
	char name[64];
	struct synth_stream w, k;
	struct synth_stream *sk = s->keep_channel ? &k : &w;	/* sync, TSC */
	int e;

	for (unsigned int vm = 0; vm < s->n_vms; vm++)
		for (unsigned int v = 0; v < s->vcpus; v++)
			if ((vm * s->vcpus + v) % s->host_cpus == h && nq < 32) {
				memset(&q[nq], 0, sizeof(q[nq]));
				q[nq].vm = vm;
				q[nq].v = v;
				hq_fill(s, &q[nq]);
				nq++;
			}
	tf_trace_host_name(name, sizeof(name), 0, h);
	e = synth_stream_open(&w, dfd, name, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, h);
	w.losses = s->losses;
	if (e)
		return e;
	if (s->keep_channel) {
		tf_trace_host_name(name, sizeof(name), 1, h);
		e = synth_stream_open_chan(&k, dfd, name, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, h, 1);
		if (e) {
			synth_stream_close(&w);
			return e;
		}
	}
	/* KVM writes each vCPU's offset when it creates it, in its thread */
	for (unsigned int i = 0; i < nq && s->tsc && !s->tsc_session; i++) {
		on_cpu = (int32_t)(1000 * (q[i].vm + 1) + 1 + q[i].v);
		host_switch(s, &w, s->H0 + i, on_cpu);
		tw.vcpu_id = q[i].v;
		tw.next_tsc_offset = s->tsc_off[q[i].vm];
		synth_stream_rec(sk, s->H0 + i, VMSCOPE_EV_kvm_write_tsc_offset, &tw, sizeof(tw));
		s->n_host_events++;
	}
	for (;;) {
		uint64_t best = back != UINT64_MAX ? back : fill;
		int bi = -1;

		for (unsigned int i = 0; i < nq; i++)
			if (q[i].r[q[i].i].ts < best) {
				best = q[i].r[q[i].i].ts;
				bi = (int)i;
			}
		if (!tsc_done && s->H0 + s->tau_step <= best) {
			tsc_done = true;
			tw.vcpu_id = 0;
			if (s->host_switch)
				host_switch(s, &w, s->H0 + s->tau_step, on_cpu = 1001);
			synth_stream_rec(sk, s->H0 + s->tau_step, VMSCOPE_EV_kvm_write_tsc_offset,
			       &tw, sizeof(tw));
			s->n_host_events++;
			continue;
		}
		if (storm <= best && storm < end) {
			host_switch(s, &w, storm, on_cpu = 2001);
			tw.vcpu_id = 0;
			tw.next_tsc_offset = s->tsc ? s->tsc_off[1] : 42;
			synth_stream_rec(sk, storm, VMSCOPE_EV_kvm_write_tsc_offset, &tw, sizeof(tw));
			s->n_host_events++;
			storm += 100000;
			continue;
		}
		if (best >= end)
			break;
		if (bi < 0 && back != UINT64_MAX) {
			/* the off interval ends: the thread runs again */
			host_off(s, &w, back, off_by, 0, off_tid);
			on_cpu = off_tid;
			fill = back + s->host_gap_ns;
			back = UINT64_MAX;
			continue;
		}
		if (bi < 0 && s->stalls && s->walkable && on_cpu > 0 && !(nfill & 1) &&
		    ++nslot % 23 == 0) {
			/* in the guest (its last filler an entry): off it goes */
			uint64_t r = rnd(s, 15, h, nslot);

			off_tid = on_cpu;
			off_by = r % 4 ? (int32_t)(9001 + h) : 0;
			host_off(s, &w, fill, off_tid, off_by ? 0 : 1, off_by);
			back = fill + 40000 + (r >> 8) % 160000;
			continue;
		}
		if (bi < 0)
			host_fill(s, &w, &fill, &nfill, on_cpu);
		else
			host_sync(s, &w, sk, &q[bi], &on_cpu);
		s->n_host_events++;
	}
	e = synth_stream_close(&w);
	if (s->keep_channel) {
		int e2 = synth_stream_close(&k);

		e = e ? e : e2;
	}
	return e;
}

/* ---- guest stream of VM vm, CPU v ---- */

static int write_guest(struct synth *s, int dfd, unsigned int vm, unsigned int v)
{
	uint64_t end = s->duration_ns, ftau = s->period_ns / 5 + v * 11, k = 0, nfill = 0;
	struct xch xs[2];
	unsigned int nx = 0, ix = 0;
	char name[64];
	struct synth_stream w;
	int e;

	tf_trace_guest_name(name, sizeof(name), vm, v);
	e = synth_stream_open(&w, dfd, name, VMSCOPE__TRACE__SIDE__SIDE_GUEST, vm, v);
	w.losses = s->losses;
	if (e)
		return e;
	for (;;) {
		if (ix == nx) {	/* the records of exchange k */
			nx = ix = 0;
			honest(s, vm, v, k, &xs[nx++]);
			if (forged_k(s, vm, k)) {
				forged(s, vm, v, k, &xs[nx]);
				if (xs[nx].guest_rec)
					nx++;
			}
			k++;
		}
		uint64_t gf = guest_at(s, vm, v, ftau);

		if (ftau >= end && tau_of(s, vm, v, k - 1) >= end)
			break;
		if (ftau < end && gf < xs[ix].grec_ts) {
			/* a running clock never repeats (clock.c): a filler
			 * drawn at the ns of the sync record just written
			 * (its time is t4) comes 1 ns later */
			if (gf == w.prev && !(vm == 0 && ((v == 0 && s->freeze_ns) || s->flips)))
				gf++;
			if (s->walkable && (nfill++ & 1)) {
				struct vmscope_ev_softirq_entry n = { .vec = (uint32_t)nfill % 10 };

				synth_stream_rec(&w, gf, VMSCOPE_EV_softirq_entry, &n, sizeof(n));
			} else if (s->walkable) {
				/* stalls: each CPU its own tasks (100.., 200..),
				 * so that which are runnable there does not hang
				 * on how a merge orders two CPUs' switches */
				int32_t base = s->stalls ? (int32_t)(100 * (v + 1)) : 100;
				struct vmscope_ev_sched_switch sw = {
					.prev_pid = base + (int32_t)(nfill % 4),
					.next_pid = base + (int32_t)((nfill + 2) % 4) };

				snprintf(sw.prev_comm, sizeof(sw.prev_comm), "t%d", sw.prev_pid);
				snprintf(sw.next_comm, sizeof(sw.next_comm), "t%d", sw.next_pid);
				synth_stream_rec(&w, gf, VMSCOPE_EV_sched_switch, &sw, sizeof(sw));
			} else if (nfill++ & 1) {
				uint32_t n = (uint32_t)nfill;

				synth_stream_rec(&w, gf, SYNTH_GID_TICK, &n, sizeof(n));
			} else {
				struct synth_gswitch sw = { .prev_pid = (int32_t)(100 + nfill % 4),
						       .next_pid = (int32_t)(100 + (nfill + 2) % 4) };

				synth_stream_rec(&w, gf, SYNTH_GID_SWITCH, &sw, sizeof(sw));
			}
			ftau += s->guest_gap_ns;
		} else {
			const struct xch *x = &xs[ix++];
			struct synth_gsync r = { .t1 = x->t1, .t4 = x->t4, .token = x->token,
					    .seq = x->seq, .ret = -1000, .cpu = v,
					    .tsc_a = x->g_tsc - 2, .tsc_b = x->g_tsc + 2 };

			/* 15 us more at each exchange: never going back in
			 * the stream's order, forged records included */
			if (s->stalls)
				r.steal_ns = k * 15000;

			if (tau_of(s, vm, v, k - 1) >= end)
				continue;
			uint8_t b[72];

			synth_stream_rec(&w, x->grec_ts, s->walkable ? VMSCOPE_EV_sync_guest :
					 SYNTH_GID_SYNC, b, synth_gsync_bytes(s, &r, b));
		}
		s->n_guest_events++;
	}
	return synth_stream_close(&w);
}

uint16_t synth_gsync_bytes(const struct synth *s, const struct synth_gsync *g, uint8_t *out)
{
	if (!s->steal) {
		memcpy(out, g, s->tsc ? 64 : 44);
		return s->tsc ? 64 : 44;
	}
	memcpy(out, g, 40);	/* t1 .. ret */
	memcpy(out + 40, &g->tsc_a, 8);
	memcpy(out + 48, &g->tsc_b, 8);
	memcpy(out + 56, &g->steal_ns, 8);
	memcpy(out + 64, &g->cpu, 4);
	memcpy(out + 68, &g->missed, 4);
	return 72;
}

void synth_defaults(struct synth *s, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->seed = seed;
	s->n_vms = 2;
	s->vcpus = 2;
	s->host_cpus = 2;
	s->period_ns = 1000000;
	s->duration_ns = 400000000;
	s->host_gap_ns = 20000;
	s->guest_gap_ns = 30000;
	s->forge_every = 10;
	s->step = true;
	s->host_switch = true;
}

int synth_write(struct synth *s, const char *path)
{
	int dfd, e;

	if (s->n_vms > 4 || s->vcpus > 8 || !s->vcpus || !s->host_cpus || !s->period_ns)
		return -EINVAL;
	if (s->walkable)
		s->real_guest_table = s->steal = true;
	s->H0 = (rnd(s, 9, 0, 0) >> 2) + ((uint64_t)1 << 40);
	for (unsigned int v = 0; v < s->n_vms; v++) {
		s->G0[v] = rnd(s, 10, v, 0) >> 1;
		s->drift[v] = (unit(rnd(s, 11, v, 0)) - 0.5) * 400e-6;	/* +-200 ppm */
	}
	s->step_ns = 3000000 + (int64_t)(rnd(s, 12, 0, 0) % 1000000);
	if (s->tsc && s->step)
		return -EINVAL;
	s->tsc0 = rnd(s, 13, 0, 0) >> 8;
	for (unsigned int v = 0; v < s->n_vms; v++)
		s->tsc_off[v] = rnd(s, 14, v, 0);	/* any value: mod 2^64 */
	/* between exchange windows (see forged_k, tau_of) */
	s->tau_step = s->period_ns + (s->duration_ns / 2 / s->period_ns) * s->period_ns +
		      s->period_ns - s->period_ns / (2 * s->vcpus);
	memset(s->n_forged, 0, sizeof(s->n_forged));
	s->n_host_events = s->n_guest_events = s->n_exchanges = 0;
	e = tf_trace_create(path, &dfd);
	if (e)
		return e;
	e = 0;
	for (unsigned int h = 0; h < s->host_cpus && !e; h++)
		e = write_host(s, dfd, h);
	for (unsigned int vm = 0; vm < s->n_vms && !e; vm++)
		for (unsigned int v = 0; v < s->vcpus && !e; v++)
			e = write_guest(s, dfd, vm, v);
	/* last, as the collector does: its Summary lists the streams */
	if (!e)
		e = synth_write_meta(s, dfd);
	close(dfd);
	return e;
}

int synth_write_sync(struct synth *s, const char *path, const struct mg_opts *o,
		     struct vr_trace **t, struct mg_result *r, char *err, size_t errlen)
{
	int e = synth_write(s, path);

	*t = NULL;
	if (!e)
		e = vr_trace_open(t, path, err, errlen);
	if (!e)
		e = mg_sync(*t, o, r, err, errlen);
	return e;
}
