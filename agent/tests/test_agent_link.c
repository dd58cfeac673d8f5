/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's framing without the kernel: agent_hello.c and agent_link.c
 * (the code `vmscope agent` runs) stream to the host side's parser
 * (collector/guest_link.c) over a socketpair, with real sub-buffers of
 * the real ring buffer (ringbuf/rb_core.c in userspace memory, standing
 * in for the module's mapped buffers), and a reconnect in the middle.
 *
 * The guest module is faked where the agent's code asks it: descriptors,
 * task and IRQ pages (agent_hello_build()) and GET_SUBBUF / PUT_SUBBUF
 * (agent_drain()), answered from the userspace rings as the module's
 * session code answers them; this test is linked with -Wl,--wrap=ioctl,
 * so those calls come to __wrap_ioctl() below. Left to the VM tests
 * (tests/vm/tests/guest-*.sh): SESSION_START, mmap and the poll loop of
 * cmd_agent.c.
 *
 * Asserted: the hello carries every descriptor, every task across three
 * pages, the IRQs, CPUs and token; every sub-buffer taken is given back
 * once sent, none twice; every record written arrives once, in
 * order per CPU, byte for byte, and decodes with the hello's descriptors;
 * the receiver dies with one chunk unread (received, never processed);
 * the agent's next send fails and it keeps that sub-buffer; the next
 * connection's hello cursors make guest_link_reconnect_loss() count
 * exactly the unread chunk's records and sub-buffer, and each CPU's first
 * chunk on it has the seq the cursor promised; ring drops are counted by
 * chunk lost_before plus the final LossRecord, equal to the ring's own
 * count; both connections end at a frame boundary.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vmscope/ioctl.h>

#include "agent.h"
#include "decode.h"
#include "../../tests/lib/check.h"
#include "guest_link.h"
#include "rb_decode.h"
#include "reader_desc.h"
#include "ringbuf.h"
#include "vmscope_events.h"

#define FAKE_DEV	1000	/* never a real descriptor here */
#define NR_CPUS		2
#define NR_TASKS	150	/* three pages of VMSCOPE_GUEST_DUMP_MAX (64) */
#define NR_IRQS		5
#define SB_SHIFT	12	/* 4 KiB sub-buffers */
#define NR_SHIFT	3	/* 8 of them per CPU */
#define PER_CHUNK	10	/* records per sub-buffer written */
#define MAX_IDS		4096
#define TOKEN		0x5eed5eedull

/* ---- the module, as far as agent_hello_build() asks it ---- */

int __real_ioctl(int fd, unsigned long req, ...);

static struct vmscope_rb_buf rings[NR_CPUS];
static uint8_t *ring_mem[NR_CPUS];
static unsigned n_gets, n_puts;

/* kmod-session/session.c's GET_SUBBUF, on the userspace ring */
static int fake_get_subbuf(struct vmscope_subbuf_req *q)
{
	const struct vmscope_rb_subbuf_hdr *h;
	struct vmscope_rb_subbuf_ref ref;
	int e;

	if (q->buf >= NR_CPUS) {
		errno = EINVAL;
		return -1;
	}
	e = vmscope_rb_get_subbuf(&rings[q->buf], &ref);
	if (e) {
		errno = -e;
		return -1;
	}
	h = ref.ptr;
	q->phys = ref.phys;
	q->seq = ref.seq;
	q->offset = (uint64_t)((const uint8_t *)ref.ptr - ring_mem[q->buf]);
	q->lost_before = h->lost_before;
	q->data_size = h->data_size;
	q->records = h->records;
	q->lost_total = vmscope_rb_lost(&rings[q->buf]);
	n_gets++;
	return 0;
}

static int fake_put_subbuf(const uint32_t *cpu)
{
	if (*cpu >= NR_CPUS) {
		errno = EINVAL;
		return -1;
	}
	vmscope_rb_put_subbuf(&rings[*cpu]);
	n_puts++;
	return 0;
}

static int fake_tasks(struct vmscope_guest_tasks_req *r)
{
	int pid = r->start ? (int)r->start : 1;

	r->nr = 0;
	for (; pid <= NR_TASKS && r->nr < VMSCOPE_GUEST_DUMP_MAX; pid++) {
		struct vmscope_guest_task *t = &r->tasks[r->nr++];

		memset(t, 0, sizeof(*t));
		t->pid = pid;
		t->tgid = pid;
		t->ppid = pid > 1 ? 1 : 0;
		snprintf(t->comm, sizeof(t->comm), "task-%d", pid % 1000);
	}
	r->next = pid <= NR_TASKS ? (uint32_t)pid : 0;
	return 0;
}

static int fake_irqs(struct vmscope_guest_irqs_req *r)
{
	r->nr = 0;
	r->nr_cpus = NR_CPUS;
	for (int irq = (int)r->start; irq < NR_IRQS; irq++) {
		struct vmscope_guest_irq *q = &r->irqs[r->nr++];

		memset(q, 0, sizeof(*q));
		q->irq = irq;
		q->nr_actions = 1;
		snprintf(q->name, sizeof(q->name), "dev-%d", irq);
	}
	r->next = 0;
	return 0;
}

int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != FAKE_DEV)
		return __real_ioctl(fd, req, arg);
	switch (req) {
	case VMSCOPE_IOC_GET_EVENT_DESC: {
		struct vmscope_event_desc_req *r = arg;

		if (r->index >= VMSCOPE_NR_EVENTS) {
			errno = ENOENT;
			return -1;
		}
		r->nr_events = VMSCOPE_NR_EVENTS;
		r->desc = vmscope_event_descs[r->index];
		return 0;
	}
	case VMSCOPE_IOC_GUEST_TASKS:
		return fake_tasks(arg);
	case VMSCOPE_IOC_GUEST_IRQS:
		return fake_irqs(arg);
	case VMSCOPE_IOC_GET_SUBBUF:
		return fake_get_subbuf(arg);
	case VMSCOPE_IOC_PUT_SUBBUF:
		return fake_put_subbuf(arg);
	}
	errno = ENOTTY;
	return -1;
}

/* ---- the guest's buffers: the real ring buffer in userspace memory ---- */

static uint32_t next_id;		/* records are numbered 0, 1, ... */
static uint32_t written_cpu[MAX_IDS];

/* n records on @cpu, each a sched_switch whose prev_pid is its number */
static void write_records(uint32_t cpu, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct vmscope_ev_sched_switch p;

		memset(&p, 0, sizeof(p));
		p.prev_pid = (int32_t)next_id;
		p.next_pid = (int32_t)cpu;
		memcpy(p.prev_comm, "writer", 7);
		EXPECT(vmscope_rb_write(&rings[cpu], VMSCOPE_EV_sched_switch,
					&p, sizeof(p)) == 0, "write %u", next_id);
		written_cpu[next_id++] = cpu;
	}
}

/* ---- the host side: guest_link, and what a receiver keeps ---- */

struct rx {
	int fd;
	struct guest_link *gl;
	struct vr_events *ev;
	unsigned hellos;
	uint32_t connection;
	struct guest_link_kept kept[NR_CPUS];
	uint64_t lost_records[NR_CPUS], lost_chunks[NR_CPUS];
	uint64_t promised_seq[NR_CPUS];	/* the hello cursor's next_seq ... */
	int first_on_conn[NR_CPUS];	/* ... checked on the first chunk */
	uint64_t last_seq[NR_CPUS];
	int seen_cpu[NR_CPUS];
	uint64_t lost_before[NR_CPUS], loss_events[NR_CPUS];
	unsigned got[MAX_IDS];
	unsigned decoded, filler;
};

/* the symbol table the agent built (its own kallsyms fixture below) */
static size_t want_syms, want_names;

static int rx_hello(void *arg, const Vmscope__Trace__GuestHello *h)
{
	struct rx *r = arg;

	r->hellos++;
	r->connection = h->connection;
	EXPECT(h->token == TOKEN && h->sync_available, "hello token %#llx",
	       (unsigned long long)h->token);
	EXPECT(h->events && h->events->n_events == VMSCOPE_NR_EVENTS,
	       "hello: %zu events", h->events ? h->events->n_events : 0);
	EXPECT(h->state->n_tasks == NR_TASKS, "hello: %zu tasks", h->state->n_tasks);
	EXPECT(h->state->n_tasks == NR_TASKS &&
	       !strcmp(h->state->tasks[NR_TASKS - 1]->comm, "task-150") &&
	       h->state->tasks[NR_TASKS - 1]->pid == NR_TASKS, "hello: last task");
	EXPECT(h->state->n_irqs == NR_IRQS && !strcmp(h->state->irqs[4]->name, "dev-4"),
	       "hello: irqs");
	EXPECT(h->state->nr_cpus == NR_CPUS && h->state->nr_cpu_ids == NR_CPUS,
	       "hello: cpus");
	EXPECT(h->n_cursors == NR_CPUS, "hello: %zu cursors", h->n_cursors);
	EXPECT(h->subbuf_size == 1u << SB_SHIFT, "hello: sub-buffer size");
	EXPECT(h->symbols && h->symbols->n_addr_delta == want_syms &&
	       h->symbols->names.len == want_names && h->symbols->n_modules == 1 &&
	       !strcmp(h->symbols->modules[0]->name, "vmscope_guest"),
	       "hello: %zu symbols, want %zu", h->symbols ? h->symbols->n_addr_delta : 0,
	       want_syms);
	vr_events_free(r->ev);
	r->ev = NULL;
	EXPECT(vr_events_from_pb(&r->ev, h->events) == 0, "hello: events unusable");
	for (size_t i = 0; i < h->n_cursors; i++) {
		const Vmscope__Trace__GuestCpuCursor *c = h->cursors[i];
		uint64_t chunks, records;

		if (c->cpu >= NR_CPUS)
			continue;
		r->promised_seq[c->cpu] = c->next_seq;
		r->first_on_conn[c->cpu] = 1;
		records = guest_link_reconnect_loss(&r->kept[c->cpu], c, &chunks);
		r->lost_records[c->cpu] += records;
		r->lost_chunks[c->cpu] += chunks;
	}
	return 0;
}

static int rx_chunk(void *arg, const Vmscope__Trace__StreamChunk *c, uint64_t gap)
{
	struct rx *r = arg;
	uint32_t cpu = c->origin->cpu;
	struct vmscope_rb_iter it;
	struct vmscope_rb_rec rec;
	char text[512];
	int e;

	EXPECT(gap == 0, "cpu %u: gap %llu within a connection", cpu,
	       (unsigned long long)gap);
	if (r->first_on_conn[cpu])
		EXPECT(c->seq == r->promised_seq[cpu], "cpu %u: first seq %llu, "
		       "the hello promised %llu", cpu, (unsigned long long)c->seq,
		       (unsigned long long)r->promised_seq[cpu]);
	r->first_on_conn[cpu] = 0;
	r->seen_cpu[cpu] = 1;
	r->last_seq[cpu] = c->seq;
	r->lost_before[cpu] = c->lost_before;
	EXPECT(vmscope_rb_iter_init_records(&it, c->records.data, c->records.len,
					    c->begin_ts, c->end_ts,
					    c->nr_records) == 0, "chunk records");
	while ((e = vmscope_rb_iter_next(&it, &rec)) > 0) {
		const struct vmscope_ev_sched_switch *p = (const void *)rec.payload;
		int i = vr_events_index(r->ev, rec.id);

		EXPECT(rec.id == VMSCOPE_EV_sched_switch && rec.size == sizeof(*p),
		       "record id %u size %u", rec.id, rec.size);
		if (rec.id != VMSCOPE_EV_sched_switch || rec.size != sizeof(*p))
			continue;
		if (p->prev_pid == MAX_IDS) {	/* unnumbered filler */
			r->filler++;
			continue;
		}
		EXPECT(p->prev_pid >= 0 && p->prev_pid < MAX_IDS &&
		       written_cpu[p->prev_pid] == cpu && p->next_pid == (int32_t)cpu,
		       "record %d on cpu %u", p->prev_pid, cpu);
		if (p->prev_pid >= 0 && p->prev_pid < MAX_IDS)
			r->got[p->prev_pid]++;
		if (i >= 0 && vmscope_format_event(&r->ev->desc[i], rec.payload,
						   rec.size, text, sizeof(text)) >= 0 &&
		    strstr(text, "prev_comm writer"))
			r->decoded++;
	}
	EXPECT(e == 0, "cpu %u seq %llu: records end with %d", cpu,
	       (unsigned long long)c->seq, e);
	r->kept[cpu].chunks++;
	r->kept[cpu].records += c->nr_records;
	return 0;
}

static int rx_loss(void *arg, const Vmscope__Trace__LossRecord *l)
{
	struct rx *r = arg;

	r->loss_events[l->origin->cpu] += l->events;
	return 0;
}

static const struct guest_link_ops rx_ops = {
	.hello = rx_hello, .chunk = rx_chunk, .loss = rx_loss,
};

/* A new connection: a socketpair, the agent on one end, guest_link on the other. */
static void rx_connect(struct rx *r, struct agent *a)
{
	int sp[2];

	EXPECT(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) == 0, "socketpair");
	fcntl(sp[1], F_SETFL, O_NONBLOCK);
	r->fd = sp[1];
	guest_link_free(r->gl);
	r->gl = guest_link_new(7, 0, &rx_ops, r);
	EXPECT(agent_link_start(a, sp[0]) == 0, "agent_link_start");
}

/* Everything the agent sent so far into guest_link. */
static void rx_pump(struct rx *r)
{
	uint8_t buf[8192];
	ssize_t n;

	while ((n = read(r->fd, buf, sizeof(buf))) > 0)
		EXPECT(guest_link_feed(r->gl, buf, (size_t)n) == 0, "feed: %s",
		       guest_link_error(r->gl));
}

/* One sub-buffer of PER_CHUNK records on @cpu, then what the agent does
 * when the module wakes it: drain. Returns whether it is still connected. */
static int send_one(struct agent *a, uint32_t cpu)
{
	write_records(cpu, PER_CHUNK);
	vmscope_rb_flush(&rings[cpu]);
	EXPECT(agent_drain(a) == 0, "drain");
	return a->sock >= 0 ? 0 : -1;
}

int main(void)
{
	struct agent a = { .dev = FAKE_DEV, .sock = -1 };
	struct rx r = { .fd = -1 };
	uint32_t lost_first, lost_last;
	uint64_t ring_lost = 0, counted = 0;
	unsigned drops = 0, filler = 0;

	a.cfg.nr_cpu_ids = NR_CPUS;
	a.cfg.chan[0].subbuf_shift = SB_SHIFT;
	a.cfg.chan[0].nr_subbuf_shift = NR_SHIFT;
	a.cpus = calloc(NR_CPUS, sizeof(*a.cpus));
	for (uint32_t c = 0; c < NR_CPUS; c++) {
		size_t bytes = vmscope_rb_mem_bytes(SB_SHIFT, NR_SHIFT, 4096);
		void *mem = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);

		ring_mem[c] = mem;
		EXPECT(mem && vmscope_rb_init(&rings[c], mem, SB_SHIFT, NR_SHIFT,
					      VMSCOPE_RB_MODE_DISCARD, c, 4096) == 0,
		       "ring %u", c);
		a.cpus[c].map = mem;
	}
	/* a kallsyms of 2 000 text symbols (the hello goes through a socketpair before the test reads it) and a module list, as files */
	{
		char ks[] = "/tmp/agent-link-ks-XXXXXX", mods[] = "/tmp/agent-link-mod-XXXXXX";
		int kfd = mkstemp(ks), mfd = mkstemp(mods);
		FILE *kf = fdopen(kfd, "w"), *mf = fdopen(mfd, "w");

		REQUIRE(kf && mf, "fixtures");
		for (unsigned i = 0; i < 2000; i++)
			fprintf(kf, "%llx %c kernel_function_%u\n",
				0xffffffff81000000ull + 16ull * i, i % 3 ? 't' : 'T', i);
		fprintf(kf, "ffffffffc0a01000 t mod_fn\t[vmscope_guest]\n");
		fprintf(mf, "vmscope_guest 49152 0 - Live 0xffffffffc0a00000 (OE)\n");
		fclose(kf);
		fclose(mf);
		a.kallsyms_path = ks;
		a.modules_path = mods;
		EXPECT(agent_hello_build(&a, TOKEN, 1, 10000000) == 0, "hello build");
		unlink(ks);
		unlink(mods);
		a.kallsyms_path = a.modules_path = NULL;
		want_syms = a.hello->symbols->n_addr_delta;
		want_names = a.hello->symbols->names.len;
		EXPECT(want_syms == 2001 && !a.hello->symbols->note[0],
		       "agent: %zu symbols, note '%s'", want_syms, a.hello->symbols->note);
	}
	EXPECT(agent_frame_alloc(&a) == 0, "frame buffer");

	/* connection 0: six chunks, all processed */
	rx_connect(&r, &a);
	rx_pump(&r);
	EXPECT(r.hellos == 1 && r.connection == 0, "connection 0 hello");
	for (int i = 0; i < 6; i++) {
		EXPECT(send_one(&a, (uint32_t)i % NR_CPUS) == 0, "send %d", i);
		rx_pump(&r);
	}
	/* one more on cpu 0 that the receiver never reads: it dies */
	lost_first = next_id;
	EXPECT(send_one(&a, 0) == 0, "the chunk the receiver will not read");
	lost_last = next_id;
	EXPECT(guest_link_at_boundary(r.gl), "connection 0 ends between frames");
	close(r.fd);
	/* the agent finds out at its next send and keeps that sub-buffer */
	EXPECT(send_one(&a, 1) != 0 && a.sock < 0 && a.cpus[1].holding &&
	       a.send_failures == 1, "send after the receiver died");

	/* connection 1: the held sub-buffer first, then more on both CPUs */
	rx_connect(&r, &a);
	rx_pump(&r);
	EXPECT(r.hellos == 2 && r.connection == 1, "connection 1 hello");
	EXPECT(agent_drain(&a) == 0 && !a.cpus[1].holding && a.sock >= 0,
	       "the held sub-buffer, resent");
	for (int i = 0; i < 4; i++) {
		EXPECT(send_one(&a, (uint32_t)i % NR_CPUS) == 0, "send %d after", i);
		rx_pump(&r);
	}
	EXPECT(r.lost_records[0] == lost_last - lost_first && r.lost_chunks[0] == 1,
	       "cpu 0: reconnect loss %llu records %llu chunks, want %u and 1",
	       (unsigned long long)r.lost_records[0],
	       (unsigned long long)r.lost_chunks[0], lost_last - lost_first);
	EXPECT(r.lost_records[1] == 0 && r.lost_chunks[1] == 0, "cpu 1: no loss");

	/* cpu 0's ring fills up (nobody takes) and drops; then all is sent */
	for (int i = 0; i < 100000 && drops < 5; i++) {
		struct vmscope_ev_sched_switch p;

		memset(&p, 0, sizeof(p));
		p.prev_pid = MAX_IDS;	/* not numbered: counted below */
		if (vmscope_rb_write(&rings[0], VMSCOPE_EV_sched_switch, &p,
				     sizeof(p)) == -ENOSPC)
			drops++;
		else
			filler++;
	}
	EXPECT(drops == 5, "the ring dropped %u", drops);
	vmscope_rb_flush(&rings[0]);
	EXPECT(agent_drain(&a) == 0 && a.sock >= 0, "drain after the drops");
	rx_pump(&r);
	for (uint32_t c = 0; c < NR_CPUS; c++)
		EXPECT(agent_send_tail_loss(&a, c) == 0, "tail loss cpu %u", c);
	agent_disconnect(&a);
	rx_pump(&r);
	EXPECT(n_gets == n_puts && !a.cpus[0].holding && !a.cpus[1].holding,
	       "%u sub-buffers taken, %u given back", n_gets, n_puts);
	EXPECT(guest_link_at_boundary(r.gl), "connection 1 ends between frames: %s",
	       guest_link_error(r.gl));

	/* every numbered record arrived once, but the unread chunk's */
	for (uint32_t id = 0; id < next_id; id++) {
		unsigned want = id >= lost_first && id < lost_last ? 0 : 1;

		EXPECT(r.got[id] == want, "record %u arrived %u times, want %u",
		       id, r.got[id], want);
	}
	EXPECT(r.filler == filler, "%u of %u records written before the drops "
	       "arrived", r.filler, filler);
	EXPECT(r.decoded == next_id - (lost_last - lost_first),
	       "%u records decoded with the hello's descriptors", r.decoded);
	/* ring drops: what the chunks and the LossRecord said, the ring's count */
	for (uint32_t c = 0; c < NR_CPUS; c++) {
		ring_lost += vmscope_rb_lost(&rings[c]);
		counted += r.lost_before[c] + r.loss_events[c];
	}
	EXPECT(ring_lost == 5 && counted == ring_lost,
	       "ring lost %llu, the stream said %llu",
	       (unsigned long long)ring_lost, (unsigned long long)counted);
	printf("%u records, %u in the unread chunk counted lost at the reconnect, "
	       "%llu ring drops counted\n", next_id, lost_last - lost_first,
	       (unsigned long long)counted);

	guest_link_free(r.gl);
	vr_events_free(r.ev);
	agent_hello_free(&a);
	for (uint32_t c = 0; c < NR_CPUS; c++)
		free((void *)a.cpus[c].map);
	free(a.cpus);
	free(a.frame);
	return check_result("agent-link");
}
