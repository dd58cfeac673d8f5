/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writes a synthetic trace for measuring and checking readers:
 *
 *   gen-trace DIR N               N records, alternating kvm_exit and
 *                                 kvm_entry with fixed payloads, 1 µs apart,
 *                                 in 64 KiB chunks across 2 host CPU files,
 *                                 as `vmscope record` lays them out (the
 *                                 `vmscope dump` benchmark)
 *   gen-trace --all-events DIR N  N records on each of the 2 host CPUs and
 *                                 of one guest CPU (VM 0, clock scaled by
 *                                 3/2), cycling through every compiled-in
 *                                 event with pseudo-random field values
 *                                 (0, 1, all ones, the sign bit, small,
 *                                 random; strings of every length with any
 *                                 bytes, and bytes after their NUL) and
 *                                 irregular times: the same output on every
 *                                 run, for `vmscope dump`'s golden test
 *                                 (cli/tests/dump-golden-test.sh)
 *   gen-trace --all-events --abi03 DIR N
 *                                 the same with the event tables (stored
 *                                 in the trace, and the payloads' layout)
 *                                 as ABI 0.3 had them: a trace recorded by
 *                                 0.3 modules, which must still dump as it
 *                                 did (cli/tests/dump-golden-abi03.txt)
 *
 * Fields and events added since ABI 0.3 take their values from a generator
 * of their own, so that every other value, time and record is the same
 * with either table: the dumps of the two traces differ only in the added
 * fields and in the added events' records (one of each after every cycle
 * through 0.3's events, halfway to the next record).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events_compat.h"
#include "reader.h"
#include "vmscope_events.h"
#include "../tests/lib/xorshift.h"

#define CHUNK (64u << 10)

/* the trace's tables: the compiled-in ones, or ABI 0.3's */
static const struct vmscope_event_desc *table = vmscope_event_descs;
static struct vmscope_event_desc table03[VMSCOPE_NR_EVENTS];
static unsigned int n03;	/* events in ABI 0.3; later ones were added */

/* xorshift64: fixed seeds, same trace every run; rng_added's for the
 * fields added since ABI 0.3 to older events, rng_events' for the events
 * added since */
static uint64_t rng_state, rng_added, rng_events;

static uint64_t rng_of(uint64_t *x)
{
	return vmscope_xorshift64(x);
}

static uint64_t rng(void)
{
	return rng_of(&rng_state);
}

/* An integer of @size bytes that hits the formatter's edge cases often. */
static uint64_t pick_int(uint64_t *x, unsigned int size)
{
	uint64_t bits = size * 8, ones = bits == 64 ? ~0ull : (1ull << bits) - 1;

	switch (rng_of(x) % 6) {
	case 0: return 0;
	case 1: return 1;
	case 2: return ones;
	case 3: return 1ull << (bits - 1);
	case 4: return rng_of(x) % 1000;
	default: return rng_of(x) & ones;
	}
}

/* Whether event @id had field @name in ABI 0.3. */
static bool in_abi03(unsigned int id, const char *name)
{
	for (unsigned int i = 0; id < n03 && i < table03[id].nr_fields; i++)
		if (!strcmp(table03[id].fields[i].name, name))
			return true;
	return false;
}

static void fill_payload(const struct vmscope_event_desc *d, uint8_t *p)
{
	memset(p, 0, d->payload_size);
	for (unsigned int i = 0; i < d->nr_fields; i++) {
		const struct vmscope_field_desc *f = &d->fields[i];
		uint64_t *x = in_abi03(d->id, f->name) ? &rng_state :
			      d->id >= n03 ? &rng_events : &rng_added;

		if (f->type == VMSCOPE_FT_str) {
			unsigned int len = (unsigned int)(rng_of(x) % (f->size + 1u));

			for (unsigned int k = 0; k < f->size; k++) {
				uint8_t c = (uint8_t)(rng_of(x) % 4 ? 0x20 + rng_of(x) % 0x5f :
						      1 + rng_of(x) % 255);

				/* past the NUL: bytes the formatter must not print */
				p[f->offset + k] = k == len ? 0 : c;
			}
		} else {
			uint64_t v = pick_int(x, f->size);

			memcpy(p + f->offset, &v, f->size);	/* little-endian */
		}
	}
}

/* One stream file of @n records. */
static int write_stream(int dfd, const char *name, Vmscope__Trace__Origin *o,
			unsigned long long n, bool all)
{
	static uint8_t recs[CHUNK];
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	struct vmscope_ev_kvm_exit ex = { .vcpu_id = 1, .exit_reason = 0x7b,
					  .guest_rip = 0xffffffff81001234ull, .isa = 1,
					  .reason_valid = 1 };
	struct vmscope_ev_kvm_entry en = { .rip = 0xffffffff81001236ull, .vcpu_id = 1 };
	unsigned long long done = 0, seq = 0;
	uint64_t ts = 1000000;
	struct tf_writer *w;
	/* the events added since 0.3, unless the trace is 0.3's */
	unsigned int n_added = all && table != table03 ? VMSCOPE_NR_EVENTS - n03 : 0;

	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fh.origin = o;
	if (tf_writer_create(&w, dfd, name, NULL) ||
	    tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base))
		return 1;
	while (done < n) {
		Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
		size_t off = 0;
		uint32_t nr = 0;
		uint64_t begin = ts;

		while (done < n) {
			uint8_t payload[VMSCOPE_MAX_PAYLOAD];
			unsigned int id = all ? done % n03 :
				done % 2 == 0 ? VMSCOPE_EV_kvm_exit : VMSCOPE_EV_kvm_entry;
			bool cycle_end = all && id == n03 - 1;
			uint16_t sz = (uint16_t)table[id].payload_size;
			uint64_t h = VMSCOPE_RB_REC_HDR(ts, id, sz, 0), gap;

			/* the largest record of the trace must fit (kvm_exit
			 * without --all-events), and the added ones after it */
			if (off + (1 + (cycle_end ? n_added : 0)) *
				  (8 + (all ? VMSCOPE_MAX_PAYLOAD : sizeof(ex))) > CHUNK - 48)
				break;

			if (all)
				fill_payload(&table[id], payload);
			else
				memcpy(payload, id == VMSCOPE_EV_kvm_exit ? (void *)&ex : (void *)&en,
				       sz);
			memcpy(recs + off, &h, 8);
			memcpy(recs + off + 8, payload, sz);
			off += 8 + ((sz + 7u) & ~7u);
			/* all: gaps from 0 to ~4.3 s, so every digit of the time moves */
			gap = all ? (rng() % 3 ? rng() % 100000 : rng() % (1ull << 32)) : 1000;
			for (unsigned int a = 0; cycle_end && a < n_added; a++) {
				unsigned int aid = n03 + a;
				uint16_t asz = (uint16_t)table[aid].payload_size;
				uint64_t ah = VMSCOPE_RB_REC_HDR(ts + gap / 2, aid, asz, 0);

				fill_payload(&table[aid], payload);
				memcpy(recs + off, &ah, 8);
				memcpy(recs + off + 8, payload, asz);
				off += 8 + ((asz + 7u) & ~7u);
				nr++;
			}
			ts += gap;
			done++;
			nr++;
		}
		c.origin = o;
		c.seq = seq++;
		c.begin_ts = begin;
		c.end_ts = ts;
		c.nr_records = nr;
		c.records.data = recs;
		c.records.len = off;
		if (tf_writer_append_msg(w, TF_FRAME_CHUNK, &c.base))
			return 1;
	}
	return tf_writer_close(w) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct vr_pb_events ev, gev;
	Vmscope__Trace__SessionMetadata s = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__ClockDesc gclk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	Vmscope__Trace__VmInfo vm = VMSCOPE__TRACE__VM_INFO__INIT;
	Vmscope__Trace__VmInfo *vms[1] = { &vm };
	bool all = argc >= 4 && !strcmp(argv[1], "--all-events");
	bool abi03 = all && argc == 5 && !strcmp(argv[2], "--abi03");
	int opts = all + abi03;
	struct tf_writer *w;
	unsigned long long n;
	int dfd;

	if (argc != 3 + opts || (n = strtoull(argv[2 + opts], NULL, 10)) == 0) {
		fprintf(stderr, "usage: gen-trace [--all-events [--abi03]] DIR N\n");
		return 2;
	}
	int k03 = vmscope_events_abi03(table03);

	if (k03 <= 0) {
		fprintf(stderr, "gen-trace: no ABI 0.3 table (kvm-probes/events_compat.c)\n");
		return 1;
	}
	n03 = (unsigned int)k03;
	if (abi03)
		table = table03;
	if (tf_trace_create(argv[1 + opts], &dfd)) {
		perror(argv[1 + opts]);
		return 1;
	}
	vr_events_to_pb(&ev, table, abi03 ? n03 : VMSCOPE_NR_EVENTS,
			VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, "bench");
	clk.name = "bench";
	clk.unit = "ns";
	clk.ns_mul = clk.ns_div = 1;
	clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	s.host_clock = &clk;
	s.host_events = &ev.table;
	if (all) {
		vr_events_to_pb(&gev, table, abi03 ? n03 : VMSCOPE_NR_EVENTS,
				VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0, "bench");
		gclk = clk;
		gclk.ns_mul = 3;
		gclk.ns_div = 2;
		vm.name = "bench-vm";
		vm.guest_clock = &gclk;
		vm.guest_events = &gev.table;
		s.n_vms = 1;
		s.vms = vms;
	}
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA;
	if (tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL) ||
	    tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base) ||
	    tf_writer_append_msg(w, TF_FRAME_SESSION, &s.base) || tf_writer_close(w))
		return 1;
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
		char name[32];

		o.side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
		o.cpu = cpu;
		tf_trace_host_name(name, sizeof(name), 0, cpu);
		rng_state = 0x9e3779b97f4a7c15ull + cpu;
		rng_added = 0xd1b54a32d192ed03ull + cpu;
		rng_events = 0x8bb84b93962eacc9ull + cpu;
		if (write_stream(dfd, name, &o, all ? n : n / 2 + (cpu == 0 ? n % 2 : 0), all))
			return 1;
	}
	if (all) {
		Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
		char name[32];

		o.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST;
		o.vm = 0;
		o.cpu = 1;
		tf_trace_guest_name(name, sizeof(name), 0, 1);
		rng_state = 0x2545f4914f6cdd1dull;
		rng_added = 0xd1b54a32d192ed03ull + 2;
		rng_events = 0x8bb84b93962eacc9ull + 2;
		if (write_stream(dfd, name, &o, n, all))
			return 1;
	}
	close(dfd);
	return 0;
}
