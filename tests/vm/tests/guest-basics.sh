# vmtest-timeout: 600
# The basics that one test host and one guest boot can show together:
# - both modules load, create their root-only devices, answer the version
#   ioctl with this build's version, unload cleanly, three times each, and
#   user nobody is refused;
# - the guest runs a program and its output comes back (the harness's own
#   round trip);
# - 1 MiB of random bytes sent by the guest over AF_VSOCK reaches a listener
#   in the test host intact (same SHA-256) from the guest's CID;
# - a clock-sync hypercall issued by vmscope_guest.ko reaches the test
#   host's KVM: its kvm_hypercall tracepoint (ftrace) shows vmscope's
#   reserved number with exactly the arguments the guest sent, on that
#   guest's vCPU thread, and the guest gets KVM's -ENOSYS answer; each such
#   hypercall yields a sync_t2 record (host t2 at kvm_hypercall, with the
#   guest's token, seq and t1) and a sync_t3 record at the next kvm_entry
#   of that vCPU thread, with t3 >= t2.
# (They were four tests, each paying a test-host and a guest boot.)

SYNC_NR=$(sed -n 's/^#define VMSCOPE_SYNC_HC_NR \(0x[0-9a-f]*\)UL$/\1/p' include/vmscope/sync_abi.h)
TOKEN=0x5eed1234abcd
PORT=5000

# load_unload_cycle KO DEVICE SIDE
load_unload_cycle() {
	ko=$1 dev=$2 side=$3
	mod=$(basename "$ko" .ko)
	for i in 1 2 3; do
		check "insmod $mod (round $i)" insmod "$ko"
		check "$dev is a character device" test -c "$dev"
		perms=$(stat -c '%a %U' "$dev")
		[ "$perms" = "600 root" ] || fail "$dev has mode/owner '$perms', want '600 root'"
		# the version once: each command costs seconds in a nested guest
		if [ "$i" = 1 ]; then
			out=$("$VMSCOPE" version --require "$side") || fail "vmscope version --require $side: $out"
			echo "$out"
			release=$(sed -n 's/.*VMSCOPE_VERSION_STRING "\(.*\)"/\1/p' include/vmscope/version.h)
			echo "$out" | grep -Eq "^$side +module: $release \(ABI" ||
				fail "version output lacks '$side module: $release'"
			echo "$out" | grep -q "on kernel $(uname -r)\$" || fail "version output lacks the running kernel"
		fi
		check "rmmod $mod (round $i)" rmmod "$mod"
		[ ! -e "$dev" ] || fail "$dev still exists after rmmod"
	done
	# An unprivileged user must not get in.
	insmod "$ko" || fail "insmod $mod"
	if setpriv --reuid=65534 --regid=65534 --clear-groups "$VMSCOPE" version --require "$side" >/tmp/nobody.out 2>&1; then
		fail "user nobody could use $dev"
	fi
	grep -q "permission denied" /tmp/nobody.out || fail "nobody's error was: $(cat /tmp/nobody.out)"
	log "ok: user nobody is refused with: $(cat /tmp/nobody.out)"
	rmmod "$mod" || fail "rmmod $mod"
}

guest_main() {
	echo "hello from the guest: $(uname -r), $(nproc) vCPU"
	load_unload_cycle "$GUEST_KO" /dev/vmscope-guest guest

	guest_prepare_vsock
	head -c 1048576 /dev/urandom >/run/msg.bin
	sha256sum </run/msg.bin >/vmtest/msg.sha256
	"$VSOCK_XFER" send 2 "$PORT" /run/msg.bin || fail "vsock-xfer send"

	check "insmod vmscope_guest" insmod "$GUEST_KO"
	for seq in 1 2 3; do
		"$VMSCOPE" sync-once --token "$TOKEN" --seq "$seq" >>/vmtest/sync.txt ||
			fail "vmscope sync-once --seq $seq"
	done
	cat /vmtest/sync.txt
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

# What ftrace's kvm_hypercall saw of each of the guest's hypercalls.
check_ftrace() {
	sync_txt=$(guest_file g1 sync.txt)
	[ "$(wc -l <"$sync_txt")" -eq 3 ] || fail "the guest reported $(wc -l <"$sync_txt") hypercalls, want 3"
	while read -r line; do
		# cpu=0 token=0x... seq=N t1=N t4=N ret=N
		eval "$(echo "$line" | tr ' ' '\n' | sed 's/^/g_/')"
		[ "$g_ret" -eq -1000 ] || fail "seq $g_seq: the guest got $g_ret from the hypercall, want -1000 (-KVM_ENOSYS)"
		[ "$g_t4" -ge "$g_t1" ] || fail "seq $g_seq: t4 $g_t4 < t1 $g_t1"
		want=$(printf 'kvm_hypercall: nr %s a0 %s a1 0x%x a2 0x%x a3 0x%x' \
			"$SYNC_NR" "$g_token" "$g_seq" "$g_t1" "$g_cpu")
		hit=$(grep -F "$want" /vmtest/trace.txt) ||
			fail "no '$want' in the test host's trace (see trace.txt)"
		echo "$hit" | grep -q 'CPU 0/KVM' || fail "seq $g_seq fired on '$hit', not on the vCPU thread"
		log "ok: seq $g_seq seen by the test host: $hit"
	done <"$sync_txt"
}

# The records the host module made of the guest's three exchanges.
check_sync_records() {
	stats_json /vmtest/stats.json --per-cpu --last
	cat /vmtest/stats.json
	{ read -r t2n; read -r t3n; read -r coll; } <<EOF
$(jq -r '.events.sync_t2.matched, .events.sync_t3.matched, .sync_collisions' /vmtest/stats.json)
EOF
	[ "$t2n" = 3 ] || fail "sync_t2 matched $t2n, want 3"
	[ "$t3n" = 3 ] || fail "sync_t3 matched $t3n, want 3"
	[ "$coll" = 0 ] || fail "sync collisions reported: $coll"

	# The last exchange (seq 3): t2 and t3 recorded, t3 >= t2, same token.
	# last_text EVENT: the decoded payloads of EVENT's last records
	last_text() {
		jq -r --arg e "$1" '.last[] | select(.event == $e) | ": \(.text)"' /vmtest/stats.json
	}
	line=$(last_text sync_t3 | grep ' seq 3 ') || fail "no last sync_t3 record for seq 3"
	t2=$(echo "$line" | sed -n 's/.*: t2 \([0-9]*\) t3 \([0-9]*\) .*/\1/p')
	t3=$(echo "$line" | sed -n 's/.*: t2 \([0-9]*\) t3 \([0-9]*\) .*/\2/p')
	[ -n "$t2" ] && [ -n "$t3" ] || fail "cannot parse '$line'"
	[ "$t2" -gt 0 ] || fail "t2 is 0"
	[ "$t3" -ge "$t2" ] || fail "t3 $t3 < t2 $t2"
	echo "$line" | grep -q "token $TOKEN " || fail "token not carried: $line"
	l2=$(last_text sync_t2 | grep " seq 3 ") || fail "no sync_t2 for seq 3"
	echo "$l2" | grep -q ": t2 $t2 " || fail "sync_t2's t2 differs from sync_t3's: $l2"
	g_t1=$(sed -n '3s/.* t1=\([0-9]*\) .*/\1/p' "$(guest_file g1 sync.txt)")
	echo "$l2" | grep -q " t1 $g_t1 " || fail "sync_t2 t1 is not the guest's t1 $g_t1: $l2"
	log "ok: seq 3 paired: t2 $t2, t3 $t3 (t3 - t2 = $((t3 - t2)) ns)"
}

host_main() {
	[ -n "$SYNC_NR" ] || fail "cannot read VMSCOPE_SYNC_HC_NR from include/vmscope/sync_abi.h"
	load_unload_cycle "$HOST_KO" /dev/vmscope-host host

	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	check "vmscope stats --start" "$VMSCOPE" stats --start --reset
	echo 0 >"$TRACEFS/tracing_on"
	echo >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/events/kvm/kvm_hypercall/enable" || fail "cannot enable kvm_hypercall"
	echo 1 >"$TRACEFS/tracing_on"
	"$VSOCK_XFER" listen "$PORT" /run/recv.bin 300 >/run/listener.out 2>&1 &
	listener=$!
	guest_run g1 guest_main 1 3
	echo 0 >"$TRACEFS/tracing_on"
	cp "$TRACEFS/trace" /vmtest/trace.txt

	grep -q "hello from the guest: $(uname -r), 1 vCPU" "$(guest_file g1 out)" ||
		fail "the guest's output is missing"
	wait "$listener" || fail "listener failed: $(cat /run/listener.out)"
	cat /run/listener.out
	grep -q "^received 1048576 bytes from cid 3 " /run/listener.out ||
		fail "listener did not get 1048576 bytes from cid 3"
	sent=$(cat "$(guest_file g1 msg.sha256)")
	got=$(sha256sum </run/recv.bin)
	[ "$sent" = "$got" ] || fail "SHA-256 differs: sent $sent, received $got"
	log "ok: 1 MiB arrived intact ($got)"

	check_ftrace
	check_sync_records
	check "rmmod vmscope_host" rmmod vmscope_host
}
