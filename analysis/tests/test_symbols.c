// SPDX-License-Identifier: GPL-2.0
/*
 * `report exits --by symbol`: exits grouped by the guest kernel function
 * at their RIP (the VM's symbols, VmInfo.guest_symbols), user-mode exits
 * by their task.
 *
 * A merged trace written through merge's own writer (scen.h): one VM, one
 * vCPU, a symbol table of four kernel functions and a module "virtio_x"
 * with one function, and 3000 exits, each of one kind:
 * - io in do_out (a random offset inside it), io in vx_kick [virtio_x];
 * - cpuid from user space (RIP 0x401000..), while guest task cpuid-loop
 *   (tid 200) or, after a guest switch, cpuid-two (tid 201) runs;
 * - a RIP inside the module below its first symbol, and one below the
 *   kernel's first symbol: a kernel RIP without a symbol.
 * Checked: per group, count, total, min and max exact against the story;
 * no user exit in a kernel group, none without its task; the longest
 * exits' RIPs as "do_out+0x.." / "0x401... (user)"; the JSON fields. With
 * --write DIR the trace stays there, for cli/tests/report-symbol-test.sh.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "../../tracefmt/tests/util.h"
#include "exact.h"
#include "exits.h"
#include "out.h"
#include "report.h"
#include "scen.h"
#include "vmscope_events.h"
#include "walk.h"
#include "../../tests/lib/xorshift.h"

#define H	1000000000ull
#define N_EXITS	3000
#define K	0xffffffff81000000ull
#define MOD	0xffffffffc0000000ull
#define SVM_IOIO	0x7b
#define SVM_CPUID	0x72

/* symbols: _stext K, do_out K+0x1000, native_cpuid K+0x2000, last K+0x3000,
 * vx_kick MOD+0x100 in virtio_x [MOD, MOD+0x2000) */
static uint64_t deltas[] = { K, 0x1000, 0x1000, 0x1000, MOD + 0x100 - (K + 0x3000) };
static const char names[] = "_stext\0do_out\0native_cpuid\0last\0vx_kick";

/* the story's groups */
enum { G_DO_OUT, G_VX_KICK, G_USER_200, G_USER_201, G_NONE, G_N };
static const char *const g_label[G_N] = { "do_out", "vx_kick [virtio_x]",
					  "(user) cpuid-loop/200", "(user) cpuid-two/201",
					  "(kernel, no symbol)" };
static struct exact_agg want[G_N];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(uint64_t n)
{
	return vmscope_xorshift64(&rng) % n;
}

static void guest_switch(struct scen_out *o, uint64_t ts, int32_t prev, const char *prev_comm,
			 int32_t next, const char *next_comm)
{
	struct vmscope_ev_sched_switch sw = { .prev_pid = prev, .next_pid = next,
					      .prev_state = 1 };
	struct mo_origin m = { .cpu = 0, .tid = next, .origin = 1, .vcpu = 0, .orig_ts = ts };

	snprintf(sw.prev_comm, sizeof(sw.prev_comm), "%s", prev_comm);
	snprintf(sw.next_comm, sizeof(sw.next_comm), "%s", next_comm);
	scen_out_event(o, 1, VMSCOPE_EV_sched_switch, ts, &sw, sizeof(sw), &m);
}

static void host(struct scen_out *o, uint64_t *ts, unsigned int id, const void *p,
		 uint16_t size)
{
	struct mo_origin m = { .cpu = 0, .tid = 1001, .origin = 0, .vcpu = 0, .orig_ts = *ts };

	scen_out_event(o, 0, id, *ts, p, size, &m);
	*ts += 1 + rnd(50);
}

static void write_trace(const char *dir)
{
	Vmscope__Trace__GuestSymbols s = VMSCOPE__TRACE__GUEST_SYMBOLS__INIT;
	Vmscope__Trace__GuestModule m = VMSCOPE__TRACE__GUEST_MODULE__INIT, *mp = &m;
	struct vmscope_ev_kvm_entry en = { 0 };
	struct scen_out *o;
	uint64_t ts = H;
	int task = G_USER_200;

	s.addr_delta = deltas;
	s.n_addr_delta = 5;
	s.names.data = (uint8_t *)names;
	s.names.len = sizeof(names);
	m.name = "virtio_x";
	m.addr = MOD;
	m.size = 0x2000;
	s.modules = &mp;
	s.n_modules = 1;
	CHECK_EQ(scen_out_open_syms(&o, dir, 1, 1, &s), 0);
	if (!o)
		return;
	guest_switch(o, ts++, 0, "swapper/0", 200, "cpuid-loop");
	for (int i = 0; i < N_EXITS; i++) {
		struct vmscope_ev_kvm_exit x = { .isa = 2, .reason_valid = 1 };
		int g = (int)rnd(4);
		uint64_t t0;

		if (i == N_EXITS / 2) {		/* the other task from here on */
			guest_switch(o, ts++, 200, "cpuid-loop", 201, "cpuid-two");
			task = G_USER_201;
		}
		switch (g) {
		case 0:
			x.exit_reason = SVM_IOIO;
			x.guest_rip = K + 0x1000 + rnd(0x1000);
			g = G_DO_OUT;
			break;
		case 1:
			x.exit_reason = SVM_IOIO;
			x.guest_rip = MOD + 0x100 + rnd(0x100);
			g = G_VX_KICK;
			break;
		case 2:
			x.exit_reason = SVM_CPUID;
			x.guest_rip = 0x401000 + rnd(0x100);
			g = task;
			break;
		default:
			x.exit_reason = SVM_IOIO;
			x.guest_rip = rnd(2) ? MOD + rnd(0x100) : K - 1 - rnd(0x100);
			g = G_NONE;
		}
		t0 = ts;
		host(o, &ts, VMSCOPE_EV_kvm_exit, &x, sizeof(x));
		ts += rnd(20000);
		exact_add(&want[g], ts - t0);
		host(o, &ts, VMSCOPE_EV_kvm_entry, &en, sizeof(en));
	}
	CHECK_EQ(scen_out_close(o), 0);
}

static int group_of(const struct an_walk *w, const struct an_group *g)
{
	const char *name, *mod;

	if (g->sym == AN_SYM_USER) {
		const struct an_task *t = an_walk_task(w, g->task);

		return !t ? -1 : t->tid == 200 ? G_USER_200 : t->tid == 201 ? G_USER_201 : -1;
	}
	if (g->sym == AN_SYM_NONE)
		return G_NONE;
	if (!an_walk_sym_name(w, g->vm, g->sym, &name, &mod))
		return -1;
	if (!strcmp(name, "do_out") && !mod)
		return G_DO_OUT;
	if (!strcmp(name, "vx_kick") && mod && !strcmp(mod, "virtio_x"))
		return G_VX_KICK;
	return -1;
}

static void check(const char *merged)
{
	struct an_exits x;
	struct an_walk *w;
	char err[256], b[640];
	bool seen[G_N] = { 0 };
	uint64_t dropped;
	const char *note;
	json_object *j, *groups, *top;
	size_t ntop;

	CHECK_EQ(an_exits_init(&x, AN_BY_SYMBOL, 10), 0);
	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w)
		return;
	CHECK_EQ(an_walk_vm_symbols(w, 0, &dropped, &note), 5);
	CHECK_EQ(an_walk_run(w, &(struct an_hooks){ .ctx = &x, .exit = an_exits_add }, err,
			     sizeof(err)), 0);
	CHECK_EQ(an_walk_counts(w)->exits, N_EXITS);
	CHECK_EQ(x.n, G_N);
	for (size_t i = 0; i < x.n; i++) {
		const struct an_group *g = &x.g[i];
		int k = group_of(w, g);

		EXPECT(k >= 0, "group %zu (sym %d) not of the story", i, g->sym);
		if (k < 0)
			continue;
		seen[k] = true;
		EXPECT(g->h.count == want[k].count && g->h.sum == want[k].total &&
		       g->h.min == want[k].min && g->h.max == want[k].max,
		       "%s: %" PRIu64 " exits, %" PRIu64 " ns, want %" PRIu64 " and %" PRIu64,
		       g_label[k], g->h.count, g->h.sum, want[k].count, want[k].total);
	}
	for (int k = 0; k < G_N; k++)
		EXPECT(seen[k], "no group %s", g_label[k]);
	an_exits_sort(&x, AN_SORT_TOTAL);
	ntop = an_topn_sort(&x.top);
	CHECK_EQ(ntop, 10);
	for (size_t i = 0; i < ntop; i++) {
		const struct an_exit *e = an_topn_item(&x.top, i);

		an_walk_rip_label(w, 0, e->sym, e->rip, b, sizeof(b));
		if (e->rip < 0x800000000000ull)
			EXPECT(e->sym == AN_SYM_USER && strstr(b, " (user)") && !strchr(b, '+'),
			       "user exit labelled %s", b);
		else if (e->rip >= K + 0x1000 && e->rip < K + 0x2000)
			EXPECT(!strncmp(b, "do_out+0x", 9), "do_out exit labelled %s", b);
		else if (e->rip >= MOD + 0x100 && e->rip < MOD + 0x200)
			EXPECT(!strncmp(b, "vx_kick+0x", 10) && strstr(b, " [virtio_x]"),
			       "module exit labelled %s", b);
		else
			EXPECT(!strncmp(b, "0xffffffff", 10), "unnamed exit labelled %s", b);
	}
	j = report_exits_json(merged, w, &x, AN_SORT_TOTAL, ntop);
	groups = json_object_object_get(j, "groups");
	top = json_object_object_get(j, "top");
	for (size_t i = 0; i < json_object_array_length(groups); i++) {
		json_object *g = json_object_array_get_idx(groups, i);
		const char *mode = json_object_get_string(json_object_object_get(g, "mode"));
		json_object *sym = json_object_object_get(g, "symbol");

		if (!strcmp(mode, "user"))
			EXPECT(!sym && json_object_object_get(g, "task"), "user group %zu", i);
		else if (sym && !strcmp(json_object_get_string(sym), "vx_kick"))
			EXPECT(!strcmp(json_object_get_string(json_object_object_get(g, "module")),
				       "virtio_x"), "vx_kick's module");
		else if (!sym)
			EXPECT(!strcmp(json_object_get_string(json_object_object_get(g, "unnamed")),
				       "no_symbol"), "unnamed group %zu", i);
	}
	for (size_t i = 0; i < json_object_array_length(top); i++) {
		json_object *e = json_object_array_get_idx(top, i);
		bool user = json_object_get_boolean(json_object_object_get(e, "user_mode"));
		json_object *rs = json_object_object_get(e, "rip_symbol");

		EXPECT(!user || !rs, "a user exit with a kernel symbol in JSON");
	}
	CHECK_EQ(json_object_get_int64(json_object_object_get(json_object_array_get_idx(
		json_object_object_get(j, "vms"), 0), "guest_symbols")), 5);
	json_object_put(j);
	an_walk_close(w);
	an_exits_free(&x);
}

/* More groups than the hash's first size, sorted (which rebuilds the
 * hash), then added to again: every exit in its group (a rebuild at the
 * first size once probed a full table forever). */
static void many_groups(void)
{
	struct an_exits x;
	uint64_t n = 0;

	CHECK_EQ(an_exits_init(&x, AN_BY_SYMBOL, 3), 0);
	for (int round = 0; round < 2; round++) {
		for (int32_t s = 0; s < 300; s++) {
			struct an_exit e = { .sym = s, .start = 10, .end = 20 + (uint64_t)s };

			an_exits_add(&x, &e);
		}
		an_exits_sort(&x, AN_SORT_TOTAL);
	}
	CHECK_EQ(x.n, 300);
	for (size_t i = 0; i < x.n; i++)
		n += x.g[i].h.count == 2;
	CHECK_EQ(n, 300);
	an_exits_free(&x);
}

int main(int argc, char **argv)
{
	char dir[256], merged[512];

	if (argc == 3 && !strcmp(argv[1], "--write")) {
		write_trace(argv[2]);
		return check_result("analysis-symbols --write");
	}
	REQUIRE(tf_test_mkdir(dir, sizeof(dir)) >= 0, "mkdir");
	write_trace(dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	check(merged);
	many_groups();
	tf_test_rmdir(dir);
	return check_result("analysis-symbols");
}
