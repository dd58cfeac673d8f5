# The built-in demo (scripts/demo): a test host with vmscope_host.ko runs a
# 2-vCPU KVM guest with vmscope_guest.ko; the guest issues clock-sync
# hypercalls on each vCPU and streams a message to the host over AF_VSOCK.
# It prints what each side saw. vmscope's own capture, merge and reports
# join this demo as they land; until then the host-side view of KVM comes
# from the kernel's ftrace, and says so.

TOKEN=0xd3e0

guest_main() {
	insmod "$GUEST_KO" || fail "insmod vmscope_guest"
	"$VMSCOPE" version
	guest_prepare_vsock
	for cpu in 0 1; do
		for seq in 1 2 3; do
			taskset -c "$cpu" "$VMSCOPE" sync-once --token "$TOKEN" --seq "$((cpu * 10 + seq))" ||
				fail "sync-once"
		done
	done | tee /vmtest/sync.txt
	printf 'hello from guest %s, %s vCPUs\n' "$(hostname)" "$(nproc)" >/run/msg.txt
	"$VSOCK_XFER" send 2 5000 /run/msg.txt
	rmmod vmscope_guest
}

host_main() {
	echo "== test host: kernel $(uname -r), $(nproc) vCPUs (QEMU TCG, AMD SVM)"
	insmod "$HOST_KO" || fail "insmod vmscope_host"
	"$VMSCOPE" version
	host_prepare_kvm
	echo 1 >"$TRACEFS/events/kvm/kvm_hypercall/enable"
	echo 1 >"$TRACEFS/events/kvm/kvm_exit/enable"
	echo 4096 >"$TRACEFS/buffer_size_kb"
	"$VSOCK_XFER" listen 5000 /run/msg.txt 180 >/run/listener.out 2>&1 &
	echo
	echo "== guest (2 vCPUs, vsock CID 3)"
	guest_run demo guest_main 2 3
	echo 0 >"$TRACEFS/tracing_on"
	wait
	echo
	echo "== host: AF_VSOCK listener"
	cat /run/listener.out
	echo "   message: $(cat /run/msg.txt)"
	echo
	echo "== host: vmscope sync hypercalls seen at KVM's kvm_hypercall tracepoint (ftrace)"
	nr=$(sed -n 's/^#define VMSCOPE_SYNC_HC_NR \(0x[0-9a-f]*\)UL$/\1/p' include/vmscope/sync_abi.h)
	grep "kvm_hypercall: nr $nr a0 $TOKEN" "$TRACEFS/trace" | sed 's/^ */   /'
	echo
	echo "== host: guest exits by reason, from ftrace's kvm_exit (buffer may have wrapped)"
	grep -o 'kvm_exit: vcpu [0-9]* reason [a-z_]*' "$TRACEFS/trace" |
		awk '{ n[$5]++ } END { for (r in n) printf "   %8d %s\n", n[r], r }' | sort -rn | head -n 12
	rmmod vmscope_host
}
