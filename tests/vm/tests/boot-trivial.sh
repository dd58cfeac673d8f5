# The harness's own budget: test host plus one guest that runs a trivial
# program and powers off (issue budget: within 60 s on 2 cores).
guest_main() {
	echo "hello from the guest: $(uname -r), $(nproc) vCPU"
}

host_main() {
	host_prepare_kvm
	guest_run g1 guest_main 1 3
	grep -q "hello from the guest: $(uname -r), 1 vCPU" "$(guest_file g1 out)" ||
		fail "the guest's output is missing"
}
