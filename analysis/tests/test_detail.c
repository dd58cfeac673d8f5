// SPDX-License-Identifier: GPL-2.0
/*
 * `report exits --by port|msr|mmio`: exits grouped by what they accessed,
 * from the host's kvm_pio, kvm_mmio and kvm_msr records inside them.
 *
 * A merged trace written through merge's own writer (scen.h): one VM, two
 * vCPUs, 6000 exits of random duration, each of one kind:
 * - io: a kvm_pio (one of five ports, in or out), half of them through
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
 * Checked: per (port, dir), (MSR, rw), (page, rw): count, total, min, max
 * exact against the story; the exits without that detail counted; the
 * JSON group fields (port, dir / msr, access / gpa_start, gpa_end,
 * access) of the largest group; labels as the text table prints them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "../../tracefmt/tests/util.h"
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

static const uint64_t ports[NK] = { 0x3f8, 0xcf8, 0xcfc, 0x70, 0x1f0 };
static const uint64_t msrs[NK] = { 0x6e0, 0x830, 0xc0000080, 0x10, 0x3b };
static const uint64_t pages[NK] = { 0xfee00000, 0xfebf0000, 0xfed00000, 0x100000000, 0xc0000 };

/* What the story did per (kind, key, write). */
struct want {
	uint64_t count, total, min, max;
};

static struct want want[3][NK][2];	/* port, msr, mmio */
static uint64_t n_exits, n_detail[3];
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(uint64_t n)
{
	return vmscope_xorshift64(&rng) % n;
}

static void note(int kind, int key, int write, uint64_t d)
{
	struct want *x = &want[kind][key][write];

	if (!x->count || d < x->min)
		x->min = d;
	if (d > x->max)
		x->max = d;
	x->count++;
	x->total += d;
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
		int kind = (int)rnd(6), key = (int)rnd(NK), wr = (int)rnd(2);
		bool user = rnd(2), nt = ++nd % 10 == 0;
		uint64_t t0;

		en.vcpu_id = v;
		x.exit_reason = kind == 0 || kind == 5 ? SVM_IOIO : kind == 1 ? SVM_MSR :
				kind == 2 ? SVM_NPF : kind == 3 ? SVM_HLT : SVM_CPUID;
		t0 = s.ts;
		ev(&s, VMSCOPE_EV_kvm_exit, &x, sizeof(x), v, false);
		s.ts += rnd(20000);
		if (kind == 0) {
			struct vmscope_ev_kvm_pio p = { .write = (uint32_t)wr,
							.port = (uint32_t)ports[key], .size = 1,
							.count = 1 };

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
			struct vmscope_ev_kvm_mmio m = { .gpa = pages[key] + rnd(AN_MMIO_PAGE),
							 .type = wr ? 2 : 1, .len = 4 };

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
		}
		s.ts += rnd(5000);
		/* the exit ends at its entry: its duration as the walk sees it */
		uint64_t d = s.ts - t0;

		ev(&s, VMSCOPE_EV_kvm_entry, &en, sizeof(en), v, false);
		if (kind <= 2)
			note(kind, key, wr, d);
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

static const uint64_t *keys_of(enum an_by by)
{
	return by == AN_BY_PORT ? ports : by == AN_BY_MSR ? msrs : pages;
}

/* The groups of @by against the story; the largest group's JSON. */
static void check_by(const char *merged, enum an_by by)
{
	int kind = by == AN_BY_PORT ? 0 : by == AN_BY_MSR ? 1 : 2;
	const uint64_t *keys = keys_of(by);
	struct an_exits x;
	struct an_walk *w;
	char err[256];
	uint64_t seen = 0;

	CHECK_EQ(an_exits_init(&x, by, 5), 0);
	CHECK_EQ(an_walk_open(&w, merged, 0, err, sizeof(err)), 0);
	if (!w)
		return;
	CHECK_EQ(an_walk_run(w, &(struct an_hooks){ .ctx = &x, .exit = an_exits_add }, err,
			     sizeof(err)), 0);
	CHECK_EQ(an_walk_counts(w)->exits, n_exits);
	CHECK_EQ(x.no_detail, n_exits - n_detail[kind]);
	for (size_t i = 0; i < x.n; i++) {
		const struct an_group *g = &x.g[i];
		int k;

		for (k = 0; k < NK && keys[k] != g->d.addr; k++)
			;
		CHECK(k < NK);
		if (k == NK) {
			fprintf(stderr, "%s: a group of %#" PRIx64 "\n", report_by_names[by],
				g->d.addr);
			continue;
		}
		const struct want *e = &want[kind][k][g->d.write];

		CHECK_EQ(g->h.count, e->count);
		CHECK_EQ(g->h.sum, e->total);
		CHECK_EQ(g->h.min, e->min);
		CHECK_EQ(g->h.max, e->max);
		seen += g->h.count;
	}
	CHECK_EQ(x.n, 2 * NK);
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

int main(int argc, char **argv)
{
	char dir[256], merged[512];
	int fd;

	if (argc == 3 && !strcmp(argv[1], "--write")) {	/* for cli/tests/report-test.sh */
		write_trace(argv[2]);
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
	fprintf(stderr, "%" PRIu64 " exits: %" PRIu64 " port, %" PRIu64 " msr, %" PRIu64
		" mmio\n", n_exits, n_detail[0], n_detail[1], n_detail[2]);
	close(fd);
	tf_test_rmdir(dir);
	return check_result("analysis-detail");
}
