# Helpers of the guest capture tests (tests/vm/tests/guest-*.sh source it).

# Guest: start `vmscope agent --port PORT ARGS...` in the background (its
# stderr in /vmtest/agent.err, its pid in $agent) and wait until it has
# connected to a receiver in the test host.
guest_agent_start() {
	_port=$1
	shift
	"$VMSCOPE" agent --port "$_port" -v "$@" 2>/vmtest/agent.err &
	agent=$!
	for _ in $(seq 600); do
		grep -q "connected to" /vmtest/agent.err && return 0
		sleep 0.2
	done
	fail "agent did not connect: $(cat /vmtest/agent.err)"
}
