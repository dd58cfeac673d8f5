/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Writes a synthetic trace for measuring readers: `gen-trace DIR N`
 * creates the trace folder DIR with the compiled-in host descriptors and
 * N records (alternating kvm_exit and kvm_entry, 1 µs apart) in 64 KiB
 * chunks across 2 host CPU files, as `vmscope record` lays them out.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "vmscope_events.h"

#define CHUNK (64u << 10)

int main(int argc, char **argv)
{
	static struct vr_pb_events ev;
	static uint8_t recs[CHUNK];
	Vmscope__Trace__SessionMetadata s = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	struct vmscope_ev_kvm_exit ex = { .vcpu_id = 1, .exit_reason = 0x7b,
					  .guest_rip = 0xffffffff81001234ull, .isa = 1,
					  .reason_valid = 1 };
	struct vmscope_ev_kvm_entry en = { .rip = 0xffffffff81001236ull, .vcpu_id = 1 };
	struct tf_writer *w;
	unsigned long long n;
	int dfd;

	if (argc != 3 || (n = strtoull(argv[2], NULL, 10)) == 0) {
		fprintf(stderr, "usage: gen-trace DIR N\n");
		return 2;
	}
	if (tf_trace_create(argv[1], &dfd)) {
		perror(argv[1]);
		return 1;
	}
	vr_events_to_pb(&ev, vmscope_event_descs, VMSCOPE_NR_EVENTS,
			VMSCOPE__TRACE__SIDE__SIDE_HOST, 0, "bench");
	clk.name = "bench";
	clk.unit = "ns";
	clk.ns_mul = clk.ns_div = 1;
	clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	s.host_clock = &clk;
	s.host_events = &ev.table;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_METADATA;
	if (tf_writer_create(&w, dfd, TF_TRACE_METADATA, NULL) ||
	    tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base) ||
	    tf_writer_append_msg(w, TF_FRAME_SESSION, &s.base) || tf_writer_close(w))
		return 1;
	for (unsigned int cpu = 0; cpu < 2; cpu++) {
		Vmscope__Trace__Origin o = VMSCOPE__TRACE__ORIGIN__INIT;
		unsigned long long mine = n / 2 + (cpu == 0 ? n % 2 : 0), done = 0, seq = 0;
		uint64_t ts = 1000000;
		char name[32];

		o.side = VMSCOPE__TRACE__SIDE__SIDE_HOST;
		o.cpu = cpu;
		fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
		fh.origin = &o;
		tf_trace_host_name(name, sizeof(name), cpu);
		if (tf_writer_create(&w, dfd, name, NULL) ||
		    tf_writer_append_msg(w, TF_FRAME_FILE_HEADER, &fh.base))
			return 1;
		while (done < mine) {
			Vmscope__Trace__StreamChunk c = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
			size_t off = 0;
			uint32_t nr = 0;
			uint64_t begin = ts;

			while (done < mine && off + 8 + sizeof(ex) <= CHUNK - 48) {
				int exit = done % 2 == 0;
				uint16_t sz = exit ? sizeof(ex) : sizeof(en);
				uint64_t h = VMSCOPE_RB_REC_HDR(ts, exit ? VMSCOPE_EV_kvm_exit :
								VMSCOPE_EV_kvm_entry, sz, 0);

				memcpy(recs + off, &h, 8);
				memcpy(recs + off + 8, exit ? (void *)&ex : (void *)&en, sz);
				off += 8 + ((sz + 7u) & ~7u);
				ts += 1000;
				done++;
				nr++;
			}
			c.origin = &o;
			c.seq = seq++;
			c.begin_ts = begin;
			c.end_ts = ts;
			c.nr_records = nr;
			c.records.data = recs;
			c.records.len = off;
			if (tf_writer_append_msg(w, TF_FRAME_CHUNK, &c.base))
				return 1;
		}
		if (tf_writer_close(w))
			return 1;
	}
	close(dfd);
	return 0;
}
