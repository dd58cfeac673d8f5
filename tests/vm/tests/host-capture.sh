# vmtest-timeout: 900
# Capture through the ring buffers: while a guest runs port I/O and CPUID
# loops, `vmscope capture --pid QEMU` reads the host module's per-CPU
# buffers (mmap + poll + get/put). The window opens and closes with QEMU
# stopped, so the kvm_exit records of that VM must equal KVM's own exits
# counter over the same window (within 1%) when no loss is reported, and
# every record must decode with the module's descriptors.

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
	# a second session is refused while this one records
	"$VMSCOPE" capture --duration 1 >/dev/null 2>/vmtest/second.err &&
		fail "a second capture session started"
	grep -q 'another one is recording' /vmtest/second.err ||
		fail "second session: $(cat /vmtest/second.err)"
	kill -CONT "$qpid"
	touch "$gdir/go"
	wait_file "$gdir/done"

	kill -STOP "$qpid"
	sleep 1
	e1=$(kvm_exits "$qpid")
	"$VMSCOPE" stats >/vmtest/stats.txt
	grep '^ringbuf:' /vmtest/stats.txt | grep -q recording ||
		fail "stats shows no recording session: $(cat /vmtest/stats.txt)"
	kill -INT "$cap"
	wait "$cap" || fail "capture failed: $(cat /vmtest/capture.err /vmtest/capture.txt)"
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
	for ev in kvm_entry kvm_pio; do
		grep -q "^event $ev " /vmtest/capture.txt || fail "no $ev records"
	done
	[ -s /tmp/raw.bin ] || fail "capture -o wrote nothing"
	check "rmmod vmscope_host" rmmod vmscope_host
}
