// SPDX-License-Identifier: GPL-2.0
/*
 * The periodic clock-sync emitter: while enabled, every online CPU issues
 * one sync hypercall per period from a pinned hrtimer in hardirq context.
 * That is the cheapest place: no thread to wake, no context switch, and the
 * hypercall itself is the only exit the exchange costs.
 *
 * CPU hotplug goes through a dynamic cpuhp state whose callbacks run on the
 * CPU concerned, so a CPU coming online while enabled gets its timer and one
 * going offline cancels its own before the hrtimer code migrates anything.
 * Control paths hold vmscope_sync_lock and cpus_read_lock(), so enable and
 * disable never race a hotplug callback.
 */
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/kernel_stat.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/uaccess.h>
#include <asm/kvm_para.h>
#include <vmscope/ioctl.h>
#include <vmscope/kernel/cpu_report.h>
#include <vmscope/sync_abi.h>
#include "../kvm-probes/vmscope_events.h"
#include "../kvm-probes/kmod/clock_tsc.h"
#include "clock.h"
#include "record.h"
#include "sync_emitter.h"

#define VMSCOPE_SYNC_TIMER_MODE HRTIMER_MODE_REL_PINNED_HARD

/*
 * Written only by the timer of its own CPU (hardirq) or, while that timer
 * is stopped, by the control path; read on its own CPU through an IPI.
 */
struct vmscope_sync_cpu {
	struct hrtimer timer;
	u64 next_seq;
	u64 issued;
	u64 missed;
	u64 starts;
	u64 stops;
	unsigned int head;	/* next slot of samples[] to write */
	struct vmscope_sync_sample samples[VMSCOPE_SYNC_SAMPLES];
};

static DEFINE_PER_CPU(struct vmscope_sync_cpu, vmscope_sync_cpus);
static DEFINE_MUTEX(vmscope_sync_lock);
static bool vmscope_sync_on_kvm;
static int vmscope_sync_hp_state = -1;	/* dynamic cpuhp state, or < 0 */
/* Read by the timers without the lock: they stop re-arming once false. */
static bool vmscope_sync_enabled;
static u64 vmscope_sync_token;
static u64 vmscope_sync_period_ns = VMSCOPE_SYNC_PERIOD_DEFAULT_NS;

/*
 * Into the recording session's buffer, if any (hardirq context: the
 * session's grace period after unpublishing covers us).
 */
static void vmscope_sync_record(const struct vmscope_sync_sample *s,
				u64 tsc_a, u64 tsc_b, u64 steal_ns,
				unsigned int cpu, u64 missed)
{
	struct vmscope_ev_sync_guest e;

	if (!READ_ONCE(vmscope_guest_rec_route))
		return;
	e.t1 = s->t1;
	e.t4 = s->t4;
	e.token = vmscope_sync_token;
	e.seq = s->seq;
	e.ret = s->ret;
	e.tsc_a = tsc_a;
	e.tsc_b = tsc_b;
	e.steal_ns = steal_ns;
	e.cpu = cpu;
	e.missed = min_t(u64, missed, U32_MAX);
	vmscope_guest_record(VMSCOPE_EV_sync_guest, &e, sizeof(e));
}

static void vmscope_sync_issue(struct vmscope_sync_cpu *sc, unsigned int cpu)
{
	struct vmscope_sync_sample *s = &sc->samples[sc->head];
	u64 seq = sc->next_seq++;
	u64 t1, t4, tsc_a, tsc_b, steal;
	long ret;

	t1 = vmscope_clock_tsc(&tsc_a, &tsc_b);
	ret = kvm_hypercall4(VMSCOPE_SYNC_HC_NR, vmscope_sync_token, seq, t1,
			     cpu);
	t4 = vmscope_guest_clock();
	/*
	 * The steal time this CPU's kernel has accounted so far (what
	 * /proc/stat shows), not the raw paravirt clock: the report puts the
	 * guest's belief next to what the host saw. Only this CPU's tick
	 * writes it, and we run in hardirq context on this CPU.
	 */
	steal = READ_ONCE(kcpustat_this_cpu->cpustat[CPUTIME_STEAL]);

	s->seq = seq;
	s->t1 = t1;
	s->t4 = t4;
	s->ret = ret;
	sc->head = (sc->head + 1) % VMSCOPE_SYNC_SAMPLES;
	sc->issued++;
	vmscope_sync_record(s, tsc_a, tsc_b, steal, cpu, sc->missed);
}

static enum hrtimer_restart vmscope_sync_tick(struct hrtimer *timer)
{
	struct vmscope_sync_cpu *sc =
		container_of(timer, struct vmscope_sync_cpu, timer);
	u64 overruns;

	if (!READ_ONCE(vmscope_sync_enabled))
		return HRTIMER_NORESTART;
	vmscope_sync_issue(sc, smp_processor_id());
	/* Late ticks are counted, not caught up: one exchange per tick. */
	overruns = hrtimer_forward_now(timer,
				       ns_to_ktime(READ_ONCE(vmscope_sync_period_ns)));
	if (overruns > 1)
		sc->missed += overruns - 1;
	return HRTIMER_RESTART;
}

/* On @cpu itself: from the cpuhp thread bound to it, or from an IPI. */
static void vmscope_sync_start_on(unsigned int cpu)
{
	struct vmscope_sync_cpu *sc = per_cpu_ptr(&vmscope_sync_cpus, cpu);

	sc->starts++;
	hrtimer_start(&sc->timer,
		      ns_to_ktime(READ_ONCE(vmscope_sync_period_ns)),
		      VMSCOPE_SYNC_TIMER_MODE);
}

static void vmscope_sync_start_ipi(void *unused)
{
	vmscope_sync_start_on(smp_processor_id());
}

static void vmscope_sync_stop_on(unsigned int cpu)
{
	struct vmscope_sync_cpu *sc = per_cpu_ptr(&vmscope_sync_cpus, cpu);

	/* Waits for a running callback; a re-armed timer is then removed. */
	hrtimer_cancel(&sc->timer);
	sc->stops++;
}

static int vmscope_sync_cpu_online(unsigned int cpu)
{
	if (READ_ONCE(vmscope_sync_enabled))
		vmscope_sync_start_on(cpu);
	return 0;
}

static int vmscope_sync_cpu_offline(unsigned int cpu)
{
	if (READ_ONCE(vmscope_sync_enabled))
		vmscope_sync_stop_on(cpu);
	return 0;
}

static int vmscope_sync_enable(u64 period_ns, u64 *token)
{
	unsigned int cpu;

	if (!vmscope_sync_on_kvm) {
		pr_info_once("vmscope_guest: not running on KVM, no clock sync is possible\n");
		return -EOPNOTSUPP;
	}
	if (period_ns < VMSCOPE_SYNC_PERIOD_MIN_NS ||
	    period_ns > VMSCOPE_SYNC_PERIOD_MAX_NS)
		return -EINVAL;

	lockdep_assert_held(&vmscope_sync_lock);
	if (vmscope_sync_enabled)
		return -EBUSY;

	cpus_read_lock();
	/* Every timer is stopped here, so the per-CPU state is ours. */
	for_each_possible_cpu(cpu) {
		struct vmscope_sync_cpu *sc = per_cpu_ptr(&vmscope_sync_cpus, cpu);

		sc->next_seq = 1;
		sc->issued = 0;
		sc->missed = 0;
		sc->starts = 0;
		sc->stops = 0;
		sc->head = 0;
		memset(sc->samples, 0, sizeof(sc->samples));
	}
	vmscope_sync_token = get_random_u64();
	WRITE_ONCE(vmscope_sync_period_ns, period_ns);
	WRITE_ONCE(vmscope_sync_enabled, true);
	for_each_online_cpu(cpu)
		smp_call_function_single(cpu, vmscope_sync_start_ipi, NULL, 1);
	cpus_read_unlock();

	*token = vmscope_sync_token;
	return 0;
}

static void vmscope_sync_disable(void)
{
	unsigned int cpu;

	lockdep_assert_held(&vmscope_sync_lock);
	if (!vmscope_sync_enabled)
		return;
	cpus_read_lock();
	WRITE_ONCE(vmscope_sync_enabled, false);
	for_each_online_cpu(cpu)
		vmscope_sync_stop_on(cpu);
	cpus_read_unlock();
}

struct vmscope_sync_snap {
	struct vmscope_sync_emitter_state *st;
	struct vmscope_sync_cpu *sc;
};

/* Copies a CPU's state; on that CPU with interrupts off if it is online. */
static void vmscope_sync_snapshot(void *arg)
{
	struct vmscope_sync_snap *snap = arg;
	struct vmscope_sync_emitter_state *st = snap->st;
	struct vmscope_sync_cpu *sc = snap->sc;
	unsigned int i, n, first;

	st->issued = sc->issued;
	st->missed = sc->missed;
	st->starts = sc->starts;
	st->stops = sc->stops;
	n = min_t(u64, sc->issued, VMSCOPE_SYNC_SAMPLES);
	first = (sc->head + VMSCOPE_SYNC_SAMPLES - n) % VMSCOPE_SYNC_SAMPLES;
	for (i = 0; i < n; i++)
		st->samples[i] = sc->samples[(first + i) % VMSCOPE_SYNC_SAMPLES];
	st->nsamples = n;
}

static long vmscope_sync_state(void __user *arg)
{
	struct vmscope_sync_emitter_state *st;
	struct vmscope_sync_snap snap;
	unsigned int cpu;
	long ret = 0;

	st = vmscope_ioctl_cpu_report(arg, sizeof(*st), &cpu);
	if (IS_ERR(st))
		return PTR_ERR(st);
	snap.st = st;
	snap.sc = per_cpu_ptr(&vmscope_sync_cpus, cpu);
	st->nr_cpu_ids = nr_cpu_ids;
	st->token = vmscope_sync_token;
	st->period_ns = vmscope_sync_period_ns;
	if (vmscope_sync_enabled)
		st->flags |= VMSCOPE_SYNC_EMITTER_ENABLED;
	cpus_read_lock();
	if (cpu_online(cpu)) {
		st->flags |= VMSCOPE_SYNC_CPU_ONLINE;
		smp_call_function_single(cpu, vmscope_sync_snapshot, &snap, 1);
	} else {
		/* Its timer was cancelled when it went offline. */
		vmscope_sync_snapshot(&snap);
	}
	cpus_read_unlock();

	if (copy_to_user(arg, st, sizeof(*st)))
		ret = -EFAULT;
	kfree(st);
	return ret;
}

long vmscope_sync_emitter_ioctl(unsigned int cmd, void __user *arg)
{
	struct vmscope_sync_emitter_ctl ctl;
	long ret;

	mutex_lock(&vmscope_sync_lock);
	switch (cmd) {
	case VMSCOPE_IOC_SYNC_EMITTER_ENABLE:
		if (copy_from_user(&ctl, arg, sizeof(ctl))) {
			ret = -EFAULT;
			break;
		}
		ret = vmscope_sync_enable(ctl.period_ns, &ctl.token);
		if (!ret && copy_to_user(arg, &ctl, sizeof(ctl)))
			ret = -EFAULT;	/* still enabled: disable stops it */
		break;
	case VMSCOPE_IOC_SYNC_EMITTER_DISABLE:
		vmscope_sync_disable();
		ret = 0;
		break;
	case VMSCOPE_IOC_SYNC_EMITTER_STATE:
		ret = vmscope_sync_state(arg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&vmscope_sync_lock);
	return ret;
}

int vmscope_sync_emitter_init(bool on_kvm)
{
	unsigned int cpu;
	int ret;

	vmscope_sync_on_kvm = on_kvm;
	for_each_possible_cpu(cpu) {
		struct vmscope_sync_cpu *sc = per_cpu_ptr(&vmscope_sync_cpus, cpu);

		hrtimer_init(&sc->timer, CLOCK_MONOTONIC,
			     VMSCOPE_SYNC_TIMER_MODE);
		sc->timer.function = vmscope_sync_tick;
	}
	if (!on_kvm)
		return 0;
	/* Nothing to start yet: the emitter begins disabled. */
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					"vmscope/guest-sync:online",
					vmscope_sync_cpu_online,
					vmscope_sync_cpu_offline);
	if (ret < 0)
		return ret;
	vmscope_sync_hp_state = ret;
	return 0;
}

void vmscope_sync_emitter_exit(void)
{
	mutex_lock(&vmscope_sync_lock);
	vmscope_sync_disable();
	mutex_unlock(&vmscope_sync_lock);
	/* Teardown runs on each CPU, but the emitter is already disabled. */
	if (vmscope_sync_hp_state >= 0)
		cpuhp_remove_state(vmscope_sync_hp_state);
}
