#!/bin/sh
# `vmscope merge` on a synthetic trace written by merge/tests/test_merge.c
# --write (two VMs, a clock step, forged exchanges): the sync report, the
# merged trace, its report file, and `vmscope dump` reading the merged
# trace (guest events under "vmN:" names, in host time, ending clean);
# refusing to overwrite; usage errors; stdout on a full disk (/dev/full)
# failing the command; the output refused inside the input; the
# temporary files in TMPDIR; a full disk (RLIMIT_FSIZE) and signals while
# the merged trace is written (nothing complete-looking under its name).
# Damaged input (a flipped byte in a host stream, a listed stream
# missing): refused, or with --accept-damage merged and marked, so that
# dump, merge --show, report and export refuse the merged trace unless
# given --accept-damage.
# Usage: merge-test.sh PATH-TO-vmscope PATH-TO-test_merge
set -u
exe=$(readlink -f "$1") writer=$2
. "$(dirname "$0")/expect.sh"
expect_tmpdir merge-test

"$writer" --write "$dir/t" || { echo "FAIL: writing the trace"; exit 1; }
expect 0 'usage: vmscope merge' -- merge --help
expect 2 'usage: vmscope merge' -- merge
expect 2 'ppm' -- merge --ppm 0 "$dir/t"
expect 2 'tsc-breaks' -- merge --tsc-breaks sometimes "$dir/t"
expect 2 "--ppm: a number from 1 to [0-9]+, not '-18446744073709550616'" -- merge --sync-report --ppm -18446744073709550616 "$dir/t"
expect 2 "--max-segment: '1e400' is not a duration" -- merge --max-segment 1e400 "$dir/t"
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

# the destination never inside the input
ls -A "$dir/t" >"$dir/t.ls"
(cd "$dir/t" && "$exe" merge . >"$out" 2>&1; echo "exit $?" >>"$out")
grep -q 'the output \.\.merged would be inside the input \. (.*/t)' "$out" && grep -q 'exit 2' "$out" &&
	echo "ok: merge . inside the trace refused" || { echo "FAIL: merge . in the trace:"; cat "$out"; fails=$((fails + 1)); }
expect 2 'output .*/t/sub would be inside the input .*/t' -- merge -o "$dir/t/sub" "$dir/t"
expect 2 'inside the input' -- merge -o "$dir/t/" "$dir/t/"
ls -A "$dir/t" | cmp -s - "$dir/t.ls" && echo "ok: nothing written into the input" ||
	{ echo "FAIL: the input changed: $(ls -A "$dir/t")"; fails=$((fails + 1)); }
expect 2 '--sync-report writes nothing: no -o' -- merge --sync-report -o "$dir/sr" "$dir/t"
[ -e "$dir/sr" ] && { echo "FAIL: --sync-report -o wrote $dir/sr"; fails=$((fails + 1)); }

# accepted exchanges spill into TMPDIR: its failures name it, nothing stays
(fails=0; export TMPDIR="$dir/nothere"
 expect 1 "a temporary file in $dir/nothere \(TMPDIR\): No such file" -- merge -o "$dir/sp" "$dir/t"
 mkdir "$dir/spill"; export TMPDIR="$dir/spill"; trap '' XFSZ; ulimit -f 4
 expect 1 "a temporary file in $dir/spill \(TMPDIR\): File too large" -- merge -o "$dir/sp" "$dir/t"
 exit $fails) || fails=$((fails + 1))
[ -e "$dir/sp" ] && { echo "FAIL: a failed merge left $dir/sp"; fails=$((fails + 1)); }
[ -z "$(ls -A "$dir/spill")" ] && echo "ok: no temporary file left in TMPDIR" ||
	{ echo "FAIL: left in TMPDIR: $(ls -A "$dir/spill")"; fails=$((fails + 1)); }

# a full disk (RLIMIT_FSIZE) while writing: the file named, nothing under MERGED
(fails=0; trap '' XFSZ; ulimit -f 1000
 expect 1 "$dir/\.fz\.partial-[^/]+/merged\.vtf: File too large" -- merge -o "$dir/fz" "$dir/t"
 exit $fails) || fails=$((fails + 1))
[ -e "$dir/fz" ] && { echo "FAIL: a merge that failed left $dir/fz"; fails=$((fails + 1)); }

# killed while writing: the merged trace only under its temporary name;
# interrupted: not even that, and the merge ends by the signal
"$writer" --write "$dir/long" 5 || { echo "FAIL: writing the long trace"; exit 1; }
# (a file inside the temporary folder: merge reserves the name with a
# mkdtemp and rmdir before its writer makes the folder, and a kill in
# between rightly leaves nothing)
for sig in KILL INT TERM; do
	if interrupt $sig "$dir/.long.merged.partial-*/*" -- merge "$dir/long"; then
		partial=${partial%/*}
		left=$(find "$dir" -maxdepth 1 -name '.long.merged.partial-*')
		if [ -e "$dir/long.merged" ]; then
			echo "FAIL: SIG$sig: a merged trace under the asked name"; fails=$((fails + 1))
		elif [ "$st" -le 128 ]; then
			echo "FAIL: SIG$sig: exit $st, not by the signal"; fails=$((fails + 1))
		elif [ $sig = KILL ] && [ "$left" = "$partial" ]; then
			echo "ok: SIGKILL: only $(basename "$left") left, $st"
			expect 1 'long.merged: No such file' -- dump "$dir/long.merged"
		elif [ $sig != KILL ] && [ -z "$left" ]; then
			echo "ok: SIG$sig: exit $st, temporary folder removed"
		else
			echo "FAIL: SIG$sig: left '$left'"; fails=$((fails + 1))
		fi
		rm -rf "$dir"/.long.merged.partial-*
	else
		echo "FAIL: SIG$sig: the merge ended (exit $st) before its temporary folder appeared"
		fails=$((fails + 1)); rm -rf "$dir/long.merged"
	fi
done

# ---- damaged input: never merged as if it were whole ----
flip() { printf '\377' | dd of="$1" bs=1 seek=$(($(stat -c %s "$1") / 2)) conv=notrunc 2>/dev/null; }
# one flipped byte mid host stream (pass 1 finds it): refused, nothing written
cp -r "$dir/t" "$dir/h"
flip "$dir/h/host-cpu0.vtf"
expect 1 'vmscope merge: .*/h is damaged \(0 torn, 1 corrupt.*host-cpu0.vtf: corrupt at offset [0-9]+' -- merge "$dir/h"
[ -e "$dir/h.merged" ] && fail "a damaged input was merged without --accept-damage"
# accepted: merged, the damage printed and kept in the output's summary
expect 0 'merged trace .*/hm is marked damaged \(--accept-damage\)' -- merge --accept-damage -o "$dir/hm" "$dir/h"
expect 0 'input damaged: .*host-cpu0.vtf: corrupt' -- merge --accept-damage --sync-report "$dir/h"
# downstream: refused unless --accept-damage, then said
expect 1 'vmscope dump: .*/hm is damaged .*made from damaged input .*/h: host-cpu0.vtf: corrupt' -- dump --summary "$dir/hm"
expect 0 '^-- damaged: .*made from damaged input' -- dump --summary --accept-damage "$dir/hm"
expect 1 'made from damaged input' -- merge --show "$dir/hm"
expect 0 '^damaged: .*made from damaged input' -- merge --accept-damage --show "$dir/hm"
expect 1 'vmscope report exits: .*/hm is damaged .*host-cpu0.vtf: corrupt' -- report exits "$dir/hm"
expect 0 '^damaged: .*/hm is damaged' -- report exits --accept-damage "$dir/hm"
expect 0 '"damaged":".*/hm is damaged' -- report exits --json --accept-damage "$dir/hm"
expect 0 '"damaged":null' -- report exits --json "$dir/t.merged"
expect 1 'vmscope report sched: .*/hm is damaged' -- report sched "$dir/hm"
expect 0 '^damaged: ' -- report sched --accept-damage "$dir/hm"
expect 1 'vmscope export: .*/hm is damaged .*made from damaged input' -- export --perfetto "$dir/hm" -o "$dir/hm.pf"
[ -e "$dir/hm.pf" ] && fail "a damaged merged trace was exported"
# (a guest stream damaged where only the second pass reads it: the merged
# trace written and marked, in merge/tests/test_merge.c)
# a trace whose stream files do not hold what its summary lists
cp -r "$dir/t" "$dir/s"
rm "$dir/s/guest0-cpu0.vtf"
expect 1 'guest0-cpu0.vtf: listed in the summary .* missing' -- merge --sync-report "$dir/s"
# not a trace
expect 1 'vmscope merge: /etc: not a trace' -- merge --sync-report /etc

echo "$fails failed"
[ "$fails" -eq 0 ]
