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

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start g1 guest_main 2 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	wait_file "$gdir/ready"

	record_start --pid "$qpid" --buffer-size 8M -o "$TRACE"
	rec=$REC_PID
	touch "$gdir/go"
	wait_file "$gdir/done"
	kill -INT "$rec"
	wait "$rec" || fail "record failed: $(cat /vmtest/record.err)"
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
	check "rmmod vmscope_host" rmmod vmscope_host
}
