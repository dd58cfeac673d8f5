/*
 * The output of `vmscope report wake`: per vCPU, its halts and how they
 * ended (halt.h), as a text table or JSON (json-c).
 */
#include <inttypes.h>
#include <stdio.h>

#include <json-c/json.h>

#include "exits_json.h"
#include "halt.h"
#include "report.h"

void report_wake_text(const struct an_walk *w, const struct an_halt *a)
{
	char b[6][32];

	report_damage_line(w);
	if (!an_walk_has_wakeup(w))
		printf("no kvm_vcpu_wakeup records: the trace's host module had no such event "
		       "(before ABI 1.3), so no halt's end is known\n");
	else if (!an_halt_total(a))
		printf("no kvm_vcpu_wakeup records: no vCPU of the trace woke from a halt in KVM "
		       "(or the recording left the event out)\n");
	printf("halted vCPUs (host kvm_vcpu_wakeup, the end of each halt in KVM):\n");
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		printf("VM %u %s\n", vm, an_walk_vm_name(w, vm));
		printf("  %-5s %8s %10s %9s %9s %9s %10s %9s   %s\n", "vcpu", "thread", "halted",
		       "wake-ups", "polled", "slept", "polling", "p.unknown",
		       "wake-up -> entry: count, p50, p99, max, unknown");
		for (uint32_t c = 0; c < an_walk_nr_vcpus(w, vm); c++) {
			const struct an_halt_vcpu *v = an_halt_vcpu(a, vm, c);

			if (!v)
				continue;
			printf("  %-5u %8d %10s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %10s %9" PRIu64
			       "   %" PRIu64 ", %s, %s, %s, %" PRIu64 "\n", c,
			       an_walk_vcpu_tid(w, vm, c), an_dur(v->halted_ns, b[0], sizeof(b[0])),
			       v->wakeups, v->polled, v->slept,
			       an_dur(v->poll_ns, b[1], sizeof(b[1])), v->poll_unknown,
			       v->entry.count,
			       an_dur(an_hist_quantile(&v->entry, 0.5), b[2], sizeof(b[2])),
			       an_dur(an_hist_quantile(&v->entry, 0.99), b[3], sizeof(b[3])),
			       an_dur(v->entry.max, b[4], sizeof(b[4])), v->entry_unknown);
		}
	}
	printf("\nhalted: the vCPU's time in KVM's halt (from the HLT's handling to the wake-up,\n"
	       "polling included); polled: wake-ups that halt polling caught (the vCPU thread\n"
	       "never slept); slept: the thread slept until woken; polling: the time spent\n"
	       "polling (a polled halt's whole time; a slept one's until its thread went to\n"
	       "sleep, p.unknown when that switch is not in the trace); wake-up -> entry: from\n"
	       "the wake-up to the vCPU's next entry into the guest (unknown: a loss or the\n"
	       "trace's end came first)\n");
	report_clock_line(stdout, an_walk_counts(w));
}

json_object *report_wake_json(const char *path, const struct an_walk *w, const struct an_halt *a)
{
	json_object *root = json_object_new_object(), *vms = json_object_new_array();

	json_object_object_add(root, "trace", json_object_new_string(path));
	an_json_u64(root, "records", an_walk_counts(w)->records);
	an_json_u64(root, "losses", an_walk_counts(w)->losses);
	json_object_object_add(root, "has_wakeup_records",
			       json_object_new_boolean(an_halt_total(a) > 0));
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		json_object *o = json_object_new_object(), *cpus = json_object_new_array();

		json_object_object_add(o, "vm", json_object_new_int((int)vm));
		json_object_object_add(o, "name", json_object_new_string(an_walk_vm_name(w, vm)));
		for (uint32_t c = 0; c < an_walk_nr_vcpus(w, vm); c++) {
			const struct an_halt_vcpu *v = an_halt_vcpu(a, vm, c);
			json_object *j, *e;

			if (!v)
				continue;
			j = an_json_vcpu(w, vm, c);
			an_json_u64(j, "halted_ns", v->halted_ns);
			an_json_u64(j, "wakeups", v->wakeups);
			an_json_u64(j, "polled", v->polled);
			an_json_u64(j, "slept", v->slept);
			an_json_u64(j, "invalid", v->invalid);
			an_json_u64(j, "polling_ns", v->poll_ns);
			an_json_u64(j, "polling_unknown", v->poll_unknown);
			e = json_object_new_object();
			an_json_u64(e, "count", v->entry.count);
			an_json_u64(e, "p50_ns", an_hist_quantile(&v->entry, 0.5));
			an_json_u64(e, "p99_ns", an_hist_quantile(&v->entry, 0.99));
			an_json_u64(e, "max_ns", v->entry.max);
			an_json_u64(e, "unknown", v->entry_unknown);
			json_object_object_add(j, "wake_to_entry", e);
			json_object_array_add(cpus, j);
		}
		json_object_object_add(o, "vcpus", cpus);
		json_object_array_add(vms, o);
	}
	json_object_object_add(root, "vms", vms);
	report_clock_json(root, an_walk_counts(w));
	return root;
}
