#!/bin/sh
# `vmscope dump` on a trace written by reader/tests/test_reader.c --write
# (the tracefmt writer, as the collector writes): event lines through the
# stored formats, loss/gap/bad lines, per-event totals, exit status; then
# the same trace with a stream cut mid-frame (a killed recorder): every
# whole frame read, "torn tail" reported, exit 0 once nothing else is wrong
# and the trace has no summary (else damage, 1); the summary's inventory
# (deleted, truncated, duplicated, empty stream files), corrupt metadata,
# a folder that is not a trace, a FIFO: 1, with the file named.
# Usage: dump-test.sh PATH-TO-vmscope PATH-TO-test_reader
set -u
exe=$1 writer=$2
. "$(dirname "$0")/expect.sh"
expect_tmpdir dump-test

"$writer" --write "$dir/t" || { echo "FAIL: writing the trace"; exit 1; }
expect 0 'usage: vmscope dump' -- dump --help
expect 2 'usage: vmscope dump' -- dump
expect 1 'vmscope dump: .*/nothere: No such file' -- dump "$dir/nothere"
# undecodable records make the status 1
expect 1 '^0\.000001000 host cpu0 kvm_exit: vcpu 1 reason 0x7b rip 0xffffffff81000000 ' -- dump "$dir/t"
expect 1 '^-- 8\.589939592 host cpu0 sub-buffers 2\.\.2 missing$' -- dump "$dir/t"
expect 1 '^-- 8\.589939592 host cpu0 lost 7 events \(ring buffer\)$' -- dump "$dir/t"
expect 1 'bad \(offset [0-9]+\): event 999: no descriptor' -- dump "$dir/t"
expect 1 '^0\.000000010 guest0 cpu1 guest_tick: n 77$' -- dump "$dir/t"
expect 1 '^events host kvm_exit 2$' -- dump --summary "$dir/t"
expect 1 '^total: 2 streams \(2 clean, 0 torn, 0 corrupt, 0 unreadable\), 5 events, 2 undecodable, 1 bad, 10 lost' -- dump --summary "$dir/t"
expect 1 'no stream nope.vtf' -- dump --stream nope.vtf "$dir/t"

# merged (its undecodable records are damage: refused, then accepted):
# the ring buffer's 7 lost events stay a loss in the merged trace, not an
# unreadable LossRecord
expect 1 'vmscope merge: .*/t is damaged .*undecodable' -- merge -o "$dir/rm0" "$dir/t"
expect 0 'merged trace .*/rm is marked damaged' -- merge --accept-damage -o "$dir/rm" "$dir/t"
expect 0 '^-- 8\.589939592 host cpu0 lost 7 events \(ring buffer full: ring buffer, before sub-buffer 3\)$' -- dump --accept-damage "$dir/rm"
expect 0 '[(]0 torn, 0 corrupt, 0 unreadable, 0 bad, 0 undecodable, 0 inventory, 0 metadata, 0 write errors, made from damaged input' -- dump --accept-damage "$dir/rm"

# host-cpu0 alone, cut 5 bytes before its end (inside the index frame):
# every frame before the cut is read, the tail is torn; its undecodable
# record (id 999) still makes the status 1.
f=$dir/t/host-cpu0.vtf
truncate -s $(($(stat -c %s "$f") - 5)) "$f"
expect 1 'end of host-cpu0.vtf: torn tail after 5 frames, 3 chunks, 4 events, 1 undecodable, 10 lost, 1 sub-buffers missing: at offset' -- dump --stream host-cpu0.vtf "$dir/t"
# a stream with nothing undecodable that is torn, in a trace without a
# summary (a killed recorder): status 0, and said
rm -f "$dir/t/host-cpu0.vtf" "$dir/t/guest0-cpu1.vtf"
"$writer" --write-killed "$dir/t2" >/dev/null || exit 1
mv "$dir/t2/metadata.vtf" "$dir/t/"
head -c 60 "$dir/t2/host-cpu0.vtf" >"$dir/t/host-cpu0.vtf"
expect 0 'end of host-cpu0.vtf: torn tail after 1 frames' -- dump "$dir/t"
expect 0 'no summary frame' -- dump "$dir/t"
# the same torn stream where a summary says the recording stopped cleanly
# (and lists guest0-cpu1.vtf, now missing): damage, status 1
"$writer" --write "$dir/t3" >/dev/null || exit 1
rm -f "$dir/t/metadata.vtf"
cp "$dir/t3/metadata.vtf" "$dir/t/"
expect 1 'guest0-cpu1.vtf: listed in the summary .*, missing' -- dump "$dir/t"
expect 1 'host-cpu0.vtf: 60 bytes, the summary lists [0-9]+' -- dump "$dir/t"

# the summary's inventory: a deleted, a truncated, a duplicated, an empty
# stream file; each damage, named; a duplicated stream's events are not
# silently counted twice
inv() { rm -rf "$dir/i"; "$writer" --write "$dir/i" >/dev/null || exit 1; }
inv; rm "$dir/i/guest0-cpu1.vtf"
expect 1 'vmscope dump: .*/i is damaged .*guest0-cpu1.vtf: listed in the summary' -- dump --summary "$dir/i"
inv; truncate -s -7 "$dir/i/guest0-cpu1.vtf"
expect 1 'guest0-cpu1.vtf: [0-9]+ bytes, the summary lists' -- dump --summary "$dir/i"
inv; cp "$dir/i/host-cpu0.vtf" "$dir/i/host-cpu1.vtf"
expect 1 'host-cpu1.vtf: not in the summary' -- dump --summary "$dir/i"
expect 1 '[(]0 torn, 0 corrupt, 0 unreadable, [0-9]+ bad, [0-9]+ undecodable, 2 inventory' -- dump --summary "$dir/i"
inv; : >"$dir/i/host-cpu3.vtf"
expect 1 'host-cpu3.vtf: not in the summary' -- dump --summary "$dir/i"
expect 1 'total: 3 streams \(2 clean, 1 torn' -- dump --summary "$dir/i"
# --accept-damage: printed, status 0, still said
expect 0 '^-- damaged: .*host-cpu3.vtf' -- dump --summary --accept-damage "$dir/i"
# metadata corrupt mid-file (a byte of the session frame's payload)
inv; printf '\377' | dd of="$dir/i/metadata.vtf" bs=1 seek=100 conv=notrunc 2>/dev/null
expect 1 'metadata.vtf: (frame at offset|corrupt)' -- dump --summary "$dir/i"
# not a trace
expect 1 'vmscope dump: /etc: not a trace: no metadata.vtf and no stream files' -- dump /etc
# a FIFO in the folder: refused at once (the timeout is the test)
inv; mkfifo "$dir/i/host-cpu4.vtf"
expect 1 'stream host-cpu4.vtf: cannot open: not a regular file' -- dump --summary "$dir/i"

[ "$fails" -eq 0 ] && echo "dump-test: ok" || echo "dump-test: $fails failures"
[ "$fails" -eq 0 ]
