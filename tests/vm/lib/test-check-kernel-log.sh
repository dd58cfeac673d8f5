#!/bin/sh
# Unit test of check-kernel-log.sh on recorded kernel logs: real clean logs
# (with the expected out-of-tree taint notices) pass; each kind of problem
# fails and is quoted.
# Usage: test-check-kernel-log.sh DIR-OF-check-kernel-log.sh
set -u
dir=$1
fails=0

expect() {
	want=$1 sample=$2 quote=$3
	out=$("$dir/check-kernel-log.sh" "$dir/samples/$sample")
	got=$?
	if [ "$got" -ne "$want" ] || ! echo "$out" | grep -qF -- "$quote"; then
		echo "FAIL: $sample: exit $got (want $want), output: $out"
		fails=$((fails + 1))
	else
		echo "ok: $sample -> $got"
	fi
}

expect 0 clean-host-with-module.dmesg ""
expect 0 clean-guest-with-module.dmesg ""
expect 1 xstate-warning.dmesg "WARNING: CPU: 0 PID: 0 at arch/x86/kernel/fpu/xstate.c"
expect 1 lockdep.dmesg "possible recursive locking"
expect 1 hung-task.dmesg "blocked for more than 120 seconds"
expect 1 kasan.dmesg "KASAN: use-after-free"
# A missing log is a failure, not a pass.
out=$("$dir/check-kernel-log.sh" "$dir/samples/no-such.dmesg")
if [ $? -ne 1 ] || ! echo "$out" | grep -q "missing"; then
	echo "FAIL: a missing log passed: $out"
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
