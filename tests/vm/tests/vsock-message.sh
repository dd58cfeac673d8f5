# A guest sends 1 MiB of random bytes over AF_VSOCK; a listener in the test
# host receives them intact (same SHA-256) from the guest's CID.

PORT=5000

guest_main() {
	guest_prepare_vsock
	head -c 1048576 /dev/urandom >/run/msg.bin
	sha256sum </run/msg.bin >/vmtest/msg.sha256
	"$VSOCK_XFER" send 2 "$PORT" /run/msg.bin || fail "vsock-xfer send"
}

host_main() {
	host_prepare_kvm
	"$VSOCK_XFER" listen "$PORT" /run/recv.bin 180 >/run/listener.out 2>&1 &
	listener=$!
	guest_run g1 guest_main 1 3
	wait "$listener" || fail "listener failed: $(cat /run/listener.out)"
	cat /run/listener.out
	grep -q "^received 1048576 bytes from cid 3 " /run/listener.out ||
		fail "listener did not get 1048576 bytes from cid 3"
	sent=$(cat "$(guest_file g1 msg.sha256)")
	got=$(sha256sum </run/recv.bin)
	[ "$sent" = "$got" ] || fail "SHA-256 differs: sent $sent, received $got"
	log "ok: 1 MiB arrived intact ($got)"
}
