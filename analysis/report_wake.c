/*
 * The output of `vmscope report wake`: per vCPU, its halts and how they
 * ended (halt.h); per VM and vector, how long injected interrupts took to
 * reach the guest's handler (irqlat.h); as text tables or JSON (json-c).
 */
#include <inttypes.h>
#include <stdio.h>

#include <json-c/json.h>

#include "exits_json.h"
#include "halt.h"
#include "report.h"

static void on_wakeup(void *ctx, const struct an_wakeup *k)
{
	an_halt_add(&((struct report_wake *)ctx)->halt, k);
}

static void on_inject(void *ctx, const struct an_inject *j)
{
	an_irq_inject(&((struct report_wake *)ctx)->irq, j);
}

static void on_guest_vector(void *ctx, uint32_t vm, uint32_t cpu, uint64_t ts, uint32_t vector)
{
	an_irq_guest(&((struct report_wake *)ctx)->irq, vm, cpu, ts, vector);
}

static void on_loss(void *ctx, uint64_t ts)
{
	(void)ts;
	an_irq_loss(&((struct report_wake *)ctx)->irq);
}

static void on_end(void *ctx, uint64_t ts)
{
	(void)ts;
	an_irq_end(&((struct report_wake *)ctx)->irq);
}

int report_wake_init(struct report_wake *r, const struct an_walk *w)
{
	if (an_halt_init(&r->halt, w))
		return -1;
	if (an_irq_init(&r->irq, w)) {
		an_halt_free(&r->halt);
		return -1;
	}
	return 0;
}

void report_wake_hooks(struct report_wake *r, struct an_hooks *h)
{
	h->ctx = r;
	h->wakeup = on_wakeup;
	h->inject = on_inject;
	h->guest_vector = on_guest_vector;
	h->loss = on_loss;
	h->end = on_end;
}

void report_wake_free(struct report_wake *r)
{
	an_halt_free(&r->halt);
	an_irq_free(&r->irq);
}

static const char *vector_name(uint32_t v, char *buf, size_t len)
{
	const char *n = an_irq_vector_name(v);

	if (v >= AN_IRQ_VECTORS)
		snprintf(buf, len, "above 0xff");
	else if (n)
		snprintf(buf, len, "%#x %s", v, n);
	else
		snprintf(buf, len, "%#x", v);
	return buf;
}

static void irq_text(const struct an_walk *w, const struct an_irq *q)
{
	char b[4][32], name[40], t[64];

	printf("\ninterrupt delivery (host kvm_inj_virq -> the guest's handler entry of that "
	       "vector on that vCPU):\n");
	if (!an_walk_has_inject(w))
		printf("no kvm_inj_virq event in the trace's host table\n");
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		printf("VM %u %s%s\n", vm, an_walk_vm_name(w, vm),
		       an_walk_vm_has_vector(w, vm) ? "" :
		       ": no guest records of vectors (no agent, or a guest module before "
		       "ABI 1.3): none matched");
		printf("  %-27s %8s %8s %9s %7s %9s %9s %9s  %s\n", "vector", "injected", "matched",
		       "unmatched", "reinj.", "p50", "p99", "max", "slowest: vcpu, guest task, "
		       "injected at (host time)");
		for (uint32_t v = 0; v <= AN_IRQ_VECTORS; v++) {
			const struct an_irq_row *r = an_irq_row(q, vm, v);

			if (!r)
				continue;
			printf("  %-27s %8" PRIu64 " %8" PRIu64 " %9" PRIu64 " %7" PRIu64
			       " %9s %9s %9s", vector_name(v, name, sizeof(name)), r->injections,
			       r->matched, an_irq_unmatched(r), r->reinjections,
			       r->lat.count ? an_dur(an_hist_quantile(&r->lat, 0.5), b[0], 32) : "-",
			       r->lat.count ? an_dur(an_hist_quantile(&r->lat, 0.99), b[1], 32) : "-",
			       r->lat.count ? an_dur(r->lat.max, b[2], 32) : "-");
			if (r->lat.count)
				printf("  %u, %s, %" PRIu64 ".%09" PRIu64, r->worst_vcpu,
				       report_task(w, r->worst_task, t, sizeof(t)),
				       r->worst_ts / 1000000000, r->worst_ts % 1000000000);
			printf("\n");
			if (an_irq_unmatched(r) || r->guest_unmatched) {
				printf("  %-27s unmatched:", "");
				for (int k = 0; k < AN_IRQ_MISS_N; k++)
					if (r->unmatched[k])
						printf(" %s %" PRIu64, an_irq_miss_names[k],
						       r->unmatched[k]);
				if (r->guest_unmatched)
					printf("; guest handler entries without an injection %" PRIu64,
					       r->guest_unmatched);
				printf("\n");
			}
		}
	}
	printf("\ninjected: KVM's kvm_inj_virq records of the vector; matched: those whose\n"
	       "handler entry the guest recorded on the same vCPU (p50, p99, max: the time\n"
	       "between, in host time; it includes the guest's entry code and, for the timer,\n"
	       "its EOI); reinj.: deliveries KVM had to repeat; unmatched, by why: the vCPU's\n"
	       "next injection came first (the guest record is missing, or the clock\n"
	       "alignment's error put it after that; before_guest_records and\n"
	       "after_guest_records: before the vCPU's first guest vector record or after its\n"
	       "last, the guest not recording), a loss or the trace's end came first,\n"
	       "the vector has no guest tracepoint (device vectors: their guest handlers name\n"
	       "a Linux IRQ, not the vector), the VM has no guest records of vectors, a soft\n"
	       "interrupt (the guest's INT n). injected = matched + unmatched + reinj.\n");
}

void report_wake_text(const struct an_walk *w, const struct report_wake *rw)
{
	const struct an_halt *a = &rw->halt;
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
	irq_text(w, &rw->irq);
	report_clock_line(stdout, an_walk_counts(w));
}

/* {count, p50_ns, p99_ns, max_ns} of @h */
static json_object *lat_json(const struct an_hist *h)
{
	json_object *l = json_object_new_object();

	an_json_u64(l, "count", h->count);
	an_json_u64(l, "p50_ns", an_hist_quantile(h, 0.5));
	an_json_u64(l, "p99_ns", an_hist_quantile(h, 0.99));
	an_json_u64(l, "max_ns", h->max);
	return l;
}

static json_object *irq_json(const struct an_walk *w, const struct an_irq *q, uint32_t vm)
{
	json_object *rows = json_object_new_array();

	for (uint32_t v = 0; v <= AN_IRQ_VECTORS; v++) {
		const struct an_irq_row *r = an_irq_row(q, vm, v);
		json_object *o, *u;

		if (!r)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "vector", v < AN_IRQ_VECTORS ?
				       json_object_new_int((int)v) : NULL);
		json_object_object_add(o, "name", an_irq_vector_name(v) ?
				       json_object_new_string(an_irq_vector_name(v)) : NULL);
		an_json_u64(o, "injections", r->injections);
		an_json_u64(o, "matched", r->matched);
		an_json_u64(o, "unmatched", an_irq_unmatched(r));
		an_json_u64(o, "reinjections", r->reinjections);
		u = json_object_new_object();
		for (int k = 0; k < AN_IRQ_MISS_N; k++)
			an_json_u64(u, an_irq_miss_names[k], r->unmatched[k]);
		json_object_object_add(o, "unmatched_by", u);
		an_json_u64(o, "guest_without_injection", r->guest_unmatched);
		json_object_object_add(o, "latency", lat_json(&r->lat));
		if (r->lat.count) {
			json_object *x = json_object_new_object();

			json_object_object_add(x, "vcpu", json_object_new_int((int)r->worst_vcpu));
			json_object_object_add(x, "task", an_json_task(w, r->worst_task));
			an_json_u64(x, "injected_ns", r->worst_ts);
			an_json_u64(x, "latency_ns", r->lat.max);
			json_object_object_add(o, "slowest", x);
		} else {
			json_object_object_add(o, "slowest", NULL);
		}
		json_object_array_add(rows, o);
	}
	return rows;
}

json_object *report_wake_json(const char *path, const struct an_walk *w,
			      const struct report_wake *rw)
{
	const struct an_halt *a = &rw->halt;
	json_object *root = json_object_new_object(), *vms = json_object_new_array();

	an_json_trace(root, path, w);
	json_object_object_add(root, "has_wakeup_records",
			       json_object_new_boolean(an_halt_total(a) > 0));
	for (uint32_t vm = 0; vm < an_walk_nr_vms(w); vm++) {
		json_object *o = an_json_vm(w, vm), *cpus = json_object_new_array();

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
			e = lat_json(&v->entry);
			an_json_u64(e, "unknown", v->entry_unknown);
			json_object_object_add(j, "wake_to_entry", e);
			json_object_array_add(cpus, j);
		}
		json_object_object_add(o, "vcpus", cpus);
		json_object_object_add(o, "has_vector_records",
				       json_object_new_boolean(an_walk_vm_has_vector(w, vm)));
		json_object_object_add(o, "interrupts", irq_json(w, &rw->irq, vm));
		json_object_array_add(vms, o);
	}
	json_object_object_add(root, "vms", vms);
	report_clock_json(root, an_walk_counts(w));
	return root;
}
