# A clock-sync hypercall issued by vmscope_guest.ko in the guest kernel
# reaches the test host's KVM: its kvm_hypercall tracepoint shows vmscope's
# reserved number with exactly the arguments the guest sent, fired on that
# guest's vCPU thread, and the guest gets KVM's -ENOSYS answer.

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

host_main() {
	[ -n "$SYNC_NR" ] || fail "cannot read VMSCOPE_SYNC_HC_NR from include/vmscope/sync_abi.h"
	host_prepare_kvm
	echo 0 >"$TRACEFS/tracing_on"
	echo >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/events/kvm/kvm_hypercall/enable" || fail "cannot enable kvm_hypercall"
	echo 1 >"$TRACEFS/tracing_on"
	guest_run g1 guest_main 1 3
	echo 0 >"$TRACEFS/tracing_on"
	cp "$TRACEFS/trace" /vmtest/trace.txt

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
