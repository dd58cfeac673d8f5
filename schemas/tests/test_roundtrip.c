/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Round trip of every stored message type. Each message is filled so that
 * every field, recursively, has a non-default value (checked generically
 * through the descriptors, so a field added to a .proto without being added
 * here fails the test), then packed, unpacked and packed again: the two
 * encodings must be identical byte for byte (protobuf-c emits fields in
 * number order, so equal encodings mean equal messages).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "../../tests/lib/check.h"
#include "common.pb-c.h"
#include "session.pb-c.h"
#include "stream.pb-c.h"
#include "file.pb-c.h"

/* True when every field of m (recursively) differs from its default. */
static int all_set(const ProtobufCMessage *m, const char *path)
{
	const ProtobufCMessageDescriptor *d = m->descriptor;
	int ok = 1;

	for (unsigned i = 0; i < d->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &d->fields[i];
		const char *base = (const char *)m;
		int set = 0;

		if (f->label == PROTOBUF_C_LABEL_REPEATED) {
			size_t n = *(const size_t *)(base + f->quantifier_offset);

			set = n > 0;
			if (set && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				ProtobufCMessage *const *arr =
					*(ProtobufCMessage *const *const *)(base + f->offset);
				for (size_t k = 0; k < n; k++)
					ok &= all_set(arr[k], f->name);
			}
		} else {
			switch (f->type) {
			case PROTOBUF_C_TYPE_STRING: {
				const char *s = *(const char *const *)(base + f->offset);
				set = s && *s;
				break;
			}
			case PROTOBUF_C_TYPE_BYTES:
				set = ((const ProtobufCBinaryData *)(base + f->offset))->len > 0;
				break;
			case PROTOBUF_C_TYPE_MESSAGE: {
				const ProtobufCMessage *sub =
					*(const ProtobufCMessage *const *)(base + f->offset);
				set = sub != NULL;
				if (sub)
					ok &= all_set(sub, f->name);
				break;
			}
			case PROTOBUF_C_TYPE_BOOL:
				set = *(const protobuf_c_boolean *)(base + f->offset) != 0;
				break;
			case PROTOBUF_C_TYPE_UINT64: case PROTOBUF_C_TYPE_INT64:
			case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_FIXED64:
			case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE:
				set = *(const uint64_t *)(base + f->offset) != 0;
				break;
			default: /* 32-bit scalars and enums */
				set = *(const uint32_t *)(base + f->offset) != 0;
				break;
			}
		}
		if (!set) {
			fprintf(stderr, "%s.%s (in %s) not set\n", d->name, f->name, path);
			ok = 0;
		}
	}
	return ok;
}

static void roundtrip(const ProtobufCMessage *m)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *a = malloc(n + 1), *b = malloc(n + 1);
	ProtobufCMessage *u;

	CHECK(all_set(m, "top"));
	CHECK(protobuf_c_message_pack(m, a) == n);
	u = protobuf_c_message_unpack(m->descriptor, NULL, n, a);
	CHECK(u != NULL);
	if (u) {
		CHECK(protobuf_c_message_get_packed_size(u) == n);
		CHECK(protobuf_c_message_pack(u, b) == n);
		CHECK(memcmp(a, b, n) == 0);
		CHECK(protobuf_c_message_check(u));
		protobuf_c_message_free_unpacked(u, NULL);
	}
	printf("%-32s %6zu bytes: ok\n", m->descriptor->name, n);
	free(a);
	free(b);
}

static uint8_t uuid[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

/* The session's metadata: clocks, event tables, host, VMs, options. */
static void test_session(void)
{
	Vmscope__Trace__ClockDesc clk = VMSCOPE__TRACE__CLOCK_DESC__INIT;
	clk.name = "local_clock"; clk.unit = "ns"; clk.ns_mul = 1; clk.ns_div = 1;
	clk.byte_order = VMSCOPE__TRACE__BYTE_ORDER__BYTE_ORDER_LITTLE;
	clk.ts_bits = 64; clk.monotonic = 1;

	Vmscope__Trace__FieldDesc f0 = VMSCOPE__TRACE__FIELD_DESC__INIT, f1 = f0;
	f0.name = "exit_reason"; f0.type = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_U32;
	f0.offset = 4; f0.size = 4;
	f1.name = "comm"; f1.type = VMSCOPE__TRACE__FIELD_TYPE__FIELD_TYPE_STR;
	f1.offset = 8; f1.size = 16;
	Vmscope__Trace__FieldDesc *fields[] = { &f0, &f1 };
	Vmscope__Trace__EventDesc ev = VMSCOPE__TRACE__EVENT_DESC__INIT;
	ev.id = 7; ev.name = "kvm_exit"; ev.system = "kvm"; ev.tracepoint = "kvm_exit";
	ev.format = "reason %u comm %s"; ev.payload_size = 24;
	ev.n_fields = 2; ev.fields = fields;
	Vmscope__Trace__EventDesc *evs[] = { &ev };

	Vmscope__Trace__Origin hostside = VMSCOPE__TRACE__ORIGIN__INIT;
	hostside.side = VMSCOPE__TRACE__SIDE__SIDE_GUEST; hostside.vm = 2; hostside.cpu = 1;
	hostside.channel = 2;
	Vmscope__Trace__EventTable tab = VMSCOPE__TRACE__EVENT_TABLE__INIT;
	tab.origin = &hostside; tab.ringbuf_abi = 1; tab.module_version = "0.1.0";
	tab.n_events = 1; tab.events = evs;

	Vmscope__Trace__KernelInfo kern = VMSCOPE__TRACE__KERNEL_INFO__INIT;
	kern.sysname = "Linux"; kern.release = "6.1.0-18-amd64";
	kern.version = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1"; kern.machine = "x86_64";
	kern.nr_cpus = 2;
	Vmscope__Trace__HostInfo hi = VMSCOPE__TRACE__HOST_INFO__INIT;
	hi.hostname = "testhost"; hi.machine_id = "0123456789abcdef";
	hi.kernel = &kern; hi.vmscope_version = "0.1.0";

	Vmscope__Trace__VcpuThread v0 = VMSCOPE__TRACE__VCPU_THREAD__INIT, v1 = v0;
	v0.vcpu = 1; v0.tid = 1234; v1.vcpu = 2; v1.tid = 1235;
	Vmscope__Trace__VcpuThread *vcpus[] = { &v0, &v1 };
	Vmscope__Trace__VmInfo vm = VMSCOPE__TRACE__VM_INFO__INIT;
	vm.name = "guest1"; vm.uuid.data = uuid; vm.uuid.len = 16;
	vm.qemu_pid = 1200; vm.vsock_cid = 3; vm.n_vcpus = 2; vm.vcpus = vcpus;
	vm.agent_connected = 1; vm.guest_kernel = &kern; vm.guest_clock = &clk;
	vm.guest_events = &tab;
	Vmscope__Trace__VcpuTsc ts0 = VMSCOPE__TRACE__VCPU_TSC__INIT;
	ts0.vcpu_id = 1; ts0.offset = (uint64_t)-5000000; ts0.ratio = 1ull << 48;
	ts0.frac_bits = 48;
	Vmscope__Trace__VcpuTsc *tscs[] = { &ts0 };
	vm.n_tsc = 1; vm.tsc = tscs;
	Vmscope__Trace__ClockSpan cs0 = VMSCOPE__TRACE__CLOCK_SPAN__INIT;
	cs0.cpu = 1; cs0.host_start_ns = 1000; cs0.host_end_ns = UINT64_MAX;
	cs0.seen = 3; cs0.guest_events = 17;
	Vmscope__Trace__ClockSpan *spans[] = { &cs0 };
	vm.n_clock_unreliable = 1; vm.clock_unreliable = spans;
	Vmscope__Trace__GuestModule gm = VMSCOPE__TRACE__GUEST_MODULE__INIT;
	gm.name = "kvm"; gm.addr = 0xffffffffc0000000ull; gm.size = 0x40000;
	Vmscope__Trace__GuestModule *gms[] = { &gm };
	uint64_t addr_delta[] = { 0xffffffff81000000ull, 0x40 };
	static uint8_t sym_names[] = "_stext\0write_port";
	Vmscope__Trace__GuestSymbols gsym = VMSCOPE__TRACE__GUEST_SYMBOLS__INIT;
	gsym.n_addr_delta = 2; gsym.addr_delta = addr_delta;
	gsym.names.data = sym_names; gsym.names.len = sizeof(sym_names);
	gsym.n_modules = 1; gsym.modules = gms;
	gsym.dropped = 3; gsym.note = "cut at 3 MiB";
	vm.guest_symbols = &gsym;
	Vmscope__Trace__VmInfo *vms[] = { &vm };

	char *evnames[] = { "kvm_exit", "kvm_entry" };
	char *argv[] = { "vmscope", "record", "--all" };
	Vmscope__Trace__Options opt = VMSCOPE__TRACE__OPTIONS__INIT;
	opt.n_events = 2; opt.events = evnames; opt.buffer_mode = 1;
	opt.subbuf_size = 65536; opt.nr_subbufs = 8; opt.duration_ns = 5000000000ull;
	opt.n_argv = 3; opt.argv = argv;
	char *keepnames[] = { "sync_t2", "sync_t3" };
	Vmscope__Trace__ChannelOptions ch0 = VMSCOPE__TRACE__CHANNEL_OPTIONS__INIT, ch1 = ch0;
	ch0.buffer_mode = 2; ch0.subbuf_size = 65536; ch0.nr_subbufs = 8;
	ch0.n_events = 1; ch0.events = evnames;	/* every field set, for the test */
	ch1.buffer_mode = 1; ch1.subbuf_size = 16384; ch1.nr_subbufs = 16;
	ch1.n_events = 2; ch1.events = keepnames;
	Vmscope__Trace__ChannelOptions *chans[] = { &ch0, &ch1 };
	opt.n_channels = 2; opt.channels = chans;

	Vmscope__Trace__ExitReasonSource xs = VMSCOPE__TRACE__EXIT_REASON_SOURCE__INIT;
	xs.mode = "direct"; xs.refused = "layout"; xs.why = "BTF vcpu_svm_vmcb 6560, built for 6552";
	xs.layout = "btf-mismatch"; xs.compared = 10000; xs.mismatches = 1;
	xs.direct_since_ts = 98132071000ull; xs.calibrations = 2; xs.fallbacks = 3;

	Vmscope__Trace__SessionMetadata sm = VMSCOPE__TRACE__SESSION_METADATA__INIT;
	sm.format_version = 1; sm.session_id.data = uuid; sm.session_id.len = 16;
	sm.host = &hi; sm.host_clock = &clk; sm.host_events = &tab;
	sm.n_vms = 1; sm.vms = vms; sm.start_realtime_ns = 1700000000000000000ull;
	sm.start_ts = 123; sm.stop_realtime_ns = 1700000005000000000ull;
	sm.stop_ts = UINT64_MAX; sm.options = &opt; sm.exit_reasons = &xs;
	Vmscope__Trace__SnapshotWindow sw = VMSCOPE__TRACE__SNAPSHOT_WINDOW__INIT;
	sw.kind = "stall"; sw.what = "running, preempted"; sw.dur_ns = 50412000;
	sw.threshold_ns = 20000000; sw.vcpu = 1; sw.task = "spin/412"; sw.host_task = "hog/977";
	sw.trigger_ts = 98132071000ull; sw.begin_ts = 93132071000ull;
	sw.end_ts = 100182483000ull; sw.recording = "/var/lib/vmscope/traces/web1/x/trace";
	sw.ended_early = 1; sw.guest_incomplete = 1; sw.guest_by_arrival = 2;
	sm.snapshot = &sw;
	roundtrip(&sm.base);
}

/* A stream's chunk and loss record, of @host0. */
static void test_stream(Vmscope__Trace__Origin *host0)
{
	uint8_t recs[64];
	for (unsigned i = 0; i < sizeof(recs); i++)
		recs[i] = (uint8_t)(i * 37);
	Vmscope__Trace__StreamChunk ch = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	ch.origin = host0; ch.seq = 42; ch.begin_ts = 1000; ch.end_ts = 2000;
	ch.lost_before = 5; ch.nr_records = 2; ch.records.data = recs;
	ch.records.len = sizeof(recs);
	/* a merged chunk's origins: a guest record, then a host one on no vCPU */
	uint64_t o_ts[2] = { 1ull << 40, 7 };
	uint32_t o_cpu[2] = { 1, 3 }, o_origin[2] = { 2, 0 }, o_vcpu1[2] = { 2, 0 };
	int32_t o_tid[2] = { -1, 4242 };
	Vmscope__Trace__RecordOrigins ro = VMSCOPE__TRACE__RECORD_ORIGINS__INIT;
	ro.n_orig_ts = ro.n_cpu = ro.n_tid = ro.n_origin = ro.n_vcpu = 2;
	ro.orig_ts = o_ts; ro.cpu = o_cpu; ro.tid = o_tid; ro.origin = o_origin;
	ro.vcpu = o_vcpu1;
	ch.origins = &ro;
	roundtrip(&ch.base);

	Vmscope__Trace__LossRecord lr = VMSCOPE__TRACE__LOSS_RECORD__INIT;
	lr.origin = host0; lr.kind = VMSCOPE__TRACE__LOSS_KIND__LOSS_KIND_SEQ_GAP;
	lr.events = 100; lr.subbufs = 2; lr.bytes = 131072; lr.begin_ts = 5;
	lr.end_ts = 6; lr.detail = "seq 40 -> 43";
	roundtrip(&lr.base);
}

/* A file's header, statistics, index and the trace's summary, of @host0. */
static void test_file(Vmscope__Trace__Origin *host0)
{
	Vmscope__Trace__FileHeader fh = VMSCOPE__TRACE__FILE_HEADER__INIT;
	fh.format_version = 1; fh.session_id.data = uuid; fh.session_id.len = 16;
	fh.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM; fh.origin = host0;
	fh.created_realtime_ns = 1; fh.writer = "vmscope 0.1.0";
	Vmscope__Trace__StreamCut cut = VMSCOPE__TRACE__STREAM_CUT__INIT;
	cut.seq = 1234; cut.lost_before = 56;
	fh.cut = &cut;
	roundtrip(&fh.base);

	Vmscope__Trace__StreamStats st = VMSCOPE__TRACE__STREAM_STATS__INIT;
	st.origin = host0; st.chunks = 1; st.records = 2; st.bytes = 3;
	st.lost_events = 4; st.lost_subbufs = 5; st.first_ts = 6; st.last_ts = 7;
	Vmscope__Trace__StreamStats *sts[] = { &st };
	Vmscope__Trace__Statistics stats = VMSCOPE__TRACE__STATISTICS__INIT;
	stats.realtime_ns = 9; stats.n_streams = 1; stats.streams = sts;
	stats.write_errors = 1; stats.bytes_written = 1 << 20;
	roundtrip(&stats.base);

	uint64_t offs[] = { 24, 9000 }, bts[] = { 1, 5 }, ets[] = { 4, 8 };
	Vmscope__Trace__FileIndex fi = VMSCOPE__TRACE__FILE_INDEX__INIT;
	fi.n_chunk_offset = 2; fi.chunk_offset = offs;
	fi.n_chunk_begin_ts = 2; fi.chunk_begin_ts = bts;
	fi.n_chunk_end_ts = 2; fi.chunk_end_ts = ets;
	fi.frames = 3; fi.bytes = 20000;
	roundtrip(&fi.base);

	Vmscope__Trace__FileSummary fs = VMSCOPE__TRACE__FILE_SUMMARY__INIT;
	fs.name = "host-cpu3.vtf"; fs.role = VMSCOPE__TRACE__FILE_ROLE__FILE_ROLE_STREAM;
	fs.origin = host0; fs.frames = 3; fs.bytes = 20000; fs.closed_cleanly = 1;
	Vmscope__Trace__FileSummary *fss[] = { &fs };
	Vmscope__Trace__Summary sum = VMSCOPE__TRACE__SUMMARY__INIT;
	sum.stop_realtime_ns = 2; sum.stop_ts = 3; sum.final_stats = &stats;
	sum.n_files = 1; sum.files = fss;
	Vmscope__Trace__InputAccount ia = VMSCOPE__TRACE__INPUT_ACCOUNT__INIT;
	ia.path = "trace"; ia.damaged = 1; ia.torn = 1; ia.corrupt = 2; ia.unreadable = 3;
	ia.bad = 4; ia.undecodable = 5; ia.inventory = 6; ia.metadata = 7; ia.no_summary = 1;
	ia.first_problem = "host-cpu0.vtf: corrupt"; ia.lost_events = 8; ia.gap_subbufs = 9;
	sum.input = &ia;
	roundtrip(&sum.base);
}

/* A default (empty) message must survive too: proto3 encodes nothing. */
static void test_empty(void)
{
	Vmscope__Trace__StreamChunk empty = VMSCOPE__TRACE__STREAM_CHUNK__INIT;
	CHECK(protobuf_c_message_get_packed_size(&empty.base) == 0);
	ProtobufCMessage *u = protobuf_c_message_unpack(
		&vmscope__trace__stream_chunk__descriptor, NULL, 0, (const uint8_t *)"");
	CHECK(u != NULL && ((Vmscope__Trace__StreamChunk *)u)->origin == NULL);
	if (u)
		protobuf_c_message_free_unpacked(u, NULL);
}

int main(void)
{
	/* common */
	Vmscope__Trace__Origin host0 = VMSCOPE__TRACE__ORIGIN__INIT;
	host0.side = VMSCOPE__TRACE__SIDE__SIDE_HOST; host0.vm = 1; host0.cpu = 3;
	host0.channel = 1;
	roundtrip(&host0.base);

	test_session();
	test_stream(&host0);
	test_file(&host0);
	test_empty();
	return check_result("test_roundtrip");
}
