# vmtest-timeout: 400
# Load order: vmscope_host loaded BEFORE kvm attaches to kvm's tracepoints
# when kvm_amd/kvm load (and its probes then fire for a guest), detaches when
# they are removed with vmscope_host still loaded, re-attaches on the next
# load, and the module unloads cleanly while kvm is loaded. Exit reasons:
# once calibration has switched them to the direct VMCB read, nothing of
# ours pins kvm, so kvm_amd and kvm unload while probing; loading them
# again calibrates again (on the perf path, which pins kvm.ko meanwhile).

EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop

guest_main() {
	# with the boot's exits, enough for calibration (10000 of 3 reasons)
	"$EXITLOOP" --pio 2000 --cpuid 2000 || fail "exitloop"
}

exit_mode() {	# exit_mode: the mode on stats' exit_mode line
	"$VMSCOPE" stats | awk '$1 == "exit_mode" { print $2 }'
}

stat_field() {	# stat_field NAME: value after NAME on the counts line
	"$VMSCOPE" stats | awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'
}

attached() {	# attached EVENT: yes/no
	"$VMSCOPE" stats | awk -v e="$1" '$1 == e { print $2 }'
}

host_main() {
	for m in kvm_amd kvm; do
		! grep -q "^$m " /proc/modules || rmmod "$m" || fail "rmmod $m (preloaded)"
	done
	check "insmod vmscope_host before kvm" insmod "$HOST_KO"
	"$VMSCOPE" stats | grep -q '^state: disabled kvm-not-attached sched-attached' ||
		fail "unexpected state without kvm: $("$VMSCOPE" stats | head -n 1)"
	[ "$(attached kvm_exit)" = no ] || fail "kvm_exit attached without kvm"
	[ "$(attached sched_switch)" = yes ] || fail "sched_switch not attached"
	check "vmscope stats --start" "$VMSCOPE" stats --start --reset

	host_prepare_kvm
	for _ in $(seq 50); do
		"$VMSCOPE" stats | grep -q ' exit-reasons' && break
		sleep 0.2
	done
	"$VMSCOPE" stats | head -n 2
	"$VMSCOPE" stats | grep -q '^state: enabled kvm-attached sched-attached exit-reasons' ||
		fail "kvm loaded after us, probes not attached: $("$VMSCOPE" stats | head -n 1)"
	for e in kvm_exit kvm_entry kvm_cr kvm_page_fault kvm_hypercall kvm_pio kvm_mmio \
		kvm_msr kvm_inj_virq kvm_write_tsc_offset kvm_userspace_exit sync_t2 sync_t3; do
		[ "$(attached $e)" = yes ] || fail "$e not attached after kvm loaded"
	done
	[ "$(stat_field kvm_attach_count)" = 1 ] || fail "attach count $(stat_field kvm_attach_count), want 1"
	dmesg | grep -q 'vmscope_host: attached to kvm' || fail "no attach message in dmesg"
	log "ok: attached when kvm loaded after vmscope_host"

	guest_run g1 guest_main 1 3
	"$VMSCOPE" stats --last >/vmtest/stats-guest.txt
	n=$(awk '$1 == "kvm_exit" { print $4 }' /vmtest/stats-guest.txt)
	[ "$n" -gt 2000 ] || fail "only $n kvm_exit events for a guest that did 2000 port writes"
	grep -q '^last kvm_exit .*reason_valid 1' /vmtest/stats-guest.txt ||
		fail "no kvm_exit with a reason: $(grep '^last kvm_exit' /vmtest/stats-guest.txt)"
	log "ok: late-attached probes counted $n kvm_exit events"

	# Calibrated: the exit details come from the VMCB and no perf counter
	# of ours is left, so nothing of ours pins kvm.ko while probing.
	for _ in $(seq 100); do
		[ "$(exit_mode)" = direct ] && break
		sleep 0.2
	done
	"$VMSCOPE" stats | grep '^exit_mode'
	[ "$(exit_mode)" = direct ] ||
		fail "not calibrated after the guest: $("$VMSCOPE" stats | grep '^exit_mode')"
	host_release_kvm	# kvm-hold's VM would pin kvm_amd, its perf event kvm
	check "rmmod kvm_amd while probing (direct)" rmmod kvm_amd
	check "rmmod kvm while probing (direct: no perf counter pins it)" rmmod kvm
	"$VMSCOPE" stats | grep -q '^state: enabled kvm-not-attached sched-attached' ||
		fail "still attached after kvm left: $("$VMSCOPE" stats | head -n 1)"
	[ "$(attached kvm_exit)" = no ] || fail "kvm_exit still marked attached"
	[ "$(stat_field kvm_detach_count)" = 1 ] || fail "detach count $(stat_field kvm_detach_count), want 1"
	dmesg | grep -q 'vmscope_host: detached from kvm' || fail "no detach message in dmesg"
	log "ok: kvm_amd and kvm unloaded while probing in direct mode"

	# Loaded again while probing: calibration again, on the perf path,
	# whose counters pin kvm.ko (rmmod kvm fails) until it has passed.
	check "modprobe kvm_amd (probing on)" modprobe kvm_amd
	for _ in $(seq 50); do
		[ "$(exit_mode)" = calibrating ] && break
		sleep 0.2
	done
	"$VMSCOPE" stats | grep '^exit_mode'
	"$VMSCOPE" stats | grep -q '^exit_mode calibrating .* calibrations 2 ' ||
		fail "no second calibration after kvm_amd loaded again: $("$VMSCOPE" stats | grep '^exit_mode')"
	[ "$(stat_field kvm_attach_count)" = 2 ] || fail "attach count $(stat_field kvm_attach_count), want 2"
	check "rmmod kvm_amd (calibrating)" rmmod kvm_amd
	if rmmod kvm 2>/vmtest/rmmod.err; then
		fail "kvm unloaded while calibration's perf counters on kvm_exit exist"
	fi
	log "ok: kvm is pinned while calibrating: $(cat /vmtest/rmmod.err)"
	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod kvm (probing stopped)" rmmod kvm
	[ "$(stat_field kvm_detach_count)" = 2 ] || fail "detach count $(stat_field kvm_detach_count), want 2"
	log "ok: detached when kvm_amd and kvm were removed"

	check "modprobe kvm_amd again" modprobe kvm_amd
	[ "$(attached kvm_exit)" = yes ] || fail "not re-attached"
	[ "$(stat_field kvm_attach_count)" = 3 ] || fail "attach count $(stat_field kvm_attach_count), want 3"
	check "vmscope stats --start (kvm loaded)" "$VMSCOPE" stats --start
	check "rmmod vmscope_host while probing with kvm loaded" rmmod vmscope_host
	check "rmmod kvm_amd kvm after vmscope_host" rmmod kvm_amd kvm
	log "ok: re-attached on reload; unloads cleanly in either order"
}
