# The built-in demo (scripts/demo): a test host with vmscope_host.ko runs a
# 2-vCPU KVM guest with vmscope_guest.ko. While `vmscope capture` records
# that guest's KVM events from the host module's ring buffers, the guest
# runs the periodic clock-sync emitter, makes KVM exit with port I/O and
# CPUID, and sends a message to the host over AF_VSOCK. Each side prints
# what it saw. Merged guest+host timelines and reports join this demo as
# they land.

EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop


guest_main() {
	insmod "$GUEST_KO" || fail "insmod vmscope_guest"
	guest_prepare_vsock
	touch /vmtest/ready
	wait_file /vmtest/go
	"$VMSCOPE" sync-emitter start --period 10ms || fail "sync-emitter start"
	"$EXITLOOP" --pio 5000 || fail "exitloop --pio"
	"$EXITLOOP" --cpuid 5000 || fail "exitloop --cpuid"
	"$VMSCOPE" sync-emitter stop || fail "sync-emitter stop"
	"$VMSCOPE" sync-emitter status
	printf 'hello from the guest, %s vCPUs\n' "$(nproc)" >/run/msg.txt
	"$VSOCK_XFER" send 2 5000 /run/msg.txt
	rmmod vmscope_guest
}

host_main() {
	echo "== test host: kernel $(uname -r), $(nproc) vCPUs (QEMU TCG, AMD SVM)"
	insmod "$HOST_KO" || fail "insmod vmscope_host"
	"$VMSCOPE" version
	host_prepare_kvm
	"$VSOCK_XFER" listen 5000 /run/msg.txt 300 >/run/listener.out 2>&1 &
	echo
	echo "== guest: 2 vCPUs, vsock CID 3"
	guest_start demo guest_main 2 3
	gdir=$VMTEST_GUESTS/demo
	qpid=$(cat "$gdir/qemu.pid")
	wait_file "$gdir/ready"
	"$VMSCOPE" capture --pid "$qpid" --subbufs-shift 7 >/run/capture.txt 2>/run/capture.err &
	cap=$!
	for _ in $(seq 300); do
		grep -q '^capture: recording' /run/capture.err && break
		sleep 0.2
	done
	touch "$gdir/go"
	guest_wait demo 600 || fail "the guest failed"
	kill -INT "$cap"
	wait "$cap" || fail "capture failed: $(cat /run/capture.err)"
	wait
	echo
	echo "== host: AF_VSOCK listener"
	cat /run/listener.out
	echo "   message: $(cat /run/msg.txt)"
	echo
	echo "== host: vmscope capture of the guest's QEMU (pid $qpid), from the ring buffers"
	cat /run/capture.err /run/capture.txt
	echo
	echo "== host: sync exchanges paired by vmscope_host (t2 at kvm_hypercall, t3 at the next kvm_entry)"
	"$VMSCOPE" stats | grep -E '^(state|sync_t2|sync_t3)' || true
	rmmod vmscope_host
}
