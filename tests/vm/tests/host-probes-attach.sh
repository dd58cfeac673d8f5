# vmtest-timeout: 400
# Load order: vmscope_host loaded BEFORE kvm attaches to kvm's tracepoints
# when kvm_amd/kvm load (and its probes then fire for a guest), detaches when
# they are removed with vmscope_host still loaded, re-attaches on the next
# load, and the module unloads cleanly while kvm is loaded. Exit reasons:
# once calibration has switched them to the direct VMCB read, nothing of
# ours pins kvm, so kvm_amd and kvm unload while probing; loading them
# again calibrates again (on the perf path, which pins kvm.ko meanwhile).


guest_main() {
	# with the boot's exits, enough for calibration (10000 of 3 reasons)
	"$EXITLOOP" --pio 2000 --cpuid 2000 || fail "exitloop"
}

exit_mode() {	# exit_mode: where kvm_exit's details come from now
	stats_field .exit_mode.mode
}

attached() {	# attached EVENT: true/false
	stats_field ".events.$1.attached"
}

# state: "ENABLED KVM_ATTACHED SCHED_ATTACHED EXIT_REASONS", each true/false
state() {
	stats_field '.state | "\(.enabled) \(.kvm_attached) \(.sched_attached) \(.exit_reasons)"'
}

exit_reasons_on() {
	[ "$(stats_field .state.exit_reasons)" = true ]
}

mode_is() {	# mode_is MODE
	[ "$(exit_mode)" = "$1" ]
}

host_main() {
	for m in kvm_amd kvm; do
		! grep -q "^$m " /proc/modules || rmmod "$m" || fail "rmmod $m (preloaded)"
	done
	check "insmod vmscope_host before kvm" insmod "$HOST_KO"
	st=$(state)
	case $st in "false false true "*) ;; *) fail "unexpected state without kvm: $st" ;; esac
	[ "$(attached kvm_exit)" = false ] || fail "kvm_exit attached without kvm"
	[ "$(attached sched_switch)" = true ] || fail "sched_switch not attached"
	check "vmscope stats --start" "$VMSCOPE" stats --start --reset

	host_prepare_kvm
	wait_until 30 "exit-reason counters once kvm loaded" exit_reasons_on
	st=$(state)
	[ "$st" = "true true true true" ] || fail "kvm loaded after us, probes not attached: $st"
	stats_json /vmtest/stats-attached.json
	for e in kvm_exit kvm_entry kvm_cr kvm_page_fault kvm_hypercall kvm_pio kvm_mmio \
		kvm_msr kvm_inj_virq kvm_write_tsc_offset kvm_userspace_exit sync_t2 sync_t3; do
		[ "$(jq -r ".events.$e.attached" /vmtest/stats-attached.json)" = true ] ||
			fail "$e not attached after kvm loaded"
	done
	n=$(jq -r .kvm_attach_count /vmtest/stats-attached.json)
	[ "$n" = 1 ] || fail "attach count $n, want 1"
	dmesg | grep -q 'vmscope_host: attached to kvm' || fail "no attach message in dmesg"
	log "ok: attached when kvm loaded after vmscope_host"

	guest_run g1 guest_main 1 3
	stats_json /vmtest/stats-guest.json --last
	n=$(jq -r .events.kvm_exit.matched /vmtest/stats-guest.json)
	[ "$n" -gt 2000 ] || fail "only $n kvm_exit events for a guest that did 2000 port writes"
	jq -e '[.last[] | select(.event == "kvm_exit" and (.text | test("reason_valid 1")))] |
		length > 0' /vmtest/stats-guest.json >/dev/null ||
		fail "no kvm_exit with a reason: $(jq -c '[.last[] | select(.event == "kvm_exit")]' \
			/vmtest/stats-guest.json)"
	log "ok: late-attached probes counted $n kvm_exit events"

	# Calibrated: the exit details come from the VMCB and no perf counter
	# of ours is left, so nothing of ours pins kvm.ko while probing.
	wait_until 60 "calibration (exit mode direct) after the guest" mode_is direct
	"$VMSCOPE" stats --json | jq -c .exit_mode
	host_release_kvm	# kvm-hold's VM would pin kvm_amd, its perf event kvm
	check "rmmod kvm_amd while probing (direct)" rmmod kvm_amd
	check "rmmod kvm while probing (direct: no perf counter pins it)" rmmod kvm
	st=$(state)
	case $st in "true false true "*) ;; *) fail "still attached after kvm left: $st" ;; esac
	[ "$(attached kvm_exit)" = false ] || fail "kvm_exit still marked attached"
	n=$(stats_field .kvm_detach_count)
	[ "$n" = 1 ] || fail "detach count $n, want 1"
	dmesg | grep -q 'vmscope_host: detached from kvm' || fail "no detach message in dmesg"
	log "ok: kvm_amd and kvm unloaded while probing in direct mode"

	# Loaded again while probing: calibration again, on the perf path,
	# whose counters pin kvm.ko (rmmod kvm fails) until it has passed.
	check "modprobe kvm_amd (probing on)" modprobe kvm_amd
	wait_until 30 "calibration again after kvm_amd loaded again" mode_is calibrating
	stats_json /vmtest/stats-reload.json
	jq -c .exit_mode /vmtest/stats-reload.json
	[ "$(jq -r '"\(.exit_mode.mode) \(.exit_mode.calibrations)"' /vmtest/stats-reload.json)" = \
		"calibrating 2" ] ||
		fail "no second calibration after kvm_amd loaded again: $(jq -c .exit_mode \
			/vmtest/stats-reload.json)"
	n=$(jq -r .kvm_attach_count /vmtest/stats-reload.json)
	[ "$n" = 2 ] || fail "attach count $n, want 2"
	check "rmmod kvm_amd (calibrating)" rmmod kvm_amd
	if rmmod kvm 2>/vmtest/rmmod.err; then
		fail "kvm unloaded while calibration's perf counters on kvm_exit exist"
	fi
	log "ok: kvm is pinned while calibrating: $(cat /vmtest/rmmod.err)"
	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod kvm (probing stopped)" rmmod kvm
	n=$(stats_field .kvm_detach_count)
	[ "$n" = 2 ] || fail "detach count $n, want 2"
	log "ok: detached when kvm_amd and kvm were removed"

	check "modprobe kvm_amd again" modprobe kvm_amd
	[ "$(attached kvm_exit)" = true ] || fail "not re-attached"
	n=$(stats_field .kvm_attach_count)
	[ "$n" = 3 ] || fail "attach count $n, want 3"
	check "vmscope stats --start (kvm loaded)" "$VMSCOPE" stats --start
	check "rmmod vmscope_host while probing with kvm loaded" rmmod vmscope_host
	check "rmmod kvm_amd kvm after vmscope_host" rmmod kvm_amd kvm
	log "ok: re-attached on reload; unloads cleanly in either order"
}
