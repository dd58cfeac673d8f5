# vmtest-timeout: 900
# `vmscope record --pid QEMU` while a guest runs port I/O and CPUID loops,
# then `vmscope dump`: the trace holds the host events, decoded through
# the descriptors stored in it; the number of kvm_exit records equals what
# the module says it wrote for that session (its `matched` counter, reset
# when record enabled probing) minus the losses the trace reports; every
# stream file ends cleanly with its index, the metadata with a summary;
# the VM's vCPU threads and name are in the metadata; a second record to
# the same folder is refused and leaves the trace as it was; a second
# recorder (every process, sched events) records beside it, with its own
# filter, without disturbing it.
# A vCPU hot-plugged while recording (QMP device_add; the guest starts
# with -smp 1,maxcpus=2, onlines it and runs a CPUID loop on it): record
# says it appeared with QEMU's thread "CPU 1/KVM", the metadata maps
# vCPU 1 to that thread, and its exits are in the trace.
#
# Then, with the same guest (record-kill, a test of its own before, folded
# here for its boots):
# `kill -9` of `vmscope record` mid-recording, while a guest keeps exiting:
# `vmscope dump` reads every complete frame (exit 0), says the recording
# did not stop cleanly (no summary), finds no corruption, and still decodes
# the kvm_exit records that reached the disk; the killed recorder's session
# is released (a new record starts at once) and so is its probing (off,
# kvm_exit's perf counters gone, as `vmscope stats` shows). Before the
# kill, `stats --reset`, `--start` and `--stop` are refused ("probing is
# owned by a running record or capture") and change nothing: same state,
# counters not zeroed, the recorder's --pid filter still in force. Then damage on
# purpose: a stream cut mid-frame reads to a torn tail with one frame less; a byte
# flipped in the middle of a stream stops it as corrupt at that frame, with
# only the frames before it read. And a disk that fills (a 512 KiB tmpfs):
# record stops and exits 1 saying so; the trace reads without corruption.
# The record after the kill selects --events kvm: no sched events in it;
# a misspelt event name is refused before anything is created.

PIO_N=${PIO_N:-10000}
CPUID_N=${CPUID_N:-10000}
TRACE=/tmp/trace-host
HOT_N=1000
CPU1=/sys/devices/system/cpu/cpu1
T1=/tmp/trace-killed
T2=/tmp/trace-after

guest_main() {
	guest_exitloop_ready
	"$EXITLOOP" --pio "$PIO_N" >>/vmtest/loop.txt || fail "exitloop --pio"
	"$EXITLOOP" --cpuid "$CPUID_N" >>/vmtest/loop.txt || fail "exitloop --cpuid"
	# the vCPU the test host plugged in while recording
	wait_until 60 "cpu1 plugged in ($(ls /sys/devices/system/cpu))" test -e "$CPU1/online"
	echo 1 >"$CPU1/online" || fail "cannot online cpu1: $(ls /sys/devices/system/cpu)"
	taskset -c 1 "$EXITLOOP" --cpuid "$HOT_N" >>/vmtest/loop.txt || fail "exitloop --cpuid on cpu1"
	touch /vmtest/done
	# the kill part: bursts of 2000 port writes with pauses between: its
	# checks need a steady stream of exits (frames in the killed trace, a
	# disk that fills), not the most the emulation can take (at full
	# speed, about 8 000 exits/s, the test was the one most often struck
	# by the emulation's silent deaths, tests/vm/README.md)
	wait_file /vmtest/go-kill
	while [ ! -e /vmtest/bye ]; do
		"$EXITLOOP" --pio 2000 >/dev/null || fail "exitloop --pio"
		sleep 0.2
	done
}

# frames N of "end of NAME: KIND after N frames" in a dump --summary
frames_of() {	# frames_of FILE STREAM
	sed -n "s/^end of $2: .* after \([0-9]*\) frames.*/\1/p" "$1"
}

# The probing state as words: "enabled|disabled", then kvm_attached and
# exit_reasons when true (a jq filter over `vmscope stats --json`).
STATE='.state | [if .enabled then "enabled" else "disabled" end,
	(select(.kvm_attached) | "kvm_attached"), (select(.exit_reasons) | "exit_reasons")] | join(" ")'

# kill_part: record-kill's recording, killed, and the full disk, while the
# guest makes bursts of port writes (go-kill)
kill_part() {
	record_start --pid "$qpid" --buffer-size 1M -o "$T1"
	rec=$REC_PID
	touch "$gdir/go-kill"
	sleep 8
	state=$(stats_field "$STATE")
	log "while recording: $state"
	[ "$state" = "enabled kvm_attached exit_reasons" ] ||
		fail "record did not switch probing fully on: $state"
	# Probing is the recorder's until its file closes: `stats` reads but
	# may not control it. A --start or --stop that went through would drop
	# its --pid filter and event selection and end the tie (so the kill
	# below would leave probing on); a --reset would zero the counters its
	# trace is checked against.
	stats_json /vmtest/owned-0.json
	stats_refused --reset
	stats_refused --start
	stats_refused --start --reset --events sched
	stats_refused --stop
	stats_json /vmtest/owned-1.json
	sleep 2	# a duration: the state must hold over it, not a wait for an event
	stats_json /vmtest/owned-2.json
	for f in 1 2; do
		s=$(jq -r "$STATE" /vmtest/owned-$f.json)
		[ "$s" = "$state" ] || fail "state changed after the refused controls: $s (was $state)"
	done
	read -r km0 km1 ss1 sm1 ss2 sm2 <<EOS
$(jq -rs '"\(.[0].events.kvm_exit.matched) \(.[1].events.kvm_exit.matched)" +
	" \(.[1].events.sched_switch.seen) \(.[1].events.sched_switch.matched)" +
	" \(.[2].events.sched_switch.seen) \(.[2].events.sched_switch.matched)"' \
	/vmtest/owned-0.json /vmtest/owned-1.json /vmtest/owned-2.json)
EOS
	log "refused controls: kvm_exit matched $km0 -> $km1; over 2 s after: sched_switch seen +$((ss2 - ss1)) matched +$((sm2 - sm1))"
	[ "$km0" -gt 0 ] && [ "$km1" -ge "$km0" ] ||
		fail "counters reset by a refused control: kvm_exit matched $km0 -> $km1"
	# the recorder's --pid filter still holds: switches between other
	# processes are seen but do not match (without a filter seen = matched)
	[ $((ss2 - ss1)) -gt $((sm2 - sm1)) ] ||
		fail "--pid filter gone: sched_switch seen +$((ss2 - ss1)) = matched +$((sm2 - sm1))"
	kill -9 "$rec"
	wait "$rec" 2>/dev/null
	log "killed: $(cat /vmtest/record.err)"
	# its enable lasted until its file closed (VMSCOPE_CTL_UNTIL_CLOSE):
	# probing is off and kvm_exit's perf counters, which pin kvm, are gone.
	# The last fput runs in the dying task, before wait returns.
	state=$(stats_field "$STATE")
	log "after the kill: $state"
	case "$state" in
	"disabled kvm_attached"*) ;;
	*) fail "probing not off after the kill: $state" ;;
	esac
	case "$state" in
	*exit_reasons*) fail "kvm_exit perf counters live after the kill: $state" ;;
	esac
	check "a new record after the kill" "$VMSCOPE" record --pid "$qpid" --duration 2 \
		--events kvm -o "$T2"
	"$VMSCOPE" record --pid "$qpid" --events kvm_exot -o /tmp/never 2>/vmtest/typo.err &&
		fail "record with --events kvm_exot ran"
	[ ! -e /tmp/never ] || fail "a refused record left /tmp/never behind"
	# --keep: a typo, and an event --events does not select, are usage
	# errors (exit 2) that create nothing
	for args in "--keep kvm_exot" "--events kvm --keep sched_switch"; do
		# shellcheck disable=SC2086
		"$VMSCOPE" record --pid "$qpid" $args -o /tmp/never 2>/vmtest/keep.err
		rc=$?
		[ "$rc" -eq 2 ] && [ ! -e /tmp/never ] || fail "record $args: exit $rc: $(cat /vmtest/keep.err)"
		log "record $args: $(cat /vmtest/keep.err)"
	done
	grep -q "^vmscope record: --keep names events that --events does not select$" /vmtest/keep.err ||
		fail "--keep outside --events: $(cat /vmtest/keep.err)"

	# a full disk: recording stops with an error; what is there reads
	mkdir -p /tmp/small
	check "a 512 KiB tmpfs" mount -t tmpfs -o size=512k tmpfs /tmp/small
	"$VMSCOPE" record --pid "$qpid" --duration 120 -o /tmp/small/t 2>/vmtest/full.err &&
		fail "record on a full disk exited 0"
	log "full disk: $(cat /vmtest/full.err)"
	grep -q 'No space left on device' /vmtest/full.err || fail "no ENOSPC message"
	# The recorder's reserve gave its final frames their room: the trace
	# says it lost writes (exit 1, naming them), and as many events as
	# record said it lost; with --accept-damage what is there reads.
	[ ! -e /tmp/small/t/.vmscope-reserve ] || fail "the reserve file was left in the trace"
	"$VMSCOPE" dump --summary /tmp/small/t >/vmtest/full-strict.txt 2>&1 &&
		fail "dump of the full-disk trace exited 0: $(tail -n 3 /vmtest/full-strict.txt)"
	grep -q -- '-- no summary frame' /vmtest/full-strict.txt &&
		fail "the full-disk trace has no Summary: its final frames did not reach the disk"
	dlost=$(sed -n "s/.*the writer's final statistics: [0-9]* write error(s); \([0-9]*\) events lost in all.*/\1/p" \
		/vmtest/full-strict.txt | head -n 1)
	rlost=$(sed -n 's/^vmscope record: [0-9]* events, .* lost \([0-9]*\), .*/\1/p' /vmtest/full.err)
	log "full disk: record lost ${rlost:-?}, the trace says ${dlost:-?} lost"
	[ -n "$dlost" ] || fail "dump did not name the write error: $(tail -n 3 /vmtest/full-strict.txt)"
	[ "$dlost" = "$rlost" ] || fail "the trace says $dlost events lost, record said $rlost"
	"$VMSCOPE" dump --summary --accept-damage /tmp/small/t >/vmtest/full.txt ||
		fail "dump --accept-damage of the full-disk trace failed: $(tail -n 5 /vmtest/full.txt)"
	grep -q ' 0 corrupt, 0 unreadable' /vmtest/full.txt || fail "full-disk trace corrupt"
	nfull=$(awk '$1 == "events" && $2 == "host" && $3 == "kvm_exit" { print $4 }' /vmtest/full.txt)
	[ "${nfull:-0}" -gt 0 ] || fail "nothing decodable in the full-disk trace"
	log "full disk: $(grep '^total' /vmtest/full.txt)"
	umount /tmp/small
}

# kill_checks: the killed trace read, then damaged on purpose; the record
# after the kill
kill_checks() {
	ls -l "$T1" >/vmtest/ls-killed.txt
	"$VMSCOPE" dump --summary "$T1" >/vmtest/killed.txt ||
		fail "dump of the killed trace failed: $(tail -n 5 /vmtest/killed.txt)"
	cat /vmtest/killed.txt
	grep -q '^-- no summary frame' /vmtest/killed.txt || fail "dump did not say the recording was cut"
	grep -q ' 0 corrupt, 0 unreadable' /vmtest/killed.txt || fail "corruption after kill -9"
	n=$(awk '$1 == "events" && $2 == "host" && $3 == "kvm_exit" { print $4 }' /vmtest/killed.txt)
	[ "${n:-0}" -gt 0 ] || fail "no kvm_exit decoded from the killed trace"
	log "killed trace: ${n} kvm_exit records decoded"

	# the stream with the most frames of those that end with a whole frame,
	# cut 9 bytes short and flipped (kill -9 may leave the stream being
	# written torn, and cutting that one again tears the same frame; the
	# one writer thread writes one stream at a time, so another ends whole)
	best=$(sed -n 's/^end of \(host-cpu[0-9]*\.vtf\): clean end after \([0-9]*\) frames.*/\2 \1/p' /vmtest/killed.txt |
		sort -n | tail -n 1)
	read -r nf name <<EOF2
$best
EOF2
	[ "${nf:-0}" -ge 3 ] || fail "no host stream that ends whole with 3 frames or more to damage: $(grep "^end of host" /vmtest/killed.txt)"
	f=$T1/$name
	size=$(stat -c %s "$f")
	cp "$f" /tmp/orig.vtf
	truncate -s $((size - 9)) "$f"
	"$VMSCOPE" dump --summary --stream "$name" "$T1" >/vmtest/cut.txt ||
		fail "dump of the cut stream failed: $(tail -n 3 /vmtest/cut.txt)"
	grep -q "^end of $name: torn tail after $((nf - 1)) frames" /vmtest/cut.txt ||
		fail "cut stream: $(grep "^end of" /vmtest/cut.txt) (wanted torn after $((nf - 1)))"

	cp /tmp/orig.vtf "$f"
	mid=$((size / 2))
	b=$(od -An -tu1 -j "$mid" -N1 "$f" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "\\$(printf %03o $(((b + 1) % 256)))" |
		dd of="$f" bs=1 seek="$mid" conv=notrunc status=none
	cmp -s /tmp/orig.vtf "$f" && fail "the byte at $mid did not change"
	"$VMSCOPE" dump --summary --stream "$name" "$T1" >/vmtest/flip.txt &&
		fail "dump of a corrupt stream exited 0"
	grep -q "^end of $name: corrupt after" /vmtest/flip.txt ||
		fail "flipped stream: $(grep "^end of" /vmtest/flip.txt)"
	k=$(frames_of /vmtest/flip.txt "$name")
	[ "$k" -lt "$nf" ] && [ "$k" -ge 1 ] || fail "flipped stream read $k of $nf frames"
	log "cut: torn after $((nf - 1)) of $nf frames; flip at byte $mid: corrupt after $k frames"

	"$VMSCOPE" dump --summary "$T2" >/vmtest/after.txt || fail "dump of the second trace failed"
	grep -q '^-- no summary frame' /vmtest/after.txt && fail "second trace has no summary"
	# --events kvm: kvm events only
	grep -q '^events host kvm_' /vmtest/after.txt || fail "--events kvm recorded no kvm event"
	grep '^events host sched_' /vmtest/after.txt && fail "--events kvm recorded sched events"
}


host_main() {
	# one vCPU now, room for a second, and QMP to plug it in
	VMTEST_GUEST_QEMU_ARGS="-smp 1,maxcpus=2 -qmp unix:/run/g1-qmp.sock,server=on,wait=off" \
		host_probed_guest g1 guest_main 1 3

	record_start --pid "$qpid" --buffer-size 8M -o "$TRACE"
	rec=$REC_PID
	# a second recorder beside the first, with its own filter and events
	# (every process, sched only); the first's exact count check below
	# would catch its probing touched
	"$VMSCOPE" record --all --events sched --duration 2 -o /tmp/other 2>/vmtest/second.err ||
		fail "a second record beside the first failed: $(cat /vmtest/second.err)"
	grep -q "another session is recording: the module's counters" /vmtest/second.err ||
		fail "second record: no note about the shared counters: $(cat /vmtest/second.err)"
	"$VMSCOPE" dump --summary /tmp/other >/vmtest/other.txt ||
		fail "dump --summary of the second trace: $(tail -n 5 /vmtest/other.txt)"
	other_sw=$(awk '$1 == "events" && $2 == "host" && $3 == "sched_switch" { print $4 }' /vmtest/other.txt)
	[ "${other_sw:-0}" -gt 0 ] || fail "the second trace has no sched_switch: $(cat /vmtest/other.txt)"
	grep -Eq '^events host kvm_' /vmtest/other.txt &&
		fail "the second trace (--events sched) has KVM events: $(grep '^events host kvm_' /vmtest/other.txt)"
	log "second recorder beside the first: $other_sw sched_switch, no KVM event"
	handed_check /vmtest/second.err /vmtest/other.txt sched_switch "second recorder"
	check "hot-plug vCPU 1" python3 "$VMTEST_REPO/tests/vm/lib/qmp-cpu-add.py" /run/g1-qmp.sock
	wait_until 60 "a thread CPU 1/KVM in QEMU after the hot-plug" \
		grep -qx 'CPU 1/KVM' /proc/"$qpid"/task/*/comm
	hot_tid=$(grep -lx 'CPU 1/KVM' /proc/"$qpid"/task/*/comm | cut -d/ -f5)
	wait_until 30 "record saying vCPU 1 appeared" grep -q 'vCPU 1 appeared' /vmtest/record.err
	grep -qx "vmscope record: VM 0 (g1): vCPU 1 appeared, thread $hot_tid" /vmtest/record.err ||
		fail "record did not name the new vCPU thread $hot_tid: $(cat /vmtest/record.err)"
	log "hot-plugged vCPU 1: QEMU's thread $hot_tid; record: $(grep 'vCPU 1 appeared' /vmtest/record.err)"
	touch "$gdir/go"
	wait_file "$gdir/done"
	# QEMU stopped: no kvm_exit of this VM between the stats and the stop
	vm_stop "$qpid"
	kill -INT "$rec"
	wait "$rec" || fail "record failed: $(cat /vmtest/record.err)"
	cp /vmtest/record.err /vmtest/record-first.err	# the kill part's record writes record.err
	stats_json /vmtest/stats.json
	"$VMSCOPE" record --pid "$qpid" -o "$TRACE" 2>/vmtest/again.err &&
		fail "a second record into $TRACE succeeded"
	grep -q 'File exists.*never overwritten' /vmtest/again.err ||
		fail "second record: $(cat /vmtest/again.err)"
	kill -CONT "$qpid"
	kill_part
	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"
	log "$(cat /vmtest/record-first.err)"


	ls -l "$TRACE" >/vmtest/ls.txt
	"$VMSCOPE" dump --summary "$TRACE" >/vmtest/summary.txt ||
		fail "dump --summary failed: $(tail -n 5 /vmtest/summary.txt)"
	"$VMSCOPE" dump "$TRACE" >/vmtest/dump.txt || fail "dump failed"
	cat /vmtest/summary.txt

	matched=$(jq -r .events.kvm_exit.matched /vmtest/stats.json)
	rec_n=$(awk '$1 == "events" && $2 == "host" && $3 == "kvm_exit" { print $4 }' /vmtest/summary.txt)
	lost=$(sed -n 's/^total: .* \([0-9]*\) lost, .*/\1/p' /vmtest/summary.txt)
	log "kvm_exit: module wrote (matched) ${matched:-?}, trace has ${rec_n:-?}, trace reports lost ${lost:-?}"
	[ -n "$matched" ] && [ -n "$rec_n" ] && [ -n "$lost" ] || fail "could not read the counts"
	handed_check /vmtest/record-first.err /vmtest/summary.txt kvm_exit "first recorder"
	[ "$_h" = "$matched" ] || fail "alone, the session was handed $_h kvm_exit but the module matched $matched"
	grep -q ' 0 sub-buffers missing$' /vmtest/summary.txt ||
		fail "sub-buffers missing in discard mode: $(grep '^total' /vmtest/summary.txt)"
	[ "$matched" -ge $((PIO_N + CPUID_N)) ] || fail "module matched only $matched kvm_exit"
	if [ "$lost" -eq 0 ]; then
		[ "$rec_n" -eq "$matched" ] || fail "kvm_exit records $rec_n != matched $matched with no loss"
	else
		[ "$rec_n" -le "$matched" ] && [ "$rec_n" -ge $((matched - lost)) ] ||
			fail "kvm_exit records $rec_n outside [matched - lost, matched] = [$((matched - lost)), $matched]"
	fi
	grep -q '^total: [0-9]* streams ([0-9]* clean, 0 torn, 0 corrupt, 0 unreadable)' /vmtest/summary.txt ||
		fail "not every stream ended cleanly"
	n_streams=$(grep -c '^end of host-cpu[0-9]*\.vtf: clean end .*, indexed$' /vmtest/summary.txt)
	[ "$n_streams" -ge 1 ] || fail "no stream ends with its index"
	grep -q '^-- no summary frame' /vmtest/summary.txt && fail "metadata has no summary"
	grep -Eq "^vm 0: .* pid $qpid cid 3 vcpus 0:[0-9]+ 1:$hot_tid\$" /vmtest/summary.txt ||
		fail "VM facts missing (want vCPU 1 on thread $hot_tid): $(grep '^vm ' /vmtest/summary.txt)"
	nhot=$(grep -Ec ' kvm_exit: vcpu 1 reason 0x72 ' /vmtest/dump.txt)
	log "kvm_exit of the hot-plugged vCPU 1 with reason CPUID: $nhot"
	[ "$nhot" -ge "$HOT_N" ] || fail "only $nhot CPUID exits of vCPU 1, want $HOT_N or more"
	# events through their stored format: IOIO exits (SVM exit code 0x7b)
	# and the port I/O the guest loop does (port 0x80)
	grep -Eq '^[0-9]+\.[0-9]{9} host cpu[0-9]+ kvm_exit: vcpu 0 reason 0x7b rip 0x[0-9a-f]+ ' /vmtest/dump.txt ||
		fail "no IOIO kvm_exit line"
	grep -Eq ' kvm_pio: .*port 0x80' /vmtest/dump.txt || fail "no kvm_pio line for port 0x80: $(grep -m3 kvm_pio /vmtest/dump.txt)"
	grep -Eq ' kvm_entry: ' /vmtest/dump.txt || fail "no kvm_entry line"
	kill_checks
	check "rmmod vmscope_host" rmmod vmscope_host
}
