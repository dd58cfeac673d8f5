# vmtest-timeout: 300
# A clock-sync hypercall issued by vmscope_guest.ko in the guest kernel
# reaches the test host's KVM: its kvm_hypercall tracepoint (ftrace) shows
# vmscope's reserved number with exactly the arguments the guest sent,
# fired on that guest's vCPU thread, and the guest gets KVM's -ENOSYS
# answer. Sync pairing: each such hypercall yields a sync_t2 record (host
# t2 at kvm_hypercall, with the guest's token, seq and t1) and a sync_t3
# record at the next kvm_entry of that vCPU thread, with t3 >= t2, on the
# guest's vCPU thread. (One guest run for both: they were two tests.)

SYNC_NR=$(sed -n 's/^#define VMSCOPE_SYNC_HC_NR \(0x[0-9a-f]*\)UL$/\1/p' include/vmscope/sync_abi.h)
TOKEN=0x5eed1234abcd

guest_main() {
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

host_main() {
	[ -n "$SYNC_NR" ] || fail "cannot read VMSCOPE_SYNC_HC_NR from include/vmscope/sync_abi.h"
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	check "vmscope stats --start" "$VMSCOPE" stats --start --reset
	echo 0 >"$TRACEFS/tracing_on"
	echo >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/events/kvm/kvm_hypercall/enable" || fail "cannot enable kvm_hypercall"
	echo 1 >"$TRACEFS/tracing_on"
	guest_run g1 guest_main 1 3
	echo 0 >"$TRACEFS/tracing_on"
	cp "$TRACEFS/trace" /vmtest/trace.txt
	check_ftrace
	"$VMSCOPE" stats --per-cpu --last >/vmtest/stats.txt
	cat /vmtest/stats.txt

	t2n=$(awk '$1 == "sync_t2" { print $4 }' /vmtest/stats.txt)
	t3n=$(awk '$1 == "sync_t3" { print $4 }' /vmtest/stats.txt)
	[ "$t2n" = 3 ] || fail "sync_t2 matched $t2n, want 3"
	[ "$t3n" = 3 ] || fail "sync_t3 matched $t3n, want 3"
	grep -q 'sync_collisions 0' /vmtest/stats.txt || fail "sync collisions reported"

	# The last exchange (seq 3): t2 and t3 recorded, t3 >= t2, same token.
	line=$(grep '^last sync_t3 ' /vmtest/stats.txt | grep ' seq 3 ') ||
		fail "no last sync_t3 record for seq 3"
	t2=$(echo "$line" | sed -n 's/.*: t2 \([0-9]*\) t3 \([0-9]*\) .*/\1/p')
	t3=$(echo "$line" | sed -n 's/.*: t2 \([0-9]*\) t3 \([0-9]*\) .*/\2/p')
	[ -n "$t2" ] && [ -n "$t3" ] || fail "cannot parse '$line'"
	[ "$t2" -gt 0 ] || fail "t2 is 0"
	[ "$t3" -ge "$t2" ] || fail "t3 $t3 < t2 $t2"
	echo "$line" | grep -q "token $TOKEN " || fail "token not carried: $line"
	l2=$(grep '^last sync_t2 ' /vmtest/stats.txt | grep " seq 3 ") || fail "no sync_t2 for seq 3"
	echo "$l2" | grep -q ": t2 $t2 " || fail "sync_t2's t2 differs from sync_t3's: $l2"
	g_t1=$(sed -n '3s/.* t1=\([0-9]*\) .*/\1/p' "$(guest_file g1 sync.txt)")
	echo "$l2" | grep -q " t1 $g_t1 " || fail "sync_t2 t1 is not the guest's t1 $g_t1: $l2"
	log "ok: seq 3 paired: t2 $t2, t3 $t3 (t3 - t2 = $((t3 - t2)) ns)"
	check "rmmod vmscope_host" rmmod vmscope_host
}
