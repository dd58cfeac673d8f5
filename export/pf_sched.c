// SPDX-License-Identifier: GPL-2.0
/* sched_switch batched per machine and CPU, compact where it says all (pf_sched.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pf_sched.h"

#define PF_SCHED_SLOTS	64	/* power of two */
#define PF_SCHED_BATCH	128

struct pf_full {
	struct pf_switch sw;
	char prev_comm[PF_SCHED_COMM + 1], next_comm[PF_SCHED_COMM + 1];
};

struct pf_bundle {
	bool used;
	uint32_t machine, cpu;
	/* the CPU's last switch: what Perfetto takes a compact one's prev from */
	bool chain;
	uint64_t last_ts;
	int32_t last_pid, last_prio;
	char last_comm[PF_SCHED_COMM + 1];
	/* the last switch is the last compact entry: its prev, to write it in full */
	bool tail_compact;
	int32_t tail_prev_pid, tail_prev_prio;
	char tail_prev_comm[PF_SCHED_COMM + 1];
	/* pending switches */
	unsigned int n_compact, n_full, n_comms;
	uint64_t ts[PF_SCHED_BATCH];
	int64_t state[PF_SCHED_BATCH];
	int32_t pid[PF_SCHED_BATCH], prio[PF_SCHED_BATCH];
	uint32_t comm_idx[PF_SCHED_BATCH];
	char comms[PF_SCHED_BATCH][PF_SCHED_COMM + 1];
	struct pf_full full[PF_SCHED_BATCH];
};

struct pf_sched {
	pf_bundle_fn *out;
	void *ctx;
	struct pf_sched_stats *st;
	struct pf_bundle b[PF_SCHED_SLOTS];
	/* one bundle's message, built when it is written */
	uint64_t delta[PF_SCHED_BATCH];
	char *strs[PF_SCHED_BATCH];
	Perfetto__Protos__FtraceEvent fe[PF_SCHED_BATCH], *fep[PF_SCHED_BATCH];
	Perfetto__Protos__SchedSwitchFtraceEvent sw[PF_SCHED_BATCH];
};

struct pf_sched *pf_sched_new(pf_bundle_fn *out, void *ctx, struct pf_sched_stats *st)
{
	struct pf_sched *s = calloc(1, sizeof(*s));

	if (s) {
		s->out = out;
		s->ctx = ctx;
		s->st = st;
	}
	return s;
}

void pf_sched_free(struct pf_sched *s)
{
	free(s);
}

/* The FtraceEvent of a full switch, into @fe and @sw. */
static void full_event(Perfetto__Protos__FtraceEvent *fe,
		       Perfetto__Protos__SchedSwitchFtraceEvent *sw, const struct pf_switch *x)
{
	perfetto__protos__ftrace_event__init(fe);
	perfetto__protos__sched_switch_ftrace_event__init(sw);
	sw->has_prev_pid = sw->has_next_pid = true;
	sw->prev_pid = x->prev_pid;
	sw->next_pid = x->next_pid;
	sw->has_prev_prio = x->has_prev_prio;
	sw->prev_prio = x->prev_prio;
	sw->has_next_prio = x->has_next_prio;
	sw->next_prio = x->next_prio;
	sw->has_prev_state = x->has_prev_state;
	sw->prev_state = x->prev_state;
	sw->prev_comm = (char *)x->prev_comm;
	sw->next_comm = (char *)x->next_comm;
	fe->has_timestamp = fe->has_pid = true;
	fe->timestamp = x->ts;
	fe->pid = (uint32_t)x->prev_pid;
	fe->event_case = PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH;
	fe->sched_switch = sw;
}

static void write_bundle(struct pf_sched *s, struct pf_bundle *b)
{
	Perfetto__Protos__FtraceEventBundle fb = PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;
	Perfetto__Protos__FtraceEventBundle__CompactSched cs =
		PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__COMPACT_SCHED__INIT;
	uint64_t prev = 0;

	if (!b->n_compact && !b->n_full)
		return;
	fb.has_cpu = true;
	fb.cpu = b->cpu;
	for (unsigned int i = 0; i < b->n_full; i++) {
		full_event(&s->fe[i], &s->sw[i], &b->full[i].sw);
		s->fep[i] = &s->fe[i];
	}
	fb.n_event = b->n_full;
	fb.event = s->fep;
	if (b->n_compact) {
		for (unsigned int i = 0; i < b->n_compact; i++) {
			s->delta[i] = b->ts[i] - prev;
			prev = b->ts[i];
		}
		for (unsigned int i = 0; i < b->n_comms; i++)
			s->strs[i] = b->comms[i];
		cs.n_switch_timestamp = cs.n_switch_prev_state = cs.n_switch_next_pid =
			cs.n_switch_next_prio = cs.n_switch_next_comm_index = b->n_compact;
		cs.switch_timestamp = s->delta;
		cs.switch_prev_state = b->state;
		cs.switch_next_pid = b->pid;
		cs.switch_next_prio = b->prio;
		cs.switch_next_comm_index = b->comm_idx;
		cs.n_intern_table = b->n_comms;
		cs.intern_table = s->strs;
		fb.compact_sched = &cs;
	}
	s->out(s->ctx, b->machine, &fb);
	s->st->bundles++;
	b->n_compact = b->n_full = b->n_comms = 0;
	b->tail_compact = false;	/* written: no longer ours to change */
}

static void add_full(struct pf_bundle *b, const struct pf_switch *x);

/*
 * The last compact entry as a full event: a switch at the same time comes
 * next, or the bundle goes while its CPU's next switch is unknown. Two
 * switches at one time may be read in either order, and a compact one
 * read after its twin would take the wrong previous task.
 */
static void untrail(struct pf_sched *s, struct pf_bundle *b)
{
	unsigned int i;
	struct pf_switch x;

	if (!b->tail_compact || !b->n_compact)
		return;
	i = --b->n_compact;
	x = (struct pf_switch){
		.ts = b->ts[i], .prev_pid = b->tail_prev_pid, .next_pid = b->pid[i],
		.prev_prio = b->tail_prev_prio, .next_prio = b->prio[i],
		.prev_state = b->state[i], .has_prev_prio = true, .has_next_prio = true,
		.has_prev_state = true, .prev_comm = b->tail_prev_comm,
		.next_comm = b->comms[b->comm_idx[i]],
	};
	add_full(b, &x);
	b->tail_compact = false;
	s->st->compact--;
	s->st->full++;
}

void pf_sched_flush(struct pf_sched *s)
{
	for (unsigned int i = 0; i < PF_SCHED_SLOTS; i++)
		if (s->b[i].used)
			write_bundle(s, &s->b[i]);
}

/* The bundle of (@machine, @cpu): found, a free slot, or its home slot written out. */
static struct pf_bundle *bundle(struct pf_sched *s, uint32_t machine, uint32_t cpu)
{
	uint32_t home = (machine * 0x9e3779b1u ^ cpu * 0x85ebca6bu) & (PF_SCHED_SLOTS - 1);
	struct pf_bundle *b;

	for (unsigned int i = 0; i < PF_SCHED_SLOTS; i++) {
		b = &s->b[(home + i) & (PF_SCHED_SLOTS - 1)];
		if (b->used && b->machine == machine && b->cpu == cpu)
			return b;
		if (!b->used)
			break;
	}
	if (b->used) {		/* every slot taken: the home one makes room */
		b = &s->b[home];
		untrail(s, b);
		write_bundle(s, b);
		s->st->evicted++;
	}
	memset(b, 0, offsetof(struct pf_bundle, ts));
	b->used = true;
	b->machine = machine;
	b->cpu = cpu;
	return b;
}

static bool fits(const char *comm)
{
	return !comm || strlen(comm) <= PF_SCHED_COMM;
}

/* Perfetto would take @x's prev task from the CPU's last switch, rightly. */
static bool compact_says_all(const struct pf_bundle *b, const struct pf_switch *x)
{
	return b->chain && x->has_prev_prio && x->has_next_prio && x->has_prev_state &&
	       x->prev_comm && x->next_comm && x->ts > b->last_ts &&
	       x->prev_pid == b->last_pid && x->prev_prio == b->last_prio &&
	       !strcmp(x->prev_comm, b->last_comm);
}

static uint32_t intern_comm(struct pf_bundle *b, const char *comm)
{
	for (unsigned int i = 0; i < b->n_comms; i++)
		if (!strcmp(b->comms[i], comm))
			return i;
	strcpy(b->comms[b->n_comms], comm);
	return b->n_comms++;
}

static void add_full(struct pf_bundle *b, const struct pf_switch *x)
{
	struct pf_full *f = &b->full[b->n_full++];

	f->sw = *x;
	if (x->prev_comm)
		f->sw.prev_comm = strcpy(f->prev_comm, x->prev_comm);
	if (x->next_comm)
		f->sw.next_comm = strcpy(f->next_comm, x->next_comm);
}

void pf_sched_add(struct pf_sched *s, uint32_t machine, uint32_t cpu,
		  const struct pf_switch *x)
{
	struct pf_bundle *b = bundle(s, machine, cpu);
	bool tie = x->ts == b->last_ts;

	if (x->ts < b->last_ts)
		s->st->disordered++;
	if (tie)
		untrail(s, b);
	/* a full bundle is written now, when the tail's twin could no longer come */
	if (b->n_compact + b->n_full == PF_SCHED_BATCH)
		write_bundle(s, b);
	b->tail_compact = false;	/* the tail is now the switch below */
	if (!fits(x->prev_comm) || !fits(x->next_comm)) {
		Perfetto__Protos__FtraceEventBundle fb = PERFETTO__PROTOS__FTRACE_EVENT_BUNDLE__INIT;

		/* alone, its strings as they are; the CPU's chain restarts */
		write_bundle(s, b);
		full_event(&s->fe[0], &s->sw[0], x);
		s->fep[0] = &s->fe[0];
		fb.has_cpu = true;
		fb.cpu = cpu;
		fb.n_event = 1;
		fb.event = s->fep;
		s->out(s->ctx, machine, &fb);
		s->st->bundles++;
		s->st->full++;
		b->chain = false;
		b->last_ts = x->ts;
		return;
	}
	if (compact_says_all(b, x)) {
		unsigned int i = b->n_compact++;

		b->ts[i] = x->ts;
		b->state[i] = x->prev_state;
		b->pid[i] = x->next_pid;
		b->prio[i] = x->next_prio;
		b->comm_idx[i] = intern_comm(b, x->next_comm);
		b->tail_compact = true;
		b->tail_prev_pid = x->prev_pid;
		b->tail_prev_prio = x->prev_prio;
		strcpy(b->tail_prev_comm, x->prev_comm);
		s->st->compact++;
	} else {
		add_full(b, x);
		s->st->full++;
	}
	/* after twins, the next one says its prev in full: either may be read last */
	b->chain = !tie && x->has_next_prio && x->next_comm;
	if (b->chain) {
		b->last_pid = x->next_pid;
		b->last_prio = x->next_prio;
		strcpy(b->last_comm, x->next_comm);
	}
	b->last_ts = x->ts;
}
