# vmtest-timeout: 900
# `vmscope record --pid QEMU` while a guest runs port I/O and CPUID loops,
# then `vmscope dump`: the trace holds the host events, decoded through
# the descriptors stored in it; the number of kvm_exit records equals what
# the module says it wrote for that session (its `matched` counter, reset
# when record enabled probing) minus the losses the trace reports; every
# stream file ends cleanly with its index, the metadata with a summary;
# the VM's vCPU threads and name are in the metadata; a second record to
# the same folder is refused and leaves the trace as it was; a second
# recorder (every process, sched events) records beside it, with its own
# filter, without disturbing it.
# A vCPU hot-plugged while recording (QMP device_add; the guest starts
# with -smp 1,maxcpus=2, onlines it and runs a CPUID loop on it): record
# says it appeared with QEMU's thread "CPU 1/KVM", the metadata maps
# vCPU 1 to that thread, and its exits are in the trace.

PIO_N=${PIO_N:-10000}
CPUID_N=${CPUID_N:-10000}
TRACE=/tmp/trace-host
HOT_N=1000
CPU1=/sys/devices/system/cpu/cpu1

guest_main() {
	guest_exitloop_ready
	"$EXITLOOP" --pio "$PIO_N" >>/vmtest/loop.txt || fail "exitloop --pio"
	"$EXITLOOP" --cpuid "$CPUID_N" >>/vmtest/loop.txt || fail "exitloop --cpuid"
	# the vCPU the test host plugged in while recording
	wait_until 60 "cpu1 plugged in ($(ls /sys/devices/system/cpu))" test -e "$CPU1/online"
	echo 1 >"$CPU1/online" || fail "cannot online cpu1: $(ls /sys/devices/system/cpu)"
	taskset -c 1 "$EXITLOOP" --cpuid "$HOT_N" >>/vmtest/loop.txt || fail "exitloop --cpuid on cpu1"
	touch /vmtest/done
	wait_file /vmtest/bye
}

host_main() {
	# one vCPU now, room for a second, and QMP to plug it in
	VMTEST_GUEST_QEMU_ARGS="-smp 1,maxcpus=2 -qmp unix:/run/g1-qmp.sock,server=on,wait=off" \
		host_probed_guest g1 guest_main 1 3

	record_start --pid "$qpid" --buffer-size 8M -o "$TRACE"
	rec=$REC_PID
	# a second recorder beside the first, with its own filter and events
	# (every process, sched only); the first's exact count check below
	# would catch its probing touched
	"$VMSCOPE" record --all --events sched --duration 2 -o /tmp/other 2>/vmtest/second.err ||
		fail "a second record beside the first failed: $(cat /vmtest/second.err)"
	grep -q "another session is recording: the module's counters" /vmtest/second.err ||
		fail "second record: no note about the shared counters: $(cat /vmtest/second.err)"
	"$VMSCOPE" dump --summary /tmp/other >/vmtest/other.txt ||
		fail "dump --summary of the second trace: $(tail -n 5 /vmtest/other.txt)"
	other_sw=$(awk '$1 == "events" && $2 == "host" && $3 == "sched_switch" { print $4 }' /vmtest/other.txt)
	[ "${other_sw:-0}" -gt 0 ] || fail "the second trace has no sched_switch: $(cat /vmtest/other.txt)"
	grep -Eq '^events host kvm_' /vmtest/other.txt &&
		fail "the second trace (--events sched) has KVM events: $(grep '^events host kvm_' /vmtest/other.txt)"
	log "second recorder beside the first: $other_sw sched_switch, no KVM event"
	handed_check /vmtest/second.err /vmtest/other.txt sched_switch "second recorder"
	check "hot-plug vCPU 1" python3 "$VMTEST_REPO/tests/vm/lib/qmp-cpu-add.py" /run/g1-qmp.sock
	wait_until 60 "a thread CPU 1/KVM in QEMU after the hot-plug" \
		grep -qx 'CPU 1/KVM' /proc/"$qpid"/task/*/comm
	hot_tid=$(grep -lx 'CPU 1/KVM' /proc/"$qpid"/task/*/comm | cut -d/ -f5)
	wait_until 30 "record saying vCPU 1 appeared" grep -q 'vCPU 1 appeared' /vmtest/record.err
	grep -qx "vmscope record: VM 0 (g1): vCPU 1 appeared, thread $hot_tid" /vmtest/record.err ||
		fail "record did not name the new vCPU thread $hot_tid: $(cat /vmtest/record.err)"
	log "hot-plugged vCPU 1: QEMU's thread $hot_tid; record: $(grep 'vCPU 1 appeared' /vmtest/record.err)"
	touch "$gdir/go"
	wait_file "$gdir/done"
	# QEMU stopped: no kvm_exit of this VM between the stats and the stop
	vm_stop "$qpid"
	kill -INT "$rec"
	wait "$rec" || fail "record failed: $(cat /vmtest/record.err)"
	stats_json /vmtest/stats.json
	"$VMSCOPE" record --pid "$qpid" -o "$TRACE" 2>/vmtest/again.err &&
		fail "a second record into $TRACE succeeded"
	grep -q 'File exists.*never overwritten' /vmtest/again.err ||
		fail "second record: $(cat /vmtest/again.err)"
	kill -CONT "$qpid"
	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"
	log "$(cat /vmtest/record.err)"


	ls -l "$TRACE" >/vmtest/ls.txt
	"$VMSCOPE" dump --summary "$TRACE" >/vmtest/summary.txt ||
		fail "dump --summary failed: $(tail -n 5 /vmtest/summary.txt)"
	"$VMSCOPE" dump "$TRACE" >/vmtest/dump.txt || fail "dump failed"
	cat /vmtest/summary.txt

	matched=$(jq -r .events.kvm_exit.matched /vmtest/stats.json)
	rec_n=$(awk '$1 == "events" && $2 == "host" && $3 == "kvm_exit" { print $4 }' /vmtest/summary.txt)
	lost=$(sed -n 's/^total: .* \([0-9]*\) lost, .*/\1/p' /vmtest/summary.txt)
	log "kvm_exit: module wrote (matched) ${matched:-?}, trace has ${rec_n:-?}, trace reports lost ${lost:-?}"
	[ -n "$matched" ] && [ -n "$rec_n" ] && [ -n "$lost" ] || fail "could not read the counts"
	handed_check /vmtest/record.err /vmtest/summary.txt kvm_exit "first recorder"
	[ "$_h" = "$matched" ] || fail "alone, the session was handed $_h kvm_exit but the module matched $matched"
	grep -q ' 0 sub-buffers missing$' /vmtest/summary.txt ||
		fail "sub-buffers missing in discard mode: $(grep '^total' /vmtest/summary.txt)"
	[ "$matched" -ge $((PIO_N + CPUID_N)) ] || fail "module matched only $matched kvm_exit"
	if [ "$lost" -eq 0 ]; then
		[ "$rec_n" -eq "$matched" ] || fail "kvm_exit records $rec_n != matched $matched with no loss"
	else
		[ "$rec_n" -le "$matched" ] && [ "$rec_n" -ge $((matched - lost)) ] ||
			fail "kvm_exit records $rec_n outside [matched - lost, matched] = [$((matched - lost)), $matched]"
	fi
	grep -q '^total: [0-9]* streams ([0-9]* clean, 0 torn, 0 corrupt, 0 unreadable)' /vmtest/summary.txt ||
		fail "not every stream ended cleanly"
	n_streams=$(grep -c '^end of host-cpu[0-9]*\.vtf: clean end .*, indexed$' /vmtest/summary.txt)
	[ "$n_streams" -ge 1 ] || fail "no stream ends with its index"
	grep -q '^-- no summary frame' /vmtest/summary.txt && fail "metadata has no summary"
	grep -Eq "^vm 0: .* pid $qpid cid 3 vcpus 0:[0-9]+ 1:$hot_tid\$" /vmtest/summary.txt ||
		fail "VM facts missing (want vCPU 1 on thread $hot_tid): $(grep '^vm ' /vmtest/summary.txt)"
	nhot=$(grep -Ec ' kvm_exit: vcpu 1 reason 0x72 ' /vmtest/dump.txt)
	log "kvm_exit of the hot-plugged vCPU 1 with reason CPUID: $nhot"
	[ "$nhot" -ge "$HOT_N" ] || fail "only $nhot CPUID exits of vCPU 1, want $HOT_N or more"
	# events through their stored format: IOIO exits (SVM exit code 0x7b)
	# and the port I/O the guest loop does (port 0x80)
	grep -Eq '^[0-9]+\.[0-9]{9} host cpu[0-9]+ kvm_exit: vcpu 0 reason 0x7b rip 0x[0-9a-f]+ ' /vmtest/dump.txt ||
		fail "no IOIO kvm_exit line"
	grep -Eq ' kvm_pio: .*port 0x80' /vmtest/dump.txt || fail "no kvm_pio line for port 0x80: $(grep -m3 kvm_pio /vmtest/dump.txt)"
	grep -Eq ' kvm_entry: ' /vmtest/dump.txt || fail "no kvm_entry line"
	check "rmmod vmscope_host" rmmod vmscope_host
}
