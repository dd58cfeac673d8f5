# vmtest-timeout: 900
# `vmscope merge` on a trace recorded by `vmscope record --pid QEMU` while a
# 2-vCPU guest runs the periodic sync emitter (10 ms): the host module's
# sync_t2/sync_t3 records pair exactly (t2 with its thread's t3, none
# inconsistent), every pair is attributed to the VM through the vCPU
# thread map the collector stored, and the merged trace holds every event
# of the input, readable by `vmscope dump`. No guest agent runs here, so
# every exchange is host-only and dropped as "unpaired": no transform is
# fitted and the causality check has nothing to check. The path with the
# agent's streams (transform, bound, zero violations) is record-guest.sh.
# A second recorder beside it, --mode flight in an 8 KiB ring per CPU:
# its sync and TSC-offset records go to a discard channel of their own
# (record's default --keep), files host-ch1-cpuN.vtf, which lose none of
# them: every sync_t2/sync_t3 the module handed that session is in the
# trace, and its merge pairs them as the first one's does.

TRACE=/tmp/trace-merge
MERGED=/tmp/trace-merge.merged

guest_main() {
	check "insmod vmscope_guest" insmod "$GUEST_KO"
	touch /vmtest/ready
	wait_file /vmtest/go
	check "sync-emitter start" "$VMSCOPE" sync-emitter start --period 10ms
	sleep 3
	check "sync-emitter stop" "$VMSCOPE" sync-emitter stop
	"$VMSCOPE" sync-emitter status >/vmtest/emitter.txt
	touch /vmtest/done
	wait_file /vmtest/bye
	check "rmmod vmscope_guest" rmmod vmscope_guest
}

# The flight recorder's trace: channel 1 (host-ch1-cpuN.vtf) holds the
# sync and TSC-offset records, loses none, and has every sync record the
# module handed its session; channel 0's losses (overwrites) are logged.
flight_check() {
	kept=$(sed -n 's/.*; kept apart: 16 x 16 KiB sub-buffers, discard, for \([a-z_0-9,]*\)$/,\1,/p' /vmtest/flight.err)
	for ev in sync_t2 sync_t3 kvm_write_tsc_offset; do
		case $kept in *",$ev,"*) ;; *) fail "flight recorder: $ev not kept apart: $(grep 'recording to' /vmtest/flight.err)" ;; esac
	done
	"$VMSCOPE" dump --summary /tmp/trace-flight >/vmtest/flight-summary.txt ||
		fail "dump of the flight trace failed: $(tail -n 3 /vmtest/flight-summary.txt)"
	ends=$(grep '^end of host-' /vmtest/flight-summary.txt)
	log "flight trace streams:
$ends"
	echo "$ends" | grep -q '^end of host-ch1-cpu0.vtf: clean end' || fail "no host-ch1-cpu0.vtf"
	ch1_lost=$(echo "$ends" | sed -n 's/^end of host-ch1-cpu[0-9]*\.vtf: .* \([0-9]*\) lost, .*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }')
	ch0_lost=$(echo "$ends" | sed -n 's/^end of host-cpu[0-9]*\.vtf: .* \([0-9]*\) lost, .*/\1/p' |
		awk '{ n += $1 } END { print n + 0 }')
	[ "$ch1_lost" -eq 0 ] || fail "the keep channel lost $ch1_lost events"
	for ev in sync_t2 sync_t3; do
		h=$(sed -n "s/^vmscope record: the module handed this session.* $ev \([0-9]*\)\( .*\)\{0,1\}\$/\1/p" /vmtest/flight.err)
		n=$(awk -v e="$ev" '$1 == "events" && $2 == "host" && $3 == e { print $4 }' /vmtest/flight-summary.txt)
		log "flight recorder: $ev handed ${h:-?}, in the trace ${n:-?} (channel 0 lost $ch0_lost, channel 1 lost 0)"
		[ -n "$h" ] && [ "$h" -gt 0 ] && [ "${n:-x}" = "$h" ] || fail "flight recorder: $ev handed ${h:-?}, in the trace ${n:-?}"
	done
	"$VMSCOPE" merge -o /tmp/trace-flight.merged /tmp/trace-flight >/vmtest/flight-merge.txt 2>&1 ||
		fail "merge of the flight trace failed: $(cat /vmtest/flight-merge.txt)"
	fline=$(grep '^sync records: ' /vmtest/flight-merge.txt) || fail "flight merge: no pairing line"
	log "flight merge: $fline"
	fpairs=$(echo "$fline" | sed -n 's/.*host pairs \([0-9]*\).*/\1/p')
	fby=$(echo "$fline" | sed -n 's/.*VM by thread \([0-9]*\).*/\1/p')
	[ "${fpairs:-0}" -ge 100 ] && [ "$fby" = "$fpairs" ] || fail "flight merge: $fline"
}

host_main() {
	host_probed_guest g1 guest_main 2 3

	record_start --pid "$qpid" --buffer-size 8M -o "$TRACE"
	rec=$REC_PID
	bg_start record /vmtest/flight.out /vmtest/flight.err 'vmscope record: recording to' \
		--pid "$qpid" --mode flight --buffer-size 8K --guest-port 5644 -o /tmp/trace-flight
	flight=$BG_PID
	log "$(grep 'recording to' /vmtest/flight.err)"
	touch "$gdir/go"
	wait_file "$gdir/done"
	kill -INT "$rec" "$flight"
	wait "$rec" || fail "record failed: $(cat /vmtest/record.err)"
	wait "$flight" || fail "flight record failed: $(cat /vmtest/flight.err)"
	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"
	cat "$(guest_file g1 emitter.txt)"

	"$VMSCOPE" dump --summary "$TRACE" >/vmtest/in-summary.txt || fail "dump of the input failed"
	"$VMSCOPE" merge -o "$MERGED" "$TRACE" >/vmtest/merge.txt 2>/vmtest/merge.err ||
		fail "merge failed: $(cat /vmtest/merge.err /vmtest/merge.txt)"
	cat /vmtest/merge.txt
	log "$(grep '^tsc offset writes' /vmtest/merge.txt)"
	"$VMSCOPE" dump --summary "$MERGED" >/vmtest/out-summary.txt ||
		fail "dump of the merged trace failed: $(tail -n 3 /vmtest/out-summary.txt)"
	cp "$MERGED/report.txt" /vmtest/report.txt || fail "no report.txt"

	# sync records: N t2, N t3, 0 guest read; host pairs P (t2 alone A, t3 alone B,
	# inconsistent I, threads table full F); VM by thread T, by token K, none Z; ...
	line=$(grep '^sync records: ' /vmtest/merge.txt) || fail "no pairing line"
	num() { echo "$line" | sed -n "s/.*$1 \([0-9]*\).*/\1/p"; }
	pairs=$(num 'host pairs'); by_thread=$(num 'VM by thread')
	t2_alone=$(num 't2 alone'); t3_alone=$(num 't3 alone')
	incons=$(num 'inconsistent'); host_only=$(num 'host only')
	t2=$(echo "$line" | sed -n 's/^sync records: \([0-9]*\) t2, \([0-9]*\) t3.*/\1/p')
	log "t2 $t2, host pairs $pairs (t2 alone $t2_alone, t3 alone $t3_alone, inconsistent $incons), by thread $by_thread, host only $host_only"
	[ -n "$pairs" ] && [ -n "$by_thread" ] && [ -n "$t2" ] || fail "cannot parse: $line"
	# 2 vCPUs x 3 s / 10 ms = 600 hypercalls; TCG timers run late: ask for 100
	[ "$pairs" -ge 100 ] || fail "only $pairs host pairs"
	[ "$incons" -eq 0 ] || fail "$incons inconsistent host pairs"
	# at most one exchange per vCPU cut by the start or the stop of recording
	[ "$t2_alone" -le 4 ] && [ "$t3_alone" -le 4 ] || fail "host halves alone: $line"
	[ "$by_thread" -eq "$pairs" ] || fail "not every pair found its VM by thread: $line"
	[ "$host_only" -eq "$pairs" ] || fail "guest records where none can be: $line"
	grep -Eq "^vm0 .*: $pairs host exchanges, 0 with a guest record; samples used 0, dropped $pairs unpaired=$pairs$" \
		/vmtest/merge.txt || fail "VM line: $(grep '^vm0' /vmtest/merge.txt)"
	grep -q '^causality kept: 0 violations' /vmtest/merge.txt || fail "causality line"

	# every input event is in the merged trace, which ends clean
	in_n=$(sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p' /vmtest/in-summary.txt)
	out_n=$(sed -n 's/^total: .* \([0-9]*\) events, .*/\1/p' /vmtest/out-summary.txt)
	log "events: input $in_n, merged $out_n"
	[ -n "$in_n" ] && [ "$in_n" -gt 0 ] && [ "$in_n" = "$out_n" ] ||
		fail "events: input ${in_n:-?}, merged ${out_n:-?}"
	grep -q '^end of merged.vtf: clean end .*, indexed$' /vmtest/out-summary.txt ||
		fail "merged stream: $(grep '^end of' /vmtest/out-summary.txt)"
	in_t2=$(awk '$1 == "events" && $3 == "sync_t2" { n += $4 } END { print n + 0 }' /vmtest/in-summary.txt)
	out_t2=$(awk '$1 == "events" && $3 == "sync_t2" { n += $4 } END { print n + 0 }' /vmtest/out-summary.txt)
	[ "$in_t2" = "$t2" ] && [ "$out_t2" = "$t2" ] || fail "sync_t2: input $in_t2, merged $out_t2, merge read $t2"
	flight_check
	check "rmmod vmscope_host" rmmod vmscope_host
}
