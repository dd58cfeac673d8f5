# vmtest-timeout: 600
# Buffer lifetime and CPU hotplug while capturing: a test-host CPU goes
# offline and online during a capture (records keep decoding); rmmod fails
# ("in use") while a reader has the device open and its buffers mapped,
# also after the reader closed the file but still holds a mapping; once the
# last mapping is gone the module unloads. `stats --reset` is refused while
# capture owns probing. Last, `kill -9` of a capture with its buffers
# mapped: probing off and kvm_exit's perf counters gone (state bits), no
# session left, and the module unloads at once. The kernel log must stay
# clean.


guest_main() {
	[ -x "$EXITLOOP" ] || fail "no $EXITLOOP (scripts/build.sh)"
	touch /vmtest/ready
	while [ ! -e /vmtest/bye ]; do
		"$EXITLOOP" --pio 2000 >/dev/null || fail "exitloop --pio"
		sleep 0.1
	done
}


# Opens the device, starts a session, maps CPU 0's buffer, closes the file
# and keeps only the mapping; rmmod must fail until it is unmapped.
mapping_outlives_file() {
	python3 - "$HOST_KO" <<'PY'
import fcntl, mmap, os, struct, subprocess, sys
IOWR = lambda nr, size: (3 << 30) | (size << 16) | (0xB7 << 8) | nr
IO = lambda nr: (0xB7 << 8) | nr
# struct vmscope_session_cfg: 16 bytes, then 4 x struct vmscope_chan_cfg
# (48 bytes: 4 u32, then events, cpu_bytes, cpu_stride, offset)
cfg = bytearray(16 + 4 * 48)
fd = os.open("/dev/vmscope-host", os.O_RDWR)
fcntl.ioctl(fd, IOWR(0x20, len(cfg)), cfg)  # SESSION_START, defaults
nr_chans = struct.unpack_from("<I", cfg, 0)[0]
cpu_bytes, stride, offset = struct.unpack_from("<QQQ", cfg, 16 + 24)
if nr_chans != 1 or offset != 0:
    sys.exit("default session: %d channels, channel 0 at %d" % (nr_chans, offset))
m = mmap.mmap(fd, cpu_bytes, mmap.MAP_SHARED, mmap.PROT_READ, offset=0)
try:
    mmap.mmap(fd, cpu_bytes, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    sys.exit("a writable mapping was allowed")
except OSError:
    pass
fcntl.ioctl(fd, IO(0x21))                # SESSION_STOP
os.close(fd)
r = subprocess.run(["rmmod", "vmscope_host"], capture_output=True, text=True)
if r.returncode == 0:
    sys.exit("rmmod succeeded while a mapping exists")
print("rmmod with only a mapping left:", r.stderr.strip())
abi, mode = struct.unpack_from("<II", m, 0)   # the control page is readable
if abi != 1:
    sys.exit("control page reads abi_version %d" % abi)
m.close()
PY
}

host_main() {
	host_prepare_kvm
	[ -e /sys/devices/system/cpu/cpu1/online ] || fail "no hot-pluggable cpu1"
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start g1 guest_main 1 3
	gdir=$VMTEST_GUESTS/g1
	wait_file "$gdir/ready"

	capture_start --flush-ms 50
	cap=$CAP_PID
	sleep 1
	check "cpu1 offline" sh -c 'echo 0 >/sys/devices/system/cpu/cpu1/online'
	sleep 2
	check "cpu1 online" sh -c 'echo 1 >/sys/devices/system/cpu/cpu1/online'
	# A CPU that came back gets its kvm_exit perf counter back: with the
	# guest's threads pinned there, every exit still has its reason.
	check "pin the guest to cpu1" taskset -a -p 2 "$(cat "$gdir/qemu.pid")"
	# The counters are capture's (its enable is VMSCOPE_CTL_UNTIL_CLOSE):
	# a reset is refused, so the window is the difference of two reads.
	stats_refused --reset
	stats_json /vmtest/stats-pinned.json --per-cpu
	sleep 3	# the window: the guest's exits on cpu1 for 3 s
	stats_json /vmtest/stats-after-hotplug.json --per-cpu
	# exit_reason_missed (all CPUs) and kvm_exit matched on cpu1, before
	# and after the window ("null" where stats --json lacks one)
	m0=$(jq -r .exit_reason_missed /vmtest/stats-pinned.json)
	m1=$(jq -r .exit_reason_missed /vmtest/stats-after-hotplug.json)
	c1x='[.per_cpu[] | select(.cpu == 1 and .event == "kvm_exit") | .matched] | add // 0'
	c0=$(jq -r "$c1x" /vmtest/stats-pinned.json)
	c1=$(jq -r "$c1x" /vmtest/stats-after-hotplug.json)
	case "$m0 $m1 $c0 $c1" in
	*[!0-9\ ]*) fail "stats --json: exit_reason_missed $m0 $m1, cpu1 kvm_exit matched $c0 $c1" ;;
	esac
	missed=$((m1 - m0))
	cpu1_exits=$((c1 - c0))
	log "after cpu1 came back: kvm_exit matched on cpu1 ${cpu1_exits:-none}, exit_reason_missed ${missed:-?}"
	[ "${cpu1_exits:-0}" -gt 0 ] || fail "no kvm_exit on cpu1 after pinning the guest there"
	[ "$missed" = 0 ] || fail "$missed kvm_exit without a reason after cpu1 came back online"
	check "unpin the guest" taskset -a -p 3 "$(cat "$gdir/qemu.pid")"
	if rmmod vmscope_host 2>/vmtest/rmmod.err; then
		fail "rmmod succeeded while capture has the buffers mapped"
	fi
	log "rmmod during capture: $(cat /vmtest/rmmod.err)"
	kill -INT "$cap"
	wait "$cap" || fail "capture failed: $(cat /vmtest/capture.err /vmtest/capture.txt)"
	cat /vmtest/capture.txt
	grep -q '^event kvm_exit ' /vmtest/capture.txt || fail "no kvm_exit records"

	mapping_outlives_file || fail "mapping lifetime check failed"

	# kill -9 of a capture with its buffers mapped: its enable ended with
	# its file (VMSCOPE_CTL_UNTIL_CLOSE), so probing is off, kvm_exit's
	# perf counters (which pin kvm) are gone, its session is released and
	# the module unloads at once.
	capture_start --pid "$(cat "$gdir/qemu.pid")" --flush-ms 50
	cap=$CAP_PID
	sleep 2
	grep -q '/dev/vmscope-host' "/proc/$cap/maps" ||
		fail "capture has no buffer mapped: $(cat "/proc/$cap/maps")"
	stats_json /vmtest/stats-capture2.json
	state=$(jq -c .state /vmtest/stats-capture2.json)
	log "second capture: state $state; ringbuf $(jq -c .ringbuf /vmtest/stats-capture2.json)"
	jq -e '.state | .enabled and .kvm_attached and .exit_reasons' /vmtest/stats-capture2.json >/dev/null ||
		fail "capture did not switch probing fully on: $state"
	stats_refused --start
	kill -9 "$cap"
	wait "$cap" 2>/dev/null
	# the last fput and munmap run in the dying task, before wait returns
	stats_json /vmtest/stats-killed.json
	state=$(jq -c .state /vmtest/stats-killed.json)
	log "after kill -9 of capture: state $state; ringbuf $(jq -c .ringbuf /vmtest/stats-killed.json)"
	jq -e '.state | (.enabled | not) and .kvm_attached' /vmtest/stats-killed.json >/dev/null ||
		fail "probing not off after kill -9 of capture: $state"
	jq -e '.state.exit_reasons | not' /vmtest/stats-killed.json >/dev/null ||
		fail "kvm_exit perf counters live after kill -9 of capture: $state"
	jq -e '.ringbuf.sessions == 0' /vmtest/stats-killed.json >/dev/null ||
		fail "session left after kill -9: $(jq -c .ringbuf /vmtest/stats-killed.json)"
	check "rmmod vmscope_host right after kill -9 of capture" rmmod vmscope_host
	touch "$gdir/bye"
	guest_wait g1 300 || fail "guest failed"
}
