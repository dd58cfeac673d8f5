// SPDX-License-Identifier: GPL-2.0
/*
 * pf_sched against a reader that does with its bundles what Perfetto does:
 * each bundle packed and unpacked through protobuf-c, each CPU's switches
 * (full events and compact columns) put in time order, and a compact
 * switch's previous task taken from the CPU's switch before it. The
 * switches read back equal those written, field for field, on random
 * input with chains broken (a loss, a changed priority), twins (two
 * switches of a CPU at one time), comms too long for the columns, a
 * machine whose layout has no prio, state or comm, and more CPUs than
 * bundle slots (evictions: a tenth of the switches on any of 80 CPUs); and no compact switch has a twin, so the
 * reader's order among twins cannot matter. Most switches go compact.
 */
#include <stdlib.h>
#include <string.h>

#include "../../tests/lib/check.h"
#include "../../tests/lib/xorshift.h"
#include "pf_sched.h"

#define N		50000
#define MACHINES	4
#define CPUS_PER	20	/* 80 CPUs: more than pf_sched's 64 slots */
#define CPUS		(MACHINES * CPUS_PER)
#define LONG_PID	99

struct sw {
	uint32_t machine, cpu;
	struct pf_switch x;
	bool compact;		/* read back: prev to be taken from the one before */
	size_t order;		/* read back: the order the bundles gave it */
	char prev[64], next[64];
};

static struct sw in[N], out[N];
static size_t n_in, n_out;

static void comm_of(char *buf, int32_t pid)
{
	if (pid == LONG_PID)
		snprintf(buf, 64, "a-task-whose-name-is-longer-than-the-columns-take");
	else
		snprintf(buf, 64, "task-%d", pid % 40);	/* two threads a name */
}

static void read_full(const Perfetto__Protos__FtraceEvent *e, uint32_t machine, uint32_t cpu)
{
	const Perfetto__Protos__SchedSwitchFtraceEvent *w = e->sched_switch;
	struct sw *o = &out[n_out];

	REQUIRE(w && n_out < N, "a full event that is no sched_switch, or too many");
	*o = (struct sw){ .machine = machine, .cpu = cpu, .order = n_out };
	o->x = (struct pf_switch){
		.ts = e->timestamp, .prev_pid = w->prev_pid, .next_pid = w->next_pid,
		.prev_prio = w->prev_prio, .next_prio = w->next_prio,
		.prev_state = w->prev_state, .has_prev_prio = w->has_prev_prio,
		.has_next_prio = w->has_next_prio, .has_prev_state = w->has_prev_state,
	};
	if (w->prev_comm)
		o->x.prev_comm = strcpy(o->prev, w->prev_comm);
	if (w->next_comm)
		o->x.next_comm = strcpy(o->next, w->next_comm);
	n_out++;
}

static void read_compact(const Perfetto__Protos__FtraceEventBundle__CompactSched *c,
			 uint32_t machine, uint32_t cpu)
{
	uint64_t ts = 0;

	CHECK_EQ(c->n_switch_prev_state, c->n_switch_timestamp);
	CHECK_EQ(c->n_switch_next_pid, c->n_switch_timestamp);
	CHECK_EQ(c->n_switch_next_prio, c->n_switch_timestamp);
	CHECK_EQ(c->n_switch_next_comm_index, c->n_switch_timestamp);
	for (size_t i = 0; i < c->n_switch_timestamp; i++) {
		struct sw *o = &out[n_out];
		uint32_t k = c->switch_next_comm_index[i];

		REQUIRE(n_out < N && k < c->n_intern_table, "compact entry %zu", i);
		ts += c->switch_timestamp[i];
		*o = (struct sw){ .machine = machine, .cpu = cpu, .order = n_out, .compact = true };
		o->x = (struct pf_switch){
			.ts = ts, .next_pid = c->switch_next_pid[i],
			.next_prio = c->switch_next_prio[i], .prev_state = c->switch_prev_state[i],
			.has_prev_prio = true, .has_next_prio = true, .has_prev_state = true,
		};
		o->x.next_comm = strcpy(o->next, c->intern_table[k]);
		n_out++;
	}
}

/* pf_sched's output, through the wire format and back */
static void bundle_out(void *ctx, uint32_t machine, Perfetto__Protos__FtraceEventBundle *b)
{
	size_t len = protobuf_c_message_get_packed_size(&b->base);
	uint8_t *buf = malloc(len ? len : 1);
	Perfetto__Protos__FtraceEventBundle *u;

	(void)ctx;
	REQUIRE(buf, "out of memory");
	protobuf_c_message_pack(&b->base, buf);
	u = perfetto__protos__ftrace_event_bundle__unpack(NULL, len, buf);
	REQUIRE(u && u->has_cpu, "a bundle that does not read back");
	for (size_t i = 0; i < u->n_event; i++)
		read_full(u->event[i], machine, u->cpu);
	if (u->compact_sched)
		read_compact(u->compact_sched, machine, u->cpu);
	perfetto__protos__ftrace_event_bundle__free_unpacked(u, NULL);
	free(buf);
}

static int by_cpu_time(const void *a, const void *b)
{
	const struct sw *x = a, *y = b;

	if (x->machine != y->machine)
		return x->machine < y->machine ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->x.ts != y->x.ts)
		return x->x.ts < y->x.ts ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void compare(const struct sw *a, const struct sw *b, size_t i)
{
	const struct pf_switch *x = &a->x, *y = &b->x;
	bool prio = x->has_prev_prio;

	EXPECT(x->ts == y->ts && x->prev_pid == y->prev_pid && x->next_pid == y->next_pid &&
	       x->has_prev_prio == y->has_prev_prio && x->has_next_prio == y->has_next_prio &&
	       x->has_prev_state == y->has_prev_state &&
	       (!prio || (x->prev_prio == y->prev_prio && x->next_prio == y->next_prio)) &&
	       (!x->has_prev_state || x->prev_state == y->prev_state) &&
	       /* the structs moved (qsort): their own buffers, not the pointers */
	       same_str(x->prev_comm ? a->prev : NULL, y->prev_comm ? b->prev : NULL) &&
	       same_str(x->next_comm ? a->next : NULL, y->next_comm ? b->next : NULL),
	       "switch %zu (machine %u cpu %u at %llu): read back %d -> %d, written %d -> %d",
	       i, a->machine, a->cpu, (unsigned long long)x->ts, y->prev_pid, y->next_pid,
	       x->prev_pid, x->next_pid);
}

/* What the reader makes of what was written, against what was written. */
static void check_read_back(void)
{
	size_t compact = 0;

	CHECK_EQ(n_out, n_in);
	qsort(out, n_out, sizeof(out[0]), by_cpu_time);
	for (size_t i = 0; i < n_out; i++) {
		struct sw *o = &out[i];
		bool same_cpu = i && out[i - 1].machine == o->machine && out[i - 1].cpu == o->cpu;

		if (!o->compact)
			continue;
		compact++;
		/* a compact switch has a switch before it, and no twin */
		REQUIRE(same_cpu, "compact switch %zu is its CPU's first", i);
		EXPECT(out[i - 1].x.ts < o->x.ts, "compact switch %zu has a twin before it", i);
		EXPECT(i + 1 == n_out || out[i + 1].machine != o->machine ||
		       out[i + 1].cpu != o->cpu || out[i + 1].x.ts > o->x.ts,
		       "compact switch %zu has a twin after it", i);
		o->x.prev_pid = out[i - 1].x.next_pid;
		o->x.prev_prio = out[i - 1].x.next_prio;
		o->x.prev_comm = strcpy(o->prev, out[i - 1].next);
	}
	qsort(in, n_in, sizeof(in[0]), by_cpu_time);
	for (size_t i = 0; i < n_in && i < n_out; i++)
		compare(&in[i], &out[i], i);
	EXPECT(compact > n_in / 2, "only %zu of %zu switches compact", compact, n_in);
}

static void add(struct pf_sched *s, uint32_t machine, uint32_t cpu, const struct pf_switch *x)
{
	struct sw *w = &in[n_in];

	*w = (struct sw){ .machine = machine, .cpu = cpu, .x = *x, .order = n_in };
	if (x->prev_comm)
		w->x.prev_comm = strcpy(w->prev, x->prev_comm);
	if (x->next_comm)
		w->x.next_comm = strcpy(w->next, x->next_comm);
	n_in++;
	pf_sched_add(s, machine, cpu, x);
}

int main(void)
{
	struct pf_sched_stats st = { 0 };
	struct pf_sched *s = pf_sched_new(bundle_out, NULL, &st);
	uint64_t rng = 0x5eedf00dull, ts[CPUS];
	int32_t cur[CPUS];
	char prev[64], next[64];

	REQUIRE(s, "out of memory");
	for (int c = 0; c < CPUS; c++) {
		ts[c] = 1000000;
		cur[c] = 1 + c % 40;
	}
	for (int i = 0; i < N; i++) {
		uint64_t pick = vmscope_xorshift64(&rng);
		/* most on half the CPUs, as a trace's busy ones; the rest evict */
		int c = (int)(pick % 10 ? (pick >> 8) % (CPUS / 2) : (pick >> 8) % CPUS);
		uint32_t machine = (uint32_t)c / CPUS_PER;
		uint64_t r = vmscope_xorshift64(&rng);
		struct pf_switch x = { 0 };
		/* the last machine's layout: pids only */
		bool rich = machine != MACHINES - 1;

		ts[c] += r % 100 == 0 ? 0 : 1 + (r >> 8) % 1000;	/* 1%: a twin */
		x.ts = ts[c];
		x.prev_pid = cur[c];
		if (r % 50 == 1)	/* a loss: another task */
			x.prev_pid = (int32_t)(1 + (r >> 20) % 80);
		else if (r % 50 == 2)	/* a loss: the other thread of the same name */
			x.prev_pid = cur[c] > 40 ? cur[c] - 40 : cur[c] + 40;
		x.next_pid = (r >> 32) % 100 == 0 ? LONG_PID : (int32_t)(1 + (r >> 40) % 80);
		cur[c] = x.next_pid;
		if (rich) {
			x.has_prev_prio = x.has_next_prio = x.has_prev_state = true;
			x.prev_prio = 100 + x.prev_pid % 40 + (r % 97 == 0);	/* 1%: changed */
			x.next_prio = 100 + x.next_pid % 40;
			x.prev_state = (int64_t)((r >> 16) % 3);
			comm_of(prev, x.prev_pid);
			comm_of(next, x.next_pid);
			x.prev_comm = prev;
			x.next_comm = next;
		}
		add(s, machine, (uint32_t)c % CPUS_PER, &x);
	}
	pf_sched_flush(s);
	CHECK_EQ(st.compact + st.full, N);
	CHECK(st.evicted > 0);
	CHECK_EQ(st.disordered, 0);
	check_read_back();
	printf("%llu compact, %llu full, %llu bundles, %llu evicted\n",
	       (unsigned long long)st.compact, (unsigned long long)st.full,
	       (unsigned long long)st.bundles, (unsigned long long)st.evicted);

	/* a switch earlier than its CPU's last one is counted */
	pf_sched_add(s, MACHINES, 0, &(struct pf_switch){ .ts = 100 });
	pf_sched_add(s, MACHINES, 0, &(struct pf_switch){ .ts = 50 });
	CHECK_EQ(st.disordered, 1);
	pf_sched_free(s);
	return check_result("export-pf-sched");
}
