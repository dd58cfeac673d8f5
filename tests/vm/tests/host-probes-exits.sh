# vmtest-timeout: 900
# The host module's kvm_exit probe sees every exit of a guest: while the
# guest runs port I/O and CPUID loops, the module's matched kvm_exit count
# for that QEMU process equals KVM's own exits counter over the same window
# (both read with the VM stopped, so the window is exact) within 1%, and the
# exit reasons read from the perf raw record are the expected ones (SVM
# IOIO 0x7b for port 0x80, CPUID 0x72).

EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop
PIO_N=${PIO_N:-10000}
CPUID_N=${CPUID_N:-10000}

guest_main() {
	[ -x "$EXITLOOP" ] || fail "no $EXITLOOP (scripts/build.sh)"
	touch /vmtest/ready
	wait_file /vmtest/go
	# Each loop runs until the host has sampled the exit reasons it causes.
	touch /vmtest/phase-pio
	while [ ! -e /vmtest/stop-pio ]; do
		"$EXITLOOP" --pio "$PIO_N" >>/vmtest/loop.txt || fail "exitloop --pio"
	done
	touch /vmtest/phase-cpuid
	while [ ! -e /vmtest/stop-cpuid ]; do
		"$EXITLOOP" --cpuid "$CPUID_N" >>/vmtest/loop.txt || fail "exitloop --cpuid"
	done
	touch /vmtest/done
	# Stay up (few exits) until the host has taken its second reading.
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
	kill -STOP "$1"
	sleep 1
	exits=0
	for f in /sys/kernel/debug/kvm/"$1"-*/exits; do
		exits=$((exits + $(cat "$f")))
	done
	matched=$("$VMSCOPE" stats | awk '$1 == "kvm_exit" { print $4 }')
	kill -CONT "$1"
	echo "$exits $matched"
}

# sample_reasons REASON: sample the last kvm_exit of each CPU (a few
# times) until one shows REASON; prints that line.
sample_reasons() {
	for _ in 1 2 3 4 5 6; do
		"$VMSCOPE" stats --last | grep '^last kvm_exit ' >/tmp/last.txt
		hit=$(grep " reason $1 " /tmp/last.txt | head -n 1)
		if [ -n "$hit" ]; then
			echo "$hit"
			return 0
		fi
	done
	cat /tmp/last.txt >&2
	return 1
}

host_main() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	check_exit_format
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	qpid=$(cat "$gdir/qemu.pid")
	check "vmscope stats --start --pid $qpid" "$VMSCOPE" stats --start --reset --pid "$qpid"
	"$VMSCOPE" stats | grep -q '^state: enabled kvm-attached sched-attached exit-reasons' ||
		fail "probing not fully on: $("$VMSCOPE" stats | head -n 2)"

	wait_file "$gdir/ready"
	read -r e0 m0 <<EOR
$(reading "$qpid")
EOR
	log "first reading (VM stopped): kvm exits $e0, module kvm_exit matched $m0"
	touch "$gdir/go"

	wait_file "$gdir/phase-pio"
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
	"$VMSCOPE" stats --per-cpu --last >/vmtest/stats.txt
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
	missed=$(awk '/exit_reason_missed/ { print $8 }' /vmtest/stats.txt)
	log "kvm_exit records without perf data: $missed"
	[ "${missed:-1}" -eq 0 ] || fail "$missed kvm_exit events had no exit reason"
	cat /vmtest/stats.txt
	check "vmscope stats --stop" "$VMSCOPE" stats --stop
	check "rmmod vmscope_host" rmmod vmscope_host
}
