/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The agent's handshake (schemas/guest.proto GuestHello): the module's
 * event descriptors, the state dump the module gives after SESSION_START
 * (tasks, IRQs; CPUs), uname, the trace clock, the sync token. Built once
 * per session; only the connection number and the per-CPU cursors change
 * from one connection to the next.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <vmscope/version.h>

#include "agent.h"
#include "agent_syms.h"
#include "decode.h"
#include "reader_desc.h"
#include "guest_link.h"

/* Everything below hangs off one allocation list, freed at the end. */
struct hello_mem {
	Vmscope__Trace__GuestHello h;
	Vmscope__Trace__KernelInfo kernel;
	Vmscope__Trace__ClockDesc clock;
	Vmscope__Trace__GuestStateDump state;
	struct utsname uts;
	struct vr_pb_events *pb;
	struct vmscope_event_desc *descs;
	Vmscope__Trace__GuestTask *tasks;
	Vmscope__Trace__GuestTask **taskp;
	char (*comms)[17];
	Vmscope__Trace__GuestIrq *irqs;
	Vmscope__Trace__GuestIrq **irqp;
	char (*irq_names)[VMSCOPE_GUEST_IRQ_NAME_LEN + 1];
	Vmscope__Trace__GuestCpuCursor *cursors;
	Vmscope__Trace__GuestCpuCursor **cursorp;
	size_t tasks_cap, comms_cap, irqs_cap, names_cap;	/* while loading */
	struct agent_syms syms;
};

/* The module's descriptors, checked, then the one ABI -> stored mapping. */
static int load_events(struct agent *a, struct hello_mem *m)
{
	struct vmscope_event_desc_req req;
	char why[160];
	unsigned n;

	m->descs = calloc(VMSCOPE_MAX_EVENTS, sizeof(*m->descs));
	m->pb = calloc(1, sizeof(*m->pb));
	if (!m->descs || !m->pb)
		return -ENOMEM;
	for (n = 0; n < VMSCOPE_MAX_EVENTS; n++) {
		memset(&req, 0, sizeof(req));
		req.index = n;
		if (ioctl(a->dev, VMSCOPE_IOC_GET_EVENT_DESC, &req) < 0) {
			if (errno == ENOENT)
				break;
			return -errno;
		}
		if (vmscope_desc_check(&req.desc, why, sizeof(why))) {
			fprintf(stderr, "vmscope agent: module descriptor refused: %s\n",
				why);
			return -EPROTO;
		}
		m->descs[n] = req.desc;
	}
	vr_events_to_pb(m->pb, m->descs, n, VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0,
			VMSCOPE_VERSION_STRING);
	return 0;
}

/*
 * GUEST_TASKS and GUEST_IRQS answer in pages that begin alike (start, next,
 * nr): ask until next is 0, handing each page to take(), which appends its
 * entries at *n.
 */
struct dump_page {
	uint32_t start, next, nr, reserved;
};
_Static_assert(offsetof(struct vmscope_guest_tasks_req, nr) ==
	       offsetof(struct dump_page, nr) &&
	       offsetof(struct vmscope_guest_irqs_req, nr) ==
	       offsetof(struct dump_page, nr), "dump pages begin alike");

static int load_paged(struct agent *a, unsigned long cmd, size_t size,
		      uint32_t first, struct hello_mem *m, size_t *n,
		      int (*take)(struct hello_mem *m, const void *page, size_t *n))
{
	struct dump_page *pg = calloc(1, size);
	uint32_t start = first;
	int e = 0;

	if (!pg)
		return -ENOMEM;
	do {
		pg->start = start;
		if (ioctl(a->dev, cmd, pg) < 0) {
			e = -errno;
			break;
		}
		if (pg->nr > VMSCOPE_GUEST_DUMP_MAX) {
			e = -EPROTO;
			break;
		}
		e = take(m, pg, n);
		/* the kernel promises progress; a stuck cursor is a bug, not a loop */
		if (!e && pg->next && pg->next <= start)
			e = -EPROTO;
		start = pg->next;
	} while (!e && start);
	free(pg);
	return e;
}

/* Room for @need elements of @size in *p (capacity *cap), keeping *p on failure. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	void *np;

	if (need <= *cap)
		return 0;
	np = realloc(*p, need * 2 * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = need * 2;
	return 0;
}

static int take_tasks(struct hello_mem *m, const void *page, size_t *n)
{
	const struct vmscope_guest_tasks_req *r = page;

	if (grow((void **)&m->tasks, &m->tasks_cap, *n + r->nr, sizeof(*m->tasks)) ||
	    grow((void **)&m->comms, &m->comms_cap, *n + r->nr, sizeof(*m->comms)))
		return -ENOMEM;
	for (uint32_t i = 0; i < r->nr; i++, (*n)++) {
		Vmscope__Trace__GuestTask *t = &m->tasks[*n];

		vmscope__trace__guest_task__init(t);
		t->pid = r->tasks[i].pid;
		t->tgid = r->tasks[i].tgid;
		t->ppid = r->tasks[i].ppid;
		t->kthread = !!(r->tasks[i].flags & VMSCOPE_GUEST_TASK_KTHREAD);
		memcpy(m->comms[*n], r->tasks[i].comm, 16);
		m->comms[*n][16] = 0;
	}
	return 0;
}

static int take_irqs(struct hello_mem *m, const void *page, size_t *n)
{
	const struct vmscope_guest_irqs_req *r = page;

	m->state.nr_cpus = r->nr_cpus;
	if (grow((void **)&m->irqs, &m->irqs_cap, *n + r->nr, sizeof(*m->irqs)) ||
	    grow((void **)&m->irq_names, &m->names_cap, *n + r->nr,
		 sizeof(*m->irq_names)))
		return -ENOMEM;
	for (uint32_t i = 0; i < r->nr; i++, (*n)++) {
		vmscope__trace__guest_irq__init(&m->irqs[*n]);
		m->irqs[*n].irq = r->irqs[i].irq;
		m->irqs[*n].nr_actions = r->irqs[i].nr_actions;
		memcpy(m->irq_names[*n], r->irqs[i].name, VMSCOPE_GUEST_IRQ_NAME_LEN);
		m->irq_names[*n][VMSCOPE_GUEST_IRQ_NAME_LEN] = 0;
	}
	return 0;
}

/* The state dump into m->state; strings and pointers set after the last realloc. */
static int load_state(struct agent *a, struct hello_mem *m)
{
	size_t nt = 0, ni = 0;
	int e;

	e = load_paged(a, VMSCOPE_IOC_GUEST_TASKS,
		       sizeof(struct vmscope_guest_tasks_req), 1, m, &nt, take_tasks);
	if (!e)
		e = load_paged(a, VMSCOPE_IOC_GUEST_IRQS,
			       sizeof(struct vmscope_guest_irqs_req), 0, m, &ni,
			       take_irqs);
	if (e)
		return e;
	m->taskp = calloc(nt + 1, sizeof(*m->taskp));
	m->irqp = calloc(ni + 1, sizeof(*m->irqp));
	if (!m->taskp || !m->irqp)
		return -ENOMEM;
	for (size_t i = 0; i < nt; i++) {
		m->tasks[i].comm = m->comms[i];
		m->taskp[i] = &m->tasks[i];
	}
	for (size_t i = 0; i < ni; i++) {
		m->irqs[i].name = m->irq_names[i];
		m->irqp[i] = &m->irqs[i];
	}
	m->state.tasks = m->taskp;
	m->state.n_tasks = nt;
	m->state.irqs = m->irqp;
	m->state.n_irqs = ni;
	return 0;
}

int agent_hello_build(struct agent *a, uint64_t token, int sync_available,
		      uint64_t period_ns)
{
	struct hello_mem *m = calloc(1, sizeof(*m));
	int e;

	if (!m)
		return -ENOMEM;
	a->hello = &m->h;	/* first member: agent_hello_free() finds m */
	vmscope__trace__guest_hello__init(&m->h);
	vmscope__trace__kernel_info__init(&m->kernel);
	vmscope__trace__clock_desc__init(&m->clock);
	vmscope__trace__guest_state_dump__init(&m->state);

	e = load_events(a, m);
	if (!e)
		e = load_state(a, m);
	if (!e)
		e = agent_syms_load(&m->syms, a->kallsyms_path ? a->kallsyms_path :
				    "/proc/kallsyms", a->modules_path ? a->modules_path :
				    "/proc/modules", GSYM_MAX_BYTES);
	if (e)
		return e;
	m->h.symbols = &m->syms.msg;

	uname(&m->uts);
	m->kernel.sysname = m->uts.sysname;
	m->kernel.release = m->uts.release;
	m->kernel.version = m->uts.version;
	m->kernel.machine = m->uts.machine;
	m->kernel.nr_cpus = m->state.nr_cpus;
	/* the ring buffer's clock (ringbuf/rb_shim_kernel.h), also t1/t4's */
	m->clock.name = "trace_clock_local";
	m->clock.unit = "ns";
	m->clock.ns_mul = 1;
	m->clock.ns_div = 1;
	m->clock.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	m->clock.ts_bits = 64;
	m->clock.monotonic = 1;	/* per CPU */
	m->state.nr_cpu_ids = a->cfg.nr_cpu_ids;

	m->cursors = calloc(a->cfg.nr_cpu_ids, sizeof(*m->cursors));
	m->cursorp = calloc(a->cfg.nr_cpu_ids, sizeof(*m->cursorp));
	if (!m->cursors || !m->cursorp)
		return -ENOMEM;
	for (uint32_t c = 0; c < a->cfg.nr_cpu_ids; c++) {
		vmscope__trace__guest_cpu_cursor__init(&m->cursors[c]);
		m->cursors[c].cpu = c;
		m->cursorp[c] = &m->cursors[c];
	}
	m->h.cursors = m->cursorp;
	m->h.n_cursors = a->cfg.nr_cpu_ids;

	m->h.protocol_version = VMSCOPE_GUEST_PROTOCOL;
	m->h.token = sync_available ? token : 0;
	m->h.sync_available = sync_available;
	m->h.sync_period_ns = sync_available ? period_ns : 0;
	m->h.kernel = &m->kernel;
	m->h.clock = &m->clock;
	m->h.events = &m->pb->table;
	m->h.state = &m->state;
	m->h.agent_version = VMSCOPE_VERSION_STRING;
	m->h.subbuf_size = 1u << a->cfg.chan[0].subbuf_shift;
	return 0;
}

void agent_hello_free(struct agent *a)
{
	struct hello_mem *m = (struct hello_mem *)a->hello;

	if (!m)
		return;
	free(m->pb);
	free(m->descs);
	free(m->tasks);
	free(m->taskp);
	free(m->comms);
	free(m->irqs);
	free(m->irqp);
	free(m->irq_names);
	free(m->cursors);
	free(m->cursorp);
	agent_syms_free(&m->syms);
	free(m);
	a->hello = NULL;
}
