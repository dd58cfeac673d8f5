// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the analysis walk and the exit aggregation on hostile
 * merged traces. The input becomes a merged trace (in /dev/shm, written
 * by merge's own writer through analysis/tests/scen.h): 1-2 VMs of 1-4
 * vCPUs, then records of every kind the walk interprets — kvm_exit,
 * kvm_entry, kvm_userspace_exit, an exit's detail (kvm_pio, kvm_mmio,
 * kvm_msr, kvm_page_fault), host sched_switch, guest sched_switch and sched_wakeup,
 * kvm_vcpu_wakeup, kvm_inj_virq, the guest's irq_vector_entry,
 * losses — with origins (host CPU, thread: unknown, a vCPU
 * thread or another; VM; guest CPU) and fields (vCPU ids, reasons, ISA,
 * pids, names) from small sets or raw, in non-decreasing time. Asserts,
 * beyond no crash/leak/UB: the walk reads it to a clean end; the groups'
 * counts add up to the completed exits (by port, msr or mmio with the
 * exits without that detail, and each group of that detail's kind) and
 * so do the vCPUs'; every
 * group's percentiles lie within its min and max; the top-N is sorted;
 * the groups' SVG (exits_svg.h), titled with the VM's and the group's
 * names (guest task comms by task: raw bytes in the trace, printable
 * ASCII with markup characters after the walk), parses back with libxml2
 * with a panel per group (up to the cap) carrying that group's count.
 * Then the sched analysis on the same trace (host sched_switch between
 * vCPU threads and others): every thread's stall adds up
 * to what is charged to host tasks; the worst stalls are sorted. Guest
 * sync_guest records (steal readings mostly growing, or raw) in the
 * current layout or, by an input bit, ABI 0.3's without steal_ns: the
 * guest steal of a vCPU is known only from two readings, never in the
 * old layout; the host's preempted and blocked time over the spans add up
 * to no more than the spans, and they lie inside the trace.
 * Then `report wake`'s two analyses (halt.h, irqlat.h): per vCPU the
 * wake-ups are polled or slept and have an entry or not, no more than
 * the records; per (VM, vector) every injection is matched, unmatched or
 * a reinjection, the latencies are the matched ones, within min and max.
 */
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../merge/fuzz/fuzz_input.h"
#include "../tests/scen.h"
#include "exit_reason.h"
#include "exits.h"
#include "exits_svg.h"
#include "halt.h"
#include "irqlat.h"
#include "out.h"
#include "sched.h"
#include "vmscope_events.h"
#include "walk.h"

#include <libxml/parser.h>
#include <libxml/tree.h>

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

/* The groups as SVG into @dir/s.svg, parsed back and compared. */
static void check_svg(const char *dir, const struct an_walk *w, const struct an_exits *x)
{
	struct an_svg_panel *p = calloc(x->n ? x->n : 1, sizeof(*p));
	char (*t)[128] = calloc(x->n ? x->n : 1, sizeof(*t)), path[96];
	size_t k = 0;
	xmlDocPtr doc;
	int fd;

	ASSERT(p && t);
	for (size_t i = 0; i < x->n; i++) {
		const struct an_group *g = &x->g[i];
		const struct an_task *task = an_walk_task(w, g->task);

		snprintf(t[i], sizeof(t[i]), "VM %u %s: %s", g->vm, an_walk_vm_name(w, g->vm),
			 x->by == AN_BY_TASK ? (task ? task->comm : "(no task)") :
			 an_walk_reason_name(w, g->reason));
		p[i] = (struct an_svg_panel){ .title = t[i], .h = &g->h };
	}
	snprintf(path, sizeof(path), "%s/s.svg", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT(fd >= 0);
	ASSERT(an_exits_svg(fd, t[0], p, x->n) == 0);
	close(fd);
	doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	ASSERT(doc);
	for (xmlNode *n = xmlDocGetRootElement(doc)->children; n; n = n->next) {
		xmlChar *cls, *count;

		if (n->type != XML_ELEMENT_NODE || strcmp((const char *)n->name, "g"))
			continue;
		cls = xmlGetProp(n, BAD_CAST "class");
		count = xmlGetProp(n, BAD_CAST "data-count");
		ASSERT(cls && !strcmp((const char *)cls, "panel") && count && k < x->n);
		ASSERT(strtoull((const char *)count, NULL, 10) == x->g[k].h.count);
		xmlFree(cls);
		xmlFree(count);
		k++;
	}
	ASSERT(k == (x->n < AN_SVG_MAX_PANELS ? x->n : AN_SVG_MAX_PANELS));
	xmlFreeDoc(doc);
	free(p);
	free(t);
}

/* The guest's steal next to the host's (steal.h), per vCPU. */
static void check_steal(const struct an_walk *w, const struct an_sched *sc, bool abi03)
{
	uint64_t first, last;

	an_walk_span(w, &first, &last);
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++)
		for (uint32_t c = 0; c < AN_MAX_VCPUS; c++) {
			const struct an_sched_vcpu *v = an_sched_vcpu(sc, vm, c);
			struct an_steal r;

			if (!v)
				break;
			an_steal_result(v, &r);
			ASSERT(!abi03 || (r.n == 0 && !r.known));
			ASSERT(!r.known || (r.n >= 2 && r.spans >= 1));
			ASSERT(r.spans <= r.n && r.backwards <= r.n);
			/* preempted and blocked intervals do not overlap */
			ASSERT(r.host_ns + r.blocked_ns <= r.span_ns && r.span_ns <= last - first);
		}
}

static int32_t tid_of(struct in *in, unsigned int n_vms, unsigned int vcpus)
{
	uint8_t b = (uint8_t)take(in, 1);

	if (b < 64)
		return -1;
	if (b < 192)
		return (int32_t)(1000 * (1 + b % n_vms) + 1 + (b / 2) % vcpus);
	return (int32_t)val(in, 1, 1);
}

/* A guest sync record of @mo's VM and CPU: steal readings that mostly grow,
 * in the current layout or ABI 0.3's (no steal_ns). */
static void write_sync(struct in *in, struct scen_out *o, struct mo_origin *mo, uint64_t ts,
		       bool abi03)
{
	static uint64_t steal[SCEN_VMS][8];
	struct vmscope_ev_sync_guest e = { 0 };
	uint64_t *s = &steal[mo->origin - 1][mo->cpu];
	uint8_t old[64];

	*s = take(in, 1) < 224 ? *s + take(in, 2) * 1000 : take(in, 8);
	e.steal_ns = *s;
	e.cpu = mo->cpu;
	e.seq = take(in, 1);
	if (!abi03) {
		scen_out_event(o, mo->origin, VMSCOPE_EV_sync_guest, ts, &e, sizeof(e), mo);
		return;
	}
	memcpy(old, &e, 56);	/* t1 .. tsc_b */
	memcpy(old + 56, &e.cpu, 4);
	memcpy(old + 60, &e.missed, 4);
	scen_out_event(o, mo->origin, VMSCOPE_EV_sync_guest, ts, old, sizeof(old), mo);
}

/* A host kvm_pio, kvm_mmio, kvm_msr or kvm_page_fault record, keys from
 * small sets (faults: pages near each other, near 0 and near 2^64). */
static void write_detail(struct in *in, struct scen_out *o, struct mo_origin *mo, uint64_t ts)
{
	unsigned int d = (unsigned int)take(in, 1);

	if (d % 4 == 0) {
		struct vmscope_ev_kvm_pio e = { .write = d >> 2 & 1, .size = 1u << (d >> 3 & 3),
						.count = 1 };

		e.port = (uint32_t)val(in, 0x70, 1);
		scen_out_event(o, 0, VMSCOPE_EV_kvm_pio, ts, &e, sizeof(e), mo);
	} else if (d % 4 == 3) {
		static const uint64_t base[3] = { 0, 0xfee00000, UINT64_MAX - 0xffff };
		struct vmscope_ev_kvm_page_fault e = { .error_code = d >> 2 };

		e.address = base[take(in, 1) % 3] + take(in, 2);
		scen_out_event(o, 0, VMSCOPE_EV_kvm_page_fault, ts, &e, sizeof(e), mo);
	} else if (d % 4 == 1) {
		struct vmscope_ev_kvm_mmio e = { .type = (d >> 2) % 4, .len = 4 };

		e.gpa = val(in, 0xfee00000, 3);
		scen_out_event(o, 0, VMSCOPE_EV_kvm_mmio, ts, &e, sizeof(e), mo);
	} else {
		struct vmscope_ev_kvm_msr e = { .write = d >> 2 & 1 };

		e.ecx = (uint32_t)val(in, 0x6e0, 1);
		scen_out_event(o, 0, VMSCOPE_EV_kvm_msr, ts, &e, sizeof(e), mo);
	}
}

/* records written of the kinds `report wake` counts */
static uint64_t n_wake, n_inj, n_gvec;

static void check_wake(const char *merged)
{
	struct an_hooks h = { 0 };
	struct an_halt a;
	struct an_irq q;
	struct an_walk *w;
	char err[256];
	uint64_t total = 0, inj = 0, g = 0;

	ASSERT(an_walk_open(&w, merged, 0, err, sizeof(err)) == 0);
	ASSERT(an_halt_init(&a, w) == 0);
	an_halt_hooks(&a, &h);
	ASSERT(an_walk_run(w, &h, err, sizeof(err)) == 0);
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++)
		for (uint32_t c = 0; c < an_walk_nr_vcpus(w, vm); c++) {
			const struct an_halt_vcpu *v = an_halt_vcpu(&a, vm, c);

			if (!v)
				continue;
			ASSERT(v->polled + v->slept == v->wakeups);
			ASSERT(v->entry.count + v->entry_unknown == v->wakeups);
			ASSERT(v->poll_unknown <= v->slept);
			ASSERT(an_hist_quantile(&v->entry, 0.5) <= v->entry.max);
			total += v->wakeups;
		}
	ASSERT(total == an_halt_total(&a) && total <= n_wake);
	an_halt_free(&a);
	an_walk_close(w);

	memset(&h, 0, sizeof(h));
	ASSERT(an_walk_open(&w, merged, 0, err, sizeof(err)) == 0);
	ASSERT(an_irq_init(&q, w) == 0);
	an_irq_hooks(&q, &h);
	ASSERT(an_walk_run(w, &h, err, sizeof(err)) == 0);
	ASSERT(!q.oom);
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++)
		for (uint32_t v = 0; v <= AN_IRQ_VECTORS; v++) {
			const struct an_irq_row *r = an_irq_row(&q, vm, v);

			if (!r)
				continue;
			ASSERT(r->matched + an_irq_unmatched(r) + r->reinjections == r->injections);
			ASSERT(r->lat.count == r->matched);
			ASSERT(!r->lat.count || (an_hist_quantile(&r->lat, 0.99) >= r->lat.min &&
						 an_hist_quantile(&r->lat, 0.99) <= r->lat.max));
			inj += r->injections;
			g += r->matched + r->guest_unmatched;
		}
	ASSERT(inj <= n_inj && g <= n_gvec);
	an_irq_free(&q);
	an_walk_close(w);
}

static void write_records(struct in *in, struct scen_out *o, unsigned int n_vms,
			  unsigned int vcpus, bool abi03)
{
	uint64_t ts = SCEN_H0;

	for (int k = 0; k < 4000 && in->n; k++) {
		unsigned int kind = (unsigned int)take(in, 1) % 13;
		struct mo_origin mo = { 0 };
		uint32_t vm = (uint32_t)take(in, 1) % n_vms;

		ts += take(in, 2);
		mo.orig_ts = ts;
		mo.cpu = (uint32_t)val(in, 0, 1);
		mo.tid = tid_of(in, n_vms, vcpus);
		mo.vcpu = MO_NONE;
		if (kind == 0) {
			struct vmscope_ev_kvm_exit e = { 0 };

			e.vcpu_id = (uint32_t)val(in, 0, 1);
			e.exit_reason = (uint32_t)val(in, 0x72, 3);
			e.isa = (uint32_t)take(in, 1) % 4;
			e.reason_valid = (uint32_t)take(in, 1) % 3;
			/* one in four a valid SVM NPF: the exits whose faults count */
			if (take(in, 1) % 4 == 0) {
				e.exit_reason = 0x400;
				e.isa = AN_ISA_SVM;
				e.reason_valid = 1;
			}
			e.guest_rip = take(in, 8);
			scen_out_event(o, 0, VMSCOPE_EV_kvm_exit, ts, &e, sizeof(e), &mo);
		} else if (kind == 1 || kind == 2) {
			struct vmscope_ev_kvm_entry e = { 0 };

			e.vcpu_id = (uint32_t)val(in, 0, 1);
			scen_out_event(o, 0, VMSCOPE_EV_kvm_entry, ts, &e, sizeof(e), &mo);
		} else if (kind == 3) {
			struct vmscope_ev_kvm_userspace_exit e = { .reason = 2 };

			scen_out_event(o, 0, VMSCOPE_EV_kvm_userspace_exit, ts, &e, sizeof(e), &mo);
		} else if (kind == 4 || kind == 5) {
			struct vmscope_ev_sched_switch e = { 0 };

			/* the host's also switch vCPU threads away and back */
			e.prev_pid = kind == 4 ? tid_of(in, n_vms, vcpus) : (int32_t)val(in, 100, 1);
			e.next_pid = kind == 4 ? tid_of(in, n_vms, vcpus) : (int32_t)val(in, 100, 1);
			e.prev_state = (uint32_t)take(in, 1) % 3;
			for (size_t i = 0; i < sizeof(e.next_comm); i++) {
				e.next_comm[i] = (char)take(in, 1);
				e.prev_comm[i] = (char)(e.next_comm[i] ^ 0x55);
			}
			if (kind == 5) {	/* a guest's */
				mo.origin = vm + 1;
				mo.cpu %= 8;
				mo.vcpu = mo.cpu;
			}
			scen_out_event(o, mo.origin, VMSCOPE_EV_sched_switch, ts, &e, sizeof(e), &mo);
		} else if (kind == 6) {
			struct vmscope_ev_sched_wakeup e = { 0 };

			e.pid = (int32_t)val(in, 100, 1);
			mo.origin = vm + 1;
			mo.vcpu = mo.cpu;
			scen_out_event(o, mo.origin, VMSCOPE_EV_sched_wakeup, ts, &e, sizeof(e), &mo);
		} else if (kind == 8) {
			mo.origin = vm + 1;
			mo.cpu %= 8;
			mo.vcpu = mo.cpu;
			write_sync(in, o, &mo, ts, abi03);
		} else if (kind == 9) {	/* an exit's detail (walk_detail.c) */
			write_detail(in, o, &mo, ts);
		} else if (kind == 10) {	/* a halt's end */
			struct vmscope_ev_kvm_vcpu_wakeup e = { 0 };

			e.ns = take(in, 1) & 1 ? take(in, 3) : take(in, 8);
			e.waited = (uint32_t)take(in, 1) % 3;
			e.valid = (uint32_t)take(in, 1) % 3;
			scen_out_event(o, 0, VMSCOPE_EV_kvm_vcpu_wakeup, ts, &e, sizeof(e), &mo);
			n_wake++;
		} else if (kind == 11) {	/* an injection */
			struct vmscope_ev_kvm_inj_virq e = { 0 };
			static const uint32_t vecs[4] = { 0xec, 0xfd, 0x22, 0xfb };

			e.vector = take(in, 1) & 1 ? vecs[take(in, 1) % 4] : (uint32_t)val(in, 0xec, 4);
			e.soft = (uint32_t)take(in, 1) % 3 == 2;
			e.reinjected = (uint32_t)take(in, 1) % 3 == 2;
			scen_out_event(o, 0, VMSCOPE_EV_kvm_inj_virq, ts, &e, sizeof(e), &mo);
			n_inj++;
		} else if (kind == 12 && !abi03) {	/* a guest vector's handler (1.3) */
			struct vmscope_ev_irq_vector_entry e = { 0 };

			e.vector = take(in, 1) & 1 ? 0xec : (uint32_t)val(in, 0xfd, 4);
			mo.origin = vm + 1;
			mo.cpu %= 8;
			mo.vcpu = mo.cpu;
			scen_out_event(o, mo.origin, VMSCOPE_EV_irq_vector_entry, ts, &e, sizeof(e),
				       &mo);
			n_gvec++;
		} else {
			scen_out_loss(o, ts);
		}
	}
}

/* The kind of detail the groups of @by have (an_by_detail). */
static uint8_t kind_of(enum an_by by)
{
	return by == AN_BY_PORT ? AN_DETAIL_PIO : by == AN_BY_MSR ? AN_DETAIL_MSR :
	       by == AN_BY_MMIO || by == AN_BY_MMIO_REGION ? AN_DETAIL_MMIO : AN_DETAIL_NPF;
}

/* By region: each group's region is whole pages, and two regions of a VM
 * never overlap or touch (region.h); sorted by address here. */
static int cmp_addr(const void *a, const void *b)
{
	const struct an_group *x = *(const struct an_group *const *)a;
	const struct an_group *y = *(const struct an_group *const *)b;

	if (x->vm != y->vm)
		return x->vm < y->vm ? -1 : 1;
	return (x->d.addr > y->d.addr) - (x->d.addr < y->d.addr);
}

static void check_regions(const struct an_exits *x)
{
	const struct an_group **p = malloc((x->n ? x->n : 1) * sizeof(*p));

	ASSERT(p);
	for (size_t i = 0; i < x->n; i++)
		p[i] = &x->g[i];
	qsort(p, x->n, sizeof(*p), cmp_addr);
	for (size_t i = 0; i < x->n; i++) {
		ASSERT(p[i]->d.addr % AN_PAGE == 0 && p[i]->end % AN_PAGE == AN_PAGE - 1);
		ASSERT(p[i]->d.addr < p[i]->end && p[i]->writes <= p[i]->h.count);
		ASSERT(i == 0 || p[i - 1]->vm != p[i]->vm || p[i - 1]->end + 1 < p[i]->d.addr);
	}
	free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	char dir[64] = "/dev/shm/analysis-fuzz-XXXXXX", merged[96], err[256];
	unsigned int n_vms = 1 + (unsigned int)(take(&in, 1) & 1);
	unsigned int vcpus = 1 + (unsigned int)(take(&in, 1) % 4);
	unsigned int b = (unsigned int)take(&in, 1);
	enum an_by by = (enum an_by)(b % AN_BY_N);
	bool abi03 = b >> 2 & 1;	/* the guests' table as ABI 0.3 had it */
	struct an_hooks h = { .exit = an_exits_add };
	struct scen_out *o;
	struct an_exits x;
	struct an_walk *w;
	uint64_t sum = 0, vsum = 0;
	size_t ntop;

	if (!mkdtemp(dir))
		abort();
	n_wake = n_inj = n_gvec = 0;
	ASSERT(scen_out_open_abi(&o, dir, n_vms, vcpus, abi03) == 0);
	write_records(&in, o, n_vms, vcpus, abi03);
	ASSERT(scen_out_close(o) == 0);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	ASSERT(an_exits_init(&x, by, 5) == 0);
	h.ctx = &x;
	ASSERT(an_walk_open(&w, merged, 0, err, sizeof(err)) == 0);
	ASSERT(an_walk_run(w, &h, err, sizeof(err)) == 0);
	ASSERT(!x.oom);
	/* as the report does: by region, the groups joined into others go */
	an_exits_sort(&x, (enum an_sort)(b >> 3 & 3));
	if (an_by_region(by))
		check_regions(&x);
	for (size_t i = 0; i < x.n; i++) {
		const struct an_group *g = &x.g[i];
		uint64_t rs = 0;

		sum += g->h.count;
		ASSERT(g->h.count > 0);
		for (double q = 0.1; q <= 1; q += 0.1) {
			uint64_t v = an_hist_quantile(&g->h, q);

			ASSERT(v >= g->h.min && v <= g->h.max);
		}
		for (uint32_t r = 0; r < g->nr; r++)
			rs += g->r[r].count;
		ASSERT(by == AN_BY_REASON || rs == g->h.count);
		/* by what was accessed: only exits that accessed it */
		ASSERT(!an_by_detail(by) || g->d.kind == kind_of(by));
		/* by symbol: these traces have no symbol table, so a group is
		 * user mode (by task) or of a VM without one */
		ASSERT(by != AN_BY_SYMBOL || g->sym == AN_SYM_USER || g->sym == AN_SYM_NO_TABLE);
	}
	ASSERT(sum + x.no_detail + x.beyond == an_walk_counts(w)->exits);
	ASSERT(an_by_detail(by) || (!x.no_detail && !x.beyond));
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++)
		for (uint32_t c = 0; c < an_walk_nr_vcpus(w, vm); c++)
			vsum += an_walk_vcpu_time(w, vm, c)->exits;
	ASSERT(vsum == sum + x.no_detail + x.beyond);
	ntop = an_topn_sort(&x.top);
	for (size_t i = 1; i < ntop; i++) {
		const struct an_exit *a = an_topn_item(&x.top, i - 1), *b = an_topn_item(&x.top, i);

		ASSERT(a->end - a->start >= b->end - b->start);
	}
	check_svg(dir, w, &x);
	an_exits_free(&x);
	an_walk_close(w);

	/* the sched analysis on the same trace */
	{
		struct an_hooks hs = { 0 };
		struct an_sched sc;
		uint64_t prev = UINT64_MAX;

		ASSERT(an_walk_open(&w, merged, 0, err, sizeof(err)) == 0);
		ASSERT(an_sched_init(&sc, w, 5) == 0);
		an_sched_hooks(&sc, &hs);
		ASSERT(an_walk_run(w, &hs, err, sizeof(err)) == 0);
		for (uint32_t i = 0; i < an_walk_nr_tasks(w); i++) {
			const struct an_sched_task *t = &sc.t[i];
			uint64_t by = t->by_other_ns;

			for (int k = 0; k < AN_SCHED_KEEP; k++)
				by += t->by[k].ns;
			ASSERT(by == t->stall_running_ns);
		}
		ntop = an_topn_sort(&sc.worst);
		for (size_t i = 0; i < ntop; i++) {
			const struct an_stall *st = an_topn_item(&sc.worst, i);

			ASSERT(st->end >= st->start && st->end - st->start <= prev);
			prev = st->end - st->start;
		}
		check_steal(w, &sc, abi03);
		an_sched_free(&sc);
		an_walk_close(w);
	}
	check_wake(merged);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	return 0;
}
