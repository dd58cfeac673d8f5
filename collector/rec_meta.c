// SPDX-License-Identifier: GPL-2.0
/*
 * The metadata of one recording: file headers, the SessionMetadata as
 * known now (rewritten when a guest says hello or a vCPU appears), KVM's
 * TSC relation, and the Statistics and Summary at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <vmscope/version.h>

#include "exit_layout.h"
#include "file.pb-c.h"
#include "reader_desc.h"
#include "rec_guests.h"
#include "rec_int.h"
#include "util_clock.h"
#include "util_fs.h"
#include "stream.pb-c.h"

/* The host, its kernel and its trace clock, into @hi, @ki, @clk. */
static void fill_host(const struct rec *r, Vmscope__Trace__HostInfo *hi,
		      Vmscope__Trace__KernelInfo *ki, Vmscope__Trace__ClockDesc *clk)
{
	static char hostname[256], machine_id[64];
	static struct utsname u;

	uname(&u);
	if (gethostname(hostname, sizeof(hostname) - 1))
		hostname[0] = 0;
	/* its first line; none when it cannot be read */
	if (util_read_small("/etc/machine-id", machine_id, sizeof(machine_id)) < 0)
		machine_id[0] = 0;
	machine_id[strcspn(machine_id, "\n")] = 0;
	ki->sysname = u.sysname;
	ki->release = u.release;
	ki->version = u.version;
	ki->machine = u.machine;
	ki->nr_cpus = r->h->cfg.nr_cpu_ids;
	hi->hostname = hostname;
	hi->machine_id = machine_id;
	hi->kernel = ki;
	hi->vmscope_version = VMSCOPE_VERSION_STRING;
	/* trace_clock_local(): ns, monotonic per CPU only */
	clk->name = "trace_clock_local";
	clk->unit = "ns";
	clk->ns_mul = clk->ns_div = 1;
	clk->byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	clk->ts_bits = 64;
}

/* The VMs' messages and what they point to; vms_free() frees them. */
struct vms_pb {
	Vmscope__Trace__VmInfo *vi, **vip;
	Vmscope__Trace__VcpuThread *vt, **vtp;
	Vmscope__Trace__VcpuTsc *tsc, **tscp;
	Vmscope__Trace__GuestHello **gh;
	unsigned int n;
};

static void vms_free(struct vms_pb *m)
{
	for (unsigned int i = 0; m->gh && i < m->n; i++)
		if (m->gh[i])
			vmscope__trace__guest_hello__free_unpacked(m->gh[i], NULL);
	free(m->gh);
	free(m->vi);
	free(m->vip);
	free(m->vt);
	free(m->vtp);
	free(m->tsc);
	free(m->tscp);
}

/* Each VM: name, pid, CID, its guest's last hello, vCPU threads, TSC
 * relation. 0 or -ENOMEM. */
static int fill_vms(struct rec *r, struct vms_pb *m)
{
	unsigned int nvms = r->o->nvms;
	size_t nvt = 0, k = 0, ntsc = 0, kt = 0;

	m->n = nvms;
	for (unsigned int i = 0; i < nvms; i++) {
		nvt += r->vms[i].nvcpus;
		ntsc += r->tsc ? r->tsc[i].n : 0;
	}
	m->vi = calloc(nvms + 1, sizeof(*m->vi));
	m->vip = calloc(nvms + 1, sizeof(*m->vip));
	m->gh = calloc(nvms + 1, sizeof(*m->gh));
	m->vt = calloc(nvt + 1, sizeof(*m->vt));
	m->vtp = calloc(nvt + 1, sizeof(*m->vtp));
	m->tsc = calloc(ntsc + 1, sizeof(*m->tsc));
	m->tscp = calloc(ntsc + 1, sizeof(*m->tscp));
	if (!m->vi || !m->vip || !m->vt || !m->vtp || !m->gh || !m->tsc || !m->tscp)
		return -ENOMEM;
	for (unsigned int i = 0; i < nvms; i++) {
		const struct vm_desc *v = &r->vms[i];
		Vmscope__Trace__VmInfo *vi = &m->vi[i];

		vmscope__trace__vm_info__init(vi);
		vi->name = (char *)v->name;
		vi->qemu_pid = v->pid;
		vi->vsock_cid = v->cid;
		/* the guest's own claims, from its last hello: for decoding */
		m->gh[i] = rg_hello(r, i);
		if (m->gh[i]) {
			vi->agent_connected = true;
			vi->guest_kernel = m->gh[i]->kernel;
			vi->guest_clock = m->gh[i]->clock;
			vi->guest_events = m->gh[i]->events;
			/* to name guest RIPs offline; checked as the hello was */
			vi->guest_symbols = m->gh[i]->symbols;
		}
		vi->vcpus = &m->vtp[k];
		vi->n_vcpus = v->nvcpus;
		for (unsigned int c = 0; c < v->nvcpus; c++, k++) {
			vmscope__trace__vcpu_thread__init(&m->vt[k]);
			m->vt[k].vcpu = v->vcpu[c];
			m->vt[k].tid = v->tid[c];
			m->vtp[k] = &m->vt[k];
		}
		vi->tsc = &m->tscp[kt];
		vi->n_tsc = r->tsc ? r->tsc[i].n : 0;
		for (unsigned int c = 0; c < vi->n_tsc; c++, kt++) {
			const struct vm_tsc *t = &r->tsc[i].v[c];

			vmscope__trace__vcpu_tsc__init(&m->tsc[kt]);
			m->tsc[kt].vcpu_id = t->vcpu_id;
			m->tsc[kt].offset = t->offset;
			m->tsc[kt].ratio = t->ratio;
			m->tsc[kt].frac_bits = t->frac_bits;
			m->tscp[kt] = &m->tsc[kt];
		}
		m->vip[i] = vi;
	}
	return 0;
}

/* The recording's options and channels, pointing into @st. */
struct opts_pb {
	Vmscope__Trace__Options opt;
	Vmscope__Trace__ChannelOptions chan[VMSCOPE_SESSION_CHANNELS];
	Vmscope__Trace__ChannelOptions *chanp[VMSCOPE_SESSION_CHANNELS];
	const char *sel[VMSCOPE_MAX_EVENTS];
	const char *csel[VMSCOPE_SESSION_CHANNELS][VMSCOPE_MAX_EVENTS];
};

static void fill_options(const struct rec *r, struct opts_pb *st)
{
	const struct rec_opts *o = r->o;
	Vmscope__Trace__Options *opt = &st->opt;

	vmscope__trace__options__init(opt);
	/* the selected events by name (Options.events: empty = all) */
	opt->events = (char **)st->sel;
	opt->n_events = o->ctl.flags & VMSCOPE_CTL_EVENTS ?
			hb_event_names(r->h, o->ctl.events, st->sel) : 0;
	/* the channels: channel 0's geometry is also in the fields below */
	for (unsigned int k = 0; k < r->h->cfg.nr_chans && k < VMSCOPE_SESSION_CHANNELS; k++) {
		const struct vmscope_chan_cfg *c = &r->h->cfg.chan[k];
		Vmscope__Trace__ChannelOptions *ch = &st->chan[k];

		vmscope__trace__channel_options__init(ch);
		ch->buffer_mode = c->mode;
		ch->subbuf_size = 1ull << c->subbuf_shift;
		ch->nr_subbufs = 1u << c->nr_subbuf_shift;
		ch->events = (char **)st->csel[k];
		ch->n_events = k ? hb_event_names(r->h, c->events, st->csel[k]) : 0;
		st->chanp[k] = ch;
	}
	opt->channels = st->chanp;
	opt->n_channels = r->h->cfg.nr_chans;
	opt->buffer_mode = r->h->cfg.chan[0].mode;
	opt->subbuf_size = 1ull << r->h->cfg.chan[0].subbuf_shift;
	opt->nr_subbufs = 1u << r->h->cfg.chan[0].nr_subbuf_shift;
	opt->duration_ns = (uint64_t)(o->duration_s * 1e9);
	opt->argv = o->argv;
	opt->n_argv = (size_t)o->argc;
}

/* Where this session's exit reasons come from, now; false when the module
 * does not say. Strings point into @xm. */
static bool fill_exit_reasons(const struct rec *r, Vmscope__Trace__ExitReasonSource *xs,
			      struct vmscope_exit_mode *xm)
{
	const char *refused;

	memset(xm, 0, sizeof(*xm));
	if (ioctl(r->h->fd, VMSCOPE_IOC_GET_EXIT_MODE, xm))
		return false;
	refused = exit_refused_name(xm->refused);
	xm->why[sizeof(xm->why) - 1] = 0;
	xs->mode = (char *)exit_mode_name(xm->mode);
	xs->refused = (char *)(refused ? refused : "");
	xs->why = xm->why;
	xs->layout = xm->layout == VMSCOPE_EXIT_LAYOUT_MATCH ? "btf-match" :
		     xm->layout == VMSCOPE_EXIT_LAYOUT_MISMATCH ? "btf-mismatch" : "no-btf";
	xs->compared = xm->compared;
	xs->mismatches = xm->mismatches;
	xs->direct_since_ts = xm->direct_since_ts;
	xs->calibrations = xm->calibrations;
	xs->fallbacks = xm->fallbacks;
	return true;
}

/* The session as known now (stop = 0 while recording). */
int rec_write_session(struct rec *r, uint64_t stop_rt, uint64_t first_ts,
		      uint64_t last_ts)
{
	static struct vr_pb_events ev;
	Vmscope__Trace__SessionMetadata s = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__HostInfo hi = VMSCOPE__TRACE__HOST_INFO__INIT;
	Vmscope__Trace__KernelInfo ki = VMSCOPE__TRACE__KERNEL_INFO__INIT;
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__ExitReasonSource xs = VMSCOPE__TRACE__EXIT_REASON_SOURCE__INIT;
	struct vmscope_exit_mode xm;
	struct vms_pb vms = { 0 };
	struct opts_pb opts;
	int e;

	e = fill_vms(r, &vms);
	if (e)
		goto out;
	fill_host(r, &hi, &ki, &clk);
	vr_events_to_pb(&ev, r->h->descs, r->h->nev, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0,
			r->o->module_version);
	fill_options(r, &opts);
	s.format_version = 1;
	s.session_id.data = r->session_id;
	s.session_id.len = sizeof(r->session_id);
	s.host = &hi;
	s.host_clock = &clk;
	s.host_events = &ev.table;
	s.vms = vms.vip;
	s.n_vms = r->o->nvms;
	s.start_realtime_ns = r->start_rt;
	s.start_ts = first_ts;
	s.stop_realtime_ns = stop_rt;
	s.stop_ts = last_ts;
	s.options = &opts.opt;
	if (fill_exit_reasons(r, &xs, &xm))
		s.exit_reasons = &xs;
	r->session_bytes = TF_FRAME_HDR_SIZE + protobuf_c_message_get_packed_size(&s.base);
	e = tf_writer_append_msg(r->meta, TF_FRAME_SESSION, &s.base);
out:
	vms_free(&vms);
	return e;
}

/* KVM's TSC relation of every VM's vCPUs, read once probing is on (a
 * later write is then in the trace), into the next SessionMetadata. */
void rec_read_tsc(struct rec *r)
{
	const struct rec_opts *o = r->o;

	r->tsc = calloc(o->nvms + 1, sizeof(*r->tsc));
	if (!r->tsc)
		return;
	for (unsigned int i = 0; i < o->nvms; i++) {
		int n = vm_tsc_read(&r->tsc[i], o->vms[i].pid, VM_KVM_DEBUGFS);

		if (n > 0)
			continue;
		fprintf(stderr, "vmscope record: VM %u (pid %d): KVM's TSC offsets not read "
			"from %s: %s; the merge's TSC cross-check then needs a "
			"kvm_write_tsc_offset in the trace\n", i, (int)o->vms[i].pid,
			VM_KVM_DEBUGFS, n ? strerror(-n) : "no vCPU there");
	}
	__atomic_store_n(&r->meta_dirty, 1, __ATOMIC_RELEASE);
}

int rec_write_header(struct rec *r, struct tf_writer *w, int role,
			const struct stream_w *s);










int rec_write_header(struct rec *r, struct tf_writer *w, int role,
			const struct stream_w *s)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;

	fh.format_version = 1;
	fh.session_id.data = r->session_id;
	fh.session_id.len = sizeof(r->session_id);
	fh.role = role;
	fh.created_realtime_ns = util_realtime_ns();
	fh.writer = "vmscope record " VMSCOPE_VERSION_STRING;
	if (s) {
		rec_origin_of(s, &o);
		fh.origin = &o;
	}
	return tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base);
}

uint64_t rec_final_room(struct rec *r)
{
	unsigned int vcpus = 0, guest = __atomic_load_n(&r->guest_streams, __ATOMIC_RELAXED);

	for (unsigned int i = 0; i < r->o->nvms; i++)
		vcpus += r->vms[i].nvcpus;
	return rec_reserve_need(r->session_bytes, r->h->nbuf + 1 + (guest > vcpus ? guest : vcpus));
}

/* Statistics and Summary at the end of the metadata file. */
int rec_write_final(struct rec *r, uint64_t last_ts)
{
	unsigned int n = rec_max_streams(r), k;
	struct stream_w **sv = calloc(n, sizeof(*sv));
	Vmscope__Trace__StreamStats *ss = calloc(n, sizeof(*ss)), **ssp = calloc(n, sizeof(*ssp));
	Vmscope__Trace__FileSummary *fs = calloc(n, sizeof(*fs)), **fsp = calloc(n, sizeof(*fsp));
	Vmscope__Trace__Origin *o = calloc(n, sizeof(*o));
	char (*names)[32] = calloc(n, sizeof(*names));
	Vmscope__Trace__Statistics st = VMSCOPE__TRACE__STATISTICS__INIT;
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	int e = -ENOMEM;

	if (!sv || !ss || !ssp || !fs || !fsp || !o || !names)
		goto out;
	k = rec_all_streams(r, sv);
	for (unsigned int i = 0; i < k; i++) {
		struct stream_w *s = sv[i];

		vmscope__trace__origin__init(&o[i]);
		rec_origin_of(s, &o[i]);
		vmscope__trace__stream_stats__init(&ss[i]);
		ss[i].origin = &o[i];
		ss[i].chunks = s->chunks;
		ss[i].records = s->records;
		ss[i].bytes = s->bytes;
		ss[i].lost_events = rec_stream_lost(r, s);
		ss[i].lost_subbufs = s->gap_subbufs;
		ss[i].first_ts = s->first_ts;
		ss[i].last_ts = s->last_ts;
		ssp[i] = &ss[i];
		vmscope__trace__file_summary__init(&fs[i]);
		if (s->guest)
			tf_trace_guest_name(names[i], sizeof(names[i]), s->vm, s->cpu);
		else
			tf_trace_host_name(names[i], sizeof(names[i]), s->chan, s->cpu);
		fs[i].name = names[i];
		fs[i].role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
		fs[i].origin = &o[i];
		fs[i].frames = s->frames_end;
		fs[i].bytes = s->bytes_end;
		fs[i].closed_cleanly = s->closed_ok;
		fsp[i] = &fs[i];
	}
	st.realtime_ns = r->stop_rt;
	st.streams = ssp;
	st.n_streams = k;
	st.write_errors = r->write_err ? 1 : 0;
	st.bytes_written = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
	e = tf_writer_append_msg(r->meta, TF_FRAME_STATS, &st.base);
	if (e)
		goto out;
	sum.stop_realtime_ns = r->stop_rt;
	sum.stop_ts = last_ts;
	sum.final_stats = &st;
	sum.files = fsp;
	sum.n_files = k;
	e = tf_writer_append_msg(r->meta, TF_FRAME_SUMMARY, &sum.base);
out:
	free(sv);
	free(ss);
	free(ssp);
	free(fs);
	free(fsp);
	free(o);
	free(names);
	return e;
}

/*
 * vCPU threads that appeared since the recording started (a vCPU
 * hot-plugged, a thread named late): into the VM's map, and with its
 * TSC relation, into the next SessionMetadata. Called once a second;
 * a vCPU that comes and goes within that second stays unnamed.
 */
void rec_rescan_vcpus(struct rec *r)
{
	const struct rec_opts *o = r->o;

	for (unsigned int i = 0; i < o->nvms; i++) {
		struct vm_desc *v = &r->vms[i];
		unsigned int before = v->nvcpus;

		if (vm_add_vcpus(v) <= 0)
			continue;
		for (unsigned int k = before; k < v->nvcpus; k++)
			fprintf(stderr, "vmscope record: VM %u (%s): vCPU %u appeared, thread %d\n",
				i, v->name, v->vcpu[k], (int)v->tid[k]);
		if (r->tsc && vm_tsc_read(&r->tsc[i], v->pid, VM_KVM_DEBUGFS) < 0)
			r->tsc[i].n = 0;
		__atomic_store_n(&r->meta_dirty, 1, __ATOMIC_RELEASE);
	}
}
