# Self-test of the harness: a guest whose kernel log holds a WARNING must
# fail its test even though every script exited 0.
# vmtest-expect-fail: kernel log check failed
# vmtest-timeout: 180

guest_main() {
	echo "WARNING: CPU: 0 PID: 1 at vmscope-harness-self-test" >/dev/kmsg
}

host_main() {
	host_prepare_kvm
	guest_run g1 guest_main 1 3
}
