# vmtest-timeout: 1500
# Issue 5's reader benchmark, part 1 (in the test host): the same guest
# workload (a CPUID loop, one exit per iteration, RT_N iterations) recorded
# once by `vmscope record --events kvm` and once by `trace-cmd record` with
# the same KVM tracepoints, each to the test host's tmpfs, then copied to
# the results folder (build/vmtests/record-traces/) for part 2,
# bench/read-rate.sh, which times `vmscope dump` and `trace-cmd report`
# on them on this machine (reading time means something there, not under
# TCG).
# Run: tests/vm/run.sh --show bench/vm/record-traces.sh   (RT_N=iterations)

EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop
N=${RT_N:-300000}

guest_main() {
	for i in 1 2; do
		wait_file "/vmtest/go-$i"
		"$EXITLOOP" --cpuid "$N" >"/vmtest/rate-$i" || fail "exitloop"
		touch "/vmtest/done-$i"
	done
}

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	events=$("$VMSCOPE" list | awk '$2 ~ /^kvm:/ { printf "-e %s ", $2 }')
	[ -n "$events" ] || fail "no kvm events in vmscope list"
	mount -t tmpfs -o size=2000m tmpfs /tmp || fail "tmpfs on /tmp"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1

	record_start --all --events kvm --buffer-size 16M -o /tmp/rt-vmscope
	touch "$gdir/go-1"
	wait_file "$gdir/done-1"
	kill -INT "$REC_PID"
	wait "$REC_PID" || fail "vmscope record failed: $(tail -n 3 /vmtest/record.err)"

	# shellcheck disable=SC2086
	trace-cmd record -b 16384 $events -o /tmp/rt.dat >/tmp/rt-tc.out 2>&1 &
	tc=$!
	for _ in $(seq 600); do
		[ "$(cat "$TRACEFS/events/kvm/kvm_exit/enable")" = 1 ] &&
			[ "$(cat "$TRACEFS/tracing_on")" = 1 ] && break
		sleep 0.1
	done
	sleep 1
	touch "$gdir/go-2"
	wait_file "$gdir/done-2"
	kill -INT "$tc"
	wait "$tc" || fail "trace-cmd record failed: $(tail -n 3 /tmp/rt-tc.out)"
	guest_wait g1 600 || fail "guest failed"
	cat /tmp/rt-tc.out
	cp -r /tmp/rt-vmscope /tmp/rt.dat "$VMTEST_OUT/" || fail "copying the traces"
	log "vmscope: $(du -sh /tmp/rt-vmscope | cut -f1); trace-cmd: $(du -sh /tmp/rt.dat | cut -f1)"
	check "rmmod vmscope_host" rmmod vmscope_host
}
