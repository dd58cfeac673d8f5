# Helpers for VM test scripts; sourced by stage2.sh in the test host and in
# guests, before the test file. POSIX sh (the test host runs it with dash).

VMTEST_BUILD=${VMTEST_BUILD:-$VMTEST_REPO/build/release}
VMSCOPE=$VMTEST_BUILD/cli/vmscope
VSOCK_XFER=$VMTEST_BUILD/tests/vm/tools/vsock-xfer
# The host module's ABI test reader (tests/vm/tools/capture.c).
CAPTURE=$VMTEST_BUILD/tests/vm/tools/vmscope-capture
# the guest workload of known exits (kvm-probes/tools/exitloop.c)
EXITLOOP=$VMTEST_BUILD/kvm-probes/vmscope-exitloop
HOST_KO=$VMTEST_REPO/host-kmod/vmscope_host.ko
GUEST_KO=$VMTEST_REPO/guest-kmod/vmscope_guest.ko
TRACEFS=/sys/kernel/tracing
# Files a test leaves here reach the machine's results folder.
VMTEST_OUT=/vmtest
# The guests' CPU: the test host's CPU as KVM offers it, minus XSAVE. Under
# QEMU TCG's SVM emulation the test host's KVM does not learn the nested
# guest's XCR0, so with XSAVE the guest sees inconsistent CPUID leaf 0xD
# sizes and its kernel warns at boot (xstate.c "XSAVE consistency problem").
VMTEST_GUEST_CPU=${VMTEST_GUEST_CPU:-host,-xsave}
# The guests' kernel command line (guest_start, and libvirt-hook's
# domains). quiet: each console byte of a nested guest is an exit to the
# test host's QEMU; warnings and worse still reach the console, and the
# kernel log check reads the whole log (dmesg) anyway. iommu=noaperture
# pci=noearly: skip the AMD GART aperture search, a scan of PCI config
# space through port I/O at boot; each access is an exit to the test
# host's QEMU under TCG, and the two scans took 4.1 s of a 7 s kernel boot
# (guest dmesg, 2026-12-01). No GART here to find.
# Tests count the guest's port writes, so a warning on the console during
# a test breaks them: quiet stays (guest_prepare lets backtraces through).
# softlockup_all_cpu_backtrace=1: a soft lockup shows the other vCPU's
# stack too, the one a stuck CPU usually waits for. nokaslr: the kernel
# sits where a nokaslr boot puts it, so the RIPs of guest_wait's picture
# of a hung guest are named (lib/hmp.py).
VMTEST_GUEST_APPEND="console=ttyS0 panic=-1 no_timer_check quiet softlockup_all_cpu_backtrace=1 nokaslr iommu=noaperture pci=noearly"
# Guests' own results exports live on this tmpfs while they run.
VMTEST_GUESTS=/run/vmtest-guests

VMTEST_WAIT=$VMTEST_BUILD/tests/vm/tools/vmtest-wait

# log TEXT: TEXT with the role and uptime (read by the shell itself: an
# exec costs a nested guest 0.5-1 s; tools/vmtest-wait.c).
log() {
	read -r _up _ </proc/uptime
	echo "[$VMTEST_ROLE ${_up}s] $*"
}

# fail TEXT: the test fails saying TEXT, after the part it was in when a
# test runs several in one boot (VMTEST_PART: guest-basics.sh).
fail() {
	echo "FAIL: ${VMTEST_PART:+[$VMTEST_PART] }$*"
	# In the --shell prompt a failure must not end the shell (and the VM).
	case $- in *i*) return 1 ;; esac
	exit 1
}

# check DESCRIPTION CMD...: run CMD, fail the test with DESCRIPTION if it fails.
check() {
	_what=$1
	shift
	"$@" || fail "$_what (command: $*)"
	log "ok: $_what"
}

# wait_file PATH: wait up to 300 s (a loaded machine is slow) for PATH to
# appear; how the host and its guests hand each other turns.
# A file of a guest that guest_start started (under $VMTEST_GUESTS/NAME/)
# is waited for only while that guest's QEMU lives: a guest that died
# silently (nested TCG, README.md) fails the wait at once, not 300 s later,
# and run.sh's retry comes that much sooner.
wait_file() {
	[ -e "$1" ] && return 0
	_wf_guest= _wf_pid=
	case $1 in
	"$VMTEST_GUESTS"/*/*)
		_wf_guest=${1#"$VMTEST_GUESTS"/}
		_wf_guest=${_wf_guest%%/*}
		_wf_pid=$(cat "$VMTEST_GUESTS/$_wf_guest/qemu.pid" 2>/dev/null)
		;;
	esac
	"$VMTEST_WAIT" --timeout 300 ${_wf_pid:+--pid "$_wf_pid"} --file "$1"
	case $? in
	0) return 0 ;;
	2) fail "guest $_wf_guest ended before $1 appeared (see guests/$_wf_guest)" ;;
	*) fail "timed out waiting for $1" ;;
	esac
}

# wait_until SECONDS WHAT CMD...: run CMD until it succeeds, first after
# 0.2 s, then less and less often (every 2 s at most); fails the test
# ("WHAT did not happen") once SECONDS have passed. For "until X
# happened", where a fixed sleep would either waste time or, on a slow
# machine, not be enough. The polls back off because each one execs
# (CMD, often `vmscope stats --json | jq`, and the sleep): 0.2-0.4 s of a
# TCG vCPU per exec (README.md, "Measured here"), taken from the nested
# guest whose progress the test is waiting for.
wait_until() {
	_wu_s=$1 _wu_what=$2
	shift 2
	read -r _wu_up _ </proc/uptime
	_wu_end=$((${_wu_up%.*} + _wu_s))
	_wu_pause=0.2
	until "$@"; do
		read -r _wu_up _ </proc/uptime
		[ "${_wu_up%.*}" -lt "$_wu_end" ] ||
			fail "$_wu_what did not happen within ${_wu_s} s"
		sleep "$_wu_pause"
		case $_wu_pause in
		0.2) _wu_pause=0.5 ;;
		0.5) _wu_pause=1 ;;
		*) _wu_pause=2 ;;
		esac
	done
}

# stats_json FILE [ARGS...]: `vmscope stats --json ARGS...` into FILE (the
# fields: `vmscope stats --help`); fails the test if stats fails.
stats_json() {
	_sj=$1
	shift
	"$VMSCOPE" stats --json "$@" >"$_sj" || fail "vmscope stats --json $* failed"
}

# stats_field FILTER [ARGS...]: one value of `vmscope stats --json ARGS...`,
# a jq FILTER (".events.kvm_exit.matched", ".state.enabled"), printed raw.
# No fail here (it runs in $(...)): a missing field prints "null", which
# the caller's comparison refuses.
stats_field() {
	_sf=$1
	shift
	"$VMSCOPE" stats --json "$@" | jq -r "$_sf"
}

# guest_exitloop_turns (guest): a known number of exits for tests that
# count them: /vmtest/ready; once the test host makes /vmtest/go,
# vmscope-exitloop --pio $PIO_N --cpuid $CPUID_N (its output in
# /vmtest/loop.txt), then /vmtest/done; then the function AFTER, if
# given (a test's own later turns); up until the host makes /vmtest/bye.
guest_exitloop_turns() {
	touch /vmtest/ready
	wait_file /vmtest/go
	check "exitloop" sh -c "'$VMTEST_BUILD/kvm-probes/vmscope-exitloop' --pio $PIO_N \
		--cpuid $CPUID_N >/vmtest/loop.txt"
	touch /vmtest/done
	[ -z "${1:-}" ] || "$1"
	wait_file /vmtest/bye
}

# guest_cpuid_rounds (guest): the benchmarks' rounds (bench/vm/): for the
# I-th word M of $MODES, once the host makes /vmtest/go-I,
# vmscope-exitloop --cpuid $N (its rates in /vmtest/rate-I-M), then
# /vmtest/done-I.
guest_cpuid_rounds() {
	_gr=0
	for _gm in $MODES; do
		_gr=$((_gr + 1))
		wait_file "/vmtest/go-$_gr"
		"$EXITLOOP" --cpuid "$N" >"/vmtest/rate-$_gr-$_gm" || fail "exitloop"
		touch "/vmtest/done-$_gr"
	done
}

# Guest: the exit loop is built; say ready, and wait for the host's go.
guest_exitloop_ready() {
	[ -x "$EXITLOOP" ] || fail "no $EXITLOOP (scripts/build.sh)"
	touch /vmtest/ready
	wait_file /vmtest/go
}

# kvm_exits PID: KVM's own exit counter of the VM of QEMU PID (debugfs,
# summed over its vCPUs); stop QEMU first for a reading that stays true.
kvm_exits() {
	_ke=0
	for _f in /sys/kernel/debug/kvm/"$1"-*/exits; do
		_ke=$((_ke + $(cat "$_f")))
	done
	echo "$_ke"
}

# module_sessions N: the host module records N sessions (`vmscope stats`)
module_sessions() {
	[ "$("$VMSCOPE" stats --json | jq -r .ringbuf.sessions)" = "$1" ]
}

# recorders_memory: the summed memory of every `vmscope record --pid`
# running (vmscoped's recorders), then MemAvailable and VmallocUsed (the
# module's rings are vmalloc'd); for benchmarks
recorders_memory() {
	# shellcheck disable=SC2046 # one pid per word
	set -- $(pgrep -f ' record --pid [0-9]+ ')
	for _rm in "$@"; do cat "/proc/$_rm/smaps_rollup"; done 2>/dev/null | awk -v n=$# '
		$1 == "Rss:" { rss += $2 } $1 == "Pss:" { pss += $2 }
		$1 == "Private_Clean:" || $1 == "Private_Dirty:" { priv += $2 }
		END { printf "%d recorders: Rss %.1f MiB, Pss %.1f MiB (%.1f each), private %.1f MiB\n",
			n, rss / 1024, pss / 1024, n ? pss / 1024 / n : 0, priv / 1024 }'
	grep -E '^(MemAvailable|VmallocUsed):' /proc/meminfo | tr -s ' \n' ' '
}

# cpu_ticks PID...: user+system clock ticks (USER_HZ, 100/s) the processes,
# all their threads, have used so far (/proc/PID/stat); for benchmarks
cpu_ticks() {
	for _p in "$@"; do cat "/proc/$_p/stat" 2>/dev/null; done |
		awk '{ sub(/^.*\) /, ""); t += $12 + $13 } END { print t + 0 }'
}

# all_stopped PID: every thread of PID is stopped (state T or t): a vCPU
# thread gets there only after it has left the guest and KVM_RUN, so
# every event of its last exit is in the ring buffers.
all_stopped() {
	for _as in /proc/"$1"/task/*/stat; do
		# read, not cat: an exec per thread per poll costs the test host
		# a second or more under TCG
		read -r _as_s <"$_as" 2>/dev/null || continue	# a thread that ended
		_as_s=${_as_s##*) }	# after the comm, which may hold spaces
		case ${_as_s%% *} in
		T | t) ;;
		*) return 1 ;;
		esac
	done
}

# vm_stop PID: stop QEMU PID (the caller sends SIGCONT) and wait until all
# its threads have stopped.
vm_stop() {
	kill -STOP "$1"
	wait_until 30 "every thread of QEMU $1 stopped" all_stopped "$1"
}

# vm_stop_exits PID: vm_stop PID, then print kvm_exits: a reading that no
# exit of that VM changes until SIGCONT.
vm_stop_exits() {
	vm_stop "$1"
	kvm_exits "$1"
}

# bg_start NAME OUT ERR READY ARGS...: test host: `vmscope NAME ARGS...`
# (or, when NAME is a path, the program NAME) in the background (stdout to
# OUT, stderr to ERR); sets BG_PID and returns once ERR has a line starting
# with READY; fails the test if it dies or never gets there.
bg_start() {
	_cmd=$1 _out=$2 _err=$3 _ready=$4
	shift 4
	case $_cmd in
	*/*) "$_cmd" "$@" >"$_out" 2>"$_err" & ;;
	*) "$VMSCOPE" "$_cmd" "$@" >"$_out" 2>"$_err" & ;;
	esac
	BG_PID=$!
	"$VMTEST_WAIT" --timeout 60 --pid "$BG_PID" --line "$_err" "$_ready"
	case $? in
	0) return 0 ;;
	2) fail "$_cmd died: $(cat "$_err")" ;;
	*) fail "$_cmd did not start" ;;
	esac
}

# record_start ARGS...: `vmscope record ARGS...` (stdout to
# /vmtest/record.out, stderr to /vmtest/record.err); sets REC_PID and
# returns once it records.
record_start() {
	bg_start record /vmtest/record.out /vmtest/record.err 'vmscope record: recording to' "$@"
	REC_PID=$BG_PID
}

# capture_start ARGS...: `vmscope-capture ARGS...` (stdout to
# /vmtest/capture.txt, stderr to /vmtest/capture.err); sets CAP_PID and
# returns once its session is live and its buffers mapped.
capture_start() {
	bg_start "$CAPTURE" /vmtest/capture.txt /vmtest/capture.err 'capture: recording' "$@"
	CAP_PID=$BG_PID
}

# stats_refused ARGS...: test host, while a record or capture owns probing
# (VMSCOPE_CTL_UNTIL_CLOSE): `vmscope stats ARGS...` must exit 1 with the
# owner message alone and print no counters.
stats_refused() {
	_rc=0
	"$VMSCOPE" stats "$@" >/vmtest/refused.out 2>/vmtest/refused.err || _rc=$?
	[ "$_rc" = 1 ] ||
		fail "stats $* while owned: exit $_rc (want 1): $(cat /vmtest/refused.err)"
	[ "$(cat /vmtest/refused.err)" = "vmscope stats: probing is owned by a running record or capture; stop it first" ] ||
		fail "stats $* while owned said: $(cat /vmtest/refused.err)"
	[ ! -s /vmtest/refused.out ] || fail "stats $* while owned printed: $(cat /vmtest/refused.out)"
	log "ok: stats $* refused: $(cat /vmtest/refused.err)"
}

# handed_check LOG SUMMARY EVENT WHO: the records of host EVENT in a
# trace (SUMMARY: its `dump --summary`) against what the module handed
# that recording's session (LOG: record's stderr, "the module handed this
# session ... EVENT N"): equal with no loss, else at most the trace's
# losses fewer. The session's own count: exact beside other sessions.
handed_check() {
	_h=$(sed -n "s/^vmscope record: the module handed this session.* $3 \([0-9]*\)\( .*\)\{0,1\}\$/\1/p" "$1")
	_n=$(awk -v e="$3" '$1 == "events" && $2 == "host" && $3 == e { print $4 }' "$2")
	_l=$(sed -n 's/^total: .* \([0-9]*\) lost, .*/\1/p' "$2")
	log "$4: $3 handed by the module ${_h:-?}, in the trace ${_n:-?}, trace lost ${_l:-?}"
	[ -n "$_h" ] && [ -n "$_n" ] && [ -n "$_l" ] || fail "$4: could not read the $3 counts: $(grep 'handed this session' "$1")"
	if [ "$_l" -eq 0 ]; then
		[ "$_n" -eq "$_h" ] || fail "$4: $3 records $_n != handed $_h with no loss"
	else
		[ "$_n" -le "$_h" ] && [ "$_n" -ge $((_h - _l)) ] ||
			fail "$4: $3 records $_n outside [handed - lost, handed] = [$((_h - _l)), $_h]"
	fi
}

# Test host: load KVM and vhost-vsock so that guests can start.
# It also starts kvm-hold (tests/vm/tools/kvm-hold.c): one empty VM kept
# for the test host's life, so that guest starts and stops do not live-patch
# the preempt-notifier jump label in finish_task_switch(), which hangs the
# test host under multi-threaded TCG (README.md, "Known TCG defect").
# other_cpus 0|1: every CPU of this VM (test host or guest) but CPU 0
# offline (0) or online (1).
# The test host boots with CPU 0 alone (run.sh: maxcpus=1), and what
# live-patches the kernel's code at a known moment (KVM's static keys at its
# first VM and last VM, ftrace's enable of the sched tracepoints) is done
# with no other CPU online: under QEMU's multi-threaded TCG another vCPU may
# keep executing a stale translation of the patched site forever
# (README.md, "Known TCG defect"). One CPU executes what it was just given.
other_cpus() {
	for _hc in /sys/devices/system/cpu/cpu[1-9]*/online; do
		[ -e "$_hc" ] || continue
		read -r _hc_state <"$_hc"
		[ "$_hc_state" = "$1" ] || echo "$1" >"$_hc" ||
			fail "cannot set ${_hc%/online} to $1"
	done
}

# host_prepare_kvm: KVM and vhost-vsock loaded, kvm-hold and ftrace's
# hold in place (below), done on CPU 0 alone; then every CPU online.
host_prepare_kvm() {
	other_cpus 0
	_host_prepare_kvm_one_cpu
	other_cpus 1
}

# tracefs_hold "TRACEPOINTS": enable each (sys:name) in a tracefs
# instance that records nothing, so that ftrace's probe stays attached to
# it for the whole test (the host and the guest both do: see below).
tracefs_hold() {
	_hold=$TRACEFS/instances/vmtest-hold
	mkdir -p "$_hold" || fail "cannot make the tracefs instance $_hold"
	echo 0 >"$_hold/tracing_on"
	for _tp in $1; do
		echo 1 >"$_hold/events/${_tp%%:*}/${_tp#*:}/enable" ||
			fail "cannot enable $_tp in $_hold"
	done
}

_host_prepare_kvm_one_cpu() {
	modprobe kvm_amd || fail "modprobe kvm_amd"
	modprobe vhost_vsock || fail "modprobe vhost_vsock"
	[ -c /dev/kvm ] || fail "/dev/kvm missing after loading kvm_amd"
	[ -c /dev/vhost-vsock ] || fail "/dev/vhost-vsock missing"
	[ -n "${VMTEST_KVM_HOLD_PID:-}" ] && return 0
	# The tracepoints vmscope_host probes (the event table, through
	# `vmscope list`; vmscope:* are its own pseudo-events) get two other
	# probes for as long as they exist: ftrace's, enabled here in an
	# instance that records nothing, and perf's, held by kvm-hold (its
	# comment says why: no code patching when ours come and go).
	# Benchmarks of probe cost turn this off (VMTEST_HOLD_TRACEPOINTS=0):
	# the held probes would run on every event they count.
	[ "${VMTEST_HOLD_TRACEPOINTS:-1}" = 0 ] && _tps="" ||
	_tps=$("$VMSCOPE" list 2>/dev/null | awk '$2 == "HOST" || $2 == "BOTH" { print $3 }' |
		grep -v '^vmscope:' | sort -u)
	if [ "${VMTEST_HOLD_TRACEPOINTS:-1}" != 0 ]; then
		[ -n "$_tps" ] || fail "vmscope list named no host tracepoint"
		tracefs_hold "$_tps"
	fi
	# shellcheck disable=SC2086 # one argument per tracepoint
	"$VMTEST_BUILD/tests/vm/tools/kvm-hold" $_tps >/run/kvm-hold.out &
	VMTEST_KVM_HOLD_PID=$!
	"$VMTEST_WAIT" --timeout 10 --pid "$VMTEST_KVM_HOLD_PID" --line /run/kvm-hold.out ready ||
		fail "kvm-hold did not create its VM: $(cat /run/kvm-hold.out)"
}

# Test host: end kvm-hold (its VM and perf events hold kvm_amd and kvm), for
# tests that unload KVM. Leaves the test host on CPU 0 alone (other_cpus):
# the last VM's end, and unloading KVM after it, patch code.
host_release_kvm() {
	other_cpus 0
	[ -n "${VMTEST_KVM_HOLD_PID:-}" ] || return 0
	kill "$VMTEST_KVM_HOLD_PID"
	wait "$VMTEST_KVM_HOLD_PID" 2>/dev/null
	VMTEST_KVM_HOLD_PID=
	# and ftrace's hold on KVM's tracepoints (sched's stay held)
	echo 0 >"$TRACEFS/instances/vmtest-hold/events/kvm/enable" 2>/dev/null
}

# Guest, before its test's entry (stage2.sh): the same defence as the test
# host's (host_prepare_kvm). A guest with more than one vCPU runs under
# the test host's KVM, and so its code under the same multi-threaded TCG:
# when vmscope_guest's probes came or went (the agent's start and stop,
# each a text_poke_bp() of the tracepoints' static keys), a 2-vCPU guest
# hung with one vCPU waiting for the other's answer to the patching IPI
# and the other silent (guest-capture-pingpong, 2026-12-04), or reset
# itself. So the guest boots with CPU 0 alone (guest_start: maxcpus=1),
# ftrace here enables every guest-side tracepoint of vmscope's event table
# in an instance that records nothing, so their keys stay on for the
# guest's life and are patched once, now, on one CPU; then the other
# vCPUs come online. VMTEST_HOLD_TRACEPOINTS=0 leaves the tracepoints
# alone, for benchmarks of the probes' cost.
# And the console: a backtrace (soft lockup, RCU stall, NMI) is printed at
# the default message level, 4, which quiet (console level 4) keeps off
# the console, and a hung guest never writes its dmesg copy. The default
# level 3 puts them on the console; warnings (level 4) stay off it.
guest_prepare() {
	echo "4 3 1 4" >/proc/sys/kernel/printk || fail "cannot set the console's log levels"
	if [ "${VMTEST_HOLD_TRACEPOINTS:-1}" != 0 ]; then
		_tps=$("$VMSCOPE" list 2>/dev/null |
			awk '($2 == "GUEST" || $2 == "BOTH") && $3 !~ /^vmscope:/ { print $3 }' | sort -u)
		[ -n "$_tps" ] || fail "vmscope list named no guest tracepoint"
		tracefs_hold "$_tps"
	fi
	other_cpus 1
}

# Guest: load the vsock transport so that AF_VSOCK reaches the host.
guest_prepare_vsock() {
	modprobe vmw_vsock_virtio_transport || fail "modprobe vmw_vsock_virtio_transport"
}

# guest_start NAME ENTRY [VCPUS] [CID] [MEM_MB]
# Starts a KVM guest in the background that boots the same kernel and
# initramfs, mounts this VM's root over 9p, and runs function ENTRY of the
# current test file. VCPUS defaults to 1, CID to 3, MEM_MB to 512.
# VMTEST_GUEST_QEMU_ARGS: more QEMU options, split at spaces (a later
# -smp merges with ours: "-smp 1,maxcpus=2" leaves room to hot-plug).
guest_start() {
	_name=$1 _entry=$2 _vcpus=${3:-1} _cid=${4:-3} _mem=${5:-512}
	_dir=$VMTEST_GUESTS/$_name
	rm -rf "$_dir"
	mkdir -p "$_dir"
	cat >"$_dir/job.env" <<EOJ
VMTEST_ROLE='guest:$_name'
VMTEST_REPO='$VMTEST_REPO'
VMTEST_TEST='$VMTEST_TEST'
VMTEST_ENTRY='$_entry'
VMTEST_KVER='$VMTEST_KVER'
VMTEST_KERNEL='$VMTEST_KERNEL'
VMTEST_INITRD='$VMTEST_INITRD'
VMTEST_BUILD='$VMTEST_BUILD'
VMTEST_GUEST_CID='$_cid'
VMTEST_HOLD_TRACEPOINTS='${VMTEST_HOLD_TRACEPOINTS:-1}'
EOJ
	# a benchmark's knobs, as run.sh gave them to the test host: the
	# guest's entry sees the same (its rounds, its counts)
	grep -E '^(EPS|RT|CR|TC|DC|SP)_[A-Z_]+=' /vmtest/job.env >>"$_dir/job.env" 2>/dev/null
	log "starting guest $_name ($_vcpus vCPU, cid $_cid) running $_entry"
	# debug-threads=on names vCPU threads "CPU n/KVM" (as libvirt does).
	# -d cpu_reset: a guest that resets itself without a kernel message
	# (its QEMU then exits: -no-reboot) leaves its CPU state at the reset.
	# -monitor: guest_wait asks it for the vCPUs' state of a hung guest.
	qemu-system-x86_64 -name "$_name,debug-threads=on" -machine pc -accel kvm -cpu "$VMTEST_GUEST_CPU" \
		-smp "$_vcpus" -m "$_mem" \
		-kernel "$VMTEST_KERNEL" -initrd "$VMTEST_INITRD" \
		-append "$VMTEST_GUEST_APPEND maxcpus=1" \
		-nodefaults -no-user-config -display none -no-reboot \
		-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$_dir,mount_tag=results,security_model=none" \
		-device "vhost-vsock-pci,guest-cid=$_cid" \
		-serial "file:$_dir/console.log" \
		-d cpu_reset -D "$_dir/qemu-cpu-reset.log" \
		-monitor "unix:$VMTEST_GUESTS/$_name.monitor,server=on,wait=off" \
		${VMTEST_GUEST_QEMU_ARGS:-} \
		>"$_dir/qemu.log" 2>&1 &
	echo $! >"$_dir/qemu.pid"
}

# guest_picture NAME QEMU_PID: what can be seen of a guest that stopped
# answering, for its hung.txt: the test host's kernel stack of each of
# its QEMU's threads (a vCPU thread blocked in KVM, or running), then
# QEMU's view of the vCPUs (registers with RIPs named, local APICs).
# The threads come first: asking QEMU for registers needs every vCPU
# thread to come out of KVM_RUN, which a stuck one may not do.
guest_picture() {
	_gp_t=
	echo "# guest $1: the test host's view of its QEMU's threads"
	for _gp_t in /proc/"$2"/task/*; do
		# a worker thread may end meanwhile; the state follows the
		# comm's closing parenthesis (comms hold spaces: "CPU 1/KVM")
		_gp_stat=$(cat "$_gp_t/stat" 2>/dev/null) || continue
		_gp_stat=${_gp_stat##*) }
		echo "thread ${_gp_t##*/} $(cat "$_gp_t/comm" 2>/dev/null) state ${_gp_stat%% *}" \
			"wchan $(cat "$_gp_t/wchan" 2>/dev/null)"
		sed 's/^/    /' "$_gp_t/stack" 2>/dev/null
	done
	echo "# guest $1: QEMU's view of its vCPUs"
	python3 "$VMTEST_REPO/tests/vm/lib/hmp.py" --kallsyms /proc/kallsyms \
		"$VMTEST_GUESTS/$1.monitor" "info cpus" "info registers -a" "info lapic 0" "info lapic 1"
}

# guest_wait NAME [TIMEOUT_S]: wait for the guest to power off (kill it after
# TIMEOUT_S, default 240: a loaded 2-core machine makes nested guests
# slow; its picture in hung.txt, see guest_picture), copy its results to
# $VMTEST_OUT/guests/NAME, show its output, and return its test status.
guest_wait() {
	_name=$1 _timeout=${2:-240}
	_dir=$VMTEST_GUESTS/$_name
	_pid=$(cat "$_dir/qemu.pid")
	read -r _t0 _ </proc/uptime
	if ! "$VMTEST_WAIT" --timeout "$_timeout" --exit "$_pid"; then
		guest_picture "$_name" "$_pid" >"$_dir/hung.txt" 2>&1
		kill -9 "$_pid" 2>/dev/null
		echo "guest $_name: timed out after ${_timeout}s, killed (its state then: guests/$_name/hung.txt)" >"$_dir/timeout"
	fi
	wait "$_pid" 2>/dev/null
	read -r _t1 _ </proc/uptime
	_waited=$(( ${_t1%.*} - ${_t0%.*} ))
	mkdir -p "$VMTEST_OUT/guests"
	rm -rf "$VMTEST_OUT/guests/$_name"
	cp -r "$_dir" "$VMTEST_OUT/guests/$_name"
	log "guest $_name finished after ~${_waited}s; its output:"
	sed "s/^/    [$_name] /" "$_dir/out" 2>/dev/null
	if [ -f "$_dir/timeout" ]; then
		cat "$_dir/timeout"
		return 124
	fi
	if [ ! -f "$_dir/rc" ]; then
		echo "guest $_name: no exit status (did not boot? see guests/$_name/console.log, qemu.log)"
		tail -n 20 "$_dir/qemu.log" "$_dir/console.log" 2>/dev/null
		return 125
	fi
	return "$(cat "$_dir/rc")"
}

# host_probed_guest NAME ENTRY [VCPUS] [CID] [MEM_MB]: the start most tests
# share: KVM prepared (host_prepare_kvm), vmscope_host loaded, guest NAME
# started (guest_start) and its /vmtest/ready file waited for; sets gdir
# (the guest's folder) and qpid (its QEMU's pid).
host_probed_guest() {
	host_prepare_kvm
	check "insmod vmscope_host" insmod "$HOST_KO"
	guest_start "$@"
	gdir=$VMTEST_GUESTS/$1
	qpid=$(cat "$gdir/qemu.pid")
	wait_file "$gdir/ready"
}

# guest_run NAME ENTRY [VCPUS] [CID] [MEM_MB]: start, wait, fail on failure.
guest_run() {
	guest_start "$@"
	guest_wait "$1" || fail "guest $1 failed (status $?)"
}

# guest_file NAME FILE: path of a file that guest NAME left in its /vmtest.
guest_file() {
	echo "$VMTEST_GUESTS/$1/$2"
}
