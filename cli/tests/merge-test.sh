#!/bin/sh
# `vmscope merge` on a synthetic trace written by merge/tests/test_merge.c
# --write (two VMs, a clock step, forged exchanges): the sync report, the
# merged trace, its report file, and `vmscope dump` reading the merged
# trace (guest events under "vmN:" names, in host time, ending clean);
# refusing to overwrite; usage errors; stdout on a full disk (/dev/full)
# failing the command.
# Usage: merge-test.sh PATH-TO-vmscope PATH-TO-test_merge
set -u
exe=$1 writer=$2
fails=0
dir=$(mktemp -d /var/tmp/merge-test-XXXXXX); trap 'rm -rf "$dir"' EXIT
out=$dir/out

. "$(dirname "$0")/expect.sh"

"$writer" --write "$dir/t" || { echo "FAIL: writing the trace"; exit 1; }
expect 0 'usage: vmscope merge' -- merge --help
expect 2 'usage: vmscope merge' -- merge
expect 2 'ppm' -- merge --ppm 0 "$dir/t"
expect 2 'tsc-breaks' -- merge --tsc-breaks sometimes "$dir/t"
expect 0 'tsc offset writes: 1 .* 1 ended segments' -- merge --sync-report --tsc-breaks all "$dir/t"
expect 0 'tsc offset writes: 1 .* 0 ended segments' -- merge --sync-report --tsc-breaks none "$dir/t"
expect 1 'nothere' -- merge "$dir/nothere"
expect 0 'vm0 synth0: .* dropped [0-9]+ unpaired=[0-9]+ mismatch=[0-9]+ replay=[0-9]+ outlier=' -- merge --sync-report "$dir/t"
expect 0 'segment 1: accurate, .* bound [0-9]+ ns' -- merge --sync-report "$dir/t"
[ -e "$dir/t.merged" ] && { echo "FAIL: --sync-report wrote something"; fails=$((fails + 1)); }
expect 0 'causality kept: 0 violations' -- merge "$dir/t"
[ -f "$dir/t.merged/report.txt" ] && grep -q 'causality kept' "$dir/t.merged/report.txt" ||
	{ echo "FAIL: no report.txt"; fails=$((fails + 1)); }
expect 1 'File exists' -- merge "$dir/t"
expect 0 'vm1:sync_guest +8[0-9][0-9]' -- dump --summary "$dir/t.merged"
expect 0 'end of merged.vtf: clean end' -- dump --summary "$dir/t.merged"
expect 0 'host cpu0 vm0:tick: n ' -- dump "$dir/t.merged"
expect 0 '^[0-9]+\.[0-9]{9} synth1 cpu1 tid 10[0-3] tick: n [0-9]+ \(at [0-9]+\)$' -- merge --show "$dir/t.merged"
expect 0 '^[0-9]+\.[0-9]{9} host cpu0 tid 100[12] sync_t2: t2 ' -- merge --show "$dir/t.merged"
expect 0 '^[0-9]+ events; merged stream: clean end' -- merge --show "$dir/t.merged"
expect 1 'not a merged trace' -- merge --show "$dir/t"
expect_full 1 'vmscope merge: writing the standard output' -- merge --show "$dir/t.merged"
expect_full 1 'vmscope merge: writing the standard output' -- merge --sync-report "$dir/t"
expect_full 1 'vmscope dump: writing the standard output' -- dump "$dir/t.merged"
expect 0 'causality kept' -- merge -o "$dir/m2" --max-segment 0.05 "$dir/t"
expect 0 'span [1-9]' -- merge --sync-report --max-segment 0.05 "$dir/t"

echo "$fails failed"
[ "$fails" -eq 0 ]
