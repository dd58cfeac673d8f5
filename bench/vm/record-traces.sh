# vmtest-timeout: 900
# Issue 5's reader benchmark, part 1 (in the test host): the same guest
# workload (a CPUID loop, one exit per iteration, RT_N iterations) recorded
# once by `vmscope record --all --events kvm` and once by `trace-cmd record` with
# the same KVM tracepoints, each to the test host's tmpfs, then copied to
# the results folder (build/vmtests/record-traces/) for part 2,
# bench/read-rate.sh, which times `vmscope dump` and `trace-cmd report`
# on them on this machine (reading time means something there, not under
# TCG). The collector's memory (1 M against 10 M events) is
# bench/vm/collector-rss.sh: CPUID exits (~150 us each under nested TCG)
# cannot make 10 M events in a test host's lifetime.
# Run: tests/vm/run.sh --show bench/vm/record-traces.sh   (RT_N: iterations)

N=${RT_N:-300000}

# The guest does not see the test host's RT_* (only job.env's VMTEST_*):
# the host writes each round's size next to its go file.
guest_main() {
	for i in 1 2; do
		wait_file "/vmtest/go-$i"
		n=$(cat "/vmtest/n-$i")
		[ "$n" -gt 0 ] && { "$EXITLOOP" --cpuid "$n" >"/vmtest/rate-$i" || fail "exitloop"; }
		touch "/vmtest/done-$i"
	done
}

go_round() {	# go_round I N: start guest round I of N iterations
	echo "$2" >"$gdir/n-$1"
	touch "$gdir/go-$1"
}

# vmscope_round I TRACE N: record guest round I (N iterations) into TRACE;
# sets V_EVENTS. Not in a subshell: its fail must end the benchmark.
vmscope_round() {
	record_start --all --events kvm --buffer-size 16M -o "$2"
	go_round "$1" "$3"
	wait_file "$gdir/done-$1"
	kill -INT "$REC_PID"
	wait "$REC_PID" || fail "vmscope record failed: $(tail -n 3 /vmtest/record.err)"
	V_EVENTS=$("$VMSCOPE" dump --summary "$2" | awk '$1 == "events" { n += $4 } END { print n + 0 }')
	[ "$V_EVENTS" -gt 0 ] || fail "round $1: no events in $2"
}

host_main() {
	# probe-cost numbers: no extra probes held on the tracepoints (tests/vm/lib/vmlib.sh)
	VMTEST_HOLD_TRACEPOINTS=0 host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	events=$("$VMSCOPE" list | awk '{ for (i = 2; i <= 3; i++) if ($i ~ /^kvm:kvm_/) printf "-e %s ", $i }')
	[ -n "$events" ] || fail "no kvm events in vmscope list"
	mount -t tmpfs -o size=2000m tmpfs /tmp || fail "tmpfs on /tmp"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1

	vmscope_round 1 /tmp/rt-vmscope "$N"
	log "vmscope record: $V_EVENTS events"

	# shellcheck disable=SC2086
	trace-cmd record -b 16384 $events -o /tmp/rt.dat >/tmp/rt-tc.out 2>&1 &
	tc=$!
	for _ in $(seq 600); do
		[ "$(cat "$TRACEFS/events/kvm/kvm_exit/enable")" = 1 ] &&
			[ "$(cat "$TRACEFS/tracing_on")" = 1 ] && break
		sleep 0.1
	done
	sleep 1
	go_round 2 "$N"
	wait_file "$gdir/done-2"
	kill -INT "$tc"
	wait "$tc" || fail "trace-cmd record failed: $(tail -n 3 /tmp/rt-tc.out)"
	cat /tmp/rt-tc.out
	cp -r /tmp/rt-vmscope /tmp/rt.dat "$VMTEST_OUT/" || fail "copying the traces"
	log "vmscope: $(du -sh /tmp/rt-vmscope | cut -f1); trace-cmd: $(du -sh /tmp/rt.dat | cut -f1)"
	rm -rf /tmp/rt-vmscope /tmp/rt.dat
	guest_wait g1 900 || fail "guest failed"
	check "rmmod vmscope_host" rmmod vmscope_host
}
