# vmtest-timeout: 900
# Capture through the ring buffers: while a guest runs port I/O and CPUID
# loops, `vmscope capture --pid QEMU` reads the host module's per-CPU
# buffers (mmap + poll + get/put). The window opens and closes with QEMU
# stopped, so the kvm_exit records of that VM must equal KVM's own exits
# counter over the same window (within 1%) when no loss is reported, and
# every record must decode with the module's descriptors.
# Seven more sessions record beside it, each with its own filter (a
# process that makes no KVM event): they start, record none of that VM's
# exits, and do not change the first one's count; a ninth is refused.

EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop
PIO_N=${PIO_N:-10000}
CPUID_N=${CPUID_N:-10000}

guest_main() {
	[ -x "$EXITLOOP" ] || fail "no $EXITLOOP (scripts/build.sh)"
	touch /vmtest/ready
	wait_file /vmtest/go
	"$EXITLOOP" --pio "$PIO_N" >>/vmtest/loop.txt || fail "exitloop --pio"
	"$EXITLOOP" --cpuid "$CPUID_N" >>/vmtest/loop.txt || fail "exitloop --cpuid"
	touch /vmtest/done
	wait_file /vmtest/bye
	cat /vmtest/loop.txt
}


kvm_exits() {	# kvm_exits PID: KVM's exits counter of that VM
	n=0
	for f in /sys/kernel/debug/kvm/"$1"-*/exits; do
		n=$((n + $(cat "$f")))
	done
	echo "$n"
}

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	wait_file "$gdir/ready"

	kill -STOP "$qpid"
	sleep 1
	e0=$(kvm_exits "$qpid")
	capture_start --pid "$qpid" --subbufs-shift 7 -o /tmp/raw.bin
	cap=$CAP_PID
	log "$(cat /vmtest/capture.err)"
	# sessions 2..8 beside it, for a process that makes no KVM event
	sleep 3600 &
	idle=$!
	others=
	for i in 2 3 4 5 6 7 8; do
		bg_start capture /vmtest/capture$i.txt /vmtest/capture$i.err 'capture: recording' \
			--pid "$idle" --subbuf-shift 12 --subbufs-shift 1
		others="$others $BG_PID"
	done
	# the ninth is refused, with the reason
	"$VMSCOPE" capture --duration 1 >/dev/null 2>/vmtest/ninth.err &&
		fail "a ninth capture session started"
	grep -q 'the module records at most 8 sessions at once' /vmtest/ninth.err ||
		fail "ninth session: $(cat /vmtest/ninth.err)"
	log "8 sessions recording; the ninth: $(cat /vmtest/ninth.err)"
	kill -CONT "$qpid"
	touch "$gdir/go"
	wait_file "$gdir/done"

	kill -STOP "$qpid"
	sleep 1
	e1=$(kvm_exits "$qpid")
	"$VMSCOPE" stats >/vmtest/stats.txt
	grep -q '^ringbuf: recording (8 sessions)' /vmtest/stats.txt ||
		fail "stats does not show 8 recording sessions: $(cat /vmtest/stats.txt)"
	kill -INT "$cap" $others
	wait "$cap" || fail "capture failed: $(cat /vmtest/capture.err /vmtest/capture.txt)"
	for i in 2 3 4 5 6 7 8; do
		set -- $others
		wait "$1" || fail "capture $i failed: $(cat /vmtest/capture$i.err)"
		others=${others#* $1}
		grep -q '^records ' /vmtest/capture$i.txt ||
			fail "capture $i printed no summary: $(cat /vmtest/capture$i.txt)"
		! grep -Eq '^(event|handed) ' /vmtest/capture$i.txt ||
			fail "capture $i (an idle process) recorded: $(grep '^event ' /vmtest/capture$i.txt)"
	done
	kill "$idle"
	log "sessions 2..8 recorded no event of the VM"
	kill -CONT "$qpid"
	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"
	cat /vmtest/capture.txt

	de=$((e1 - e0))
	rec=$(awk '$1 == "event" && $2 == "kvm_exit" { print $3 }' /vmtest/capture.txt)
	read -r lost gaps <<EOR
$(awk '$1 == "lost" { print $2, $10 }' /vmtest/capture.txt)
EOR
	undec=$(awk '$1 == "records" { print $4 }' /vmtest/capture.txt)
	log "window: KVM exits $de, kvm_exit records ${rec:-0}, lost ${lost:-?}, seq gaps ${gaps:-?}, undecodable ${undec:-?}"
	[ "${undec:-1}" -eq 0 ] || fail "$undec records did not decode"
	[ "${lost:-1}" -eq 0 ] && [ "${gaps:-1}" -eq 0 ] ||
		fail "losses reported (lost $lost, gaps $gaps): the 1% check needs none"
	[ "$de" -ge $((PIO_N + CPUID_N)) ] || fail "KVM counted only $de exits"
	rec=${rec:-0}
	diff=$((de > rec ? de - rec : rec - de))
	[ $((diff * 100)) -le "$de" ] || fail "kvm_exit records $rec vs KVM exits $de: more than 1% apart"
	# and exactly what the module handed this session, beside 7 others
	handed=$(awk '$1 == "handed" && $2 == "kvm_exit" { print $3 }' /vmtest/capture.txt)
	log "kvm_exit handed to the session by the module: ${handed:-?}, read: $rec"
	[ "${handed:-x}" = "$rec" ] || fail "kvm_exit: the module handed ${handed:-?} to the session, capture read $rec"
	for ev in kvm_entry kvm_pio; do
		grep -q "^event $ev " /vmtest/capture.txt || fail "no $ev records"
	done
	[ -s /tmp/raw.bin ] || fail "capture -o wrote nothing"
	check "rmmod vmscope_host" rmmod vmscope_host
}
