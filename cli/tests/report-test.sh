#!/bin/sh
# `vmscope report exits` and `report sched` on the merged traces analysis/tests/test_analysis.c
# --write makes (2 VMs x 3 vCPUs, three guest tasks, io/cpuid/hlt/npf exits
# on AMD for VM 0 and their Intel codes for VM 1): text tables, --by,
# --sort, --top, --json (parsed: group counts add up to the exits, every
# task group lists its reasons); --svg (xmllint; a panel per JSON group
# with its count; an existing file refused); stdout on a full disk (/dev/full:
# exit 1, said); a truncated merged stream (report of
# what was read, exit 1); a trace that is not merged; usage errors. Then
# `report sched` on a trace where a host task preempts the vCPU thread
# (--write-sched): stalls per thread and vCPU add up to the hog's time.
# Usage: report-test.sh PATH-TO-vmscope PATH-TO-test_analysis
set -u
exe=$1 writer=$2
. "$(dirname "$0")/expect.sh"
expect_tmpdir report-test

"$writer" --write "$dir" || { echo "FAIL: writing the trace"; exit 1; }
m=$dir/merged
expect 0 'usage: vmscope report exits' -- report --help
expect 2 'usage: vmscope report' -- report
expect 2 'unknown report' -- report nosuch "$m"
expect 0 'usage: vmscope report exits' -- report exits --help
expect 0 'within 0.8% of an exact' -- report exits --help
expect 2 'usage: vmscope report exits' -- report exits
expect 2 '--by: vm, vcpu, reason, task, port, msr, mmio, symbol, mmio-region, npf or npf-region' -- report exits --by thread "$m"
expect 2 '--sort: count, total, p99 or max' -- report exits --sort median "$m"
expect 2 '--top: a number' -- report exits --top -1 "$m"
# the merge's input (metadata only): a raw trace, merged as it is read
# (cli-report-raw), its report the empty merged trace's
expect 0 'VM 0 synth0: 0 vCPUs seen' -- report exits "$dir/in"
expect 1 'nothere' -- report exits "$dir/nothere"
expect 0 '^0 +io +[0-9]+ ' -- report exits "$m"
expect_full 1 'vmscope report: writing the standard output' -- report exits --json "$m"
expect_full 1 'vmscope report: writing the standard output' -- report exits "$m"
expect_full 1 'vmscope report: writing the standard output' -- report sched "$m"
expect 0 '^1 +IO_INSTRUCTION +[0-9]+ ' -- report exits "$m"
expect 0 '^VM 1 synth1: 3 vCPUs seen' -- report exits "$m"
expect 0 'the 10 longest exits' -- report exits "$m"
expect 0 'the 3 longest exits' -- report exits --top 3 "$m"
expect 0 '^0 +alpha/100 +[0-9]+ ' -- report exits --by task "$m"
expect 0 '^ +hlt [0-9]+ \(' -- report exits --by task "$m"
expect 0 '^1 +vcpu 2 +[0-9]+ ' -- report exits --by vcpu "$m"
expect 0 '^0 +synth0 +[0-9]+ ' -- report exits --by vm --sort max "$m"

# --sort count: the count column never grows down the table
"$exe" report exits --sort count --top 0 "$m" >"$out" 2>&1
if awk '/^exits by/ { on = 1; getline; next } /^$/ { on = 0 } on && NF > 3 && $1 ~ /^[0-9]+$/ { if (prev != "" && $3 > prev) bad = 1; prev = $3 }
	END { exit !(prev != "" && !bad) }' "$out"; then
	echo "ok: --sort count orders by count"
else
	echo "FAIL: --sort count:"; cat "$out"; fails=$((fails + 1))
fi

# JSON: parsed, consistent
if "$exe" report exits --by task --json "$m" >"$dir/r.json" 2>"$out" && python3 - "$dir/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["by"] == "task", r["by"]
exits = r["counts"]["exits"]
assert exits > 10000, exits
assert sum(g["count"] for g in r["groups"]) == exits
assert sum(v["exits"] for vm in r["vms"] for v in vm["vcpus"]) == exits
for g in r["groups"]:
    assert g["task"]["comm"] in ("alpha", "beta", "gamma"), g["task"]
    assert sum(x["count"] for x in g["reasons"]) == g["count"]
    assert g["min_ns"] <= g["p50_ns"] <= g["p90_ns"] <= g["p99_ns"] <= g["p999_ns"] <= g["max_ns"]
    assert 0 < g["share"] < 1
assert len(r["top"]) == 10
assert all(r["top"][i]["duration_ns"] >= r["top"][i + 1]["duration_ns"] for i in range(9))
PY
then
	echo "ok: --json parses and adds up"
else
	echo "FAIL: --json"; cat "$out"; fails=$((fails + 1))
fi

# --svg: one panel per group of the same aggregation as --json, in its
# order, with its count; well-formed (xmllint); an existing file refused
# and kept; nothing (not even a temporary) left when the input is refused
svg_check() {	# svg_check BY: report --by BY --json --svg, compared
	rm -f "$dir/$1.svg"
	"$exe" report exits --by "$1" --json --svg "$dir/$1.svg" "$m" >"$dir/$1.json" 2>"$out" &&
	xmllint --noout "$dir/$1.svg" 2>>"$out" &&
	python3 - "$dir/$1.json" "$dir/$1.svg" <<'PY'
import json, sys, xml.etree.ElementTree as ET
r = json.load(open(sys.argv[1]))
ns = {"s": "http://www.w3.org/2000/svg"}
panels = ET.parse(sys.argv[2]).getroot().findall("s:g[@class='panel']", ns)
assert len(panels) == len(r["groups"]) > 0, (len(panels), len(r["groups"]))
for p, g in zip(panels, r["groups"]):
    assert int(p.get("data-count")) == g["count"], (p.get("data-count"), g)
    bars = p.findall("s:rect[@class='bar']", ns)
    assert sum(int(b.get("data-count")) for b in bars) == g["count"]
    name = p.find("s:text[@class='name']", ns).text
    stats = p.find("s:text[@class='stats']", ns).text
    assert stats.startswith("%d exits, p50 " % g["count"]), stats
    key = g.get("reason") or (g.get("task") or {}).get("comm") or ""
    assert name.startswith("VM %d " % g["vm"]) and key in name, (name, g)
PY
}
for by in reason task vm; do
	if svg_check $by; then
		echo "ok: --svg --by $by: a panel per group, with its count"
	else
		echo "FAIL: --svg --by $by"; cat "$out"; fails=$((fails + 1))
	fi
done
echo keep >"$dir/kept.svg"
expect 1 'svg: output .*kept.svg: File exists' -- report exits --svg "$dir/kept.svg" "$m"
if [ "$(cat "$dir/kept.svg")" = keep ]; then echo "ok: existing SVG kept"
else echo "FAIL: existing SVG replaced"; fails=$((fails + 1)); fi
mkdir "$dir/svgout"
expect 1 'nothere' -- report exits --svg "$dir/svgout/r.svg" "$dir/nothere"
if [ -z "$(ls -A "$dir/svgout")" ]; then echo "ok: nothing written for a refused input"
else echo "FAIL: left in svgout: $(ls -A "$dir/svgout")"; fails=$((fails + 1)); fi
expect 2 'usage: vmscope report exits' -- report exits "$m" --svg

# a merged stream cut in the middle: what was read is reported, exit 1
cp -r "$m" "$dir/cut"
size=$(stat -c %s "$dir/cut/merged.vtf")
truncate -s $((size / 2)) "$dir/cut/merged.vtf"
expect 1 'merged stream ended' -- report exits "$dir/cut"
expect 1 '^0 +io +[0-9]+ ' -- report exits "$dir/cut"

# report sched on a trace where a host task "hog" preempts the vCPU thread
# inside exits while guest threads run; the writer says the true totals
mkdir "$dir/s"
truth=$("$writer" --write-sched "$dir/s") || { echo "FAIL: writing the sched trace"; exit 1; }
echo "sched trace: $truth"
set -- $truth
hog_total=$2 hog_n=$4 block_total=$6 kworker_total=$8
s=$dir/s/merged
expect 0 'usage: vmscope report sched' -- report sched --help
expect 2 'usage: vmscope report sched' -- report sched
expect 2 '--top: a number' -- report sched --top x "$s"
expect 0 'a raw trace, merged as' -- report sched "$dir/s/in"
expect 0 '^  (alpha|beta|gamma)/10[0-2] .* hog/4242 ' -- report sched "$s"
expect 0 "^  0 +1001 .* $hog_n .* hog/4242 " -- report sched "$s"
expect 0 '^0 +0 +(alpha|beta|gamma)/10[0-2] .* hog/4242 .* preempted$' -- report sched --top 50 "$s"
expect 0 '^0 +0 +(alpha|beta|gamma)/10[0-2] .* \(blocked in host\) ' -- report sched --top 50 "$s"
if "$exe" report sched --json --top 3 "$s" >"$dir/s.json" 2>"$out" &&
	python3 - "$dir/s.json" "$hog_total" "$hog_n" "$block_total" "$kworker_total" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
total, n, blocked, kworker = (int(x) for x in sys.argv[2:6])
assert kworker > 0
vm = r["vms"][0]
assert sum(t["stall_running_ns"] for t in vm["threads"]) == total + blocked
hog = sum(b["ns"] for t in vm["threads"] for b in t["stalled_by"]
          if b.get("host_task", {}).get("comm") == "hog")
kw = sum(b["ns"] for t in vm["threads"] for b in t["stalled_by"]
         if b.get("host_task", {}).get("comm") == "kworker/0:1")
blk = sum(b["ns"] for t in vm["threads"] for b in t["stalled_by"] if b.get("blocked_in_host"))
# the preempted time is split: the kworker ran first, then the hog
assert (hog, kw, blk) == (total - kworker, kworker, blocked), (hog, kw, blk)
for t in vm["threads"]:
    assert sum(b["ns"] for b in t["stalled_by"]) + t["stalled_by_others_ns"] == t["stall_running_ns"]
cpu = vm["vcpus"][0]
assert cpu["preempted_ns"] == total and cpu["preemptions"] == n and cpu["blocked_ns"] == blocked, cpu
# a vCPU lists every host task that kept it off, exactly, largest first
assert sum(b["ns"] for b in cpu["by"]) == total + blocked, cpu["by"]
assert [b["ns"] for b in cpu["by"]] == sorted((b["ns"] for b in cpu["by"]), reverse=True)
assert {b.get("host_task", {}).get("comm", "blocked") for b in cpu["by"]} == {"hog", "kworker/0:1", "blocked"}
w = r["worst"]
assert len(w) == 3 and w[0]["duration_ns"] >= w[1]["duration_ns"] >= w[2]["duration_ns"]
PY
then
	echo "ok: report sched --json: stalls add up to the hog's, the kworker's and the blocks' time"
else
	echo "FAIL: report sched --json"; cat "$out"; fails=$((fails + 1))
fi

echo "$fails failed"
[ "$fails" -eq 0 ]
