/* SPDX-License-Identifier: GPL-2.0 */
/* One host recording: see record.h for the threads and the bounds. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <urcu/wfcqueue.h>

#include <vmscope/version.h>

#include "reader_desc.h"
#include "exit_layout.h"
#include "file.pb-c.h"
#include "rec_guests.h"
#include "rec_int.h"
#include "reserve.h"
#include "tsan_hb.h"
#include "record.h"
#include "stream.pb-c.h"
#include "tracefmt.h"
#include "util_clock.h"

#define IDX_MAX (1u << 20)

void rec_set_err(int *slot, int err)
{
	int zero = 0;

	__atomic_compare_exchange_n(slot, &zero, err, false, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
}

/* ---- reader threads ---- */

/* Copy one taken sub-buffer into a queue node. NULL when out of memory. */
static struct node *copy_subbuf(struct rec *r, unsigned int buf, const unsigned char *sb)
{
	size_t sb_size = hb_subbuf_size(r->h, buf);
	struct vmscope_rb_subbuf_hdr hdr;
	struct node *n;
	size_t len;

	memcpy(&hdr, sb, sizeof(hdr));
	/* the module wrote it, but a bad size must not make us read past */
	len = hdr.data_size >= VMSCOPE_RB_SB_HDR_SIZE && hdr.data_size <= sb_size ?
	      hdr.data_size - VMSCOPE_RB_SB_HDR_SIZE : 0;
	n = node_pool_get(&r->pool, len);
	if (!n)
		return NULL;
	n->kind = NODE_CHUNK;
	n->cpu = hb_cpu(r->h, buf);
	n->buf = buf;
	n->nr_records = len ? hdr.records : 0;
	n->len = (uint32_t)len;
	n->seq = hdr.seq;
	n->begin_ts = hdr.begin_ts;
	n->end_ts = hdr.end_ts;
	n->lost_before = hdr.lost_before;
	memcpy(n->data, sb + VMSCOPE_RB_SB_HDR_SIZE, len);
	return n;
}

void rec_wake_writer(struct rec *r)
{
	uint64_t one = 1;

	if (write(r->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		rec_set_err(&r->read_err, errno);
}

void rec_enqueue(struct rec *r, struct node *n)
{
	TSAN_RELEASE(n);
	cds_wfcq_enqueue(&r->qh, &r->qt, &n->qn);
	rec_wake_writer(r);
}

/* Take what buffer @buf has delivered. Returns sub-buffers taken, -1 on error. */
static int drain(struct rec *r, unsigned int buf, bool final)
{
	size_t sb_size = hb_subbuf_size(r->h, buf);
	struct vmscope_subbuf_req req;
	const unsigned char *sb;
	int taken = 0, got;

	for (;;) {
		if (__atomic_load_n(&r->queued, __ATOMIC_RELAXED) +
		    node_pool_need(&r->pool, sb_size) > r->qcap) {
			/* the writer is behind: leave it in the ring (its mode
			 * decides); at the end, wait for the writer instead */
			__atomic_add_fetch(&r->stalls, 1, __ATOMIC_RELAXED);
			if (!final)
				return taken;
			usleep(1000);
			continue;
		}
		got = hb_get(r->h, buf, &req, &sb);
		if (got <= 0)
			return got < 0 ? -1 : taken;
		struct node *n = copy_subbuf(r, buf, sb);

		if (hb_put(r->h, buf)) {
			node_pool_put(&r->pool, n);
			return -1;
		}
		if (!n) {
			rec_set_err(&r->read_err, ENOMEM);
			return -1;
		}
		__atomic_add_fetch(&r->queued, node_pool_cost(&r->pool, n), __ATOMIC_RELAXED);
		rec_enqueue(r, n);
		taken++;
	}
}

static void *reader_main(void *arg)
{
	struct rthread *t = arg;
	struct rec *r = t->r;
	struct pollfd p = { .fd = r->h->fd, .events = POLLIN };

	for (;;) {
		if (__atomic_load_n(&r->draining, __ATOMIC_ACQUIRE)) {
			/* the session is stopped and flushed: take the rest */
			if (drain(r, t->buf, true) < 0)
				rec_set_err(&r->read_err, EIO);
			break;
		}
		int ready = poll(&p, 1, 100);
		int taken = drain(r, t->buf, false);

		if (taken < 0) {
			rec_set_err(&r->read_err, EIO);
			break;
		}
		/* poll() says "some buffer has data": when it is not ours,
		 * do not spin on another buffer's sub-buffers */
		if (ready > 0 && taken == 0)
			usleep(2000);
	}
	__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELEASE);
	rec_wake_writer(r);
	return NULL;
}

/* ---- writer thread ---- */

static void index_chunk(struct stream_w *s, uint64_t off, uint64_t b, uint64_t e)
{
	if (s->nidx == s->capidx) {
		size_t nc = s->capidx ? 2 * s->capidx : 256;
		uint64_t *o, *bb, *ee;

		if (nc > IDX_MAX)
			return;
		o = realloc(s->idx_off, nc * sizeof(*o));
		if (o)
			s->idx_off = o;
		bb = realloc(s->idx_b, nc * sizeof(*bb));
		if (bb)
			s->idx_b = bb;
		ee = realloc(s->idx_e, nc * sizeof(*ee));
		if (ee)
			s->idx_e = ee;
		if (!o || !bb || !ee)
			return;
		s->capidx = nc;
	}
	s->idx_off[s->nidx] = off;
	s->idx_b[s->nidx] = b;
	s->idx_e[s->nidx] = e;
	s->nidx++;
}

/*
 * vCPU threads that appeared since the recording started (a vCPU
 * hot-plugged, a thread named late): into the VM's map, and with its
 * TSC relation, into the next SessionMetadata. Called once a second;
 * a vCPU that comes and goes within that second stays unnamed.
 */
static void rescan_vcpus(struct rec *r)
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

static int write_header(struct rec *r, struct tf_writer *w, int role,
			const struct stream_w *s);

/*
 * A guest CPU's stream, its file created at its first chunk or loss (a
 * guest says how many CPUs it has; only those that send get a file).
 * NULL when it cannot be created: the recording stops with the error.
 */
static struct stream_w *guest_stream(struct rec *r, uint32_t vm, uint32_t cpu)
{
	static const struct tf_writer_opts wo = { .buf_size = 256u << 10 };
	struct stream_w *s = &r->gsw[vm][cpu];
	char name[64];
	int e;

	if (s->used)
		return s->w ? s : NULL;
	s->used = s->guest = true;
	__atomic_add_fetch(&r->guest_streams, 1, __ATOMIC_RELAXED);
	s->vm = vm;
	s->cpu = cpu;
	tf_trace_guest_name(name, sizeof(name), vm, cpu);
	e = tf_writer_create(&s->w, r->dirfd, name, &wo);
	if (!e)
		e = write_header(r, s->w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, s);
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, name, strerror(-e));
		rec_set_err(&r->write_err, -e);
		if (s->w)
			tf_writer_close(s->w);
		s->w = NULL;
		return NULL;
	}
	return s;
}

static void origin_of(const struct stream_w *s, Vmscope__Trace__Origin *o)
{
	o->side = s->guest ? VMSCOPE__TRACE__SIDE__SIDE_GUEST : VMSCOPE__TRACE__SIDE__SIDE_HOST;
	o->vm = s->vm;
	o->cpu = s->cpu;
	o->channel = s->chan;
}

/* A loss a guest reported, or a broken guest connection's gap. */
static void write_loss(struct rec *r, struct node *n)
{
	struct stream_w *s = guest_stream(r, n->vm, n->cpu);
	Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	int e;

	if (!s || __atomic_load_n(&r->write_err, __ATOMIC_RELAXED))
		return;
	origin_of(s, &o);
	lr.origin = &o;
	lr.kind = n->loss_kind;
	lr.events = n->loss_events;
	lr.subbufs = n->loss_subbufs;
	lr.begin_ts = s->last_ts;
	lr.detail = (char *)n->loss_detail;
	e = tf_writer_append_msg(s->w, TF_FRAME_LOSS, &lr.base);
	if (e)
		rec_set_err(&r->write_err, -e);
	else
		s->guest_lost += n->loss_events;
}

static void write_chunk(struct rec *r, struct node *n)
{
	struct stream_w *s = n->guest ? guest_stream(r, n->vm, n->cpu) : &r->sw[n->buf];
	Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	struct tf_writer_stats st;
	int e;

	if (!s)		/* a guest stream whose file failed: the error stops us */
		return;
	if (n->seq > s->next_seq)
		s->gap_subbufs += n->seq - s->next_seq;
	s->next_seq = n->seq + 1;
	if (__atomic_load_n(&r->write_err, __ATOMIC_RELAXED) || !s->w) {
		s->writer_lost += n->nr_records;
		return;
	}
	origin_of(s, &o);
	c.origin = &o;
	c.seq = n->seq;
	c.begin_ts = n->begin_ts;
	c.end_ts = n->end_ts;
	c.lost_before = n->lost_before;
	c.nr_records = n->nr_records;
	c.records.data = n->data;
	c.records.len = n->len;
	tf_writer_get_stats(s->w, &st);
	e = tf_writer_append_msg(s->w, TF_FRAME_CHUNK, &c.base);
	if (e) {
		rec_set_err(&r->write_err, -e);
		s->writer_lost += n->nr_records;
		return;
	}
	index_chunk(s, st.offset, n->begin_ts, n->end_ts);
	if (!s->chunks)
		s->first_ts = n->begin_ts;
	s->last_ts = n->end_ts;
	s->last_lost = n->lost_before;
	s->chunks++;
	s->records += n->nr_records;
	s->bytes += n->len;
	__atomic_add_fetch(&r->events, n->nr_records, __ATOMIC_RELAXED);
	__atomic_add_fetch(&r->bytes, n->len, __ATOMIC_RELAXED);
}

/*
 * The queue is empty: hand what the writers buffered to the kernel (no
 * fsync), so a killed recorder loses only what was still queued, not up
 * to a writer buffer per CPU. Costs a write per chunk at low rates only.
 */
static void flush_idle(struct rec *r)
{
	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		int e;

		if (!r->sw[i].w)
			continue;
		e = tf_writer_flush(r->sw[i].w);
		if (e)
			rec_set_err(&r->write_err, -e);
	}
	for (unsigned int vm = 0; r->gsw && vm < r->o->nvms; vm++)
		for (unsigned int cpu = 0; cpu < REC_GUEST_CPUS; cpu++) {
			int e;

			if (!r->gsw[vm][cpu].w)
				continue;
			e = tf_writer_flush(r->gsw[vm][cpu].w);
			if (e)
				rec_set_err(&r->write_err, -e);
		}
}

static void *writer_main(void *arg)
{
	struct rec *r = arg;
	struct pollfd p = { .fd = r->efd, .events = POLLIN };

	for (;;) {
		struct cds_wfcq_node *qn = __cds_wfcq_dequeue_blocking(&r->qh, &r->qt);

		if (!qn) {
			uint64_t v;

			if (!__atomic_load_n(&r->readers_left, __ATOMIC_ACQUIRE)) {
				/* readers are gone: what is queued is all */
				qn = __cds_wfcq_dequeue_blocking(&r->qh, &r->qt);
				if (!qn)
					break;
			} else {
				flush_idle(r);
				if (poll(&p, 1, 100) > 0 && read(r->efd, &v, sizeof(v)) < 0)
					(void)0;	/* EAGAIN: another wake consumed it */
				continue;
			}
		}
		struct node *n = caa_container_of(qn, struct node, qn);

		TSAN_ACQUIRE(n);
		if (n->kind == NODE_LOSS)
			write_loss(r, n);
		else
			write_chunk(r, n);
		/* every node counts in the bound, as it was counted in */
		__atomic_sub_fetch(&r->queued, node_pool_cost(&r->pool, n), __ATOMIC_RELAXED);
		node_pool_put(&r->pool, n);
	}
	return NULL;
}

/* ---- metadata ---- */

static char *slurp_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int)len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* The session as known now (stop = 0 while recording). */
static int write_session(struct rec *r, uint64_t stop_rt, uint64_t first_ts,
			 uint64_t last_ts)
{
	static struct vr_pb_events ev;
	static char hostname[256], machine_id[64];
	static struct utsname u;
	Vmscope__Trace__SessionMetadata s = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__HostInfo hi = VMSCOPE__TRACE__HOST_INFO__INIT;
	Vmscope__Trace__KernelInfo ki = VMSCOPE__TRACE__KERNEL_INFO__INIT;
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__Options opt = VMSCOPE__TRACE__OPTIONS__INIT;
	const struct rec_opts *o = r->o;
	Vmscope__Trace__VmInfo *vi = calloc(o->nvms + 1, sizeof(*vi));
	Vmscope__Trace__VmInfo **vip = calloc(o->nvms + 1, sizeof(*vip));
	Vmscope__Trace__VcpuThread *vt = NULL, **vtp = NULL;
	Vmscope__Trace__VcpuTsc *tsc = NULL, **tscp = NULL;
	Vmscope__Trace__GuestHello **gh = calloc(o->nvms + 1, sizeof(*gh));
	size_t nvt = 0, k = 0, ntsc = 0, kt = 0;
	int e = -ENOMEM;

	for (unsigned int i = 0; i < o->nvms; i++) {
		nvt += r->vms[i].nvcpus;
		ntsc += r->tsc ? r->tsc[i].n : 0;
	}
	vt = calloc(nvt + 1, sizeof(*vt));
	vtp = calloc(nvt + 1, sizeof(*vtp));
	tsc = calloc(ntsc + 1, sizeof(*tsc));
	tscp = calloc(ntsc + 1, sizeof(*tscp));
	if (!vi || !vip || !vt || !vtp || !gh || !tsc || !tscp)
		goto out;
	uname(&u);
	if (gethostname(hostname, sizeof(hostname) - 1))
		hostname[0] = 0;
	slurp_line("/etc/machine-id", machine_id, sizeof(machine_id));
	ki.sysname = u.sysname;
	ki.release = u.release;
	ki.version = u.version;
	ki.machine = u.machine;
	ki.nr_cpus = r->h->cfg.nr_cpu_ids;
	hi.hostname = hostname;
	hi.machine_id = machine_id;
	hi.kernel = &ki;
	hi.vmscope_version = VMSCOPE_VERSION_STRING;
	/* trace_clock_local(): ns, monotonic per CPU only */
	clk.name = "trace_clock_local";
	clk.unit = "ns";
	clk.ns_mul = clk.ns_div = 1;
	clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	clk.ts_bits = 64;
	vr_events_to_pb(&ev, r->h->descs, r->h->nev, VMSCOPE__TRACE__SIDE__SIDE_HOST, 0,
			o->module_version);
	for (unsigned int i = 0; i < o->nvms; i++) {
		const struct vm_desc *v = &r->vms[i];

		vmscope__trace__vm_info__init(&vi[i]);
		vi[i].name = (char *)v->name;
		vi[i].qemu_pid = v->pid;
		vi[i].vsock_cid = v->cid;
		/* the guest's own claims, from its last hello: for decoding */
		gh[i] = rg_hello(r, i);
		if (gh[i]) {
			vi[i].agent_connected = true;
			vi[i].guest_kernel = gh[i]->kernel;
			vi[i].guest_clock = gh[i]->clock;
			vi[i].guest_events = gh[i]->events;
		}
		vi[i].vcpus = &vtp[k];
		vi[i].n_vcpus = v->nvcpus;
		for (unsigned int c = 0; c < v->nvcpus; c++, k++) {
			vmscope__trace__vcpu_thread__init(&vt[k]);
			vt[k].vcpu = v->vcpu[c];
			vt[k].tid = v->tid[c];
			vtp[k] = &vt[k];
		}
		vi[i].tsc = &tscp[kt];
		vi[i].n_tsc = r->tsc ? r->tsc[i].n : 0;
		for (unsigned int c = 0; c < vi[i].n_tsc; c++, kt++) {
			const struct vm_tsc *t = &r->tsc[i].v[c];

			vmscope__trace__vcpu_tsc__init(&tsc[kt]);
			tsc[kt].vcpu_id = t->vcpu_id;
			tsc[kt].offset = t->offset;
			tsc[kt].ratio = t->ratio;
			tsc[kt].frac_bits = t->frac_bits;
			tscp[kt] = &tsc[kt];
		}
		vip[i] = &vi[i];
	}
	/* the selected events by name (Options.events: empty = all) */
	const char *sel[VMSCOPE_MAX_EVENTS];

	opt.events = (char **)sel;
	opt.n_events = o->ctl.flags & VMSCOPE_CTL_EVENTS ?
		       hb_event_names(r->h, o->ctl.events, sel) : 0;
	/* the channels: channel 0's geometry is also in the fields above */
	Vmscope__Trace__ChannelOptions chan[VMSCOPE_SESSION_CHANNELS], *chanp[VMSCOPE_SESSION_CHANNELS];
	const char *csel[VMSCOPE_SESSION_CHANNELS][VMSCOPE_MAX_EVENTS];

	for (unsigned int k = 0; k < r->h->cfg.nr_chans && k < VMSCOPE_SESSION_CHANNELS; k++) {
		const struct vmscope_chan_cfg *c = &r->h->cfg.chan[k];

		vmscope__trace__channel_options__init(&chan[k]);
		chan[k].buffer_mode = c->mode;
		chan[k].subbuf_size = 1ull << c->subbuf_shift;
		chan[k].nr_subbufs = 1u << c->nr_subbuf_shift;
		chan[k].events = (char **)csel[k];
		chan[k].n_events = k ? hb_event_names(r->h, c->events, csel[k]) : 0;
		chanp[k] = &chan[k];
	}
	opt.channels = chanp;
	opt.n_channels = r->h->cfg.nr_chans;
	opt.buffer_mode = r->h->cfg.chan[0].mode;
	opt.subbuf_size = 1ull << r->h->cfg.chan[0].subbuf_shift;
	opt.nr_subbufs = 1u << r->h->cfg.chan[0].nr_subbuf_shift;
	opt.duration_ns = (uint64_t)(o->duration_s * 1e9);
	opt.argv = o->argv;
	opt.n_argv = (size_t)o->argc;
	s.format_version = 1;
	s.session_id.data = r->session_id;
	s.session_id.len = sizeof(r->session_id);
	s.host = &hi;
	s.host_clock = &clk;
	s.host_events = &ev.table;
	s.vms = vip;
	s.n_vms = o->nvms;
	s.start_realtime_ns = r->start_rt;
	s.start_ts = first_ts;
	s.stop_realtime_ns = stop_rt;
	s.stop_ts = last_ts;
	s.options = &opt;
	/* where this session's exit reasons come from, now */
	Vmscope__Trace__ExitReasonSource xs = VMSCOPE__TRACE__EXIT_REASON_SOURCE__INIT;
	struct vmscope_exit_mode xm;

	memset(&xm, 0, sizeof(xm));
	if (ioctl(r->h->fd, VMSCOPE_IOC_GET_EXIT_MODE, &xm) == 0) {
		const char *refused = exit_refused_name(xm.refused);

		xm.why[sizeof(xm.why) - 1] = 0;
		xs.mode = (char *)exit_mode_name(xm.mode);
		xs.refused = (char *)(refused ? refused : "");
		xs.why = xm.why;
		xs.layout = xm.layout == VMSCOPE_EXIT_LAYOUT_MATCH ? "btf-match" :
			    xm.layout == VMSCOPE_EXIT_LAYOUT_MISMATCH ? "btf-mismatch" : "no-btf";
		xs.compared = xm.compared;
		xs.mismatches = xm.mismatches;
		xs.direct_since_ts = xm.direct_since_ts;
		xs.calibrations = xm.calibrations;
		xs.fallbacks = xm.fallbacks;
		s.exit_reasons = &xs;
	}
	r->session_bytes = TF_FRAME_HDR_SIZE + protobuf_c_message_get_packed_size(&s.base);
	e = tf_writer_append_msg(r->meta, TF_FRAME_SESSION, &s.base);
out:
	for (unsigned int i = 0; gh && i < o->nvms; i++)
		if (gh[i])
			vmscope__trace__guest_hello__free_unpacked(gh[i], NULL);
	free(gh);
	free(vi);
	free(vip);
	free(vt);
	free(vtp);
	free(tsc);
	free(tscp);
	return e;
}

/* KVM's TSC relation of every VM's vCPUs, read once probing is on (a
 * later write is then in the trace), into the next SessionMetadata. */
static void read_tsc(struct rec *r)
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

static int write_header(struct rec *r, struct tf_writer *w, int role,
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
		origin_of(s, &o);
		fh.origin = &o;
	}
	return tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base);
}

/* What the ring lost after the last sub-buffer we got, and what we could
 * not write, as LossRecords; then the index. Returns the first error. */
/* Events a stream lost that the trace says so: the host ring's counters,
 * or what the guest reported plus the gaps of broken connections. */
static uint64_t stream_lost(struct rec *r, const struct stream_w *s)
{
	struct hb_losses l;

	if (s->guest)
		return s->guest_lost + s->writer_lost;
	hb_losses(r->h, s->buf, &l);
	return l.full + l.too_big + l.overwritten + s->writer_lost;
}

static int finish_stream(struct rec *r, struct stream_w *s, uint64_t *lost_total)
{
	Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
	uint64_t total = s->guest ? 0 : stream_lost(r, s) - s->writer_lost;
	int e = 0;

	*lost_total += stream_lost(r, s);
	origin_of(s, &o);
	if (total > s->last_lost) {
		Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;

		lr.origin = &o;
		lr.kind = r->h->cfg.chan[s->chan].mode == VMSCOPE_RB_MODE_FLIGHT ?
			  VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_OVERWRITE :
			  VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_RING_DISCARD;
		lr.events = total - s->last_lost;
		lr.begin_ts = s->last_ts;
		lr.detail = "ring buffer, after the last sub-buffer recorded";
		e = tf_writer_append_msg(s->w, TF_FRAME_LOSS, &lr.base);
	}
	if (s->writer_lost && !e) {	/* unlikely to get through, but try */
		Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;

		lr.origin = &o;
		lr.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_WRITER;
		lr.events = s->writer_lost;
		lr.detail = "not written after a write error";
		e = tf_writer_append_msg(s->w, TF_FRAME_LOSS, &lr.base);
	}
	if (!e) {
		Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
		struct tf_writer_stats st;

		tf_writer_get_stats(s->w, &st);
		fi.chunk_offset = s->idx_off;
		fi.chunk_begin_ts = s->idx_b;
		fi.chunk_end_ts = s->idx_e;
		fi.n_chunk_offset = fi.n_chunk_begin_ts = fi.n_chunk_end_ts = s->nidx;
		fi.frames = st.frames_held;
		fi.bytes = st.offset;
		e = tf_writer_append_msg(s->w, TF_FRAME_INDEX, &fi.base);
	}
	return e;
}

/* Every stream of the recording, host buffers first; returns how many. */
static unsigned int all_streams(struct rec *r, struct stream_w **out)
{
	unsigned int k = 0;

	for (unsigned int i = 0; r->sw && i < r->h->nbuf; i++)
		if (r->sw[i].used)
			out[k++] = &r->sw[i];
	for (unsigned int vm = 0; r->gsw && vm < r->o->nvms; vm++)
		for (unsigned int cpu = 0; cpu < REC_GUEST_CPUS; cpu++)
			if (r->gsw[vm][cpu].used)
				out[k++] = &r->gsw[vm][cpu];
	return k;
}

static unsigned int max_streams(struct rec *r)
{
	return r->h->nbuf + r->o->nvms * REC_GUEST_CPUS + 1;
}

/*
 * Room for the final frames (reserve.h): for the streams open now or those
 * the VMs' vCPUs will open, whichever are more.
 */
static uint64_t final_room(struct rec *r)
{
	unsigned int vcpus = 0, guest = __atomic_load_n(&r->guest_streams, __ATOMIC_RELAXED);

	for (unsigned int i = 0; i < r->o->nvms; i++)
		vcpus += r->vms[i].nvcpus;
	return rec_reserve_need(r->session_bytes, r->h->nbuf + 1 + (guest > vcpus ? guest : vcpus));
}

/* Statistics and Summary at the end of the metadata file. */
static int write_final(struct rec *r, uint64_t last_ts)
{
	unsigned int n = max_streams(r), k;
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
	k = all_streams(r, sv);
	for (unsigned int i = 0; i < k; i++) {
		struct stream_w *s = sv[i];

		vmscope__trace__origin__init(&o[i]);
		origin_of(s, &o[i]);
		vmscope__trace__stream_stats__init(&ss[i]);
		ss[i].origin = &o[i];
		ss[i].chunks = s->chunks;
		ss[i].records = s->records;
		ss[i].bytes = s->bytes;
		ss[i].lost_events = stream_lost(r, s);
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

/* ---- the run ---- */

static void status_line(struct rec *r, double t0, uint64_t *prev_ev, double *prev_t)
{
	double now = util_mono_s();
	uint64_t ev = __atomic_load_n(&r->events, __ATOMIC_RELAXED);
	uint64_t by = __atomic_load_n(&r->bytes, __ATOMIC_RELAXED);
	uint64_t lost = 0;

	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		struct hb_losses l;

		hb_losses(r->h, i, &l);
		lost += l.full + l.too_big + l.overwritten;
	}
	fprintf(stderr, "\rvmscope record: %.0f s, %.0f events/s, %" PRIu64 " events, "
		"%.1f MiB, lost %" PRIu64 ", guests %u   ", now - t0,
		(double)(ev - *prev_ev) / (now - *prev_t), ev, (double)by / 1048576.0, lost,
		rg_connected(r, -1));
	*prev_ev = ev;
	*prev_t = now;
}

static int open_streams(struct rec *r)
{
	char name[64];
	int e;

	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		struct stream_w *s = &r->sw[i];

		if (!r->h->map[i])
			continue;
		s->cpu = hb_cpu(r->h, i);
		s->chan = hb_chan(r->h, i);
		s->buf = i;
		tf_trace_host_name(name, sizeof(name), s->chan, s->cpu);
		e = tf_writer_create(&s->w, r->dirfd, name, NULL);
		if (!e)
			e = write_header(r, s->w, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM, s);
		if (!e)
			e = tf_writer_flush(s->w);
		if (e) {
			fprintf(stderr, "vmscope record: %s/%s: %s\n", r->o->path, name,
				strerror(-e));
			return -1;
		}
		s->used = true;
	}
	return 0;
}

static int start_threads(struct rec *r)
{
	sigset_t all, old;
	pthread_t wt;
	int e = 0;

	/* signals go to the main thread only */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r->rt = calloc(r->h->nbuf ? r->h->nbuf : 1, sizeof(*r->rt));
	if (!r->rt) {
		e = ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < r->h->nbuf; i++) {
		if (!r->h->map[i])
			continue;
		r->rt[r->nrt].r = r;
		r->rt[r->nrt].buf = i;
		__atomic_add_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
		e = pthread_create(&r->rt[r->nrt].t, NULL, reader_main, &r->rt[r->nrt]);
		if (e) {
			__atomic_sub_fetch(&r->readers_left, 1, __ATOMIC_RELAXED);
			goto out;
		}
		r->nrt++;
	}
	e = pthread_create(&wt, NULL, writer_main, r);
	if (!e)
		r->wt = wt, r->have_wt = true;
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e)
		fprintf(stderr, "vmscope record: starting threads: %s\n", strerror(e));
	return e ? -1 : 0;
}

static void stop_threads(struct rec *r)
{
	__atomic_store_n(&r->draining, 1, __ATOMIC_RELEASE);
	for (unsigned int i = 0; i < r->nrt; i++)
		pthread_join(r->rt[i].t, NULL);
	rg_stop(r);
	if (r->have_wt) {
		rec_wake_writer(r);
		pthread_join(r->wt, NULL);
	}
}

/*
 * What the module handed this session, by event: each record is in the
 * host streams or counted lost there, so the trace can be checked against
 * it whatever other sessions recorded (the module's matched is shared).
 */
static void print_handed(const struct hb *h)
{
	uint64_t total = 0;

	fprintf(stderr, "vmscope record: the module handed this session");
	for (unsigned int id = 0; id < h->nev; id++) {
		if (!h->handed[id])
			continue;
		fprintf(stderr, " %s %" PRIu64, h->descs[id].name, h->handed[id]);
		total += h->handed[id];
	}
	fprintf(stderr, " (total %" PRIu64 ")\n", total);
}

int rec_run(struct hb *h, const struct rec_opts *o, volatile sig_atomic_t *stop)
{
	static struct rec rs;
	struct rec *r = &rs;
	uint64_t first_ts = UINT64_MAX, last_ts = 0, lost = 0, prev_ev = 0;
	struct stream_w **sv = NULL;
	bool started = false;
	double t0, prev_t, last_status = 0, last_rescan;
	int e, rc = 1;
	struct vmscope_probe_ctl ctl = o->ctl;

	memset(r, 0, sizeof(*r));
	/*
	 * No transparent huge pages for the recorder: where THP is "always"
	 * (Debian's default), the kernel backs a thread's 8 MiB stack or an
	 * arena with a 2 MiB page at a fault or whenever khugepaged gets to
	 * it, so RSS jumped by ~2 MiB at random times (seen in the test host:
	 * AnonHugePages 2048 kB in three thread stacks, `collector-rss`), and
	 * a reader thread per host CPU could cost 2 MiB each for a few KiB of
	 * stack. Before any thread or buffer exists; ignored where
	 * unsupported.
	 */
	(void)prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	r->h = h;
	r->o = o;
	memcpy(r->vms, o->vms, o->nvms * sizeof(*o->vms));
	r->dirfd = r->efd = -1;
	r->reserve.dirfd = -1;
	cds_wfcq_init(&r->qh, &r->qt);
	e = tf_trace_create(o->path, &r->dirfd);
	if (e) {
		fprintf(stderr, "vmscope record: %s: %s%s\n", o->path, strerror(-e),
			e == -EEXIST ? " (a trace is never overwritten: choose another -o)" : "");
		return 1;
	}
	if (getrandom(r->session_id, sizeof(r->session_id), 0) != sizeof(r->session_id))
		memset(r->session_id, 0x5a, sizeof(r->session_id));
	/* `stats --start` leaves the module's shared probing on, which counts
	 * into the same module-wide counters as our session: switch it off
	 * first (measured, before sessions had their own filters: 2
	 * sched_switch records of a killed --all recorder leaked into an
	 * --events kvm trace). While another session probes, the module
	 * refuses this (EBUSY) and shared probing is off anyway. */
	struct vmscope_probe_ctl off = { 0 };

	e = hb_try_probes(h, &off);
	if (e && e != EBUSY) {
		fprintf(stderr, "vmscope record: disabling shared probing: %s\n",
			strerror(e));
		goto out_rmdir;
	}
	if (hb_start(h))
		goto out_rmdir;
	started = true;
	/* the queue holds what the rings hold, in slots of the largest
	 * sub-buffer (a keep channel's are smaller) */
	unsigned int sb_shift = 0;
	uint64_t ring_bytes = 0;

	for (unsigned int k = 0; k < h->cfg.nr_chans; k++) {
		ring_bytes += h->cfg.chan[k].cpu_bytes * h->ncpu;
		if (h->cfg.chan[k].subbuf_shift > sb_shift)
			sb_shift = h->cfg.chan[k].subbuf_shift;
	}
	r->qcap = o->max_queue ? o->max_queue : ring_bytes;
	if (r->qcap < 2 * ((1ull << sb_shift) + sizeof(struct node)))
		r->qcap = 2 * ((1ull << sb_shift) + sizeof(struct node));
	/* as many slots as the bound holds, resident from now, and a few
	 * for nodes that readers hold between taking and queueing them */
	if (node_pool_init(&r->pool, (size_t)1 << sb_shift, (r->qcap >> sb_shift) + 8))
		goto out_oom;
	r->sw = calloc(h->nbuf ? h->nbuf : 1, sizeof(*r->sw));
	r->gsw = calloc(o->nvms + 1, sizeof(*r->gsw));
	for (unsigned int i = 0; r->gsw && i < o->nvms; i++)
		if (!(r->gsw[i] = calloc(REC_GUEST_CPUS, sizeof(**r->gsw))))
			goto out_oom;
	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (!r->sw || !r->gsw || r->efd < 0) {
out_oom:
		fprintf(stderr, "vmscope record: out of memory or eventfd failed\n");
		goto out;
	}
	r->start_rt = util_realtime_ns();
	e = tf_writer_create(&r->meta, r->dirfd, TF_TRACE_METADATA, NULL);
	if (!e)
		e = write_header(r, r->meta, VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA, NULL);
	if (!e)
		e = write_session(r, 0, 0, 0);
	if (!e)		/* a killed recorder leaves readable metadata */
		e = tf_writer_sync(r->meta);
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", o->path, TF_TRACE_METADATA,
			strerror(-e));
		goto out;
	}
	e = rec_reserve_hold(&r->reserve, r->dirfd, final_room(r));
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: cannot hold back room for the "
			"trace's final frames: %s\n", o->path, REC_RESERVE_NAME, strerror(-e));
		goto out;
	}
	if (open_streams(r) || start_threads(r) || rg_start(r, o->guest_port))
		goto out;
	/* our session's probing; if we die, it ends with our fd. RESET zeroes
	 * the module-wide counters, so that `vmscope stats` afterwards shows
	 * this recording's: refused (EBUSY) while another session probes,
	 * and then the counters are shared, not ours. */
	ctl.flags |= VMSCOPE_CTL_ENABLE | VMSCOPE_CTL_RESET | VMSCOPE_CTL_UNTIL_CLOSE;
	e = hb_try_probes(h, &ctl);
	if (e) {
		if (e != EBUSY) {
			fprintf(stderr, "vmscope record: enabling probing: %s\n",
				strerror(e));
			goto out;
		}
		ctl.flags &= ~VMSCOPE_CTL_RESET;
		fprintf(stderr, "vmscope record: another session is recording: the "
			"module's counters (`vmscope stats`) are not reset and count both\n");
		if (hb_probes(h, &ctl))
			goto out;
	}
	read_tsc(r);
	fprintf(stderr, "vmscope record: recording to %s: %u CPUs, ", o->path,
		h->cfg.nr_cpu_ids);
	for (unsigned int k = 0; k < h->cfg.nr_chans; k++) {
		const struct vmscope_chan_cfg *c = &h->cfg.chan[k];
		const char *names[VMSCOPE_MAX_EVENTS];
		unsigned int n = k ? hb_event_names(h, c->events, names) : 0;

		fprintf(stderr, "%s%u x %u KiB sub-buffers, %s", k ? "; kept apart: " : "",
			1u << c->nr_subbuf_shift, (1u << c->subbuf_shift) / 1024,
			hb_mode_name(c->mode));
		for (unsigned int i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? "," : ", for ", names[i]);
	}
	fprintf(stderr, "%s\n", o->status ? "; Ctrl-C stops" : "");
	t0 = prev_t = last_rescan = util_mono_s();
	while (!*stop && !__atomic_load_n(&r->write_err, __ATOMIC_RELAXED) &&
	       !__atomic_load_n(&r->read_err, __ATOMIC_RELAXED) &&
	       (o->duration_s <= 0 || util_mono_s() - t0 < o->duration_s)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);	/* EINTR on a signal: fine */
		/* a guest said hello: its kernel, clock and event table into
		 * a new SessionMetadata (a reader takes the last whole one) */
		if (__atomic_exchange_n(&r->meta_dirty, 0, __ATOMIC_ACQ_REL)) {
			e = write_session(r, 0, 0, 0);
			if (!e)
				e = tf_writer_flush(r->meta);
			if (e)
				rec_set_err(&r->write_err, -e);
		}
		/* the final frames grow with the session and the streams */
		if (final_room(r) > r->reserve.bytes) {
			e = rec_reserve_hold(&r->reserve, r->dirfd, final_room(r));
			if (e)
				rec_set_err(&r->write_err, -e);
		}
		if (util_mono_s() - last_rescan >= 1.0) {
			rescan_vcpus(r);
			last_rescan = util_mono_s();
		}
		if (o->status && util_mono_s() - last_status >= 1.0) {
			status_line(r, t0, &prev_ev, &prev_t);
			last_status = util_mono_s();
		}
	}
	if (o->status)
		fprintf(stderr, "\n");
	rc = 0;
out:
	/* probes off and the session stopped (flushing every CPU), then the
	 * readers take the rest and the writer writes it */
	if (started && hb_stop(h))
		rc = 1;
	stop_threads(r);
	r->stop_rt = util_realtime_ns();
	if (r->write_err) {
		fprintf(stderr, "vmscope record: writing the trace: %s; recording stopped, "
			"what was written stays readable\n", strerror(r->write_err));
		rc = 1;
	}
	if (r->read_err) {
		fprintf(stderr, "vmscope record: reading the ring buffers failed: %s\n",
			strerror(r->read_err));
		rc = 1;
	}
	sv = r->sw ? calloc(max_streams(r), sizeof(*sv)) : NULL;
	for (unsigned int i = 0, n = sv ? all_streams(r, sv) : 0; i < n; i++) {
		struct stream_w *s = sv[i];
		struct tf_writer_stats st;

		if (!s->w)
			continue;
		e = finish_stream(r, s, &lost);
		tf_writer_get_stats(s->w, &st);
		s->frames_end = st.frames_held;
		s->bytes_end = st.offset;
		s->closed_ok = !e;
		if (s->chunks && s->first_ts < first_ts && !s->guest)
			first_ts = s->first_ts;
		if (s->last_ts > last_ts && !s->guest)
			last_ts = s->last_ts;
		e = tf_writer_close(s->w) ? : e;
		s->w = NULL;
		if (e && !r->write_err) {
			fprintf(stderr, "vmscope record: closing a %s stream (cpu %u): %s\n",
				s->guest ? "guest" : "host", s->cpu, strerror(-e));
			rc = 1;
		}
		free(s->idx_off);
		free(s->idx_b);
		free(s->idx_e);
	}
	/* The streams are done: their room goes to the final frames. A
	 * metadata write that a full disk refused is resumed in it. */
	e = rec_reserve_release(&r->reserve);
	if (e) {
		fprintf(stderr, "vmscope record: %s/%s: %s\n", o->path, REC_RESERVE_NAME,
			strerror(-e));
		rc = 1;
	}
	if (r->meta && tf_writer_error(r->meta))
		tf_writer_resume(r->meta);
	if (r->meta) {
		e = write_session(r, r->stop_rt, first_ts == UINT64_MAX ? 0 : first_ts, last_ts);
		if (!e)
			e = write_final(r, last_ts);
		e = tf_writer_close(r->meta) ? : e;
		if (e) {
			fprintf(stderr, "vmscope record: %s/%s: %s\n", o->path,
				TF_TRACE_METADATA, strerror(-e));
			rc = 1;
		}
	}
	if (started && h->have_handed)
		print_handed(h);
	if (started) {
		/* the collector's own high-water mark (the kernel's VmHWM), with
		 * the stop and the final frames in it: its memory bound shows */
		struct rusage ru;

		if (getrusage(RUSAGE_SELF, &ru))
			ru.ru_maxrss = 0;
		fprintf(stderr, "vmscope record: %" PRIu64 " events, %.1f MiB, lost %" PRIu64
			", collector stalls %" PRIu64 ", %.1f s, peak RSS %ld KiB -> %s\n",
			r->events, (double)r->bytes / 1048576.0, lost, r->stalls,
			(double)(r->stop_rt - r->start_rt) / 1e9, ru.ru_maxrss, o->path);
	}
	free(sv);
	for (unsigned int i = 0; r->gsw && i < o->nvms; i++)
		free(r->gsw[i]);
	free(r->gsw);
	rg_free(r);
	free(r->sw);
	free(r->tsc);
	free(r->rt);
	node_pool_fini(&r->pool);
	if (r->efd >= 0)
		close(r->efd);
	close(r->dirfd);
	return rc;
out_rmdir:
	/* nothing recorded: do not leave an empty trace behind */
	close(r->dirfd);
	rmdir(o->path);
	return 1;
}
