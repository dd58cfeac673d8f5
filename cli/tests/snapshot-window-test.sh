#!/bin/sh
# A snapshot window (collector/snap_store.h, snap_write.h, online/live_snap.h)
# from `record --metrics-fd --snapshot-dir`'s path without the module: the raw
# trace `test_online --write-stalls` makes (2 VMs x 2 vCPUs, vCPU threads
# taken off their CPUs) fed to the metrics feed with a stall trigger over
# 150 us and snapshot windows of 60 ms before and 60 ms after
# (test_metrics_feed ... snap=DIR pick=4: it sends the fifth trigger, 200 ms
# into the 400 ms trace, back as vmscoped admits one, and computes from
# what it fed, apart from the store, the items the window must hold: a
# host chunk by its end, a guest chunk by its records' host times as
# `vmscope merge` converts them; the window ends 140 ms before the trace,
# so it is written while the feed goes on). Fed twice: guest chunks
# among the host's, and every guest chunk after the whole host side
# (agents that send late: the window waits for them). Each time:
# - exactly one snapshot folder, none left under a temporary (dot) name;
# - `vmscope dump` of it exits 0 and its streams are exactly those the test
#   computed, each with its chunks, events, losses and missing sub-buffers,
#   indexed; every guest CPU's stream among them, none of its chunks of
#   the span fed after the window was written, no stream said incomplete
#   or placed by arrival; the window starts mid-stream (a first chunk seq above 0 and
#   fewer chunks than the recording) and still counts no gap and no loss
#   at its start (the cut); the metadata names the trigger;
# - `vmscope merge` of it exits 0 with no damage, `report exits` exits 0,
#   and `report sched --json` lists the trigger's stall: same vCPU, start,
#   duration and guest thread;
# - with thresholds above every stall, no snapshot is written.
# Usage: snapshot-window-test.sh PATH-TO-vmscope PATH-TO-test_online PATH-TO-test_metrics_feed
set -u
exe=$1 writer=$2 feed=$3

. "$(dirname "$0")/expect.sh"
expect_tmpdir snapshot-window-test

"$writer" --write-stalls "$dir/raw" >/dev/null || { echo "FAIL: writing the raw trace"; exit 1; }

check_window() {
	local how=$1 n win
	rm -rf "$dir/snaps" "$dir/wmerged"
	"$feed" "$dir/raw" "$dir/feed.json" 50000000 "$how" stall=150000 snap="$dir/snaps" \
		before=60000000 after=60000000 pick=4 2>"$out" ||
		{ echo "FAIL: the feed ($how)"; sed 's/^/  | /' "$out" | tail -20; fails=$((fails + 1)); return; }
	n=$(ls -A "$dir/snaps" | wc -l)
	win=$(ls "$dir/snaps" | head -n 1)
	if [ "$n" -ne 1 ] || [ -z "$win" ]; then
		echo "FAIL: $n entries in the snapshots folder, not one:"; ls -A "$dir/snaps"; fails=$((fails + 1)); return
	fi
	echo "ok ($how): one snapshot, $win"
	win=$dir/snaps/$win
	grep -q "snapshot: $win " "$out" || { echo "FAIL: the snapshot's path not said"; fails=$((fails + 1)); }

	"$exe" dump "$win" >"$dir/wdump.txt" 2>>"$out" &&
	"$exe" dump "$dir/raw" >"$dir/rdump.txt" 2>>"$out" &&
	"$exe" merge "$win" -o "$dir/wmerged" >"$dir/merge.txt" 2>&1 &&
	"$exe" report exits "$win" >/dev/null 2>>"$out" &&
	"$exe" report sched --json --top 100000 "$win" >"$dir/wsched.json" 2>>"$out"
	if [ $? -eq 0 ] && grep -q "^input: no damage" "$dir/merge.txt" &&
		python3 - "$dir/feed.json" "$dir/wdump.txt" "$dir/rdump.txt" "$dir/wsched.json" <<'PY'
import json, re, sys
feed = json.load(open(sys.argv[1]))
wdump, rdump = open(sys.argv[2]).read(), open(sys.argv[3]).read()
sched = json.load(open(sys.argv[4]))
end = re.compile(r"^end of (\S+): clean end after \d+ frames, (\d+) chunks, (\d+) events, "
                 r"0 undecodable, (\d+) lost, (\d+) sub-buffers missing(, indexed)?$", re.M)
got = {m.group(1): m.groups()[1:] for m in end.finditer(wdump)}
raw = {m.group(1): m.groups()[1:] for m in end.finditer(rdump)}
want = feed["window"]["streams"]
assert set(got) == set(want), (sorted(got), sorted(want))
# every guest CPU's records of the span came before the window was written
assert feed["window"]["guest_chunks_late"] == 0, feed["window"]
assert sum(n.startswith("guest") for n in want) == 4, sorted(want)
assert "incomplete" not in wdump and "placed by arrival" not in wdump
cut = 0
for name, w in want.items():
    g = got[name]
    assert (int(g[0]), int(g[1]), int(g[2]), int(g[3])) == \
        (w["chunks"], w["records"], w["lost"], w["gaps"]), (name, g, w)
    assert g[4] == ", indexed", (name, g)
    if w["first_seq"] > 0 and w["chunks"] < int(raw[name][0]):
        cut += 1
# every stream of this window starts mid-stream: the cut, counted as nothing
assert cut == len(want), (cut, want)
assert "(the recording ended first)" not in wdump
t = feed["triggers"][feed["window"]["trigger"]]
line = ("snapshot window of .*: host %d .. %d; trigger: stall %s of %d ns > 150000 ns on "
        "vCPU %d at host %d \\(guest task %s, host task %s\\)" %
        (feed["window"]["begin_ns"], feed["window"]["end_ns"], re.escape(t["what"]),
         t["dur_ns"], t["vcpu"], t["start_ns"], re.escape(t["task"]),
         re.escape(t["host_task"])))
assert re.search(line, wdump), line
tid = int(t["task"].rsplit("/", 1)[1])
assert any(w["vcpu"] == t["vcpu"] and w["start_ns"] == t["start_ns"] and
           w["duration_ns"] == t["dur_ns"] and w["thread"]["tid"] == tid
           for w in sched["worst"]), "the trigger's stall is not in report sched"
print("window: %d streams, %d events, trigger %s %d ns, written after %d of %d items fed" %
      (len(want), sum(w["records"] for w in want.values()), t["task"], t["dur_ns"],
       feed["window"]["written_at"], feed["window"]["fed"]))
PY
	then echo "ok ($how): the window against what was fed"; else
		echo "FAIL ($how): the window against what was fed"; sed 's/^/  | /' "$out" "$dir/merge.txt" | tail -20
		fails=$((fails + 1))
	fi
}

check_window guests
check_window guests-last

# thresholds above every stall: no trigger, no snapshot
"$feed" "$dir/raw" "$dir/nfeed.json" 50000000 guests stall=10000000000 \
	snap="$dir/none" 2>"$out" || { echo "FAIL: the feed without a trigger"; fails=$((fails + 1)); }
if [ -e "$dir/none" ] && [ -n "$(ls -A "$dir/none")" ]; then
	echo "FAIL: a snapshot without a trigger:"; ls -A "$dir/none"; fails=$((fails + 1))
else
	echo "ok: no trigger, no snapshot"
fi
[ "$fails" -eq 0 ]
