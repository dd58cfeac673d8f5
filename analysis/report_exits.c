/*
 * The output of `vmscope report exits`: VM exit latency from a merged
 * trace (exits.h), as a text table or JSON (json-c), and the groups'
 * histograms drawn as SVG (exits_svg.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "exits.h"
#include "exits_json.h"
#include "exits_svg.h"
#include "msr_name.h"
#include "report.h"

const char *const report_by_names[AN_BY_N] = { "vm", "vcpu", "reason", "task", "port", "msr",
					       "mmio", "symbol", "mmio-region", "npf",
					       "npf-region" };
const char *const report_sort_names[4] = { "count", "total", "p99", "max" };

static const double quantiles[] = { 0.5, 0.9, 0.99, 0.999 };
static const char *const q_names[] = { "p50", "p90", "p99", "p99.9" };
#define NQ 4

static double share(const struct an_walk *w, const struct an_exits *x, const struct an_group *g)
{
	uint64_t obs = report_vcpu_observed(w, g->vm, x->by == AN_BY_VCPU ? (int64_t)g->vcpu : -1);

	return obs ? (double)g->h.sum / (double)obs : 0;
}

/* The pages of a page or region group. */
static uint64_t pages_of(const struct an_group *g)
{
	return (g->end - g->d.addr) / AN_PAGE + 1;
}

/* What an exit accessed (@d) as the tables print it: a port, in/out
 * (as perf kvm stat --event=ioport) and the access size, an MSR with
 * msr-index.h's name when it has one and read/write, a guest-physical
 * address (an MMIO access, a nested page fault: a group's page or
 * region, from d->addr to @end, when @end is not 0) and read/write. */
static const char *detail_label(const struct an_detail *d, uint64_t end, char *buf, size_t len)
{
	const char *rw = d->write ? "write" : "read", *n;

	switch (d->kind) {
	case AN_DETAIL_PIO:
		snprintf(buf, len, "%#" PRIx64 " %s %u byte%s", d->addr, d->write ? "out" : "in",
			 d->size, d->size == 1 ? "" : "s");
		break;
	case AN_DETAIL_MSR:
		n = vmscope_msr_name((uint32_t)d->addr);
		snprintf(buf, len, "%#" PRIx64 "%s%s %s", d->addr, n ? " " : "", n ? n : "", rw);
		break;
	case AN_DETAIL_MMIO:
	case AN_DETAIL_NPF:
		if (end)
			snprintf(buf, len, "%#" PRIx64 "-%#" PRIx64 " %s", d->addr, end, rw);
		else
			snprintf(buf, len, "%#" PRIx64 " %s", d->addr, rw);
		break;
	default:
		snprintf(buf, len, "-");
	}
	return buf;
}

/* A --by symbol group: the guest kernel function and its module, or
 * user mode with the task, or why there is no function. */
static const char *const no_sym[] = {
	[-AN_SYM_NONE] = "(kernel, no symbol)",
	[-AN_SYM_NO_TABLE] = "(no guest symbols)",
};

static const char *sym_label(const struct an_walk *w, const struct an_group *g, char *buf,
			     size_t len)
{
	const char *name, *mod;
	char t[64];

	if (an_walk_sym_name(w, g->vm, g->sym, &name, &mod))
		snprintf(buf, len, "%s%s%s%s", name, mod ? " [" : "", mod ? mod : "",
			 mod ? "]" : "");
	else if (g->sym == AN_SYM_USER)
		snprintf(buf, len, "(user) %s", report_task(w, g->task, t, sizeof(t)));
	else
		snprintf(buf, len, "%s", no_sym[-g->sym]);
	return buf;
}

static const char *label(const struct an_walk *w, const struct an_exits *x,
			 const struct an_group *g, char *buf, size_t len)
{
	char t[64];

	switch (x->by) {
	case AN_BY_VCPU:
		snprintf(buf, len, "vcpu %u", g->vcpu);
		break;
	case AN_BY_REASON:
		snprintf(buf, len, "%s", an_walk_reason_name(w, g->reason));
		break;
	case AN_BY_TASK:
		snprintf(buf, len, "%s", report_task(w, g->task, t, sizeof(t)));
		break;
	case AN_BY_PORT:
	case AN_BY_MSR:
	case AN_BY_MMIO:
	case AN_BY_NPF:
		detail_label(&g->d, g->end, buf, len);
		break;
	case AN_BY_MMIO_REGION:
	case AN_BY_NPF_REGION:
		/* reads and writes together: a region is where, not how */
		snprintf(buf, len, "%#" PRIx64 "-%#" PRIx64 " %" PRIu64 " page%s", g->d.addr,
			 g->end, pages_of(g), pages_of(g) == 1 ? "" : "s");
		break;
	case AN_BY_SYMBOL:
		sym_label(w, g, buf, len);
		break;
	default:
		snprintf(buf, len, "%s", an_walk_vm_name(w, g->vm));
	}
	return buf;
}

/* ---- text ---- */

static void text_vms(const struct an_walk *w)
{
	char b[5][32];

	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		printf("VM %u %s: %u vCPUs seen\n", vm, an_walk_vm_name(w, vm),
		       an_walk_nr_vcpus(w, vm));
		printf("  %-5s %8s %12s %12s %12s %12s %10s\n", "vcpu", "thread", "in guest",
		       "kernel exit", "userspace", "halted", "exits");
		for (uint32_t c = 0; c < an_walk_nr_vcpus(w, vm); c++) {
			const struct an_vcpu_time *t = an_walk_vcpu_time(w, vm, c);

			printf("  %-5u %8d %12s %12s %12s %12s %10" PRIu64 "\n", c,
			       an_walk_vcpu_tid(w, vm, c),
			       an_dur(t->guest_ns, b[0], sizeof(b[0])),
			       an_dur(t->kernel_ns, b[1], sizeof(b[1])),
			       an_dur(t->user_ns, b[2], sizeof(b[2])),
			       an_dur(t->halted_ns, b[3], sizeof(b[3])), t->exits);
		}
	}
}

static void text_groups(const struct an_walk *w, const struct an_exits *x, enum an_sort sort)
{
	char b[NQ + 4][32], l[640];
	/* a region's range and pages are wider than the other labels */
	int lw = an_by_region(x->by) ? 44 : 24;

	printf("\nexits by %s, by %s:\n", report_by_names[x->by], report_sort_names[sort]);
	printf("%-4s %-*s %9s %10s %6s %10s %10s %10s %10s %10s %10s\n", "VM", lw,
	       report_by_names[x->by], "count", "total", "share", "min", q_names[0], q_names[1],
	       q_names[2], q_names[3], "max");
	for (size_t i = 0; i < x->n; i++) {
		const struct an_group *g = &x->g[i];

		printf("%-4u %-*s %9" PRIu64 " %10s %5.1f%% %10s", g->vm, lw,
		       label(w, x, g, l, sizeof(l)), g->h.count,
		       an_dur(g->h.sum, b[0], sizeof(b[0])), 100 * share(w, x, g),
		       an_dur(g->h.min, b[1], sizeof(b[1])));
		for (int q = 0; q < NQ; q++)
			printf(" %10s", an_dur(an_hist_quantile(&g->h, quantiles[q]), b[2 + q],
						   sizeof(b[2 + q])));
		printf(" %10s\n", an_dur(g->h.max, b[2 + NQ], sizeof(b[2 + NQ])));
		if (x->by == AN_BY_REASON)
			continue;
		printf("%-4s   ", "");
		for (uint32_t r = 0; r < g->nr && r < 5; r++)
			printf("%s%s %" PRIu64 " (%s)", r ? ", " : "",
			       an_walk_reason_name(w, g->r[r].reason), g->r[r].count,
			       an_dur(g->r[r].total_ns, b[0], sizeof(b[0])));
		printf("%s\n", g->nr > 5 ? ", ..." : "");
	}
}

/* What a by-detail table (--by port|msr|mmio|...) holds, and what not. */
#define NPF_WHAT "a nested page fault (a kvm_page_fault record inside an NPF or EPT " \
		 "violation exit)"
static const char *const detail_what[AN_BY_N] = {
	[AN_BY_PORT] = "an I/O port (a kvm_pio record inside the exit)",
	[AN_BY_MSR] = "an MSR (a kvm_msr record inside the exit)",
	[AN_BY_MMIO] = "an MMIO access (a kvm_mmio record inside the exit)",
	[AN_BY_MMIO_REGION] = "an MMIO access (a kvm_mmio record inside the exit)",
	[AN_BY_NPF] = NPF_WHAT,
	[AN_BY_NPF_REGION] = NPF_WHAT,
};

static void text_detail(const struct an_exits *x)
{
	uint64_t in = 0;

	if (!detail_what[x->by])
		return;
	for (size_t i = 0; i < x->n; i++)
		in += x->g[i].h.count;
	printf("%" PRIu64 " exits with %s; %" PRIu64 " other exits are not in this table\n", in,
	       detail_what[x->by], x->no_detail);
	if (an_by_region(x->by))
		printf("a region: adjacent 4 KiB guest-physical pages that each had such an exit, "
		       "reads and writes together\n");
	if (x->beyond)
		printf("%" PRIu64 " exits with it are not in this table either: their pages or "
		       "regions came after the first %d\n", x->beyond, AN_MAX_ADDR_GROUPS);
}

/* --by symbol: each VM's table, and what it lacks, said. */
static void text_symbols(const struct an_walk *w, const struct an_exits *x)
{
	if (x->by != AN_BY_SYMBOL)
		return;
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		uint64_t dropped;
		const char *note;
		size_t n = an_walk_vm_symbols(w, vm, &dropped, &note);

		if (!n)
			printf("VM %u: no guest symbols in the trace (no agent, an agent that "
			       "sent none%s%s)\n", vm, note[0] ? ": " : "", note);
		else
			printf("VM %u: %zu guest kernel symbols%s%s\n", vm, n,
			       dropped ? "; " : "", dropped ? note : "");
	}
	printf("exits from guest user mode (RIP below the kernel's half) are \"(user)\" "
	       "with their task\n");
}

static void text_top(const struct an_walk *w, const struct an_exits *x, size_t n)
{
	char b[3][32], t[64], d[96] = "", r[640];

	if (!n)
		return;
	printf("\nthe %zu longest exits:\n", n);
	printf("%-4s %-5s %-20s %10s %10s %-24s %-32s %s%s\n", "VM", "vcpu", "reason", "duration",
	       "userspace", "guest task", "guest rip", "at (host time)",
	       detail_what[x->by] ? "  accessed" : "");
	for (size_t i = 0; i < n; i++) {
		const struct an_exit *e = an_topn_item(&x->top, i);

		/* by what was accessed: what each of them accessed, at the end */
		if (detail_what[x->by]) {
			d[0] = ' ';
			detail_label(an_exits_detail(x->by, e), 0, d + 1, sizeof(d) - 1);
		}
		printf("%-4u %-5u %-20s %10s %10s %-24s %-32s %" PRIu64 ".%09" PRIu64 "%s%s\n",
		       e->vm, e->vcpu, an_walk_reason_name(w, e->reason),
		       an_dur(e->end - e->start, b[0], sizeof(b[0])),
		       an_dur(e->user_ns, b[1], sizeof(b[1])),
		       report_task(w, e->task, t, sizeof(t)),
		       an_walk_rip_label(w, e->vm, e->sym, e->rip, r, sizeof(r)), e->start / 1000000000,
		       e->start % 1000000000, e->halted ? " halted" : "", d);
	}
}

static void text_counts(const struct an_walk *w)
{
	const struct an_counts *c = an_walk_counts(w);

	printf("\n%" PRIu64 " records, %" PRIu64 " exits; not counted: %" PRIu64
	       " kvm records of no known vCPU, %" PRIu64 " exits cut by a loss or a missing entry, %"
	       PRIu64 " entries before any exit; %" PRIu64 " losses in the trace\n",
	       c->records, c->exits, c->unattributed, c->open_dropped, c->entries_without_exit,
	       c->losses);
	if (c->exits_before_session || c->exits_task_unknown)
		printf("guest task of exits: %" PRIu64 " before the guest session began, %" PRIu64
		       " unknown (after a loss in the trace, or a guest module without cpu_task "
		       "records and no sched_switch yet)\n",
		       c->exits_before_session, c->exits_task_unknown);
	report_clock_line(stdout, c);
}

/* ---- SVG ---- */

/* One panel per group, titled "VM n NAME: GROUP"; 0 or -errno. */
int report_exits_svg(int fd, const char *path, const struct an_walk *w,
		     const struct an_exits *x)
{
	struct an_svg_panel *p = calloc(x->n ? x->n : 1, sizeof(*p));
	char (*titles)[160] = calloc(x->n ? x->n : 1, sizeof(*titles));
	char heading[4096 + 128], l[640];
	int e = -ENOMEM;

	if (p && titles) {
		for (size_t i = 0; i < x->n; i++) {
			const struct an_group *g = &x->g[i];

			if (x->by == AN_BY_VM)
				snprintf(titles[i], sizeof(titles[i]), "VM %u %s", g->vm,
					 an_walk_vm_name(w, g->vm));
			else
				snprintf(titles[i], sizeof(titles[i]), "VM %u %s: %s", g->vm,
					 an_walk_vm_name(w, g->vm), label(w, x, g, l, sizeof(l)));
			p[i] = (struct an_svg_panel){ .title = titles[i], .h = &g->h };
		}
		snprintf(heading, sizeof(heading), "VM exit latency by %s: %s", report_by_names[x->by],
			 path);
		e = an_exits_svg(fd, heading, p, x->n);
	}
	free(p);
	free(titles);
	return e;
}

/* ---- JSON ---- */

static void json_hex(json_object *j, const char *key, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%#" PRIx64, v);
	json_object_object_add(j, key, json_object_new_string(b));
}

/* What was accessed (@d): port, dir and size (bytes per access), msr
 * (its name) and access, or a page's first and last address (a group's:
 * @end not 0) or the address (an exit's) and access. */
static void json_detail(json_object *j, const struct an_detail *d, uint64_t end)
{
	const char *rw = d->write ? "write" : "read", *n;

	switch (d->kind) {
	case AN_DETAIL_PIO:
		json_object_object_add(j, "port", json_object_new_int((int)d->addr));
		json_object_object_add(j, "dir", json_object_new_string(d->write ? "out" : "in"));
		an_json_u64(j, "size", d->size);
		break;
	case AN_DETAIL_MSR:
		n = vmscope_msr_name((uint32_t)d->addr);
		json_hex(j, "msr", d->addr);
		json_object_object_add(j, "msr_name", n ? json_object_new_string(n) : NULL);
		json_object_object_add(j, "access", json_object_new_string(rw));
		break;
	case AN_DETAIL_MMIO:
	case AN_DETAIL_NPF:
		json_hex(j, end ? "gpa_start" : "gpa", d->addr);
		if (end)
			json_hex(j, "gpa_end", end);
		json_object_object_add(j, "access", json_object_new_string(rw));
		break;
	default:
		break;
	}
}

/* A --by symbol group: "symbol" and "module" (null: none, or the
 * kernel's own code), "mode" kernel or user, and a user group's task. */
static void json_symbol(json_object *j, const struct an_walk *w, const struct an_group *g)
{
	const char *name = NULL, *mod = NULL;
	static const char *const why[] = { [-AN_SYM_NONE] = "no_symbol",
					   [-AN_SYM_NO_TABLE] = "no_table" };

	an_walk_sym_name(w, g->vm, g->sym, &name, &mod);
	json_object_object_add(j, "symbol", name ? json_object_new_string(name) : NULL);
	json_object_object_add(j, "module", mod ? json_object_new_string(mod) : NULL);
	json_object_object_add(j, "mode", json_object_new_string(
		g->sym == AN_SYM_USER ? "user" : "kernel"));
	if (g->sym == AN_SYM_USER)
		json_object_object_add(j, "task", an_json_task(w, g->task));
	else if (g->sym < 0)
		json_object_object_add(j, "unnamed", json_object_new_string(why[-g->sym]));
}

json_object *report_exits_json(const char *path, const struct an_walk *w,
			       const struct an_exits *x, enum an_sort sort, size_t ntop)
{
	const struct an_counts *c = an_walk_counts(w);
	json_object *root = json_object_new_object(), *vms = json_object_new_array();
	json_object *groups = json_object_new_array(), *top = json_object_new_array();
	json_object *counts = json_object_new_object();
	uint64_t first, last;

	an_walk_span(w, &first, &last);
	json_object_object_add(root, "trace", json_object_new_string(path));
	an_json_u64(root, "first_ns", first);
	an_json_u64(root, "last_ns", last);
	an_json_counts(counts, c);
	report_clock_json(counts, c);
	json_object_object_add(root, "counts", counts);
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		json_object *v = an_json_vm(w, vm), *cpus = json_object_new_array();

		for (uint32_t i = 0; i < an_walk_nr_vcpus(w, vm); i++) {
			const struct an_vcpu_time *t = an_walk_vcpu_time(w, vm, i);
			json_object *j = an_json_vcpu(w, vm, i);

			an_json_u64(j, "guest_ns", t->guest_ns);
			an_json_u64(j, "kernel_ns", t->kernel_ns);
			an_json_u64(j, "user_ns", t->user_ns);
			an_json_u64(j, "halted_ns", t->halted_ns);
			an_json_u64(j, "exits", t->exits);
			json_object_array_add(cpus, j);
		}
		json_object_object_add(v, "vcpus", cpus);
		{
			uint64_t dropped;
			const char *note;

			an_json_u64(v, "guest_symbols", an_walk_vm_symbols(w, vm, &dropped, &note));
			an_json_u64(v, "guest_symbols_dropped", dropped);
			json_object_object_add(v, "guest_symbols_note", json_object_new_string(note));
		}
		json_object_array_add(vms, v);
	}
	json_object_object_add(root, "vms", vms);
	json_object_object_add(root, "by", json_object_new_string(report_by_names[x->by]));
	json_object_object_add(root, "sort", json_object_new_string(report_sort_names[sort]));
	for (size_t i = 0; i < x->n; i++) {
		const struct an_group *g = &x->g[i];
		json_object *j = json_object_new_object();
		double sh;

		json_object_object_add(j, "vm", json_object_new_int((int)g->vm));
		if (x->by == AN_BY_VCPU)
			json_object_object_add(j, "vcpu", json_object_new_int((int)g->vcpu));
		if (x->by == AN_BY_REASON)
			json_object_object_add(j, "reason", json_object_new_string(
				an_walk_reason_name(w, g->reason)));
		if (x->by == AN_BY_TASK)
			json_object_object_add(j, "task", an_json_task(w, g->task));
		if (x->by == AN_BY_SYMBOL)
			json_symbol(j, w, g);
		if (an_by_region(x->by)) {	/* reads and writes together */
			json_hex(j, "gpa_start", g->d.addr);
			json_hex(j, "gpa_end", g->end);
			an_json_u64(j, "pages", pages_of(g));
			an_json_u64(j, "writes", g->writes);
		} else {
			json_detail(j, &g->d, g->end);
		}
		sh = share(w, x, g);
		an_json_group(j, g, &sh);
		if (x->by != AN_BY_REASON)
			json_object_object_add(j, "reasons", an_json_reason_shares(w, g));
		json_object_array_add(groups, j);
	}
	json_object_object_add(root, "groups", groups);
	if (detail_what[x->by]) {
		an_json_u64(root, "exits_without_detail", x->no_detail);
		an_json_u64(root, "exits_beyond_table", x->beyond);
	}
	for (size_t i = 0; i < ntop; i++) {
		const struct an_exit *e = an_topn_item(&x->top, i);
		json_object *je = an_json_exit(w, e, true);

		if (detail_what[x->by])	/* what each of them accessed */
			json_detail(je, an_exits_detail(x->by, e), 0);
		json_object_array_add(top, je);
	}
	json_object_object_add(root, "top", top);
	return root;
}

void report_exits_text(const struct an_walk *w, const struct an_exits *x, enum an_sort sort,
		       size_t ntop)
{
	report_damage_line(w);
	text_vms(w);
	text_symbols(w, x);
	text_groups(w, x, sort);
	text_detail(x);
	text_top(w, x, ntop);
	text_counts(w);
}
