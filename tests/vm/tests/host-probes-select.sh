# vmtest-timeout: 600
# Per-session event selection (`vmscope stats --start --events LIST`): the
# events left out are never counted as matched (nor recorded), the chosen
# ones are; kvm_exit's perf counters exist only while kvm_exit is selected;
# a misspelt event name is refused before anything starts. One guest does
# the port writes twice, once per selection (the host changes it between).


guest_main() {
	"$EXITLOOP" --pio 2000 || fail "exitloop"
	touch /vmtest/done1
	wait_file /vmtest/go2
	"$EXITLOOP" --pio 2000 || fail "exitloop"
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

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"

	if "$VMSCOPE" stats --start --events kvm_exti 2>/vmtest/typo.err; then
		fail "a misspelt event was accepted"
	fi
	grep -q "unknown event or system 'kvm_exti'" /vmtest/typo.err ||
		fail "unclear error for a typo: $(cat /vmtest/typo.err)"
	[ "$(stats_field .state.enabled)" = false ] || fail "probing started despite the typo"

	check "start with kvm_pio,sched only" "$VMSCOPE" stats --start --reset --events kvm_pio,sched
	exit_reasons_on && fail "kvm_exit perf counters created although kvm_exit is not selected"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	wait_file "$gdir/done1"
	stats_json /vmtest/stats-pio-sched.json
	{ read -r pio; read -r exits; read -r entries; read -r sw; } <<EOF
$(matched /vmtest/stats-pio-sched.json kvm_pio kvm_exit kvm_entry sched_switch)
EOF
	log "kvm_pio,sched: kvm_pio $pio kvm_exit $exits kvm_entry $entries sched_switch $sw"
	[ "$pio" -ge 2000 ] || fail "kvm_pio matched $pio, want >= 2000"
	[ "$exits" -eq 0 ] || fail "kvm_exit matched $exits although not selected"
	[ "$entries" -eq 0 ] || fail "kvm_entry matched $entries although not selected"
	[ "$sw" -gt 0 ] || fail "sched_switch (selected through 'sched') matched nothing"

	check "start with kvm_exit only" "$VMSCOPE" stats --start --reset --events kvm_exit
	wait_until 30 "exit-reason counters with kvm_exit selected" exit_reasons_on
	touch "$gdir/go2"
	guest_wait g1 || fail "guest g1 failed"
	stats_json /vmtest/stats-exit.json
	{ read -r pio; read -r exits; read -r sw; } <<EOF
$(matched /vmtest/stats-exit.json kvm_pio kvm_exit sched_switch)
EOF
	log "kvm_exit: kvm_pio $pio kvm_exit $exits sched_switch $sw"
	[ "$exits" -ge 2000 ] || fail "kvm_exit matched $exits, want >= 2000"
	[ "$pio" -eq 0 ] || fail "kvm_pio matched $pio although not selected"
	[ "$sw" -eq 0 ] || fail "sched_switch matched $sw although not selected"

	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod vmscope_host" rmmod vmscope_host
}
