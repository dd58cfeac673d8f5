/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tracefmt-gsym: a guest's symbol table (gsym.h). Lookups against a linear
 * scan of the same symbols (random tables, random RIPs, modules among
 * them), the cases named one by one, the text form, and the check: every
 * way a hostile table can be wrong is refused, also inside a hello and a
 * SessionMetadata decoded by tf_msg_decode.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "gsym.h"
#include "guest.pb-c.h"
#include "msg.h"
#include "frame.h"

#define KBASE 0xffffffff81000000ull

struct tab {
	Vmscope__Trace__GuestSymbols s;
	uint64_t delta[4096];
	uint64_t addr[4096];
	char names[4096 * 16];
	Vmscope__Trace__GuestModule mod[8], *modp[8];
	char modname[8][16];
};

/* symbols at @addr (ascending) named "f<i>"; modules as given */
static void tab_build(struct tab *t, const uint64_t *addr, size_t n,
		      const uint64_t (*mods)[2], size_t nmod)
{
	size_t at = 0;
	uint64_t prev = 0;

	memset(t, 0, sizeof(*t));
	vmscope__trace__guest_symbols__init(&t->s);
	for (size_t i = 0; i < n; i++) {
		t->addr[i] = addr[i];
		t->delta[i] = addr[i] - prev;
		prev = addr[i];
		at += (size_t)sprintf(t->names + at, "f%zu", i) + 1;
	}
	for (size_t i = 0; i < nmod; i++) {
		vmscope__trace__guest_module__init(&t->mod[i]);
		snprintf(t->modname[i], sizeof(t->modname[i]), "mod%zu", i);
		t->mod[i].name = t->modname[i];
		t->mod[i].addr = mods[i][0];
		t->mod[i].size = mods[i][1];
		t->modp[i] = &t->mod[i];
	}
	t->s.addr_delta = t->delta;
	t->s.n_addr_delta = n;
	t->s.names.data = (uint8_t *)t->names;
	t->s.names.len = at;
	t->s.modules = t->modp;
	t->s.n_modules = nmod;
}

/* The reference: the module index of @x, or -1. */
static long ref_mod(const struct tab *t, uint64_t x)
{
	for (size_t m = 0; m < t->s.n_modules; m++)
		if (x >= t->mod[m].addr && x - t->mod[m].addr < t->mod[m].size)
			return (long)m;
	return -1;
}

/* The reference lookup: the last symbol <= rip in rip's region, by scan. */
static long ref_lookup(const struct tab *t, uint64_t rip)
{
	long best = -1;

	if (rip < 0x0000800000000000ull)
		return -1;
	for (size_t i = 0; i < t->s.n_addr_delta; i++)
		if (t->addr[i] <= rip)
			best = (long)i;
	if (best >= 0 && ref_mod(t, t->addr[best]) != ref_mod(t, rip))
		return -1;
	return best;
}

static uint64_t rnd(void)
{
	return ((uint64_t)(unsigned)rand() << 33) ^ ((uint64_t)(unsigned)rand() << 11) ^
	       (unsigned)rand();
}

static void random_tables(void)
{
	static struct tab t;

	srand(23);
	for (int round = 0; round < 40; round++) {
		uint64_t addr[4096], a = KBASE;
		uint64_t mods[3][2];
		size_t n = 1 + (size_t)rand() % 4000, nmod = (size_t)rand() % 4;
		struct gsym *g;
		char why[160];

		for (size_t i = 0; i < n; i++) {
			a += 1 + (uint64_t)(rand() % 4096);
			addr[i] = a;
		}
		/* modules: disjoint ranges, some over symbols, one past them */
		for (size_t m = 0; m < nmod; m++) {
			mods[m][0] = KBASE + (m + 1) * (a - KBASE) / 4 + (uint64_t)(rand() % 64);
			mods[m][1] = 1 + (uint64_t)(rand() % 100000);
		}
		if (nmod == 3)
			mods[2][0] = a + 100;	/* past every symbol: no symbol in it */
		tab_build(&t, addr, n, (const uint64_t (*)[2])mods, nmod);
		EXPECT(gsym_new(&g, &t.s, why, sizeof(why)) == 0, "round %d: %s", round, why);
		if (!g)
			continue;
		CHECK_EQ(gsym_count(g), n);
		for (int k = 0; k < 5000; k++) {
			uint64_t rip;
			struct gsym_hit h;
			long want;
			bool got;

			switch (k % 4) {
			case 0:
				rip = addr[(size_t)rand() % n];		/* exact */
				break;
			case 1:
				rip = addr[(size_t)rand() % n] + (uint64_t)(rand() % 5000);
				break;
			case 2:
				rip = KBASE - 100 + rnd() % (a - KBASE + 300000);
				break;
			default:
				rip = rnd() % 0x0000800000000000ull;	/* user */
				break;
			}
			want = ref_lookup(&t, rip);
			got = gsym_lookup(g, rip, &h);
			EXPECT(got == (want >= 0), "round %d rip %#" PRIx64 ": found %d, want %ld",
			       round, rip, got, want);
			if (got && want >= 0) {
				long m = ref_mod(&t, rip);

				EXPECT(h.index == (uint32_t)want && h.off == rip - t.addr[want],
				       "rip %#" PRIx64 ": %u+%#" PRIx64 ", want %ld", rip, h.index,
				       h.off, want);
				EXPECT(m < 0 ? !h.module : h.module && !strcmp(h.module, t.modname[m]),
				       "rip %#" PRIx64 ": module %s", rip, h.module ? h.module : "-");
			}
		}
		gsym_free(g);
	}
}

static void named_cases(void)
{
	static struct tab t;
	static const uint64_t addr[] = {
		KBASE, KBASE + 0x40, KBASE + 0x100,		/* core: f0 f1 f2 */
		0xffffffffc0001000ull, 0xffffffffc0001200ull,	/* in mod0: f3 f4 */
	};
	static const uint64_t mods[][2] = {
		{ 0xffffffffc0000000ull, 0x3000 },	/* mod0: symbols from +0x1000 */
		{ 0xffffffffc0010000ull, 0x1000 },	/* mod1: none */
	};
	struct gsym *g;
	struct gsym_hit h;
	char buf[64], why[160];

	tab_build(&t, addr, 5, mods, 2);
	REQUIRE(gsym_new(&g, &t.s, why, sizeof(why)) == 0, "%s", why);
	CHECK(gsym_lookup(g, KBASE + 0x45, &h) && h.index == 1 && h.off == 5 && !h.module);
	CHECK(!strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "f1+0x5"));
	CHECK(gsym_lookup(g, KBASE, &h) && h.index == 0 && h.off == 0);
	CHECK(!strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "f0+0x0"));
	CHECK(!gsym_lookup(g, KBASE - 1, &h));			/* below every symbol */
	CHECK(!gsym_lookup(g, 0x401000, &h));			/* user space */
	CHECK(!gsym_lookup(g, 0x00007fffffffffffull, &h));
	CHECK(gsym_lookup(g, 0xffffffffc0001234ull, &h) && h.index == 4 && h.off == 0x34);
	CHECK(!strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "f4+0x34 [mod0]"));
	/* in mod0 below its first symbol: the core's f2 is not its code */
	CHECK(!gsym_lookup(g, 0xffffffffc0000010ull, &h));
	/* past mod0's end: not mod0's f4 */
	CHECK(!gsym_lookup(g, 0xffffffffc0003000ull, &h));
	CHECK(!gsym_lookup(g, 0xffffffffc0010010ull, &h));	/* mod1: no symbol */
	CHECK(gsym_at(g, 3, &h) && !strcmp(h.name, "f3") && h.module &&
	      !strcmp(h.module, "mod0") && h.off == 0);
	CHECK(!gsym_at(g, 5, &h));
	gsym_free(g);

	/* empty: valid, finds nothing */
	tab_build(&t, addr, 0, mods, 0);
	REQUIRE(gsym_new(&g, &t.s, why, sizeof(why)) == 0, "%s", why);
	CHECK(gsym_count(g) == 0 && !gsym_lookup(g, KBASE, &h));
	gsym_free(g);
}

/* @msg, packed, refused by tf_msg_decode as a frame of @type, with a
 * reason naming @want. */
static void decode_refused(uint16_t type, const ProtobufCMessage *msg, const char *what,
			   const char *as, const char *want)
{
	size_t len = protobuf_c_message_get_packed_size(msg);
	uint8_t *buf = malloc(len);
	ProtobufCMessage *m;
	char why[160] = "";

	CHECK(buf != NULL);
	if (!buf)
		return;
	protobuf_c_message_pack(msg, buf);
	EXPECT(tf_msg_decode(type, buf, len, 0, &m, why, sizeof(why)) == -EINVAL &&
	       strstr(why, want), "%s: %s decoded ('%s')", what, as, why);
	free(buf);
}

/* One broken table: refused by the check, by gsym_new, and in a hello. */
static void refused(struct tab *t, const char *what, const char *want)
{
	Vmscope__Trace__GuestHello hello = VMSCOPE__TRACE__GUEST_HELLO__INIT;
	Vmscope__Trace__GuestStateDump st = VMSCOPE__TRACE__GUEST_STATE_DUMP__INIT;
	Vmscope__Trace__SessionMetadata sm = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__VmInfo vi = VMSCOPE__TRACE__VM_INFO__INIT, *vip = &vi;
	struct gsym *g = (void *)1;
	char why[160] = "";

	EXPECT(gsym_check(&t->s, why, sizeof(why)) == -EINVAL && strstr(why, want),
	       "%s: check said '%s', want '%s'", what, why, want);
	EXPECT(gsym_new(&g, &t->s, why, sizeof(why)) == -EINVAL && !g, "%s: gsym_new", what);

	st.nr_cpu_ids = 1;
	hello.state = &st;
	hello.subbuf_size = 4096;
	hello.symbols = &t->s;
	decode_refused(TF_FRAME_GUEST_HELLO, &hello.base, what, "hello", want);

	vi.guest_symbols = &t->s;
	sm.vms = &vip;
	sm.n_vms = 1;
	decode_refused(TF_FRAME_SESSION, &sm.base, what, "session", want);
}

static void checks(void)
{
	static struct tab t;
	static const uint64_t addr[] = { KBASE, KBASE + 0x10, KBASE + 0x20 };
	static const uint64_t mods[][2] = {
		{ 0xffffffffc0000000ull, 0x1000 }, { 0xffffffffc0002000ull, 0x1000 },
	};
	char why[160], note[GSYM_MAX_NOTE + 2];

	tab_build(&t, addr, 3, mods, 2);
	EXPECT(gsym_check(&t.s, why, sizeof(why)) == 0, "the good one: %s", why);

	t.s.n_addr_delta = 2;
	refused(&t, "a name too many", "bytes of names after the last");
	tab_build(&t, addr, 3, mods, 2);
	t.s.names.len--;		/* last name unterminated */
	refused(&t, "unterminated", "2 names for 3 addresses");
	tab_build(&t, addr, 3, mods, 2);
	t.names[3] = 0;			/* "f0\0\0..." : name 1 empty */
	refused(&t, "empty name", "name 1 empty");
	tab_build(&t, addr, 3, mods, 2);
	t.names[0] = ' ';
	refused(&t, "space", "name 0 empty, too long or not printable");
	tab_build(&t, addr, 3, mods, 2);
	t.names[0] = (char)0xc3;
	refused(&t, "not ASCII", "not printable");
	tab_build(&t, addr, 3, mods, 2);
	t.delta[2] = 0;
	refused(&t, "repeated address", "address 2 repeated");
	tab_build(&t, addr, 3, mods, 2);
	t.delta[1] = UINT64_MAX - KBASE + 1;
	refused(&t, "overflow", "address 1 overflows");
	tab_build(&t, addr, 3, mods, 2);
	t.mod[1].addr = t.mod[0].addr + 0x800;
	refused(&t, "overlapping modules", "not after the one before");
	tab_build(&t, addr, 3, mods, 2);
	t.mod[0].size = 0;
	refused(&t, "empty module", "guest module mod0: size 0");
	tab_build(&t, addr, 3, mods, 2);
	t.mod[1].addr = UINT64_MAX - 10;
	refused(&t, "module wraps", "guest module mod1: size");
	tab_build(&t, addr, 3, mods, 2);
	t.modname[0][0] = 0;
	refused(&t, "module unnamed", "guest module 0: name empty");
	tab_build(&t, addr, 3, mods, 2);
	t.mod[0].name = NULL;
	refused(&t, "module name missing", "guest module 0: name empty");
	tab_build(&t, addr, 3, mods, 2);
	memset(note, 'x', sizeof(note) - 1);
	note[sizeof(note) - 1] = 0;
	t.s.note = note;
	refused(&t, "long note", "note longer than");
	tab_build(&t, addr, 3, mods, 2);
	t.s.n_modules = GSYM_MAX_MODULES + 1;
	EXPECT(gsym_check(&t.s, why, sizeof(why)) == -EINVAL && strstr(why, "modules, at most"),
	       "too many modules: %s", why);
	tab_build(&t, addr, 3, mods, 2);
	t.s.n_addr_delta = GSYM_MAX_SYMS + 1;
	EXPECT(gsym_check(&t.s, why, sizeof(why)) == -EINVAL && strstr(why, "at most"),
	       "too many symbols: %s", why);
	tab_build(&t, addr, 3, mods, 2);
	t.s.names.len = GSYM_MAX_BYTES + 1;
	EXPECT(gsym_check(&t.s, why, sizeof(why)) == -EINVAL && strstr(why, "bytes of names"),
	       "names too long: %s", why);
}

int main(void)
{
	named_cases();
	random_tables();
	checks();
	return check_result("tracefmt-gsym");
}
