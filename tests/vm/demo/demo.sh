# The built-in demo (scripts/demo): a test host with vmscope_host.ko runs a
# 2-vCPU KVM guest with vmscope_guest.ko. `vmscope record` records the
# guest's KVM and scheduling events on the host and, through `vmscope
# agent` over vsock, the guest kernel's events, while the guest runs named
# tasks that make KVM exit (exit-io: port writes, exit-cpuid: CPUIDs) and a
# busy task (spinner) whose vCPU the host preempts for 200 ms with a
# SCHED_FIFO task (vmscope-hog). Then `vmscope merge` puts both sides on one
# timeline and the reports say which guest task caused which exits and who
# stalled whom; the merged trace is also written as a Perfetto trace.

. "$VMTEST_REPO/tests/vm/lib/agent.sh"

EXIT_TASKS=$VMTEST_BUILD/tests/vm/tools/exit-tasks
HOG=$VMTEST_BUILD/tests/vm/tools/hog

guest_main() {
	insmod "$GUEST_KO" || fail "insmod vmscope_guest"
	guest_prepare_vsock
	touch /vmtest/ready
	wait_file /vmtest/go
	guest_agent_start 5643 --flush-ms 50
	"$EXIT_TASKS" 2000 3000 || fail "exit-tasks"
	taskset -c 0 "$HOG" 3000 spinner /vmtest/spinning >/dev/null &
	spin=$!
	wait "$spin" || fail "spinner"
	guest_agent_finish
	rmmod vmscope_guest
}

host_main() {
	host_prepare_kvm	# first: it brings the test host's CPU 1 online
	echo "== test host: kernel $(uname -r), $(nproc) vCPUs (QEMU TCG, AMD SVM)"
	insmod "$HOST_KO" || fail "insmod vmscope_host"
	"$VMSCOPE" version
	echo
	echo "== guest: 2 vCPUs, vsock CID 3"
	guest_start demo guest_main 2 3
	gdir=$VMTEST_GUESTS/demo
	qpid=$(cat "$gdir/qemu.pid")
	wait_file "$gdir/ready"
	vcpu0=$(qemu_vcpu_tid "$qpid" 0)
	[ -n "$vcpu0" ] && taskset -pc 1 "$vcpu0" >/dev/null

	echo "== host: vmscope record --pid $qpid (host events, and the guest's through its agent)"
	record_start --pid "$qpid" --buffer-size 8M -o /tmp/demo-trace
	touch "$gdir/go"
	wait_file "$gdir/spinning"
	sleep 0.5
	"$HOG" 200 vmscope-hog - 1 >/run/hog.txt || fail "hog"
	echo "   a SCHED_FIFO task on the CPU of vCPU 0's thread: $(head -n 1 /run/hog.txt)"
	host_record_finish demo "$qpid"
	cat /vmtest/record.err
	echo
	echo "== host: vmscope merge (guest clock aligned to the host's from the sync exchanges)"
	"$VMSCOPE" merge -o /tmp/demo-merged /tmp/demo-trace >/run/merge.out 2>&1 ||
		fail "merge failed: $(tail -n 20 /run/merge.out)"
	grep -E 'segment|causality|merged' /run/merge.out | head -8
	echo
	echo "== host: vmscope report exits --by task (which guest task caused which exits)"
	"$VMSCOPE" report exits --by task --top 5 /tmp/demo-merged || fail "report exits"
	# every exit after the guest session's start has its guest task, but
	# for a real gap (a loss): fewer than 0.5% "(unknown task)"
	"$VMSCOPE" report exits --by task --json /tmp/demo-merged >/run/exits.json ||
		fail "report exits --json"
	python3 - /run/exits.json <<'PY' || fail "exits of an unknown task"
import json, sys
c = json.load(open(sys.argv[1]))["counts"]
after = c["exits"] - c["exits_before_session"]
print(f"   {c['exits_task_unknown']} of the {after} exits after the guest session's start "
      f"are of an unknown task ({c['exits_before_session']} came before it)")
sys.exit(0 if c["exits_task_unknown"] <= 0.005 * after else 1)
PY
	echo
	echo "== host: vmscope report sched (guest threads against the host's scheduling)"
	"$VMSCOPE" report sched --top 5 --tasks 10 /tmp/demo-merged || fail "report sched"
	echo
	# written in the test host's /tmp, then copied: the export's final
	# rename fails with EINVAL on the 9p results folder
	"$VMSCOPE" export --perfetto /tmp/demo-merged -o /tmp/demo.perfetto-trace ||
		fail "export --perfetto"
	cp /tmp/demo.perfetto-trace "$VMTEST_OUT/demo.perfetto-trace" || fail "copying the Perfetto trace"
	cp -r /tmp/demo-merged "$VMTEST_OUT/demo-merged" || fail "copying the merged trace"
	echo "== the Perfetto trace (open it in https://ui.perfetto.dev): build/vmtests/demo/demo.perfetto-trace"
	echo "== the merged trace, for more reports (vmscope report --help): build/vmtests/demo/demo-merged"
	rmmod vmscope_host
}
