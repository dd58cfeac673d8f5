#!/bin/sh
# `vmscope record --metrics-fd`'s path from the recorder's tap on
# (online/live_metrics.c), without the module: the host sub-buffers of the
# raw trace test_online --write makes (2 VMs x 2 vCPUs, three exit
# reasons) fed to the metrics feed in turn per host stream
# (test_metrics_feed, 50 ms snapshots; every frame parses, seq without a
# gap, no counter falls). Its last snapshot (VM 0) against measures made
# apart from the walk: per exit reason the count, the total and the count
# in every 4^k-1 ns bucket of VM 0's exits computed here from the CTF
# export of the same trace (kvm_exit .. the vCPU's next kvm_entry, a
# repeated kvm_exit ending the open one uncounted, as analysis/README.md
# defines an exit; VM by the record's thread); the vCPU time split
# against `report exits --json`; no bound and no guest steal (no guest
# record fed).
# Then with the guests' side: the raw trace `test_online --write-stalls`
# makes (the same, with each host CPU's vCPU thread taken off it for
# 40-200 us every 23rd filler slot, preempted by a host task 3 times in 4,
# else blocked; steal readings growing 15 us per exchange) fed with its
# guest CPU streams (test_metrics_feed ... guests). Its last snapshot
# against measures made apart from the live pipeline: the guest steal
# against the CTF export's sync_guest readings (per VM 0 guest CPU, the
# last steal_ns minus the first), the preempted time against the CTF
# export's host sched_switch records (a VM 0 vCPU thread switched out
# runnable until it is switched in again), the stalls by class against
# `report sched --json` on the same trace (the two-pass merge and the
# report: VM 0's threads but the idle one, stalled while running and
# runnable, and their "blocked in host" charges); a bound present, within
# 1 us of the largest `vmscope merge` fits for VM 0.
# Then the triggers (online/trigger.h) on that trace, thresholds 150 us for
# a stall and 100 us for an exit that is not a halt: each trigger is one of
# `report sched --json`'s stalls (or `report exits --json`'s exits) of VM
# 0, the same vCPU, start, duration, guest thread and host task, over its
# threshold; every such stall (exit) of the report has a trigger at least
# as long within one interval (50 ms) of its end, the longest is one; no
# trigger with the thresholds above the longest.
# Usage: metrics-feed-test.sh PATH-TO-vmscope PATH-TO-test_online PATH-TO-test_metrics_feed
set -u
exe=$1 writer=$2 feed=$3

. "$(dirname "$0")/expect.sh"
expect_tmpdir metrics-feed-test

"$writer" --write "$dir/raw" >/dev/null || { echo "FAIL: writing the raw trace"; exit 1; }
"$feed" "$dir/raw" "$dir/feed.json" 50000000 2>"$out" &&
"$exe" report exits --json "$dir/raw" >"$dir/report.json" 2>>"$out" &&
"$exe" export --ctf "$dir/raw" -o "$dir/ctf" 2>>"$out" >&2 &&
babeltrace2 "$dir/ctf" >"$dir/ctf.txt" 2>>"$out"
if [ $? -eq 0 ] && python3 - "$dir/feed.json" "$dir/report.json" "$dir/ctf.txt" <<'PY'
import json, re, sys
feed = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))
# the threads of each VM's vCPUs, from the recording's metadata
vm_of = {c["tid"]: v["vm"] for v in rep["vms"] for c in v["vcpus"]}
# AMD (isa 2) exit codes of test_online's three reasons
names = {(2, 114): "cpuid", (2, 120): "hlt", (2, 123): "io"}
line = re.compile(r" (kvm_exit|kvm_entry): \{ origin = 0, cpu = \d+, tid = (-?\d+), "
                  r"vcpu = \d+, orig_ts = (\d+) \}, \{ (.*) \}$")
opened, durs = {}, {}
for l in open(sys.argv[3]):
    m = line.search(l)
    if not m:
        continue
    ev, tid, ts, f = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
    if vm_of.get(tid) != 0:
        continue
    fields = dict(kv.split(" = ") for kv in f.split(", "))
    key = int(fields["vcpu_id"])
    if ev == "kvm_exit":
        opened[key] = (ts, names[(int(fields["isa"]), int(fields["exit_reason"]))])
    elif key in opened:
        t0, r = opened.pop(key)
        durs.setdefault(r, []).append(ts - t0)
want = {}
for r, ds in durs.items():
    b = [0] * 16
    for d in ds:
        k = 1
        while k <= 16 and d >> (2 * k):
            k += 1
        if k <= 16:
            b[k - 1] += 1
    want[r] = {"count": len(ds), "sum_ns": sum(ds), "buckets": b}
got = feed["reasons"]
assert got == want, (got, want)
assert sum(w["count"] for w in want.values()) > 4000, want
v0 = [v for v in rep["vms"] if v["vm"] == 0][0]["vcpus"]
for k in ("guest_ns", "kernel_ns", "user_ns", "halted_ns"):
    assert feed[k] == sum(c[k] for c in v0), (k, feed[k], [c[k] for c in v0])
assert feed["frames"] >= 7 and not feed["has_bound"] and feed["events_lost"] == 0, feed
# no guest record fed: no clock sample, no steal reading
assert not feed["has_steal"] and feed["steal_ns"] == 0, feed
print("metrics feed: %d frames; VM 0: %s" % (feed["frames"],
      ", ".join("%s %d exits, %d ns" % (r, w["count"], w["sum_ns"]) for r, w in sorted(want.items()))))
PY
then :; else echo "FAIL: the metrics feed against the trace"; sed 's/^/  | /' "$out" | tail -20; fails=$((fails + 1)); fi
grep -q 'too late' "$out" && { echo "FAIL: records too late: $(grep 'too late' "$out")"; fails=$((fails + 1)); }
grep -q '8 snapshots sent, 0 dropped' "$out" || { echo "FAIL: snapshots: $(grep snapshots "$out")"; fails=$((fails + 1)); }

# the guests' side: steal, stalls, bound
"$writer" --write-stalls "$dir/stalls" >/dev/null || { echo "FAIL: writing the stalls trace"; exit 1; }
"$feed" "$dir/stalls" "$dir/gfeed.json" 50000000 guests 2>"$out" &&
"$exe" report sched --json "$dir/stalls" >"$dir/sched.json" 2>>"$out" &&
"$exe" report exits --json "$dir/stalls" >"$dir/greport.json" 2>>"$out" &&
"$exe" merge "$dir/stalls" -o "$dir/gmerged" >"$dir/gmerge.txt" 2>>"$out" &&
"$exe" export --ctf "$dir/stalls" -o "$dir/gctf" 2>>"$out" >&2 &&
babeltrace2 "$dir/gctf" >"$dir/gctf.txt" 2>>"$out"
if [ $? -eq 0 ] && python3 - "$dir/gfeed.json" "$dir/sched.json" "$dir/greport.json" "$dir/gctf.txt" \
	"$dir/gmerge.txt" <<'PY'
import json, re, sys
feed = json.load(open(sys.argv[1]))
# VM 0's segment bounds as `vmscope merge` fits them with every sample
merge = open(sys.argv[5]).read().split("\nvm1 ")[0].split("\nvm0 ")[1]
bounds = [int(b) for b in re.findall(r"samples, bound (\d+) ns", merge)]
sched = json.load(open(sys.argv[2]))
rep = json.load(open(sys.argv[3]))
vm0 = {c["tid"] for v in rep["vms"] if v["vm"] == 0 for c in v["vcpus"]}
line = re.compile(r" (?:vm\d+:)?(sync_guest|sched_switch): \{ origin = (\d+), cpu = (\d+), tid = -?\d+, "
                  r"vcpu = \d+, orig_ts = (\d+) \}, \{ (.*) \}$")
steal = {}            # VM 0's guest CPU: [first, last] steal_ns
off, preempted = {}, 0
for l in open(sys.argv[4]):
    m = line.search(l)
    if not m:
        continue
    ev, origin, cpu, ts = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
    fields = dict(kv.split(" = ", 1) for kv in m.group(5).split(", "))
    if ev == "sync_guest" and origin == 1:
        v = int(fields["steal_ns"])
        steal.setdefault(cpu, [v, v])[1] = v
    elif ev == "sched_switch" and origin == 0:
        # host time: a vCPU thread switched out runnable is preempted
        # until it is switched in again
        prev, nxt = int(fields["prev_pid"]), int(fields["next_pid"])
        if nxt in off:
            t0, runnable = off.pop(nxt)
            preempted += ts - t0 if runnable else 0
        if prev in vm0:
            off[prev] = (ts, int(fields["prev_state"], 0) == 0)
want_steal = sum(b - a for a, b in steal.values())
v0 = [v for v in sched["vms"] if v["vm"] == 0][0]
th = [t for t in v0["threads"] if t["tid"] != 0]
run = sum(t["stall_running_ns"] for t in th)
rq = sum(t["stall_runnable_ns"] for t in th)
run_blocked = sum(b["ns"] for t in th for b in t["stalled_by"] if b.get("blocked_in_host"))
g = feed["stall_ns"]
print("guest feed: %d frames; VM 0: steal %d ns over %d guest CPUs, preempted %d ns, "
      "stalls running %d + %d ns, runnable %d + %d ns (preempted + blocked in host), bound %d ns"
      % (feed["frames"], feed["steal_ns"], len(steal), feed["preempted_ns"], g[0][0], g[0][1],
         g[1][0], g[1][1], feed["bound_ns"]))
assert all(t["stalled_by_others_ns"] == 0 for t in th), th
assert feed["has_steal"] and feed["steal_ns"] == want_steal > 0, (feed["steal_ns"], want_steal)
assert feed["steal_ns"] == sum(c["guest_steal_ns"] for c in v0["vcpus"]), v0["vcpus"]
assert feed["preempted_ns"] == preempted > 0, (feed["preempted_ns"], preempted)
assert feed["has_stall"] and min(g[0] + g[1]) > 0, g
assert g[0][0] + g[0][1] == run and g[0][1] == run_blocked, (g, run, run_blocked)
assert g[1][0] + g[1][1] == rq, (g, rq)
assert g[0][0] <= preempted, (g, preempted)
# the live bound is the last guest record's, converted with the segment as
# it stood (all but its last samples): near the final one's bounds, the
# extrapolation over an exchange period (1 ms) at the drift range merge
# reports (~7 ppm) adding ns, far below the 1 us allowed
assert bounds and feed["has_bound"] and 0 < feed["bound_ns"] <= max(bounds) + 1000, \
    (feed["bound_ns"], bounds)
assert feed["events_lost"] == 0, feed
PY
then :; else echo "FAIL: the guest figures against the trace"; sed 's/^/  | /' "$out" | tail -20; fails=$((fails + 1)); fi

# triggers: 50 ms intervals, a stall over 150 us, an exit over 100 us
"$feed" "$dir/stalls" "$dir/tfeed.json" 50000000 guests stall=150000 exit=100000 2>"$out" &&
"$feed" "$dir/stalls" "$dir/nfeed.json" 50000000 guests stall=10000000000 exit=10000000000 \
	2>>"$out" &&
"$exe" report sched --json --top 100000 "$dir/stalls" >"$dir/tsched.json" 2>>"$out" &&
"$exe" report exits --json --top 100000 "$dir/stalls" >"$dir/texits.json" 2>>"$out"
if [ $? -eq 0 ] && python3 - "$dir/tfeed.json" "$dir/nfeed.json" "$dir/tsched.json" \
	"$dir/texits.json" <<'PY'
import json, sys
feed, none = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sched, exits = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
IV = 50000000
def tid(label):
    return int(label.rsplit("/", 1)[1]) if "/" in label else -1
def check(kind, thr, want, same):
    got = [t for t in feed["triggers"] if t["kind"] == kind]
    over = [w for w in want if w["duration_ns"] > thr]
    for t in got:
        assert t["threshold_ns"] == thr and t["dur_ns"] > thr, t
        assert any(same(t, w) for w in over), ("not in the report", t)
    for w in over:
        end = w["start_ns"] + w["duration_ns"]
        assert any(t["dur_ns"] >= w["duration_ns"] and
                   abs(t["start_ns"] + t["dur_ns"] - end) < IV for t in got), ("missed", w)
    top = max(over, key=lambda w: w["duration_ns"])
    assert any(same(t, top) for t in got), ("the longest missed", top)
    return len(got), len(over)
stalls = [w for w in sched["worst"] if w["vm"] == 0]
assert len(stalls) < 100000, len(stalls)
ns, nsw = check("stall", 150000, stalls, lambda t, w: t["vcpu"] == w["vcpu"] and
                t["start_ns"] == w["start_ns"] and t["dur_ns"] == w["duration_ns"] and
                tid(t["task"]) == w["thread"]["tid"] and
                (t["host_task"] == "(blocked in host)" if w.get("blocked_in_host")
                 else tid(t["host_task"]) == w["host_task"]["tid"]) and
                t["what"] == "running, " + ("preempted" if w["preempted"] else "blocked in host"))
busy = [e for e in exits["top"] if e["vm"] == 0 and not e["halted"]]
assert len(exits["top"]) < 100000, len(exits["top"])
ne, new = check("exit", 100000, busy, lambda t, w: t["vcpu"] == w["vcpu"] and
                t["start_ns"] == w["start_ns"] and t["dur_ns"] == w["duration_ns"] and
                t["what"] == w["reason"])
assert none["triggers"] == [], none["triggers"]
print("triggers: %d stalls over 150 us in %d triggers, %d exits over 100 us in %d triggers"
      % (nsw, ns, new, ne))
PY
then :; else echo "FAIL: the triggers against the trace"; sed 's/^/  | /' "$out" | tail -20; fails=$((fails + 1)); fi
[ "$fails" -eq 0 ]
