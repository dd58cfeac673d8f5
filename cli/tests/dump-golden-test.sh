#!/bin/sh
# `vmscope dump`'s output, byte for byte, on a synthetic trace with every
# compiled-in event (bench/gen_trace.c --all-events: 2 host CPUs and a
# guest CPU, edge-case field values, strings with any bytes, irregular
# times) against dump-golden.txt, which the dump printed before its
# formatting was made fast (commit c134f90: printf per line, snprintf per
# field). A change here is a change of the output: regenerate the file
# only when that is intended, and say so (ABI 0.4 regenerated it for
# sync_guest's new steal_ns field, ABI 1.2 for the new cpu_task records,
# ABI 1.3 for the new kvm_vcpu_wakeup and irq_vector_entry records (which also changed the
# cpu_task records' random fields, drawn from the same stream):
# no other difference).
# With --abi03, the same trace with the event tables of ABI 0.3 (a trace
# recorded by 0.3 modules, sync_guest without steal_ns) against
# dump-golden-abi03.txt, which is dump-golden.txt as it was before 0.4:
# an old trace dumps exactly as it did.
# Usage: dump-golden-test.sh PATH-TO-vmscope PATH-TO-gen-trace GOLDEN [--abi03]
set -u
exe=$1 gen=$2 golden=$3 abi=${4:-}
dir=$(mktemp -d /var/tmp/dump-golden-XXXXXX); trap 'rm -rf "$dir"' EXIT

"$gen" --all-events $abi "$dir/t" 300 || { echo "FAIL: gen-trace"; exit 1; }
"$exe" dump "$dir/t" >"$dir/out"
rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: vmscope dump exited $rc"; exit 1; }
[ "$(head -n 1 "$dir/out")" = "trace $dir/t" ] || { echo "FAIL: first line"; exit 1; }
# the first line names the trace's temporary folder; the rest must match
if ! tail -n +2 "$dir/out" | cmp - "$golden"; then
	echo "FAIL: output differs from $golden"
	tail -n +2 "$dir/out" | diff -a "$golden" - | head -n 20
	exit 1
fi
lines=$(wc -l <"$golden")
echo "ok: $lines lines identical"
