# Sourced by vmscoped's shell tests (daemon-test.sh, daemon-metrics-test.sh):
# daemon_test_setup NAME makes $T (a fresh folder /var/tmp/NAME.XXXXXX,
# removed at exit with this test's fakes, QEMUs and daemon $dpid), the
# fake `vmscope` in it (its path names this test's processes), its
# libvirt pid folder and state folder, VMSCOPE_SOCKET, and no failures yet.
daemon_test_setup() {
	T=$(mktemp -d "/var/tmp/$1.XXXXXX")
	fails=0
	dpid=
	trap daemon_test_cleanup EXIT
	# meson's timeout is a SIGTERM: exit through the cleanup, which stops
	# the fakes (in the daemon's sessions, not this process group)
	trap 'exit 143' TERM INT
	export VMSCOPE_SOCKET=$T/run/vmscoped.sock
	cp "$(dirname "$0")/fake-vmscope" "$T/fake-vmscope"
	mkdir -p "$T/libvirt" "$T/state"
}
daemon_test_cleanup() {
	[ -n "$dpid" ] && kill -9 "$dpid" 2>/dev/null
	# only this test's fakes: their path is this test's own folder
	for p in $(pgrep -f "$T/fake-vmscope"); do kill -9 "$p" 2>/dev/null; done
	for p in $(cat "$T"/qemu.* 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
	rm -rf "$T"
}

ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
check() { desc=$1; shift; if "$@"; then ok "$desc"; else bad "$desc"; fi; }
# wait_for SECONDS CMD...: until CMD succeeds (generous limits: they cost
# nothing when it does, and a 2-core machine under sanitizers and VM tests
# is slow)
wait_for() {
	local n=$(($1 * 10)); shift
	while [ $n -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
	return 1
}
# qemu NAME: a fake QEMU process and its libvirt pid file
qemu() { sleep 1000 & echo $! >"$T/libvirt/$1.pid"; echo $! >"$T/qemu.$1"; }
# state_of NAME: its session's state in `vmscope session list`
state_of() { "$vmscope" session list | awk -v n="$1" '$1 == n { s = $2 } END { print s }'; }
is_state() { [ "$(state_of "$1")" = "$2" ]; }
# start_daemon [ARGS...]: vmscoped ($daemon) on this test's folders and
# fakes, with ARGS; its log in $T/daemon.log; returns once it answers
start_daemon() {
	# a port of its own: tests may run side by side, and vsock may be
	# missing here (the daemon then retries; the VM test has it)
	"$daemon" --socket "$VMSCOPE_SOCKET" --state-dir "$T/state" --pid-dir "$T/libvirt" \
		--vmscope "$T/fake-vmscope" --stop-timeout 5 --guest-port $((40000 + $$ % 20000)) \
		"$@" 2>>"$T/daemon.log" &
	dpid=$!
	wait_for 30 "$vmscope" daemon status >/dev/null
}
