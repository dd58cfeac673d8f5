# vmtest-timeout: 240
# The harness's guard against the TCG jump-label defect (README.md, "Known
# TCG defect"): host_prepare_kvm must leave kvm-hold running (a
# deterministic check), and with it creating and destroying VMs while both
# test-host CPUs context-switch hard and vmscope_host probes must not hang
# the test host. The second part is a probabilistic detector only: without
# the hold, 300-VM loops (VMs without vCPUs then) hung in 5 of 5 runs (3 at
# the first VM), but a 60-VM loop once passed without it (load 10). Each VM
# here also gets an irqchip and a vCPU, so the APIC keys would flip too.
# It also exercises the probes while KVM creates and destroys VMs, and
# checks that the tracepoints vmscope_host probes are held by two other
# probes (so attaching ours patches no code).
N=60

host_main() {
	host_prepare_kvm
	[ -n "${VMTEST_KVM_HOLD_PID:-}" ] && kill -0 "$VMTEST_KVM_HOLD_PID" ||
		fail "kvm-hold is not running"
	# and the tracepoint holds: ftrace's in its instance, perf's in kvm-hold
	for tp in kvm/kvm_exit kvm/kvm_entry sched/sched_switch sched/sched_waking; do
		[ "$(cat "$TRACEFS/instances/vmtest-hold/events/$tp/enable")" = 1 ] ||
			fail "ftrace does not hold $tp"
	done
	n=$(find "/proc/$VMTEST_KVM_HOLD_PID/fd" -lname 'anon_inode:*perf_event*' | wc -l)
	[ "$n" -ge 15 ] || fail "kvm-hold holds $n perf events, not one per host tracepoint"
	check "insmod vmscope_host" insmod "$HOST_KO"
	check "probe everything" "$VMSCOPE" stats --start --reset
	# Two pipe ping-pong pairs keep both CPUs in finish_task_switch().
	python3 "$VMTEST_REPO/tests/vm/tools/pingpong-vms.py" "$N" >/vmtest/cycles.txt ||
		fail "VM create/destroy cycles: $(tail -n 3 /vmtest/cycles.txt)"
	tail -n 1 /vmtest/cycles.txt
	grep -q "^done $N " /vmtest/cycles.txt || fail "not all $N cycles ran"
	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod vmscope_host" rmmod vmscope_host
}
