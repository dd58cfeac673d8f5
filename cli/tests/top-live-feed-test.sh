#!/bin/sh
# `top --pid`'s path from the tap on (online/live.c) without the module:
# the host sub-buffers of the raw trace test_online --write makes (2 VMs x
# 2 vCPUs, three exit reasons) fed to the live source in turn per host
# stream (test_live_feed), and again with the first host stream whole
# before the others, against `top --replay` of the same trace: the
# host-only cumulative exits per VM and reason (count, total and its split,
# min, percentiles, max) equal the replay's; the intervals tile host time,
# the last one final; no record came too late; the walk's counts of exits
# and losses equal the replay's. And with the guest CPU streams fed too,
# each in turn with the host's (the agents' connections, through the
# online merge fed: pairing, clock segments, ordering as they arrive):
# every VM has its agent, every record is walked, and each guest task's
# exits summed over the intervals (count, total, min, max) equal the
# replay's of the raw trace. And with every chunk stamped as its reader
# took it and then every host buffer said found empty 3 s after the last
# (a VM gone quiet, test_live_feed drained): the same figures, and every
# exit is in an interval written before the end (the host time the
# readers' word gives reaches the walk without a record), the final one
# empty.
# Usage: top-live-feed-test.sh PATH-TO-vmscope PATH-TO-test_online PATH-TO-test_live_feed
set -u
exe=$1 writer=$2 feed=$3

. "$(dirname "$0")/expect.sh"
expect_tmpdir top-live-feed-test

"$writer" --write "$dir/raw" || { echo "FAIL: writing the raw trace"; exit 1; }
"$exe" top --replay "$dir/raw" --json --interval 0.05 --tasks 100 >"$dir/replay.json" 2>"$out" &&
"$feed" "$dir/raw" "$dir/live.json" 50000000 2>>"$out" &&
"$feed" "$dir/raw" "$dir/ahead.json" 50000000 ahead 2>>"$out" &&
"$feed" "$dir/raw" "$dir/guests.json" 50000000 guests 2>>"$out" &&
"$feed" "$dir/raw" "$dir/drained.json" 50000000 drained 2>"$dir/drained.err"
if [ $? -eq 0 ] && python3 - "$dir/replay.json" "$dir/live.json" "$dir/ahead.json" "$dir/guests.json" "$dir/drained.json" "$dir/drained.err" <<'PY'
import json, sys
rep = [json.loads(l) for l in open(sys.argv[1])]
early = open(sys.argv[-1]).read()
for path in sys.argv[2:-1]:
  live = [json.loads(l) for l in open(path)]
  guests = path.endswith("guests.json")
  assert live and live[-1]["final"] and not any(l["final"] for l in live[:-1])
  assert [l["interval"] for l in live] == list(range(len(live)))
  for a, b in zip(live, live[1:]):
      assert a["end_ns"] == b["start_ns"]
  rc, lc = rep[-1]["cumulative"], live[-1]["cumulative"]
  for k in ("exits", "losses", "open_dropped", "unattributed"):
      assert rc["counts"][k] == lc["counts"][k], (k, rc["counts"], lc["counts"])
  assert lc["counts"]["exits"] > 5000, lc["counts"]
  K = ("count", "total_ns", "kernel_ns", "user_ns", "halted_ns", "min_ns", "p50_ns", "p90_ns",
       "p99_ns", "p999_ns", "max_ns")
  by = lambda gs: {(g["vm"], g["reason"]): {k: g[k] for k in K} for g in gs}
  assert by(rc["reasons"]) == by(lc["reasons"]), (by(rc["reasons"]), by(lc["reasons"]))
  assert sum(l["counts"]["exits"] for l in live) == lc["counts"]["exits"]
  # with the guests: every record and the replay's guest tasks, summed
  # over the intervals
  assert (lc["counts"]["records"] == rc["counts"]["records"]) == guests, (lc["counts"], rc["counts"])
  T = ("count", "total_ns", "min_ns", "max_ns")
  def tasks(ls):
      d = {}
      for l in ls:
          for t in l["tasks"]:
              k = (t["vm"], t["task"]["tid"], t["task"]["comm"])
              a = d.setdefault(k, {"count": 0, "total_ns": 0, "min_ns": None, "max_ns": 0})
              a["count"] += t["count"]
              a["total_ns"] += t["total_ns"]
              a["min_ns"] = t["min_ns"] if a["min_ns"] is None else min(a["min_ns"], t["min_ns"])
              a["max_ns"] = max(a["max_ns"], t["max_ns"])
      return d
  if guests:
      rt, lt = tasks(rep), tasks(live)
      assert len(rt) == 4 and sum(t["count"] for t in rt.values()) > 9000, rt
      assert rt == lt, (rt, lt)
      assert lc["counts"]["exits_before_session"] == 0, lc["counts"]
      assert all(v["agent"] for l in live for v in l["vms"]), path
  # each VM's clock alignment: the live source's, a replay says it has none
  for l in live:
      for v in l["vms"]:
          want = ("no sync yet" if v["agent"] else "no agent") if not guests else None
          assert want is None or (v["sync"], v["sync_bound_ns"]) == (want, None), (path, v)
  if guests:
      for v in live[-1]["vms"]:
          assert v["sync"] == "bounded" and v["sync_bound_ns"] > 0, v
  for l in rep:
      for v in l["vms"]:
          assert (v["sync"], v["sync_bound_ns"]) == ("not shown in a replay", None), v
  if path.endswith("drained.json"):
      n = sum(l["counts"]["exits"] for l in live[:-1])
      assert "before the end: %d intervals, %d exits\n" % (len(live) - 1, n) == early, early
      assert n == lc["counts"]["exits"] and live[-1]["counts"]["exits"] == 0, (n, lc["counts"])
      print("drained: %s" % early.strip())
  print("live feed %s: %d intervals, %d exits%s, as the replay's" % (path.split("/")[-1], len(live), lc["counts"]["exits"], ", %d guest tasks" % len(tasks(live)) if guests else ""))
PY
then :; else echo "FAIL: the live feed against the replay"; sed 's/^/  | /' "$out" | tail -20; fails=$((fails + 1)); fi
grep -q 'too late' "$out" && { echo "FAIL: records too late: $(grep 'too late' "$out")"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ]
