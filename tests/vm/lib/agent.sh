# Helpers of the guest capture tests (tests/vm/tests/guest-*.sh source it).

# Guest: wait until the agent whose stderr goes to ERRFILE has connected to
# a receiver in the test host.
guest_agent_wait_connected() {
	for _ in $(seq 600); do
		grep -q "connected to" "$1" && return 0
		sleep 0.2
	done
	fail "agent did not connect: $(cat "$1")"
}

# Guest: start `vmscope agent --port PORT ARGS...` in the background (its
# stderr in /vmtest/agent.err, its pid in $agent) and wait until it has
# connected to a receiver in the test host.
guest_agent_start() {
	_port=$1
	shift
	"$VMSCOPE" agent --port "$_port" -v "$@" 2>/vmtest/agent.err &
	agent=$!
	guest_agent_wait_connected /vmtest/agent.err
}

# Guest: DIR becomes a root file system with nothing in it but Debian's
# static busybox (/bin/busybox), the static agent (/bin/vmscope-agent) and
# the guest module's device node (/dev/vmscope-guest, same major:minor):
# the minimal guest the static agent is for. The module must be loaded.
guest_busybox_root() {
	_d=$1
	mkdir -p "$_d/bin" "$_d/dev"
	cp /bin/busybox "$_d/bin/busybox" || fail "no /bin/busybox (busybox-static)"
	cp "$VMTEST_BUILD/agent/vmscope-agent" "$_d/bin/vmscope-agent" || fail "no vmscope-agent"
	IFS=: read -r _maj _min </sys/class/misc/vmscope-guest/dev ||
		fail "no /sys/class/misc/vmscope-guest/dev"
	mknod "$_d/dev/vmscope-guest" c "$_maj" "$_min" || fail "mknod vmscope-guest"
}

# Guest, after its workload: stop the agent (it sends what is left and
# closes), say done, and wait for the host's bye. The pause first lets
# the clock sync (every 10 ms) make exchanges after the workload, so the
# trace's clock segments reach past its last events. A pause, not a
# check: reading the emitter's counters means an exec of vmscope, which
# costs a nested guest under TCG seconds per poll (20-40 s per test in
# the clean-clone run of 2026-12-07), more than the wait itself.
guest_agent_finish() {
	sleep 1
	kill -TERM "$agent"
	wait "$agent" || fail "agent exited with $?: $(cat /vmtest/agent.err)"
	touch /vmtest/done
	wait_file /vmtest/bye
}

# Host: host_record_finish NAME QPID: once guest NAME says done, stop
# `vmscope record` ($REC_PID, record_start) with the guest's QEMU paused,
# let the guest finish, and check that its agent had connected.
host_record_finish() {
	_gdir=$VMTEST_GUESTS/$1 _qpid=$2
	wait_file "$_gdir/done"
	vm_stop "$_qpid"
	kill -INT "$REC_PID"
	wait "$REC_PID" || fail "record failed: $(cat /vmtest/record.err)"
	kill -CONT "$_qpid"
	touch "$_gdir/bye"
	guest_wait "$1" 300 || fail "guest $1 failed"
	grep -q 'guest of VM 0 (cid 3) connected' /vmtest/record.err || fail "the agent never connected"
}

# Host: the thread id of vCPU N of QEMU QPID (its threads are named
# "CPU N/KVM": debug-threads=on), or nothing.
qemu_vcpu_tid() {
	for _t in /proc/"$1"/task/*; do
		[ "$(cat "$_t/comm")" = "CPU $2/KVM" ] && echo "${_t##*/}"
	done
}
