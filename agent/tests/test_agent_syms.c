/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent-syms: the agent's symbol table from kallsyms and modules text
 * (agent_syms.c), checked by the host's own check and looked up with the
 * host's lookup (tracefmt/gsym.h): text symbols only, sorted, one name per
 * address, modules sorted with the overlapping one dropped; hidden
 * addresses, unreadable files and the byte bound said in the note and
 * counted; and this machine's own /proc/kallsyms when it shows addresses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "agent_syms.h"
#include "gsym.h"

static char dir[] = "/tmp/agent-syms-XXXXXX";

static const char *put(const char *name, const char *text)
{
	static char path[4][128];
	static int k;
	char *p = path[k++ % 4];
	FILE *f;

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	f = fopen(p, "w");
	REQUIRE(f && fputs(text, f) >= 0 && fclose(f) == 0, "writing %s", p);
	return p;
}

static const char kallsyms[] =
	"ffffffff81000100 T second_fn\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 t alias_at_stext\n"	/* the first listed wins */
	"ffffffff82000000 D some_data\n"		/* not text */
	"ffffffff81000200 t third_fn\n"
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffffc0a01000 t mod_fn\t[vmscope_guest]\n"
	"ffffffffc0a01100 T mod_fn2\t[vmscope_guest]\n"
	"ffffffffc0b00010 t other_fn\t[virtio_net]\n"
	"garbage line\n"
	"ffffffff81000300 W weak_fn\n";

static const char modules[] =
	"virtio_net 61440 0 - Live 0xffffffffc0b00000\n"
	"vmscope_guest 49152 0 - Live 0xffffffffc0a00000 (OE)\n"
	"overlapper 4096 0 - Live 0xffffffffc0a01000\n"
	"hidden 4096 0 - Live 0x0000000000000000\n";

static struct gsym *table(struct agent_syms *s, const char *what)
{
	struct gsym *g = NULL;
	char why[160] = "";

	EXPECT(gsym_new(&g, &s->msg, why, sizeof(why)) == 0, "%s: the host refuses it: %s",
	       what, why);
	return g;
}

static void named(void)
{
	struct agent_syms s;
	struct gsym *g;
	struct gsym_hit h;
	char buf[80];

	REQUIRE(agent_syms_load(&s, put("kallsyms", kallsyms), put("modules", modules),
				GSYM_MAX_BYTES) == 0, "load");
	EXPECT(s.msg.n_addr_delta == 6, "%zu symbols, want 6", s.msg.n_addr_delta);
	EXPECT(s.msg.n_modules == 2, "%zu modules, want 2", s.msg.n_modules);
	EXPECT(s.msg.dropped == 0 && !s.note[0], "dropped %" PRIu64 ", note '%s'",
	       s.msg.dropped, s.note);
	g = table(&s, "named");
	if (g) {
		CHECK(gsym_lookup(g, 0xffffffff81000010ull, &h) &&
		      !strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "_stext+0x10"));
		CHECK(gsym_lookup(g, 0xffffffff81000150ull, &h) &&
		      !strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "second_fn+0x50"));
		CHECK(gsym_lookup(g, 0xffffffffc0a01104ull, &h) &&
		      !strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "mod_fn2+0x4 [vmscope_guest]"));
		CHECK(gsym_lookup(g, 0xffffffffc0b00020ull, &h) &&
		      !strcmp(gsym_hit_str(&h, buf, sizeof(buf)), "other_fn+0x10 [virtio_net]"));
		/* in vmscope_guest, below its first symbol */
		CHECK(!gsym_lookup(g, 0xffffffffc0a00010ull, &h));
		gsym_free(g);
	}
	agent_syms_free(&s);

	/* the bound: room for _stext and second_fn only (names + 1-2 byte deltas) */
	REQUIRE(agent_syms_load(&s, put("kallsyms", kallsyms), put("modules", modules),
				7 + 10 + 10 + 2 + 1) == 0, "load bounded");
	EXPECT(s.msg.n_addr_delta == 2 && s.msg.dropped == 4 &&
	       strstr(s.note, "4 text symbols left out (bound: 30 bytes)"),
	       "bounded: %zu kept, %" PRIu64 " dropped, note '%s'", s.msg.n_addr_delta,
	       s.msg.dropped, s.note);
	g = table(&s, "bounded");
	gsym_free(g);
	agent_syms_free(&s);

	/* kptr_restrict: every address 0 */
	REQUIRE(agent_syms_load(&s, put("kallsyms", "0000000000000000 T _stext\n"
					"0000000000000000 t x\n"), "/nonexistent/modules",
				GSYM_MAX_BYTES) == 0, "load hidden");
	EXPECT(s.msg.n_addr_delta == 0 && strstr(s.note, "shows no addresses (kptr_restrict") &&
	       strstr(s.note, "cannot read /nonexistent/modules: No such file"),
	       "hidden: %zu, note '%s'", s.msg.n_addr_delta, s.note);
	g = table(&s, "hidden");
	gsym_free(g);
	agent_syms_free(&s);

	REQUIRE(agent_syms_load(&s, "/nonexistent/kallsyms", put("modules", modules),
				GSYM_MAX_BYTES) == 0, "load unreadable");
	EXPECT(s.msg.n_addr_delta == 0 && s.msg.n_modules == 2 &&
	       strstr(s.note, "cannot read /nonexistent/kallsyms"), "unreadable: note '%s'",
	       s.note);
	agent_syms_free(&s);
}

/* This machine's table, when it shows addresses: accepted by the host, and
 * each kept symbol found at its own address (a sample). */
static void this_machine(void)
{
	struct agent_syms s;
	struct gsym *g;
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[640];
	unsigned checked = 0, found = 0;

	if (!f)
		return;
	REQUIRE(agent_syms_load(&s, "/proc/kallsyms", "/proc/modules", GSYM_MAX_BYTES) == 0,
		"load /proc");
	fprintf(stderr, "agent-syms: this machine: %zu text symbols, %zu modules, "
		"%" PRIu64 " left out, %zu bytes of names; note '%s'\n", s.msg.n_addr_delta,
		s.msg.n_modules, s.msg.dropped, s.msg.names.len, s.note);
	g = table(&s, "/proc");
	while (g && s.msg.n_addr_delta && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[520];
		struct gsym_hit h;

		if (sscanf(line, "%llx %c %519s", &a, &type, name) != 3 ||
		    (type != 't' && type != 'T') || !a || (checked++ % 97))
			continue;
		/* the name there may be another alias of the same address */
		if (gsym_lookup(g, a, &h) && h.off == 0)
			found++;
	}
	fclose(f);
	if (g && s.msg.n_addr_delta && !s.msg.dropped)
		EXPECT(found == (checked + 96) / 97, "/proc: %u of %u sampled symbols found",
		       found, (checked + 96) / 97);
	gsym_free(g);
	agent_syms_free(&s);
}

int main(void)
{
	REQUIRE(mkdtemp(dir), "mkdtemp");
	named();
	this_machine();
	unlink(put("kallsyms", ""));
	unlink(put("modules", ""));
	rmdir(dir);
	return check_result("agent-syms");
}
