/*
 * The event table and the descriptor-driven decoder: every compiled-in
 * descriptor is self-consistent, payloads decode to the expected text, and
 * malformed descriptors (as could come from a damaged trace) are refused.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "events_compat.h"
#include "vmscope_events.h"

#include "../../tests/lib/check.h"

static void test_table_consistent(void)
{
	char why[128];

	for (unsigned int i = 0; i < VMSCOPE_NR_EVENTS; i++) {
		const struct vmscope_event_desc *d = &vmscope_event_descs[i];

		EXPECT(d->id == i, "%s: id %u at index %u", d->name, d->id, i);
		EXPECT(vmscope_desc_check(d, why, sizeof(why)) == 0, "%s", why);
		for (unsigned int j = 0; j < d->nr_fields; j++) {
			const struct vmscope_field_desc *f = &d->fields[j];
			unsigned int align = f->type == VMSCOPE_FT_str ? 1 : f->size;

			EXPECT(f->offset % align == 0, "%s.%s misaligned", d->name, f->name);
			if (j)
				EXPECT(f->offset == d->fields[j - 1].offset + d->fields[j - 1].size,
				       "%s.%s: hole before it", d->name, f->name);
		}
		for (unsigned int k = 0; k < i; k++)
			EXPECT(strcmp(d->name, vmscope_event_descs[k].name),
			       "duplicate event %s", d->name);
	}
}

static void test_decode_kvm_exit(void)
{
	struct vmscope_ev_kvm_exit e = {
		.vcpu_id = 1, .exit_reason = 0x7b, .guest_rip = 0xffffffff81000000ull,
		.info1 = 0x800010, .info2 = 0x42, .intr_info = 0, .error_code = 0,
		.isa = 2, .reason_valid = 1,
	};
	char buf[256];
	const char *want = "vcpu 1 reason 0x7b rip 0xffffffff81000000 info1 0x800010 "
		"info2 0x42 intr_info 0 error_code 0 isa 2 reason_valid 1";
	int n = vmscope_format_event(&vmscope_event_descs[VMSCOPE_EV_kvm_exit], &e,
				     sizeof(e), buf, sizeof(buf));

	EXPECT(n == (int)strlen(want) && !strcmp(buf, want), "got '%s'", buf);

	/* A short buffer truncates but reports the full length, like snprintf. */
	char small[10];
	n = vmscope_format_event(&vmscope_event_descs[VMSCOPE_EV_kvm_exit], &e,
				 sizeof(e), small, sizeof(small));
	EXPECT(n == (int)strlen(want) && strlen(small) == 9, "truncation: n=%d '%s'", n, small);

	/* A payload shorter than the descriptor says is refused. */
	EXPECT(vmscope_format_event(&vmscope_event_descs[VMSCOPE_EV_kvm_exit], &e,
				    sizeof(e) - 1, buf, sizeof(buf)) == -1, "short payload accepted");
}

static void test_decode_signed_and_strings(void)
{
	struct vmscope_ev_sched_switch s;
	char buf[256];

	memset(&s, 0, sizeof(s));
	s.prev_pid = 10; s.prev_tgid = 9; s.prev_state = 1; s.preempt = 0;
	s.next_pid = -1; s.next_tgid = 0; s.prev_prio = 120; s.next_prio = -1;
	memcpy(s.prev_comm, "CPU 0/KVM", 9);
	memset(s.next_comm, 'x', sizeof(s.next_comm));	/* unterminated */
	vmscope_format_event(&vmscope_event_descs[VMSCOPE_EV_sched_switch], &s,
			     sizeof(s), buf, sizeof(buf));
	EXPECT(!strcmp(buf, "prev 10/9 state 0x1 preempt 0 next -1/0 prio 120->-1 prev_comm CPU 0/KVM "
		       "next_comm xxxxxxxxxxxxxxxx"), "got '%s'", buf);
}

static void test_bad_descriptors(void)
{
	struct vmscope_event_desc d;
	char why[128];

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "val %%llx cr%%u");	/* one field unused */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "unused field accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "%%s %%u %%u");		/* %s on an integer */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "%%s on u64 accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "%%u %%u %%u %%u");	/* too many */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "extra conversion accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "%%llx %%q %%u");
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "%%q accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	d.fields[0].offset = (__u16)(d.payload_size - 4);		/* runs past the end */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "field past payload accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	d.fields[1].size = 8;						/* u32 of size 8 */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "size/type mismatch accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	d.nr_fields = VMSCOPE_MAX_FIELDS + 1;
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "too many fields accepted");

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	memset(d.format, 'a', sizeof(d.format));			/* unterminated */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "unterminated format accepted");

	/* widths that would make snprintf pad a gigabyte per event */
	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "%%llx %%1000000000u %%u");
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "huge width accepted");
	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "%%llx %%.256u %%u");
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == -1, "precision 256 accepted");
	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "%%0255llx %%-255.255u %%u");
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == 0, "width 255 refused: %s", why);

	d = vmscope_event_descs[VMSCOPE_EV_kvm_cr];
	snprintf(d.format, sizeof(d.format), "100%%%% %%llx cr%%u w%%u");	/* %% is literal */
	EXPECT(vmscope_desc_check(&d, why, sizeof(why)) == 0, "%%%% refused: %s", why);
}

/*
 * The ABI 0.3 table (events_compat.h): sync_guest exactly as 0.3 laid it
 * out (written down here from that release's events.def), every other
 * event unchanged, and it decodes.
 */
static void test_abi03_table(void)
{
	static const struct { const char *name; unsigned int off, size; } f03[] = {
		{ "t1", 0, 8 }, { "t4", 8, 8 }, { "token", 16, 8 }, { "seq", 24, 8 },
		{ "ret", 32, 8 }, { "tsc_a", 40, 8 }, { "tsc_b", 48, 8 }, { "cpu", 56, 4 },
		{ "missed", 60, 4 },
	};
	static struct vmscope_event_desc t[VMSCOPE_NR_EVENTS];
	const struct vmscope_event_desc *d = &t[VMSCOPE_EV_sync_guest];
	uint8_t p[64] = { 0 };
	uint64_t v = 7;
	uint32_t c = 3;
	char why[128], text[256];

	int n03 = vmscope_events_abi03(t);

	EXPECT(n03 == VMSCOPE_EV_cpu_task, "vmscope_events_abi03: %d events", n03);
	EXPECT(t[VMSCOPE_EV_cpu_task].name[0] == 0, "0.3 table has cpu_task");
	for (unsigned int i = 0; i < (unsigned int)n03; i++)
		if (i != VMSCOPE_EV_sync_guest)
			EXPECT(!memcmp(&t[i], &vmscope_event_descs[i], sizeof(t[i])),
			       "%s differs in the 0.3 table", t[i].name);
	EXPECT(d->payload_size == 64, "0.3 sync_guest: %u bytes", d->payload_size);
	EXPECT(d->nr_fields == 9, "0.3 sync_guest: %u fields", d->nr_fields);
	for (unsigned int i = 0; i < 9 && i < d->nr_fields; i++)
		EXPECT(!strcmp(d->fields[i].name, f03[i].name) &&
		       d->fields[i].offset == f03[i].off && d->fields[i].size == f03[i].size,
		       "0.3 sync_guest field %u: %s at %u (%u bytes)", i, d->fields[i].name,
		       d->fields[i].offset, d->fields[i].size);
	EXPECT(vmscope_desc_check(d, why, sizeof(why)) == 0, "0.3 sync_guest: %s", why);
	memcpy(p + 48, &v, 8);	/* tsc_b */
	memcpy(p + 56, &c, 4);	/* cpu */
	EXPECT(vmscope_format_event(d, p, sizeof(p), text, sizeof(text)) > 0 &&
	       !strcmp(text, "t1 0 t4 0 token 0 seq 0 ret 0 tsc_a 0 tsc_b 7 cpu 3 missed 0"),
	       "0.3 sync_guest decodes to '%s'", text);
}

int main(void)
{
	test_table_consistent();
	test_decode_kvm_exit();
	test_decode_signed_and_strings();
	test_bad_descriptors();
	test_abi03_table();
	return check_result("test_events");
}
