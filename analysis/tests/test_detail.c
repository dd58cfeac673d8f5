// SPDX-License-Identifier: GPL-2.0
/*
 * `report exits --by port|msr|mmio`: exits grouped by what they accessed,
 * from the host's kvm_pio, kvm_mmio and kvm_msr records inside them.
 *
 * A merged trace written through merge's own writer (scen.h): one VM, two
 * vCPUs, 6000 exits of random duration, each of one kind:
 * - io: a kvm_pio (one of five ports, in or out, 1, 2 or 4 bytes), half of them through
 *   userspace, the record then after the kvm_userspace_exit for an in;
 * - msr: a kvm_msr (one of five MSRs, read or write);
 * - npf: a kvm_mmio in one of four pages at a random offset, a write, or
 *   a read (in-kernel: one READ; through userspace: the UNSATISFIED_READ
 *   and, after QEMU, the completed READ of the same address: one access);
 * - hlt and cpuid: no detail; io without kvm_pio (no detail either).
 * Every tenth detail record has no thread (as a host CPU's before the
 * merge knows its thread): it belongs to the vCPU whose kvm_exit was the
 * last on its host CPU. Between an entry and the next exit, a stray
 * kvm_msr / kvm_pio belongs to no exit and is ignored.
 * Checked: per (port, dir, size), (MSR, rw), (page, rw): count, total, min, max
 * exact against the story; the exits without that detail counted; the
 * JSON group fields (port, dir, size / msr, access / gpa_start, gpa_end,
 * access) of the largest group; labels as the text table prints them.
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
#define N_EXITS	6000
#define NK	5	/* keys per kind */

/* SVM exit codes (scen.h uses the same ISA) */
#define SVM_IOIO	0x7b
#define SVM_MSR		0x7c
#define SVM_NPF		0x400
#define SVM_HLT		0x78
#define SVM_CPUID	0x72
#define SVM_EXCP_PF	0x4e	/* a #PF KVM intercepts: kvm_page_fault of a GVA */

static const uint64_t ports[NK] = { 0x3f8, 0xcf8, 0xcfc, 0x70, 0x1f0 };
static const uint64_t msrs[NK] = { 0x6e0, 0x830, 0xc0000080, 0x10, 0x3b };
/* MMIO pages, two of them adjacent (one region); RAM pages the guest
 * faults on (nested page faults without MMIO): three adjacent, two alone */
static const uint64_t pages[NK] = { 0xfee00000, 0xfebf0000, 0xfebf1000, 0x100000000, 0xc0000 };
static const uint64_t ram[NK] = { 0x200000, 0x201000, 0x202000, 0x205000, 0x7ffff000 };
#define NNPF	(2 * NK)	/* a fault's keys: pages[], then ram[] */

/* The regions as this test lays them out: lists of keys, -1 ending each */
static const int mmio_regions[][NK + 1] = { { 0, -1 }, { 1, 2, -1 }, { 3, -1 }, { 4, -1 } };
static const int npf_regions[][NK + 1] = {
	{ 0, -1 }, { 1, 2, -1 }, { 3, -1 }, { 4, -1 },
	{ NK, NK + 1, NK + 2, -1 }, { NK + 3, -1 }, { NK + 4, -1 } };
#define N_MMIO_REGIONS	4
#define N_NPF_REGIONS	7

static uint64_t npf_key_addr(int k)
{
	return k < NK ? pages[k] : ram[k - NK];
}
#define NSZ	3	/* PIO access sizes: 1, 2, 4 bytes */

/* What the story did per (kind, key, write, PIO size: index into 1, 2,
 * 4; 0 for the others). */
static struct exact_agg want[4][NNPF][2][NSZ];	/* port, msr, mmio, npf */
static uint64_t n_exits, n_detail[4];
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(uint64_t n)
{
	return vmscope_xorshift64(&rng) % n;
}

static void note(int kind, int key, int write, int sz, uint64_t d)
{
	exact_add(&want[kind][key][write][sz], d);
	n_detail[kind]++;
}

struct story {
	struct scen_out *o;
	uint64_t ts;
};

static void ev(struct story *s, unsigned int id, const void *p, uint16_t size, uint32_t vcpu,
	       bool no_thread)
{
	/* vCPU v's thread runs on host CPU v (scen.h: tid 1001 + v) */
	struct mo_origin m = { .cpu = vcpu, .tid = no_thread ? -1 : (int32_t)(1001 + vcpu),
			       .origin = 0, .vcpu = no_thread ? MO_NONE : vcpu, .orig_ts = s->ts };

	scen_out_event(s->o, 0, id, s->ts, p, size, &m);
	s->ts += 1 + rnd(50);
}

static void write_trace(const char *dir)
{
	struct story s = { .ts = H };
	struct vmscope_ev_kvm_entry en = { 0 };
	unsigned int nd = 0;

	CHECK_EQ(scen_out_open(&s.o, dir, 1, 2), 0);
	if (!s.o)
		return;
	for (int i = 0; i < N_EXITS; i++) {
		uint32_t v = (uint32_t)rnd(2);
		struct vmscope_ev_kvm_exit x = { .vcpu_id = v, .isa = 2, .reason_valid = 1 };
		int kind = (int)rnd(8), key = (int)rnd(NK), wr = (int)rnd(2), sz = 0;
		bool user = rnd(2), nt = ++nd % 10 == 0;
		uint64_t t0;

		en.vcpu_id = v;
		x.exit_reason = kind == 0 || kind == 5 ? SVM_IOIO : kind == 1 ? SVM_MSR :
				kind == 2 || kind == 6 ? SVM_NPF : kind == 3 ? SVM_HLT :
				kind == 7 ? SVM_EXCP_PF : SVM_CPUID;
		t0 = s.ts;
		ev(&s, VMSCOPE_EV_kvm_exit, &x, sizeof(x), v, false);
		s.ts += rnd(20000);
		if (kind == 0) {
			struct vmscope_ev_kvm_pio p = { .write = (uint32_t)wr,
							.port = (uint32_t)ports[key], .count = 1 };

			sz = (int)rnd(NSZ);
			p.size = 1u << sz;
			if (wr)	/* an out is recorded before QEMU's part */
				ev(&s, VMSCOPE_EV_kvm_pio, &p, sizeof(p), v, nt);
			if (user) {
				ev(&s, VMSCOPE_EV_kvm_userspace_exit,
				   &(struct vmscope_ev_kvm_userspace_exit){ 0 },
				   sizeof(struct vmscope_ev_kvm_userspace_exit), v, false);
				s.ts += rnd(50000);
			}
			if (!wr)	/* an in once it completed */
				ev(&s, VMSCOPE_EV_kvm_pio, &p, sizeof(p), v, nt);
		} else if (kind == 1) {
			struct vmscope_ev_kvm_msr m = { .ecx = (uint32_t)msrs[key],
							.write = (uint32_t)wr };

			ev(&s, VMSCOPE_EV_kvm_msr, &m, sizeof(m), v, nt);
		} else if (kind == 2) {
			struct vmscope_ev_kvm_mmio m = { .gpa = pages[key] + rnd(AN_PAGE),
							 .type = wr ? 2 : 1, .len = 4 };
			/* KVM's fault first: its error code's bit 1 says a write */
			struct vmscope_ev_kvm_page_fault f = {
				.address = m.gpa, .vcpu_id = v,
				.error_code = (wr ? 2u : 0u) | 1u | rnd(2) << 32 };

			ev(&s, VMSCOPE_EV_kvm_page_fault, &f, sizeof(f), v, nt);

			if (!wr && user) {	/* KVM's two records of one read */
				m.type = 0;
				ev(&s, VMSCOPE_EV_kvm_mmio, &m, sizeof(m), v, nt);
				ev(&s, VMSCOPE_EV_kvm_userspace_exit,
				   &(struct vmscope_ev_kvm_userspace_exit){ 0 },
				   sizeof(struct vmscope_ev_kvm_userspace_exit), v, false);
				s.ts += rnd(50000);
				m.type = 1;
			}
			ev(&s, VMSCOPE_EV_kvm_mmio, &m, sizeof(m), v, nt);
		} else if (kind == 6 || kind == 7) {
			/* RAM the host maps on the fault; or a #PF exit, whose
			 * address is guest-virtual: no nested page fault */
			struct vmscope_ev_kvm_page_fault f = {
				.address = kind == 6 ? ram[key] + rnd(AN_PAGE) :
						       0xffff888000001000ull + rnd(1u << 30),
				.vcpu_id = v, .error_code = (wr ? 2u : 0u) | rnd(2) << 2 };

			ev(&s, VMSCOPE_EV_kvm_page_fault, &f, sizeof(f), v, nt);
			if (rnd(4) == 0)	/* a second fault in one exit: the first counts */
				ev(&s, VMSCOPE_EV_kvm_page_fault,
				   &(struct vmscope_ev_kvm_page_fault){ .address = 0x99000,
									 .error_code = 2 },
				   sizeof(f), v, nt);
		}
		s.ts += rnd(5000);
		/* the exit ends at its entry: its duration as the walk sees it */
		uint64_t d = s.ts - t0;

		ev(&s, VMSCOPE_EV_kvm_entry, &en, sizeof(en), v, false);
		if (kind <= 2)
			note(kind, key, wr, sz, d);
		if (kind == 2 || kind == 6)	/* a nested page fault */
			note(3, kind == 2 ? key : NK + key, wr, 0, d);
		n_exits++;
		if (rnd(8) == 0) {	/* in the guest: belongs to no exit */
			struct vmscope_ev_kvm_msr m = { .ecx = 0x1234, .write = 1 };

			ev(&s, VMSCOPE_EV_kvm_msr, &m, sizeof(m), v, false);
			ev(&s, VMSCOPE_EV_kvm_pio, &(struct vmscope_ev_kvm_pio){ .port = 0x99 },
			   sizeof(struct vmscope_ev_kvm_pio), v, false);
		}
	}
	CHECK_EQ(scen_out_close(s.o), 0);
}

static uint64_t key_addr(enum an_by by, int k)
{
	return by == AN_BY_PORT ? ports[k] : by == AN_BY_MSR ? msrs[k] :
	       by == AN_BY_MMIO ? pages[k] : npf_key_addr(k);
}

/* @merged walked into @x grouped by @by (top 5); NULL when it fails. */
static struct an_walk *walk_by(const char *merged, enum an_by by, struct an_exits *x)
{
	struct an_walk *w = NULL;
	char err[256];

	CHECK_EQ(an_exits_init(x, by, 5), 0);
	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w) {
		an_exits_free(x);
		return NULL;
	}
	CHECK_EQ(an_walk_run(w, &(struct an_hooks){ .ctx = x, .exit = an_exits_add }, err,
			     sizeof(err)), 0);
	return w;
}

/* The groups of @by against the story; the largest group's JSON. */
static void check_by(const char *merged, enum an_by by)
{
	int kind = by == AN_BY_PORT ? 0 : by == AN_BY_MSR ? 1 : by == AN_BY_MMIO ? 2 : 3;
	int nk = kind == 3 ? NNPF : NK;
	struct an_exits x;
	struct an_walk *w = walk_by(merged, by, &x);
	uint64_t seen = 0;

	if (!w)
		return;
	CHECK_EQ(an_walk_counts(w)->exits, n_exits);
	CHECK_EQ(x.no_detail, n_exits - n_detail[kind]);
	for (size_t i = 0; i < x.n; i++) {
		const struct an_group *g = &x.g[i];
		int k;

		for (k = 0; k < nk && key_addr(by, k) != g->d.addr; k++)
			;
		CHECK(k < nk);
		if (k == nk) {
			fprintf(stderr, "%s: a group of %#" PRIx64 "\n", report_by_names[by],
				g->d.addr);
			continue;
		}
		/* a port's groups by access size; the others have none */
		int sz = by == AN_BY_PORT ? __builtin_ctz(g->d.size | 8) : 0;

		CHECK(by == AN_BY_PORT ? sz < NSZ && g->d.size == 1u << sz : g->d.size == 0);
		if (sz >= NSZ)
			continue;
		const struct exact_agg *e = &want[kind][k][g->d.write][sz];

		CHECK_EQ(g->h.count, e->count);
		CHECK_EQ(g->h.sum, e->total);
		CHECK_EQ(g->h.min, e->min);
		CHECK_EQ(g->h.max, e->max);
		seen += g->h.count;
	}
	CHECK_EQ(x.n, (by == AN_BY_PORT ? NSZ : 1) * 2 * nk);
	CHECK_EQ(seen, n_detail[kind]);
	/* the JSON of the largest group (by total) */
	an_exits_sort(&x, AN_SORT_TOTAL);
	json_object *j = report_exits_json(merged, w, &x, AN_SORT_TOTAL, an_topn_sort(&x.top));
	json_object *groups, *g0, *f;
	char hex[32];

	CHECK(json_object_object_get_ex(j, "groups", &groups));
	g0 = json_object_array_get_idx(groups, 0);
	CHECK(g0 != NULL);
	CHECK(json_object_object_get_ex(j, "exits_without_detail", &f) &&
	      json_object_get_uint64(f) == x.no_detail);
	if (g0 && by == AN_BY_PORT) {
		CHECK(json_object_object_get_ex(g0, "port", &f) &&
		      (uint64_t)json_object_get_int64(f) == x.g[0].d.addr);
		CHECK(json_object_object_get_ex(g0, "dir", &f) &&
		      !strcmp(json_object_get_string(f), x.g[0].d.write ? "out" : "in"));
		CHECK(json_object_object_get_ex(g0, "size", &f) &&
		      json_object_get_uint64(f) == x.g[0].d.size);
	} else if (g0) {
		snprintf(hex, sizeof(hex), "%#" PRIx64, x.g[0].d.addr);
		CHECK(json_object_object_get_ex(g0, by == AN_BY_MSR ? "msr" : "gpa_start", &f) &&
		      !strcmp(json_object_get_string(f), hex));
		CHECK(json_object_object_get_ex(g0, "access", &f) &&
		      !strcmp(json_object_get_string(f), x.g[0].d.write ? "write" : "read"));
	}
	if (g0)
		CHECK(json_object_object_get_ex(g0, "count", &f) &&
		      json_object_get_uint64(f) == x.g[0].h.count);
	json_object_put(j);
	an_walk_close(w);
	an_exits_free(&x);
}

/* A region's story: the sum of its pages' (keys @keys of @kind), reads
 * and writes together. */
static struct exact_agg region_want(int kind, const int *keys, uint64_t *writes)
{
	struct exact_agg r = { 0 };

	*writes = 0;
	for (; *keys >= 0; keys++)
		for (int wr = 0; wr < 2; wr++) {
			const struct exact_agg *e = &want[kind][*keys][wr][0];

			exact_merge(&r, e);
			*writes += wr ? e->count : 0;
		}
	return r;
}

static uint64_t region_last(int kind, const int *keys)
{
	while (keys[1] >= 0)
		keys++;
	return (kind == 3 ? npf_key_addr(*keys) : pages[*keys]) + AN_PAGE - 1;
}

/* --by mmio-region|npf-region against the regions laid out above. */
static void check_region(const char *merged, enum an_by by)
{
	int kind = by == AN_BY_MMIO_REGION ? 2 : 3;
	size_t nr = kind == 2 ? N_MMIO_REGIONS : N_NPF_REGIONS;
	struct an_exits x;
	struct an_walk *w = walk_by(merged, by, &x);

	if (!w)
		return;
	an_exits_sort(&x, AN_SORT_TOTAL);
	CHECK_EQ(x.no_detail, n_exits - n_detail[kind]);
	CHECK_EQ(x.n, nr);
	for (size_t i = 0; i < nr; i++) {
		const int *keys = kind == 2 ? mmio_regions[i] : npf_regions[i];
		uint64_t first = kind == 2 ? pages[keys[0]] : npf_key_addr(keys[0]), writes;
		struct exact_agg e = region_want(kind, keys, &writes);
		size_t g;

		for (g = 0; g < x.n && x.g[g].d.addr != first; g++)
			;
		CHECK(g < x.n);
		if (g == x.n) {
			fprintf(stderr, "%s: no region at %#" PRIx64 "\n", report_by_names[by], first);
			continue;
		}
		CHECK_EQ(x.g[g].end, region_last(kind, keys));
		CHECK_EQ(x.g[g].h.count, e.count);
		CHECK_EQ(x.g[g].h.sum, e.total);
		CHECK_EQ(x.g[g].h.min, e.min);
		CHECK_EQ(x.g[g].h.max, e.max);
		CHECK_EQ(x.g[g].writes, writes);
	}
	an_walk_close(w);
	an_exits_free(&x);
}

/* The story's groups by @by as the report's JSON should have them, for
 * cli/tests/report-detail-test.sh: {"exits_without_detail": N, "groups":
 * [{gpa_start, gpa_end, count, total_ns, min_ns, max_ns, access | pages
 * and writes}]}, in no order. */
static void want_json(json_object *root, enum an_by by)
{
	int kind = by == AN_BY_MMIO_REGION ? 2 : 3;
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	char hex[32];

	json_object_object_add(o, "exits_without_detail",
			       json_object_new_uint64(n_exits - n_detail[kind]));
	if (by == AN_BY_NPF) {
		for (int k = 0; k < NNPF; k++)
			for (int wr = 0; wr < 2; wr++) {
				const struct exact_agg *e = &want[3][k][wr][0];
				json_object *g = json_object_new_object();

				if (!e->count) {
					json_object_put(g);
					continue;
				}
				snprintf(hex, sizeof(hex), "%#" PRIx64, npf_key_addr(k));
				json_object_object_add(g, "gpa_start", json_object_new_string(hex));
				snprintf(hex, sizeof(hex), "%#" PRIx64, npf_key_addr(k) + AN_PAGE - 1);
				json_object_object_add(g, "gpa_end", json_object_new_string(hex));
				json_object_object_add(g, "access",
						       json_object_new_string(wr ? "write" : "read"));
				json_object_object_add(g, "count", json_object_new_uint64(e->count));
				json_object_object_add(g, "total_ns", json_object_new_uint64(e->total));
				json_object_object_add(g, "min_ns", json_object_new_uint64(e->min));
				json_object_object_add(g, "max_ns", json_object_new_uint64(e->max));
				json_object_array_add(a, g);
			}
	} else {
		size_t nr = kind == 2 ? N_MMIO_REGIONS : N_NPF_REGIONS;

		for (size_t i = 0; i < nr; i++) {
			const int *keys = kind == 2 ? mmio_regions[i] : npf_regions[i];
			uint64_t first = kind == 2 ? pages[keys[0]] : npf_key_addr(keys[0]), writes;
			uint64_t last = region_last(kind, keys);
			struct exact_agg e = region_want(kind, keys, &writes);
			json_object *g = json_object_new_object();

			snprintf(hex, sizeof(hex), "%#" PRIx64, first);
			json_object_object_add(g, "gpa_start", json_object_new_string(hex));
			snprintf(hex, sizeof(hex), "%#" PRIx64, last);
			json_object_object_add(g, "gpa_end", json_object_new_string(hex));
			json_object_object_add(g, "pages",
					       json_object_new_uint64((last + 1 - first) / AN_PAGE));
			json_object_object_add(g, "writes", json_object_new_uint64(writes));
			json_object_object_add(g, "count", json_object_new_uint64(e.count));
			json_object_object_add(g, "total_ns", json_object_new_uint64(e.total));
			json_object_object_add(g, "min_ns", json_object_new_uint64(e.min));
			json_object_object_add(g, "max_ns", json_object_new_uint64(e.max));
			json_object_array_add(a, g);
		}
	}
	json_object_object_add(o, "groups", a);
	json_object_object_add(root, report_by_names[by], o);
}

static void write_want(const char *dir)
{
	json_object *root = json_object_new_object();
	char path[512];

	want_json(root, AN_BY_MMIO_REGION);
	want_json(root, AN_BY_NPF);
	want_json(root, AN_BY_NPF_REGION);
	snprintf(path, sizeof(path), "%s/want.json", dir);
	CHECK_EQ(json_object_to_file_ext(path, root, JSON_C_TO_STRING_PLAIN), 0);
	json_object_put(root);
}

int main(int argc, char **argv)
{
	char dir[256], merged[512];
	int fd;

	if (argc == 3 && !strcmp(argv[1], "--write")) {	/* for cli/tests/report-test.sh */
		write_trace(argv[2]);
		write_want(argv[2]);
		return check_result("analysis-detail --write");
	}
	fd = tf_test_mkdir(dir, sizeof(dir));
	CHECK(fd >= 0);
	if (fd < 0)
		return check_result("analysis-detail");
	write_trace(dir);
	snprintf(merged, sizeof(merged), "%s/merged", dir);
	check_by(merged, AN_BY_PORT);
	check_by(merged, AN_BY_MSR);
	check_by(merged, AN_BY_MMIO);
	check_by(merged, AN_BY_NPF);
	check_region(merged, AN_BY_MMIO_REGION);
	check_region(merged, AN_BY_NPF_REGION);
	fprintf(stderr, "%" PRIu64 " exits: %" PRIu64 " port, %" PRIu64 " msr, %" PRIu64
		" mmio, %" PRIu64 " npf\n", n_exits, n_detail[0], n_detail[1], n_detail[2],
		n_detail[3]);
	close(fd);
	tf_test_rmdir(dir);
	return check_result("analysis-detail");
}
