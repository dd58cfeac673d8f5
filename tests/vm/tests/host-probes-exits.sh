# vmtest-timeout: 900
# The host module's kvm_exit probe sees every exit of a guest: while the
# guest runs port I/O and CPUID loops, the module's matched kvm_exit count
# for that QEMU process equals KVM's own exits counter over the same window
# (both read with the VM stopped, so the window is exact) within 1%, and the
# exit reasons are the expected ones (SVM IOIO 0x7b for port 0x80, CPUID
# 0x72). The exit details come from the perf path until calibration
# (kvm-probes/kmod/exit_direct.c) has compared the direct VMCB read with
# KVM's record, then from the VMCB: the window spans that switch, and the
# sampled reasons are read in direct mode. Then, with the same guest:
# verify mode compares every exit of a workload (0 mismatches); a wrong
# BTF offset passed by the ioctl is refused (perf, reasons still right);
# a skewed VMCB offset (test-only module parameter) fails calibration
# (perf for good, mismatches counted and logged, reasons still right).
# Last, per-session event selection (`vmscope stats --start --events
# LIST`; a test of its own before, folded here for its guest boot): the
# module loaded afresh, a misspelt event name is refused before anything
# starts; the guest does 2 000 port writes twice, once per selection (the
# host changes it between): the events left out are never counted as
# matched (nor recorded), the chosen ones are; kvm_exit's perf counters
# exist only while kvm_exit is selected.

PIO_N=${PIO_N:-10000}
CPUID_N=${CPUID_N:-10000}

guest_main() {
	guest_exitloop_ready
	# Each loop runs until the host has sampled the exit reasons it causes.
	touch /vmtest/phase-pio
	while [ ! -e /vmtest/stop-pio ]; do
		# a few CPUID exits too: calibration wants 3 distinct reasons
		"$EXITLOOP" --pio "$PIO_N" --cpuid 64 >>/vmtest/loop.txt || fail "exitloop --pio"
	done
	touch /vmtest/phase-cpuid
	while [ ! -e /vmtest/stop-cpuid ]; do
		"$EXITLOOP" --cpuid "$CPUID_N" >>/vmtest/loop.txt || fail "exitloop --cpuid"
	done
	touch /vmtest/done
	# verify mode: one workload, every exit compared
	wait_file /vmtest/go-verify
	"$EXITLOOP" --pio "$PIO_N" --cpuid "$CPUID_N" >>/vmtest/loop-verify.txt ||
		fail "exitloop (verify)"
	touch /vmtest/done-verify
	# the faults: port writes until the host has sampled their reason
	for p in layout skew; do
		wait_file "/vmtest/go-$p"
		touch "/vmtest/phase-$p"
		while [ ! -e "/vmtest/stop-$p" ]; do
			"$EXITLOOP" --pio "$PIO_N" >>"/vmtest/loop-$p.txt" || fail "exitloop ($p)"
		done
		touch "/vmtest/done-$p"
	done
	# event selection: port writes once per selection
	for p in select1 select2; do
		wait_file "/vmtest/go-$p"
		"$EXITLOOP" --pio 2000 >/dev/null || fail "exitloop ($p)"
		touch "/vmtest/done-$p"
	done
	# Stay up (few exits) until the host has taken its last reading.
	wait_file /vmtest/bye
	cat /vmtest/loop.txt
}


# kvm_exit's record layout as exit_reason.c reads it must be tracefs's.
check_exit_format() {
	fmt=$TRACEFS/events/kvm/kvm_exit/format
	for f in "unsigned int exit_reason;	offset:8;	size:4" \
		"unsigned long guest_rip;	offset:16;	size:8" \
		"u64 info1;	offset:32;	size:8" "u64 info2;	offset:40;	size:8" \
		"u32 intr_info;	offset:48;	size:4" "u32 error_code;	offset:52;	size:4" \
		"unsigned int vcpu_id;	offset:56;	size:4"; do
		grep -qF "field:$f" "$fmt" || fail "kvm_exit format lacks 'field:$f' (exit_reason.c's layout is stale):
$(cat "$fmt")"
	done
	log "ok: kvm_exit's tracefs format matches the layout exit_reason.c reads"
}

# reading PID: prints "<kvm exits> <module matched kvm_exit>" with QEMU stopped.
reading() {
	vm_stop "$1"
	exits=$(kvm_exits "$1")
	matched=$(stats_field .events.kvm_exit.matched)
	kill -CONT "$1"
	echo "$exits $matched"
}

# exit_mode FIELD: a field of stats' exit_mode ("mode" for the mode)
exit_mode() {
	stats_field ".exit_mode.$1"
}

mode_is() {	# mode_is MODE
	[ "$(exit_mode mode)" = "$1" ]
}

# exit_mode_json [FILE]: the exit_mode object on one line (of FILE, a
# saved stats --json, or now)
exit_mode_json() {
	if [ $# -gt 0 ]; then
		jq -c .exit_mode "$1"
	else
		"$VMSCOPE" stats --json | jq -c .exit_mode
	fi
}

# last_exits: the last kvm_exit of each CPU, a line each, as stats --last prints them
last_exits() {
	"$VMSCOPE" stats --json --last |
		jq -r '.last[] | select(.event == "kvm_exit") | "last kvm_exit cpu \(.cpu) ts \(.ts): \(.text)"'
}

# sample_reasons REASON: sample the last kvm_exit of each CPU until one
# shows REASON (for up to 30 s: the guest's loop runs until told to stop,
# but its first iteration can come a while after the phase file on a
# loaded machine; six quick samples once saw only its HLT and MSR exits);
# prints that line.
sample_reasons() {
	_until=$(($(date +%s) + 30))
	while :; do
		last_exits >/tmp/last.txt
		hit=$(grep " reason $1 " /tmp/last.txt | head -n 1)
		if [ -n "$hit" ]; then
			echo "$hit"
			return 0
		fi
		[ "$(date +%s)" -lt "$_until" ] || break
	done
	cat /tmp/last.txt >&2
	return 1
}

# fault_phase NAME: the guest's port writes of phase NAME have their
# IOIO reason (port 0x80 in info1) in the records, from the perf path
fault_phase() {
	touch "$gdir/go-$1"
	wait_file "$gdir/phase-$1"
	hit=$(sample_reasons 0x7b) || fail "no IOIO exit sampled on the perf path ($1)"
	echo "$hit" | grep -q 'reason 0x7b rip 0x[0-9a-f]* info1 0x80[0-9a-f]\{4\} .*reason_valid 1' ||
		fail "wrong IOIO exit on the perf path ($1): '$hit'"
	log "$1: $hit"
	touch "$gdir/stop-$1"
	wait_file "$gdir/done-$1"
}

# matched FILE EVENT...: the matched counts of each EVENT in FILE (stats --json)
matched() {
	_f=$1
	shift
	for _e in "$@"; do
		jq -r --arg e "$_e" '.events[$e].matched' "$_f"
	done
}

exit_reasons_on() {
	[ "$(stats_field .state.exit_reasons)" = true ]
}

# select_part: event selection, with the module loaded afresh (none on)
select_part() {
	if "$VMSCOPE" stats --start --events kvm_exti 2>/vmtest/typo.err; then
		fail "a misspelt event was accepted"
	fi
	grep -q "unknown event or system 'kvm_exti'" /vmtest/typo.err ||
		fail "unclear error for a typo: $(cat /vmtest/typo.err)"
	[ "$(stats_field .state.enabled)" = false ] || fail "probing started despite the typo"

	check "start with kvm_pio,sched only" "$VMSCOPE" stats --start --reset --events kvm_pio,sched
	exit_reasons_on && fail "kvm_exit perf counters created although kvm_exit is not selected"
	touch "$gdir/go-select1"
	wait_file "$gdir/done-select1"
	stats_json /vmtest/stats-pio-sched.json
	{ read -r s_pio; read -r s_exits; read -r s_entries; read -r s_sw; } <<EOF
$(matched /vmtest/stats-pio-sched.json kvm_pio kvm_exit kvm_entry sched_switch)
EOF
	log "kvm_pio,sched: kvm_pio $s_pio kvm_exit $s_exits kvm_entry $s_entries sched_switch $s_sw"
	[ "$s_pio" -ge 2000 ] || fail "kvm_pio matched $s_pio, want >= 2000"
	[ "$s_exits" -eq 0 ] || fail "kvm_exit matched $s_exits although not selected"
	[ "$s_entries" -eq 0 ] || fail "kvm_entry matched $s_entries although not selected"
	[ "$s_sw" -gt 0 ] || fail "sched_switch (selected through 'sched') matched nothing"

	check "start with kvm_exit only" "$VMSCOPE" stats --start --reset --events kvm_exit
	wait_until 30 "exit-reason counters with kvm_exit selected" exit_reasons_on
	touch "$gdir/go-select2"
	wait_file "$gdir/done-select2"
	stats_json /vmtest/stats-select-exit.json
	{ read -r s_pio; read -r s_exits; read -r s_sw; } <<EOF
$(matched /vmtest/stats-select-exit.json kvm_pio kvm_exit sched_switch)
EOF
	log "kvm_exit: kvm_pio $s_pio kvm_exit $s_exits sched_switch $s_sw"
	[ "$s_exits" -ge 2000 ] || fail "kvm_exit matched $s_exits, want >= 2000"
	[ "$s_pio" -eq 0 ] || fail "kvm_pio matched $s_pio although not selected"
	[ "$s_sw" -eq 0 ] || fail "sched_switch matched $s_sw although not selected"
}

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	check_exit_format
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	kvm_refs_before=$(awk '$1 == "kvm" { print $3 }' /proc/modules)
	check "vmscope stats --start --pid $qpid" "$VMSCOPE" stats --start --reset --pid "$qpid"
	st=$(stats_field '.state | "\(.enabled) \(.kvm_attached) \(.sched_attached) \(.exit_reasons)"')
	[ "$st" = "true true true true" ] || fail "probing not fully on: $st"

	wait_file "$gdir/ready"
	read -r e0 m0 <<EOR
$(reading "$qpid")
EOR
	log "first reading (VM stopped): kvm exits $e0, module kvm_exit matched $m0"
	touch "$gdir/go"

	wait_file "$gdir/phase-pio"
	wait_until 300 "calibration reaching direct mode" mode_is direct
	log "calibrated: $(exit_mode_json)"
	dmesg | grep -q 'vmscope_host: exit reason: .* read from the VMCB as KVM recorded them: direct mode' ||
		fail "no calibration message in dmesg"
	pio=$(sample_reasons 0x7b) || log "WARN: no IOIO exit sampled"
	log "sampled during the PIO loop: $pio"
	touch "$gdir/stop-pio"
	wait_file "$gdir/phase-cpuid"
	cpuid=$(sample_reasons 0x72) || log "WARN: no CPUID exit sampled"
	log "sampled during the CPUID loop: $cpuid"
	touch "$gdir/stop-cpuid"
	wait_file "$gdir/done"

	read -r e1 m1 <<EOR
$(reading "$qpid")
EOR
	log "second reading (VM stopped): kvm exits $e1, module kvm_exit matched $m1"
	stats_json /vmtest/stats.json --per-cpu --last
	mode=$(exit_mode_json /vmtest/stats.json)
	log "after the window: $mode"
	read -r m_mode m_mis m_fb m_direct m_cmp m_layout <<EOM
$(jq -r '.exit_mode | "\(.mode) \(.mismatches) \(.fallbacks) \(.direct_exits) \(.compared) \(.layout)"' \
	/vmtest/stats.json)
EOM
	[ "$m_mode $m_mis $m_fb" = "direct 0 0" ] ||
		fail "not in direct mode with 0 mismatches after the window: $mode"
	[ "$m_direct" -gt "$PIO_N" ] || fail "too few exits read directly: $mode"
	[ "$m_cmp" -ge 10000 ] || fail "calibration compared fewer than 10000 exits: $mode"
	[ "$m_layout" = btf-match ] || fail "BTF layout not confirmed: $mode"
	# kvm.ko is no longer pinned by perf counters in direct mode
	[ "$(awk '$1 == "kvm" { print $3 }' /proc/modules)" = "$kvm_refs_before" ] ||
		fail "kvm's references $(awk '$1 == "kvm" { print $3 }' /proc/modules), $kvm_refs_before before probing"

	# verify: perf path on, every exit of this workload compared
	check "vmscope stats --start --exit-reasons=verify" \
		"$VMSCOPE" stats --start --exit-reasons=verify --pid "$qpid"
	mode_is verify || fail "not in verify mode: $(exit_mode_json)"
	read -r v0 _ <<EOR
$(reading "$qpid")
EOR
	touch "$gdir/go-verify"
	wait_file "$gdir/done-verify"
	read -r v1 _ <<EOR
$(reading "$qpid")
EOR
	stats_json /vmtest/stats-verify.json
	mode=$(exit_mode_json /vmtest/stats-verify.json)
	cmp=$(jq -r .exit_mode.compared /vmtest/stats-verify.json)
	log "verify: KVM exits $((v1 - v0)) in the workload; $mode"
	[ "$(jq -r '.exit_mode | "\(.mode) \(.mismatches)"' /vmtest/stats-verify.json)" = "verify 0" ] ||
		fail "verify found mismatches: $mode"
	[ "$cmp" -ge $((v1 - v0)) ] && [ "$((v1 - v0))" -ge $((PIO_N + CPUID_N)) ] ||
		fail "verify compared $cmp exits, KVM counted $((v1 - v0)) in the workload"

	# a wrong BTF offset (the ioctl): refused, the perf path, reasons right
	VMSCOPE_TEST_EXIT_LAYOUT_SKEW=8 "$VMSCOPE" stats --start --pid "$qpid" >/dev/null ||
		fail "stats --start with a skewed BTF layout"
	stats_json /vmtest/stats-layout.json
	mode=$(exit_mode_json /vmtest/stats-layout.json)
	log "wrong BTF offset: $mode"
	jq -e '.exit_mode | .mode == "perf" and .layout == "btf-mismatch" and .refused == "layout" and
		(.why | startswith("BTF vcpu_svm_vmcb "))' /vmtest/stats-layout.json >/dev/null ||
		fail "a wrong BTF offset was not refused: $mode"
	fault_phase layout

	# a skewed VMCB offset (test-only parameter): calibration fails
	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod vmscope_host" rmmod vmscope_host
	check "insmod vmscope_host test_vmcb_skew=40" insmod "$HOST_KO" test_vmcb_skew=40
	check "vmscope stats --start (skewed)" "$VMSCOPE" stats --start --reset --pid "$qpid"
	fault_phase skew
	stats_json /vmtest/stats-skew.json
	mode=$(exit_mode_json /vmtest/stats-skew.json)
	log "skewed VMCB offset: $mode"
	jq -e '.exit_mode | .mode == "perf" and (.refused // "" | startswith("mismatch"))' \
		/vmtest/stats-skew.json >/dev/null ||
		fail "a skewed VMCB offset did not fail calibration: $mode"
	[ "$(jq -r .exit_mode.mismatches /vmtest/stats-skew.json)" -ge 1 ] ||
		fail "no mismatch counted: $mode"
	dmesg | grep -q 'vmscope_host: exit reason: direct \(read differs from KVM.s record\|VMCB read failed\)' ||
		fail "the mismatch was not logged"
	dmesg | grep 'vmscope_host: exit reason: direct' | head -n 3
	missed=$(stats_field .exit_reason_missed)
	[ "$missed" -eq 0 ] || fail "$missed kvm_exit without a reason after the failed calibration"

	check "vmscope stats --stop (skewed)" "$VMSCOPE" stats --stop
	check "rmmod vmscope_host (skewed)" rmmod vmscope_host
	check "insmod vmscope_host (selection)" insmod "$HOST_KO"
	select_part

	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"

	iters=$(tr ' ' '\n' <"$gdir/loop.txt" | awk -F= '$1 == "pio" || $1 == "cpuid" { n += $2 } END { print n + 0 }')
	de=$((e1 - e0)) dm=$((m1 - m0))
	[ "$iters" -ge $((PIO_N + CPUID_N)) ] || fail "the guest reports only $iters loop iterations"
	[ "$de" -ge "$iters" ] ||
		fail "KVM counted $de exits, fewer than the guest's $iters loop iterations"
	diff=$((de > dm ? de - dm : dm - de))
	log "window: KVM exits $de, module kvm_exit $dm, difference $diff"
	[ $((diff * 100)) -le "$de" ] || fail "module kvm_exit $dm vs KVM exits $de: more than 1% apart"

	# Reasons: IOIO's info1 has the port in bits 31:16 (0x80).
	echo "$pio" | grep -q 'reason 0x7b rip 0x[0-9a-f]* info1 0x80[0-9a-f]\{4\} ' ||
		fail "no IOIO exit on port 0x80 seen: '$pio'"
	echo "$cpuid" | grep -q 'reason 0x72 ' || fail "no CPUID exit seen: '$cpuid'"
	missed=$(jq -r .exit_reason_missed /vmtest/stats.json)
	log "kvm_exit records without perf data: $missed"
	[ "$missed" -eq 0 ] || fail "$missed kvm_exit events had no exit reason"
	cat /vmtest/stats.json
	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod vmscope_host" rmmod vmscope_host
}
