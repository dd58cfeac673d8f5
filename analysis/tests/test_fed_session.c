// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test `analysis-fed-session`: a fed walk (`top --pid`'s, whose
 * metadata predates the guest agents) charges a VM's exits before its
 * guest session began as a report of the recording does: "(before guest
 * session)", before the agent's hello as after it, until the guest CPU
 * names its task (cpu_task); not "(unknown task)".
 *
 * The session (scen_out_open_vms): VM 0 with its guest table in the
 * metadata (as a report of the finished recording reads it), VM 1
 * without (its agent not connected yet when the metadata was written).
 * Fed, each VM's vCPU 0: an exit; the hello's table for VM 1 (another
 * trace's guest table, as live.c takes a hello's); an exit; the guest's
 * cpu_task record ("worker", tid 77); an exit. Expected: VM 0 and VM 1
 * alike, before, before, worker. Then with a hello whose table has no
 * cpu_task (a guest module before ABI 0.4: it never says when its session
 * began, and a report of such a trace has every exit "(unknown task)"):
 * VM 1's exits unknown from that hello on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../tests/lib/check.h"
#include "../../tracefmt/tests/util.h"
#include "out.h"
#include "reader.h"
#include "scen.h"
#include "vmscope_events.h"
#include "walk.h"

#define N_EXITS 8

struct seen {
	int32_t task[2][N_EXITS];
	unsigned int n[2];
};

static void on_exit_hook(void *ctx, const struct an_exit *x)
{
	struct seen *s = ctx;

	if (x->vm < 2 && s->n[x->vm] < N_EXITS)
		s->task[x->vm][s->n[x->vm]++] = x->task;
}

/* Record @id of @ev fed at @ts from @origin (0 host, 1 + VM), @cpu, @tid. */
static void feed(struct an_walk *w, const struct an_hooks *h, const struct vr_events *ev,
		 unsigned int id, uint64_t ts, uint32_t origin, uint32_t cpu, int32_t tid,
		 const void *p, uint16_t size)
{
	struct vr_item it = { .kind = VR_EVENT, .ts = ts, .payload = p, .size = size };
	struct mo_origin o = { .orig_ts = ts, .cpu = cpu, .tid = tid, .origin = origin,
			       .vcpu = origin ? cpu : MO_NONE };

	if (ev->by_id[id] < 0) {
		fprintf(stderr, "FAIL: event %u not in the table\n", id);
		exit(1);
	}
	it.desc = &ev->desc[ev->by_id[id]];
	an_walk_feed(w, h, &it, &o);
}

/* One exit of VM @vm's vCPU 0 (thread 1000 * (vm + 1) + 1) at @ts. */
static void one_exit(struct an_walk *w, const struct an_hooks *h, const struct vr_events *host,
		     uint32_t vm, uint64_t ts)
{
	struct vmscope_ev_kvm_exit x = { .exit_reason = 0x72, .reason_valid = 1 };
	struct vmscope_ev_kvm_entry e = { 0 };
	int32_t tid = (int32_t)(1000 * (vm + 1) + 1);

	feed(w, h, host, VMSCOPE_EV_kvm_exit, ts, 0, vm, tid, &x, sizeof(x));
	feed(w, h, host, VMSCOPE_EV_kvm_entry, ts + 500, 0, vm, tid, &e, sizeof(e));
}

static void cpu_task(struct an_walk *w, const struct an_hooks *h, const struct vr_events *ev,
		     uint32_t vm, uint64_t ts)
{
	struct vmscope_ev_cpu_task t = { .pid = 77, .tgid = 77 };

	snprintf(t.comm, sizeof(t.comm), "worker");
	feed(w, h, ev, VMSCOPE_EV_cpu_task, ts, 1 + vm, 0, -1, &t, sizeof(t));
}

/* A session in @dir/in: 2 VMs of 1 vCPU; with @no_agent the last has no
 * guest table; with @abi03 the guests' tables are ABI 0.3's. */
static int session(const char *dir, bool no_agent, bool abi03)
{
	struct scen_out *o;
	int e = scen_out_open_vms(&o, dir, 2, 1, abi03, NULL, 0, no_agent);

	return e ? e : scen_out_close(o);
}

static struct vr_trace *open_in(const char *dir)
{
	char path[4096], err[256];
	struct vr_trace *t;

	snprintf(path, sizeof(path), "%s/in", dir);
	if (vr_trace_open(&t, path, err, sizeof(err))) {
		fprintf(stderr, "FAIL: %s: %s\n", path, err);
		exit(1);
	}
	return t;
}

/* The run described above with VM 1's hello table @hello; the tasks seen. */
static void run(const char *dir, const struct vr_events *hello, struct seen *s,
		char *worker, size_t len)
{
	struct an_hooks h = { .ctx = s, .exit = on_exit_hook };
	const struct vr_events *host, *g0;
	char path[4096], err[256];
	struct an_walk *w;
	uint64_t t = SCEN_H0 + 1000000;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/in", dir);
	if (an_walk_open_fed(&w, path, err, sizeof(err))) {
		fprintf(stderr, "FAIL: an_walk_open_fed: %s\n", err);
		exit(1);
	}
	host = vr_trace_events(an_walk_fed_trace(w), VMSCOPE__TRACE__SIDE__SIDE_HOST, 0);
	g0 = vr_trace_events(an_walk_fed_trace(w), VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0);
	EXPECT(host && g0, "the session's host and VM 0 tables");
	if (!host || !g0)
		exit(1);
	for (uint32_t vm = 0; vm < 2; vm++)
		one_exit(w, &h, host, vm, t + vm * 10000);
	EXPECT(!an_walk_vm_has_guest(w, 1), "VM 1 has a guest side before its hello");
	EXPECT(!an_walk_fed_guest_table(w, 1, hello), "VM 1's hello refused");
	t += 1000000;
	for (uint32_t vm = 0; vm < 2; vm++)
		one_exit(w, &h, host, vm, t + vm * 10000);
	t += 1000000;
	cpu_task(w, &h, g0, 0, t);
	if (hello->by_id[VMSCOPE_EV_cpu_task] >= 0)
		cpu_task(w, &h, hello, 1, t + 10000);
	t += 1000000;
	for (uint32_t vm = 0; vm < 2; vm++)
		one_exit(w, &h, host, vm, t + vm * 10000);
	an_walk_feed_end(w, &h);
	an_walk_task_label(w, s->task[1][2], worker, len);
	an_walk_close(w);
}

int main(void)
{
	char dir[2048], a[4096], b[4096], l[64];
	const struct vr_events *hello, *hello03;
	struct vr_trace *ta, *tb;
	struct seen s;
	int fd = tf_test_mkdir(dir, sizeof(dir));

	if (fd < 0)
		return 1;
	close(fd);
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	if (mkdir(a, 0700) || mkdir(b, 0700) || session(dir, true, false) || session(a, false, false) || session(b, false, true)) {
		fprintf(stderr, "FAIL: writing the sessions\n");
		return 1;
	}
	/* the hellos' tables: another session's VM 0 guest table */
	ta = open_in(a);
	tb = open_in(b);
	hello = vr_trace_events(ta, VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0);
	hello03 = vr_trace_events(tb, VMSCOPE__TRACE__SIDE__SIDE_GUEST, 0);
	EXPECT(hello && hello03 && hello->by_id[VMSCOPE_EV_cpu_task] >= 0 &&
	       hello03->by_id[VMSCOPE_EV_cpu_task] < 0,
	       "the hello tables: one with cpu_task, one (ABI 0.3) without");

	run(dir, hello, &s, l, sizeof(l));
	for (uint32_t vm = 0; vm < 2; vm++) {
		EXPECT(s.n[vm] == 3, "VM %u: %u exits, want 3", vm, s.n[vm]);
		EXPECT(s.task[vm][0] == AN_TASK_BEFORE && s.task[vm][1] == AN_TASK_BEFORE,
		       "VM %u: exits before its guest session charged to %d and %d, want "
		       "(before guest session) %d", vm, s.task[vm][0], s.task[vm][1],
		       AN_TASK_BEFORE);
		EXPECT(s.task[vm][2] >= 0, "VM %u: the exit after cpu_task charged to %d", vm,
		       s.task[vm][2]);
	}
	EXPECT(!strcmp(l, "worker") || !strncmp(l, "worker ", 7) || strstr(l, "worker"),
	       "VM 1's task after cpu_task: '%s'", l);
	EXPECT(!strcmp(an_task_placeholder(AN_TASK_BEFORE), "(before guest session)"),
	       "the label of AN_TASK_BEFORE: %s", an_task_placeholder(AN_TASK_BEFORE));

	/* a hello without cpu_task: no session start will come */
	run(dir, hello03, &s, l, sizeof(l));
	EXPECT(s.n[1] == 3 && s.task[1][0] == AN_TASK_BEFORE, "VM 1, ABI 0.3: before the hello %d",
	       s.task[1][0]);
	EXPECT(s.task[1][1] == AN_TASK_UNKNOWN && s.task[1][2] == AN_TASK_UNKNOWN,
	       "VM 1, ABI 0.3: after the hello %d, %d, want (unknown task) %d", s.task[1][1],
	       s.task[1][2], AN_TASK_UNKNOWN);
	EXPECT(s.task[0][0] == AN_TASK_BEFORE && s.task[0][2] >= 0, "VM 0 with ABI 0.3's VM 1");

	vr_trace_close(ta);
	vr_trace_close(tb);
	tf_test_rmdir(dir);
	return check_failures ? 1 : 0;
}
