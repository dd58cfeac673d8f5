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
# against `report exits --json`; no bound (no clock sample live).
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
print("metrics feed: %d frames; VM 0: %s" % (feed["frames"],
      ", ".join("%s %d exits, %d ns" % (r, w["count"], w["sum_ns"]) for r, w in sorted(want.items()))))
PY
then :; else echo "FAIL: the metrics feed against the trace"; sed 's/^/  | /' "$out" | tail -20; fails=$((fails + 1)); fi
grep -q 'too late' "$out" && { echo "FAIL: records too late: $(grep 'too late' "$out")"; fails=$((fails + 1)); }
grep -q '8 snapshots sent, 0 dropped' "$out" || { echo "FAIL: snapshots: $(grep snapshots "$out")"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ]
