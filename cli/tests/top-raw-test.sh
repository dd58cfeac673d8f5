#!/bin/sh
# `vmscope top --replay` on a raw trace (what `record` writes), merged
# online (merge/online.h), against the same trace merged by `vmscope
# merge`: test_online --write makes it (2 VMs x 2 vCPUs, exit/entry pairs
# of three reasons on each host CPU, guest tasks 100..103 switching,
# sync exchanges every ms with forgeries and a signalled guest clock
# step in VM 0; 0.4 s).
# - cumulative exits per VM and reason, and per VM and guest task: count,
#   total, min and max EQUAL to the merged trace's replay (also the
#   percentiles, the time split and the walk's counts);
# - the raw replay's intervals summed equal `report exits --json` on the
#   merged trace (per reason and per task: count, total, min, max);
# - a flipped byte in a host stream and a guest stream cut in half: said
#   on stderr, exit 1 (0 with --accept-damage, the damage still said).
# What is not asserted: the intervals one by one. The two timelines'
# first records differ (a guest record before any sync exchange, whose
# host time comes from the segment as the online merge first knows it,
# not as the two-pass fit ends), so the interval edges differ by that
# much (178 ns when this test was written) and an exit near an edge may
# land in the neighbour interval.
# Usage: top-raw-test.sh PATH-TO-vmscope PATH-TO-test_online
set -u
exe=$1 writer=$2

. "$(dirname "$0")/expect.sh"
expect_tmpdir top-raw-test

"$writer" --write "$dir/raw" || { echo "FAIL: writing the raw trace"; exit 1; }
"$exe" merge "$dir/raw" -o "$dir/merged" >/dev/null || { echo "FAIL: vmscope merge"; exit 1; }
expect 0 '^ *(usage: )?vmscope top --replay TRACE' -- top --help
expect 0 'a raw recording is merged' -- top --help

"$exe" top --replay "$dir/raw" --json --interval 0.05 --tasks 100 >"$dir/raw.json" 2>"$out" &&
"$exe" top --replay "$dir/merged" --json --interval 0.05 --tasks 100 >"$dir/merged.json" 2>>"$out" &&
"$exe" report exits --json --by reason "$dir/merged" >"$dir/reason.json" 2>>"$out" &&
"$exe" report exits --json --by task "$dir/merged" >"$dir/task.json" 2>>"$out"
if [ $? -eq 0 ] && python3 - "$dir/raw.json" "$dir/merged.json" "$dir/reason.json" "$dir/task.json" <<'PY'
import json, sys
raw = [json.loads(l) for l in open(sys.argv[1])]
mer = [json.loads(l) for l in open(sys.argv[2])]
rep = json.load(open(sys.argv[3]))
task = json.load(open(sys.argv[4]))
assert raw[-1]["final"] and mer[-1]["final"]
rc, mc = raw[-1]["cumulative"], mer[-1]["cumulative"]
assert rc["counts"] == mc["counts"], (rc["counts"], mc["counts"])
assert rc["counts"]["exits"] > 5000, rc["counts"]
K = ("count", "total_ns", "kernel_ns", "user_ns", "halted_ns", "min_ns", "p50_ns", "p90_ns",
     "p99_ns", "p999_ns", "max_ns")
by = lambda gs: {(g["vm"], g["reason"]): {k: g[k] for k in K} for g in gs}
assert by(rc["reasons"]) == by(mc["reasons"]), (by(rc["reasons"]), by(mc["reasons"]))
assert len(rc["reasons"]) == 6, len(rc["reasons"])
def sums(lines, key, name):
    agg = {}
    for l in lines:
        for g in l[key]:
            k = (g["vm"], g[name]["tid"] if name == "task" else g[name])
            a = agg.setdefault(k, dict(count=0, total_ns=0, min_ns=None, max_ns=0))
            a["count"] += g["count"]
            a["total_ns"] += g["total_ns"]
            a["min_ns"] = g["min_ns"] if a["min_ns"] is None else min(a["min_ns"], g["min_ns"])
            a["max_ns"] = max(a["max_ns"], g["max_ns"])
    return agg
# per guest task: the intervals' sums, raw and merged
rt, mt = sums(raw, "tasks", "task"), sums(mer, "tasks", "task")
assert rt == mt and len(rt) == 4, (rt, mt)
# the raw replay's intervals against the report on the merged trace
rr = sums(raw, "reasons", "reason")
assert len(rr) == len(rep["groups"]) == 6
for g in rep["groups"]:
    a = rr[(g["vm"], g["reason"])]
    for k in a:
        assert a[k] == g[k], (g["vm"], g["reason"], k, a[k], g[k])
assert len(task["groups"]) == 4
for g in task["groups"]:
    a = rt[(g["vm"], g["task"]["tid"])]
    for k in a:
        assert a[k] == g[k], (g["vm"], g["task"], k, a[k], g[k])
for k in ("records", "exits", "losses", "unattributed", "open_dropped", "entries_without_exit"):
    assert sum(l["counts"][k] for l in raw) == rep["counts"][k], k
# the intervals tile the raw replay
for a, b in zip(raw, raw[1:]):
    assert a["end_ns"] == b["start_ns"]
print("raw vs merged: %d exits, %d reasons, %d tasks equal; first record %+d ns" % (
    rc["counts"]["exits"], len(rr), len(rt), raw[0]["start_ns"] - mer[0]["start_ns"]))
PY
then
	echo "ok: top --replay RAW equals top --replay MERGED and report exits"
else
	echo "FAIL: top --replay RAW against MERGED"; cat "$out"; fails=$((fails + 1))
fi

# damage: a flipped byte in a host stream, a guest stream cut in half
damage_raw "$dir/raw"
expect 1 'flip is damaged .*host-cpu0.vtf: corrupt' -- top --replay "$dir/flip" --json
expect 1 'cut is damaged .*guest0-cpu0.vtf: [0-9]+ bytes, the summary lists' -- top --replay "$dir/cut" --json
expect 0 'damaged \(accepted\)' -- top --replay "$dir/cut" --json --accept-damage
expect 1 'no such|No such' -- top --replay "$dir/nothere" --json

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
