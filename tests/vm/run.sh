#!/bin/bash
# Runs VM tests: boots a test host VM under QEMU (TCG, -cpu max so that it
# has AMD SVM and runs KVM guests of its own) whose root is this machine's
# root over 9p, runs a test file's host_main in it, and judges the result.
# See tests/vm/README.md.
set -uo pipefail

usage() {
	cat <<EOU
usage: tests/vm/run.sh [OPTIONS] TEST...
       tests/vm/run.sh --shell

TEST is a file in tests/vm/tests/ (name with or without .sh) or a path.
A test passes when host_main exits 0, every guest it started exited 0,
neither kernel logged a warning/bug/oops (tests/vm/lib/check-kernel-log.sh),
and all of it finished within the timeout.

  --all               run every test in tests/vm/tests/ except quarantined ones
  --with-quarantined  with --all: run the quarantined tests too
  --timeout S         hard limit for one test, QEMU is killed after it (default 300)
  --expect-fail REGEX the test passes only if the harness judges it failed for a
                      reason matching REGEX (used to prove the harness can fail)

A test file may set its own defaults for these two with header lines
  # vmtest-timeout: S
  # vmtest-expect-fail: REGEX
be started before the others with --jobs (a long one started last would
end alone on one lane while the other lanes have nothing left) with
  # vmtest-long: REASON
and be kept out of --all, reported as skipped, with
  # vmtest-quarantine: REASON
  --show              print host_main's output also when the test passes
  --jobs N            run up to N tests at once, each in its own test host
                      (default 1; VMTEST_JOBS sets the default); each test's
                      lines are printed when it ends
  --shell             boot the test host with an interactive shell on this
                      terminal instead of running a test (Ctrl-A X quits QEMU)
  --results DIR       where results go (default build/vmtests/TEST)
  -h, --help          this text

Results of each test: DIR/{out,rc,dmesg,console.log,qemu.log} for the test host,
DIR/guests/NAME/... for each guest.

Environment: VMTEST_QEMU, the test host's QEMU (default: bookworm-backports'
QEMU, unpacked into build/vm/tcg-qemu by tests/vm/lib/fetch-tcg-qemu.sh;
qemu-system-x86_64 is bookworm's); VMTEST_FROZEN_AFTER, seconds without a
heartbeat after which a test host is judged frozen and killed (default 150);
VMTEST_JOBS, VMTEST_TCG_THREAD (multi or single).
EOU
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
timeout_opt=""
expect_fail_opt=""
shell=0
show=0
all=0
with_quarantined=0
results_opt=""
jobs=${VMTEST_JOBS:-1}
tests=()
while [ $# -gt 0 ]; do
	case "$1" in
	--all) all=1; tests+=("$(dirname "$0")"/tests/*.sh); shift ;;
	--with-quarantined) with_quarantined=1; shift ;;
	--timeout) timeout_opt=$2; shift 2 ;;
	--expect-fail) expect_fail_opt=$2; shift 2 ;;
	--shell) shell=1; shift ;;
	--show) show=1; shift ;;
	--jobs) jobs=$2; shift 2 ;;
	--results) results_opt=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) tests+=("$1"); shift ;;
	esac
done
if [ "$shell" -eq 0 ] && [ "${#tests[@]}" -eq 0 ]; then
	usage >&2
	exit 2
fi
case "$timeout_opt" in *[!0-9]*) echo "run.sh: --timeout takes seconds" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "run.sh: --jobs takes a count of 1 or more" >&2; exit 2 ;; esac
if [ "$jobs" -gt 1 ]; then	# `# vmtest-long:` tests first, each group in its order
	long=() rest=()
	for t in "${tests[@]}"; do
		f=$t
		[ -f "$f" ] || f=$repo/tests/vm/tests/${t%.sh}.sh
		if [ -f "$f" ] && grep -q '^# vmtest-long: ' "$f"; then long+=("$t"); else rest+=("$t"); fi
	done
	tests=("${long[@]}" "${rest[@]}")
fi
timeout_s=${timeout_opt:-300}

kver=$("$repo/scripts/kver.sh") || exit 1
initrd=$repo/build/vm/initramfs-$kver.cpio.gz
kernel=$repo/build/vm/vmlinux-$kver
for need in host-kmod/vmscope_host.ko guest-kmod/vmscope_guest.ko build/release/cli/vmscope; do
	[ -e "$repo/$need" ] || { echo "run.sh: $need is missing: run scripts/build.sh first" >&2; exit 1; }
done
# What `meson install` installs (daemon, hook, tools), in a folder the
# tests copy into the test host's root (VMTEST_INSTALL): made here, where
# it takes a second; meson's Python under TCG took ~28 s of a test. Only
# when a chosen test uses it (or for --shell).
install_dir=$repo/build/vm/install
need_install=$shell
for t in "${tests[@]}"; do
	f=$t
	[ -f "$f" ] || f=$repo/tests/vm/tests/${t%.sh}.sh
	if [ -f "$f" ] && grep -q VMTEST_INSTALL "$f"; then need_install=1; fi
done
if [ "$need_install" -eq 1 ]; then
	mkdir -p "$repo/build/vm" && rm -rf "$install_dir" &&
		meson install -C "$repo/build/release" --no-rebuild --quiet --destdir "$install_dir" \
			>"$repo/build/vm/install.log" 2>&1 ||
		{ echo "run.sh: meson install --destdir $install_dir failed: see build/vm/install.log" >&2; exit 1; }
fi
# Rebuild the initramfs when its inputs are newer than it.
if [ ! -f "$initrd" ] || [ "$repo/tests/vm/lib/init" -nt "$initrd" ] ||
	[ "$repo/tests/vm/lib/mkinitramfs.sh" -nt "$initrd" ]; then
	"$repo/tests/vm/lib/mkinitramfs.sh" "$kver" "$initrd" || exit 1
fi
# The test host's TSC is this machine's; its kernel is told the rate
# (tsc_early_khz=) rather than calibrating it against the emulated PIT,
# which a loaded machine can throw far off (tools/tsc-khz.c says what was
# seen). Without a constant-rate TSC here, the kernel calibrates as usual.
tsc_append=""
if tsc_khz=$("$repo/build/release/tests/vm/tools/tsc-khz"); then
	tsc_append=" tsc_early_khz=$tsc_khz"
fi
# The test host's QEMU: backports' (lib/fetch-tcg-qemu.sh says why), or
# the one VMTEST_QEMU names (VMTEST_QEMU=qemu-system-x86_64: bookworm's).
if [ -z "${VMTEST_QEMU:-}" ]; then
	VMTEST_QEMU=$("$repo/tests/vm/lib/fetch-tcg-qemu.sh" "$repo/build/vm/tcg-qemu") || exit 1
fi
# Both the test host and its guests boot the uncompressed kernel: the
# bzImage's decompressor is the slowest part of a boot under TCG.
if [ ! -f "$kernel" ] || [ "/boot/vmlinuz-$kver" -nt "$kernel" ] ||
	[ "$repo/tests/vm/lib/extract-vmlinux.sh" -nt "$kernel" ]; then
	mkdir -p "$(dirname "$kernel")"
	"$repo/tests/vm/lib/extract-vmlinux.sh" "$kver" "$kernel" || exit 1
fi

# boot_test_host RESULTS_DIR TEST_FILE ENTRY: write job.env and run QEMU.
boot_test_host() {
	local results=$1 test_file=$2 entry=$3
	cat >"$results/job.env" <<EOJ
VMTEST_ROLE='host'
VMTEST_REPO='$repo'
VMTEST_TEST='$test_file'
VMTEST_ENTRY='$entry'
VMTEST_KVER='$kver'
VMTEST_KERNEL='$kernel'
VMTEST_INITRD='$initrd'
VMTEST_BUILD='$repo/build/release'
VMTEST_INSTALL='$install_dir'
EOJ
	# a benchmark's knobs (bench/vm/*.sh: EPS_*, RT_*, CR_*, TC_*, DC_*, SP_*) reach the test host
	env | grep -E '^(EPS|RT|CR|TC|DC|SP)_[A-Z_]+=[A-Za-z0-9 ._-]*$' | sed "s/=\(.*\)/='\1'/" >>"$results/job.env" || true
	# no_timer_check: a loaded machine delays TCG's timer interrupts past
	# the kernel's boot-time IO-APIC timer check, which then panics ("IO-APIC
	# + timer doesn't work"; seen at load 9-14); it is meant for VMs.
	# maxcpus=1: CPU 1 stays offline until host_prepare_kvm has done its
	# code patching on CPU 0 alone (lib/vmlib.sh, other_cpus).
	local qemu=("$VMTEST_QEMU" -name vmtest-host -machine pc
		-accel "tcg,thread=${VMTEST_TCG_THREAD:-multi}" -cpu max -smp 2 -m 3072
		-kernel "$kernel" -initrd "$initrd"
		-append "console=ttyS0 panic=-1 no_timer_check maxcpus=1$tsc_append"
		-nodefaults -no-user-config -display none -no-reboot
		-virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap
		-virtfs "local,path=$results,mount_tag=results,security_model=none,multidevs=remap")
	if [ "$entry" = shell ]; then
		"${qemu[@]}" -serial mon:stdio
	else
		# -d cpu_reset: a triple fault (a reset with no kernel message) is
		# logged by QEMU, so a silent death of the test host is explained.
		timeout -k 5 "$timeout_s" "${qemu[@]}" -serial "file:$results/console.log" \
			-d cpu_reset -D "$results/qemu-cpu-reset.log" -pidfile "$results/qemu.pid" \
			>"$results/qemu.log" 2>&1 &
		local qpid=$! status watchdog
		watch_heartbeat "$results" "$qpid" &
		watchdog=$!
		wait "$qpid" 2>/dev/null	# not bash's "Killed" when the watchdog killed QEMU
		status=$?
		kill "$watchdog" 2>/dev/null
		wait "$watchdog" 2>/dev/null
		# A frozen test host killed early counts as a timeout.
		[ ! -f "$results/froze" ] || status=124
		echo "$status" >"$results/qemu.status"
		return "$status"
	fi
}

# watch_heartbeat RESULTS QEMU_WRAPPER_PID: kill the test host's QEMU once
# its heartbeat (stage2.sh, every 5 s) has been still for
# VMTEST_FROZEN_AFTER seconds (default 150) before the test ended: such a
# test host is frozen (README.md, "Known TCG defect") and would otherwise
# hold its lane until the test's timeout (libvirt-hook's is 900 s).
# Leaves RESULTS/froze saying so; the kill then counts as a timeout.
watch_heartbeat() {
	local results=$1 qpid=$2 limit=${VMTEST_FROZEN_AFTER:-150} age
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 10
		[ -f "$results/heartbeat" ] && [ ! -f "$results/rc" ] || continue
		age=$(($(date +%s) - $(stat -c %Y "$results/heartbeat")))
		[ "$age" -ge "$limit" ] || continue
		echo "no heartbeat from the test host for ${age}s: killed" >"$results/froze"
		kill -9 "$(cat "$results/qemu.pid")" 2>/dev/null
		return
	done
}

if [ "$shell" -eq 1 ]; then
	results=${results_opt:-$repo/build/vmtests/shell}
	rm -rf "$results" && mkdir -p "$results"
	echo "Booting the test host (kernel $kver); results export: $results"
	boot_test_host "$results" /dev/null shell
	exit 0
fi

# judge RESULTS_DIR QEMU_STATUS: print why the test failed; return 0 if it passed.
judge() {
	local results=$1 qstatus=$2 ok=0
	if [ -f "$results/froze" ]; then
		echo "reason: $(cat "$results/froze")"
		ok=1
	elif [ "$qstatus" -eq 124 ] || [ "$qstatus" -eq 137 ]; then
		echo "reason: timed out after ${timeout_s}s; QEMU killed"
		ok=1
	fi
	if [ ! -f "$results/rc" ]; then
		echo "reason: the test host left no exit status (QEMU exit status $qstatus; see console.log, qemu.log)"
		grep -m 1 -i 'triple fault' "$results/qemu-cpu-reset.log" 2>/dev/null &&
			echo "  QEMU logged a triple fault of the test host: see qemu-cpu-reset.log"
		tail -n 15 "$results/console.log" "$results/qemu.log" 2>/dev/null | sed 's/^/  /'
		return 1
	fi
	local rc
	rc=$(cat "$results/rc")
	if [ "$rc" != 0 ]; then
		echo "reason: host_main exited $rc"
		ok=1
	fi
	local dmesgs=("$results/dmesg")
	for g in "$results"/guests/*/; do
		[ -d "$g" ] || continue
		local name
		name=$(basename "$g")
		if [ "$(cat "$g/rc" 2>/dev/null)" != 0 ]; then
			echo "reason: guest $name exited $(cat "$g/rc" 2>/dev/null || echo '(no status)')"
			ok=1
		fi
		# A guest that never finished has no dmesg; its failure is reported above.
		[ -f "$g/rc" ] && dmesgs+=("$g/dmesg")
	done
	local logcheck
	if ! logcheck=$("$repo/tests/vm/lib/check-kernel-log.sh" "${dmesgs[@]}"); then
		echo "reason: kernel log check failed"
		echo "$logcheck" | sed 's/^/  /'
		ok=1
	fi
	return $ok
}

# silent_death RESULTS_DIR QEMU_STATUS: succeeds (printing which VM) when
# the test host or a guest stopped without an exit status and without any
# kernel message that explains it: the VM reset itself. Measured here: a
# 2-vCPU nested guest dies that way during boot in about 1 run of 6 with no
# vmscope module loaded at all (QEMU TCG's SVM emulation); such a death says
# nothing about the code under test. A timeout is one only when the test host froze (heartbeat, below).
silent_death() {
	local results=$1 qstatus=$2 g age
	if [ "$qstatus" -eq 124 ] || [ "$qstatus" -eq 137 ]; then
		# A timeout counts only when the test host itself froze: its
		# heartbeat (stage2.sh, every 5 s) stopped a minute or more
		# before the kill, and its kernel said nothing about why.
		[ ! -f "$results/rc" ] && [ -f "$results/heartbeat" ] || return 1
		age=$(($(date +%s) - $(stat -c %Y "$results/heartbeat")))
		[ "$age" -ge 60 ] || return 1
		if ! "$repo/tests/vm/lib/check-kernel-log.sh" "$results/console.log" >/dev/null; then
			# The one kernel message that does not count: a CPU caught
			# looping in the int3 handler at a live-patched site, QEMU
			# TCG's stale translation (README.md, "Known TCG defect";
			# seen 2026-12-01 in record-kill at rmmod, patching the
			# sched tracepoints' static calls in __schedule).
			if grep -Eq 'RIP: 0010:(asm_)?exc_int3' "$results/console.log"; then
				echo "the test host froze (no heartbeat for the last ${age}s) with a CPU looping in the int3 handler: QEMU TCG's stale-int3 defect"
				return 0
			fi
			# CPUs stuck on the preempt notifiers' jump label in
			# finish_task_switch() before any vmscope module was
			# loaded: every kernel RIP the lockup and stall reports
			# give is there, and no vmscope_* line precedes them.
			# kvm-hold's first VM turns that key on (lib/vmlib.sh),
			# and QEMU TCG runs the stale translation of the patched
			# jump (README.md, "Known TCG defect"; seen 2026-12-01 in
			# report-sched-hog, clean-clone CI: both CPUs in soft
			# lockups at finish_task_switch+0x9f, "Not tainted").
			if grep -Eq 'soft lockup|rcu_preempt detected stalls' "$results/console.log" &&
				! grep -Eq 'vmscope_(host|guest): ' "$results/console.log" &&
				grep -Eq 'RIP: 0010:finish_task_switch' "$results/console.log" &&
				! grep -E 'RIP: 0010:' "$results/console.log" | grep -v 'RIP: 0010:finish_task_switch' >/dev/null; then
				echo "the test host froze (no heartbeat for the last ${age}s) at the preempt-notifier jump label in finish_task_switch, before any vmscope module was loaded: QEMU TCG's stale-translation defect"
				return 0
			fi
			# A CPU that never answered an IPI, before any vmscope
			# module was loaded: every kernel RIP the lockups report
			# is the sender's wait in smp_call_function_many_cond()
			# (text_poke_bp() patching a static call for the
			# harness's own ftrace enable in host_prepare_kvm), and
			# the other CPU never reports anything (seen 2026-12-02,
			# libvirt-hook: "soft lockup - CPU#1 stuck" for 300 s at
			# event_enable_write, "Not tainted", CPU 0 silent).
			if grep -Eq 'soft lockup' "$results/console.log" &&
				! grep -Eq 'vmscope_(host|guest): ' "$results/console.log" &&
				! grep -E 'RIP: 0010:' "$results/console.log" | grep -v 'RIP: 0010:smp_call_function_many_cond' >/dev/null; then
				echo "the test host froze (no heartbeat for the last ${age}s) with a CPU waiting for another's answer to an IPI, before any vmscope module was loaded: an emulated CPU stuck in QEMU"
				return 0
			fi
			# A CPU that never answered the stall detector's NMI: the
			# last kernel line asks for its backtrace and nothing
			# follows. A kernel bug leaves a CPU that still takes NMIs
			# (its backtrace names the culprit); one that takes none
			# is an emulated CPU stuck inside QEMU (seen 2026-12-01,
			# guest-capture-pingpong: RCU stall, "Sending NMI from CPU 1
			# to CPUs 0:" as the console's last line, then nothing).
			local last
			last=$(grep -av '^[[:space:]]*$' "$results/console.log" | tail -n 1)
			if grep -Eq 'Sending NMI from CPU [0-9]+ to CPUs [0-9,-]+:$' <<<"$last"; then
				echo "the test host froze (no heartbeat for the last ${age}s) with a CPU that never answered an NMI: an emulated CPU stuck in QEMU"
				return 0
			fi
			return 1
		fi
		echo "the test host froze (no heartbeat for the last ${age}s) without a kernel message"
		return 0
	fi
	if [ ! -f "$results/rc" ]; then
		"$repo/tests/vm/lib/check-kernel-log.sh" "$results/console.log" >/dev/null || return 1
		echo "the test host stopped without a status or a kernel message"
		return 0
	fi
	for g in "$results"/guests/*/; do
		[ -d "$g" ] && [ ! -f "$g/rc" ] && [ ! -f "$g/timeout" ] && [ ! -f "$g/killed" ] || continue
		"$repo/tests/vm/lib/check-kernel-log.sh" "$g/console.log" >/dev/null || return 1
		echo "guest $(basename "$g") stopped without a status or a kernel message"
		return 0
	done
	return 1
}

# machine_stage RESULTS TEST_FILE: the test's machine_main, on this machine,
# in a subshell with the harness library (fail exits it) and VMTEST_OUT
# pointing at the test host's results folder.
machine_stage() {
	(
		cd "$repo" || exit 1
		VMTEST_ROLE=machine VMTEST_REPO=$repo VMTEST_TEST=$2
		VMTEST_BUILD=$repo/build/release
		. "$repo/tests/vm/lib/vmlib.sh"
		VMTEST_OUT=$1
		. "$2"
		machine_main
	)
}

# run_one TEST: run one test (with its one retry), print its result
# lines; returns 0 passed, 1 failed, 2 skipped.
run_one() {
	local t=$1 test_file name quarantine timeout_s expect_fail results start_ns retried
	local qstatus verdict jstatus why tenths secs note
	if [ -f "$t" ]; then
		test_file=$(cd "$(dirname "$t")" && pwd)/$(basename "$t")
	else
		test_file=$repo/tests/vm/tests/${t%.sh}.sh
	fi
	name=$(basename "$test_file" .sh)
	if [ ! -f "$test_file" ]; then
		echo "FAIL $name: no such test file $test_file"
		return 1
	fi
	quarantine=$(sed -n 's/^# vmtest-quarantine: *//p' "$test_file" | head -n 1)
	if [ -n "$quarantine" ] && [ "$all" -eq 1 ] && [ "$with_quarantined" -eq 0 ]; then
		echo "SKIP $name: quarantined: $quarantine"
		return 2
	fi
	# Per-test defaults from the file's header, overridden by the options.
	timeout_s=${timeout_opt:-$(sed -n 's/^# vmtest-timeout: *//p' "$test_file" | head -n 1)}
	timeout_s=${timeout_s:-300}
	expect_fail=${expect_fail_opt:-$(sed -n 's/^# vmtest-expect-fail: *//p' "$test_file" | head -n 1)}
	results=${results_opt:-$repo/build/vmtests/$name}
	rm -rf "$results" "$results.attempt1" && mkdir -p "$results"
	start_ns=$(date +%s%N)
	retried=""
	while :; do
		boot_test_host "$results" "$test_file" host_main
		qstatus=$?
		verdict=$(judge "$results" "$qstatus")
		jstatus=$?
		# One retry, said out loud, when a VM died without a word (see
		# silent_death); the first attempt's results are kept.
		if [ "$jstatus" -ne 0 ] && [ -z "$retried" ] && [ -z "$expect_fail" ] &&
			why=$(silent_death "$results" "$qstatus"); then
			retried="retried once after: $why (first attempt in $results.attempt1)"
			echo "RETRY $name: $why"
			mv "$results" "$results.attempt1" && mkdir -p "$results"
			continue
		fi
		break
	done
	# A test that passed in the VM may have checks of userspace output
	# that need no VM (exports read by protoc, babeltrace2): machine_main
	# runs them here, natively, on what the test host left in $results.
	if [ "$jstatus" -eq 0 ] && [ -z "$expect_fail" ] && grep -q '^machine_main()' "$test_file"; then
		machine_stage "$results" "$test_file" >>"$results/out" 2>&1 ||
			{ verdict="reason: machine_main failed (on the machine, after the VM passed)"; jstatus=1; }
	fi
	tenths=$((($(date +%s%N) - start_ns) / 100000000))
	secs=$((tenths / 10)).$((tenths % 10))
	note=""
	[ -z "$retried" ] || note="; $retried"
	if [ -n "$expect_fail" ]; then
		# (not `echo | grep -q`: with pipefail, grep -q leaving at the
		# first match made echo's next line a SIGPIPE, the pipeline
		# false, and a verdict that matched a FAIL, in ci-check4)
		if [ "$jstatus" -ne 0 ] && grep -Eq -- "$expect_fail" <<<"$verdict"; then
			echo "PASS $name (${secs}s${note}): failed as expected: $(echo "$verdict" | grep -E -- "$expect_fail" | head -n 1)"
			return 0
		else
			echo "FAIL $name (${secs}s${note}): expected a failure matching /$expect_fail/, got:"
			[ "$jstatus" -eq 0 ] && echo "  (the test passed)"
			echo "$verdict" | sed 's/^/  /'
			return 1
		fi
	fi
	if [ "$jstatus" -eq 0 ]; then
		[ "$show" -eq 0 ] || cat "$results/out"
		echo "PASS $name (${secs}s${note})"
		return 0
	else
		echo "FAIL $name (${secs}s${note}); results in $results"
		echo "$verdict" | sed 's/^/  /'
		echo "  --- last lines of host_main's output:"
		tail -n 25 "$results/out" 2>/dev/null | sed 's/^/  | /'
		return 1
	fi
}

passed=0
failed=0
skipped=0
count() {	# count STATUS: add run_one's status to the totals
	case "$1" in
	0) passed=$((passed + 1)) ;;
	2) skipped=$((skipped + 1)) ;;
	*) failed=$((failed + 1)) ;;
	esac
}
if [ "$jobs" -le 1 ]; then
	for t in "${tests[@]}"; do
		run_one "$t"
		count $?
	done
else
	# Several test hosts at once, each printing its lines when it ends.
	# Each test has its own results folder and its own test host (own
	# kernel, KVM and vsock), so the only thing they share is the CPUs.
	lanes=$(mktemp -d)
	trap 'rm -rf "$lanes"' EXIT
	declare -A lane_of=()
	next=0
	running=0
	while [ "$next" -lt "${#tests[@]}" ] || [ "$running" -gt 0 ]; do
		while [ "$running" -lt "$jobs" ] && [ "$next" -lt "${#tests[@]}" ]; do
			run_one "${tests[$next]}" >"$lanes/$next.out" 2>&1 &
			lane_of[$!]=$next
			next=$((next + 1))
			running=$((running + 1))
		done
		wait -n -p done_pid
		st=$?
		cat "$lanes/${lane_of[$done_pid]}.out"
		count "$st"
		running=$((running - 1))
	done
fi
echo "vm: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
