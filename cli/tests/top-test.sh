#!/bin/sh
# `vmscope top --replay` on the merged trace analysis/tests/test_analysis.c
# --write makes (2 VMs x 3 vCPUs, three guest tasks, four exit reasons;
# about 0.49 s of host time): the intervals' JSON lines add up to
# `report exits --json` on the same trace (per VM and reason: count,
# total and its split exactly, min and max exactly; per vCPU the time
# split; per guest task count and total; the last line's cumulative
# percentiles equal the report's, as they come from the same histograms);
# the host view of `report sched` likewise (preempted and blocked time per
# vCPU, the host tasks that had the CPU, the worst stall); a VM without
# agent (--write-noagent): host columns filled, guest columns marked;
# the intervals tile the trace; --sort orders each interval; --batch text;
# --speed paces the replay (the screen: top-screen-test.sh); a session VM
# that never exits (--write-silent-vm: no vCPU known; `top --all` takes
# such VMs, kvm-hold's in the VM tests): listed without vCPUs in every
# interval, the other's 20 exits counted (it crashed the windows once); a cut stream (exit 1, intervals still shown);
# stdout on a full disk; usage errors.
# Usage: top-test.sh PATH-TO-vmscope PATH-TO-test_analysis
set -u
exe=$1 writer=$2
fails=0
dir=$(mktemp -d /var/tmp/top-test-XXXXXX); trap 'rm -rf "$dir"' EXIT
out=$dir/out

. "$(dirname "$0")/expect.sh"

"$writer" --write "$dir" || { echo "FAIL: writing the trace"; exit 1; }
m=$dir/merged
expect 0 'usage: vmscope top \(--pid QEMU_PID... \| --domain NAME... \| --all\)' -- top --help
expect 0 'vmscope top --replay TRACE' -- top --help
expect 0 'A VM started later is not picked up' -- top --help
src='give one of --pid QEMU_PID..., --domain NAME..., --all \(live\) or --replay TRACE'
expect 2 "$src" -- top --json
expect 2 "$src" -- top --json --pid 1 --replay "$m"
expect 2 "$src" -- top --json --pid 1 --domain d1
expect 2 "$src" -- top --json --domain d1 --all
expect 2 "$src" -- top --json --all --replay "$m"
expect 2 "$src" -- top --json --pid 1 --all
expect 2 '--speed and --accept-damage are for --replay' -- top --json --pid 1 --speed 2
expect 2 '--speed and --accept-damage are for --replay' -- top --json --all --accept-damage
expect 2 '--duration and -o are for live \(--pid, --domain, --all\)' -- top --json --replay "$m" --duration 2
expect 2 '--duration and -o are for live' -- top --json --replay "$m" -o "$dir/rec"
expect 0 '  -o TRACE              live: also write the recording' -- top --help
# --domain: libvirt's files (none here), the name checked first
expect 1 'top: no domain vmscope-no-such-domain \(no vmscope-no-such-domain.pid in /run/libvirt/qemu' -- top --json --domain vmscope-no-such-domain
expect 2 "top: --domain '../x': domain name" -- top --json --domain ../x
expect 2 'top: at most 8 --domain' -- top --json --domain a --domain b --domain c --domain d --domain e --domain f --domain g --domain h --domain i
# --all: the KVM VMs of this machine, if any (a TCG machine has none)
if ! ls -l /proc/[0-9]*/fd 2>/dev/null | grep -q 'anon_inode:kvm-vm$'; then
	expect 1 'top: --all: no KVM VM is running' -- top --json --all
fi
expect 2 "top: --duration: '0' is not a duration" -- top --json --pid 1 --duration 0
expect 2 "top: --pid: a number from 1 to" -- top --json --pid 0
# the screen is built for --pid: without the module, the module is what is said
expect 1 'is vmscope_host.ko loaded' -- top --pid 1
# the live source's errors before any module is asked (none is loaded here)
expect 1 'top: pid 1073741823: no such process' -- top --json --pid 1073741823
if [ ! -e /dev/vmscope-host ]; then
	expect 1 'is vmscope_host.ko loaded' -- top --json --pid $$
fi
expect 2 "unexpected argument 'extra'" -- top --replay "$m" --json extra
expect 2 '--interval: seconds from' -- top --replay "$m" --json --interval 0
expect 2 '--interval: seconds from' -- top --replay "$m" --json --interval 1x
expect 2 '--speed: a number above 0' -- top --replay "$m" --json --speed 0
expect 2 '--speed: a number above 0' -- top --replay "$m" --json --speed inf
expect 2 '--sort: count, total, p99 or max' -- top --replay "$m" --json --sort median
expect 2 '--tasks: a number' -- top --replay "$m" --json --tasks -1
expect 1 'the trace has no records' -- top --replay "$dir/in" --json
expect 1 'nothere' -- top --replay "$dir/nothere" --json
expect_full 1 'vmscope top: .*the view failed' -- top --replay "$m" --json --interval 0.05
expect 0 '^interval 0: host time' -- top --replay "$m" --batch --interval 0.1
expect 0 '^  alpha/100 ' -- top --replay "$m" --batch --interval 0.1
expect 0 '^  IO_INSTRUCTION ' -- top --replay "$m" --batch --interval 0.1
expect 0 '^interval 4 \(last\)' -- top --replay "$m" --batch --interval 0.1

"$exe" report exits --json --by reason "$m" >"$dir/reason.json" &&
"$exe" report exits --json --by task "$m" >"$dir/task.json" &&
"$exe" top --replay "$m" --json --interval 0.05 --tasks 100 >"$dir/top.json" 2>"$out"
if [ $? -eq 0 ] && python3 - "$dir/reason.json" "$dir/task.json" "$dir/top.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
task = json.load(open(sys.argv[2]))
lines = [json.loads(l) for l in open(sys.argv[3])]
assert len(lines) >= 9, len(lines)
assert [l["interval"] for l in lines] == list(range(len(lines)))
assert [l["final"] for l in lines] == [False] * (len(lines) - 1) + [True]
for a, b in zip(lines, lines[1:]):
    assert a["end_ns"] == b["start_ns"]
    assert b["end_ns"] - b["start_ns"] == 50000000 or b["final"]
assert lines[0]["start_ns"] == rep["first_ns"] and lines[-1]["end_ns"] == rep["last_ns"] + 1
for k in ("records", "exits", "losses", "unattributed", "open_dropped", "entries_without_exit"):
    assert sum(l["counts"][k] for l in lines) == rep["counts"][k], k
    assert lines[-1]["cumulative"]["counts"][k] == rep["counts"][k], k
# per VM and reason
agg = {}
for l in lines:
    for g in l["reasons"]:
        assert g["min_ns"] <= g["p50_ns"] <= g["p99_ns"] <= g["max_ns"], g
        a = agg.setdefault((g["vm"], g["reason"]), dict(count=0, total_ns=0, kernel_ns=0,
                           user_ns=0, halted_ns=0, min_ns=None, max_ns=0))
        for k in ("count", "total_ns", "kernel_ns", "user_ns", "halted_ns"):
            a[k] += g[k]
        a["min_ns"] = g["min_ns"] if a["min_ns"] is None else min(a["min_ns"], g["min_ns"])
        a["max_ns"] = max(a["max_ns"], g["max_ns"])
assert len(agg) == len(rep["groups"]) == 8, (len(agg), len(rep["groups"]))
cum = {(g["vm"], g["reason"]): g for g in lines[-1]["cumulative"]["reasons"]}
for g in rep["groups"]:
    a = agg[(g["vm"], g["reason"])]
    for k in a:
        assert a[k] == g[k], (g["vm"], g["reason"], k, a[k], g[k])
    c = cum[(g["vm"], g["reason"])]
    for k in ("count", "total_ns", "min_ns", "p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns"):
        assert c[k] == g[k], (k, c[k], g[k])
# per vCPU
for vm in rep["vms"]:
    for v in vm["vcpus"]:
        for k in ("exits", "guest_ns", "kernel_ns", "user_ns", "halted_ns"):
            s = sum(c[k] for l in lines for m in l["vms"] if m["vm"] == vm["vm"]
                    for c in m["vcpus"] if c["vcpu"] == v["vcpu"])
            assert s == v[k], (vm["vm"], v["vcpu"], k, s, v[k])
assert all(m["agent"] for l in lines for m in l["vms"])
# per guest task
tagg = {}
for l in lines:
    for g in l["tasks"]:
        t = tagg.setdefault((g["vm"], g["task"]["tid"]), [0, 0])
        t[0] += g["count"]
        t[1] += g["total_ns"]
assert len(tagg) == len(task["groups"]) == 6
for g in task["groups"]:
    assert tagg[(g["vm"], g["task"]["tid"])] == [g["count"], g["total_ns"]], g
assert all(len(l["longest"]) <= 5 for l in lines)
for l in lines:
    d = [x["duration_ns"] for x in l["longest"]]
    assert d == sorted(d, reverse=True) and (not d or d[0] == max(g["max_ns"] for g in l["reasons"]))
PY
then
	echo "ok: the intervals add up to report exits"
else
	echo "FAIL: top --json against report exits"; cat "$out"; fails=$((fails + 1))
fi

# `report sched`'s host view per interval, on the trace where a host task
# preempts VM 0's vCPU 0 (--write-sched): per vCPU preempted and blocked
# time and times add up to the report's, the host tasks of the intervals'
# off-CPU time to the report's per vCPU (by task: time and times), the
# worst stall of all intervals is the report's worst
mkdir "$dir/s"
"$writer" --write-sched "$dir/s" >/dev/null || { echo "FAIL: writing the sched trace"; exit 1; }
"$exe" report sched --json "$dir/s/merged" >"$dir/sched.json" &&
"$exe" top --replay "$dir/s/merged" --json --interval 0.05 --tasks 100 >"$dir/stop.json" 2>"$out"
if [ $? -eq 0 ] && python3 - "$dir/sched.json" "$dir/stop.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
assert len(lines) >= 10, len(lines)
pre = 0
for vm in rep["vms"]:
    for v in vm["vcpus"]:
        got = {k: sum(c[k] for l in lines for m in l["vms"] if m["vm"] == vm["vm"]
                      for c in m["vcpus"] if c["vcpu"] == v["vcpu"])
               for k in ("preempted_ns", "preemptions", "blocked_ns", "blocks")}
        want = {k: v[k] for k in got}
        assert got == want, (vm["vm"], v["vcpu"], got, want)
        pre += v["preempted_ns"]
assert pre > 0
def key(b):
    return "blocked" if b.get("blocked_in_host") else b["host_task"]["tid"]
want, got = {}, {}
for vm in rep["vms"]:
    for v in vm["vcpus"]:
        assert len(v["by"]) < 4, v["by"]	# the report shows 4 at most: all of them here
        for b in v["by"]:
            w = want.setdefault(key(b), [0, 0]); w[0] += b["ns"]; w[1] += b["times"]
for l in lines:
    assert l["preemptors_other_ns"] == 0
    for b in l["preemptors"]:
        g = got.setdefault(key(b), [0, 0]); g[0] += b["ns"]; g[1] += b["times"]
assert got == want and len(got) == 3, (got, want)
worst = max((s for l in lines for s in l["stalls"]), key=lambda s: s["duration_ns"])
w0 = rep["worst"][0]
assert worst["duration_ns"] == w0["duration_ns"] and worst["start_ns"] == w0["start_ns"], (worst, w0)
assert all(len(l["stalls"]) <= 5 for l in lines)
PY
then
	echo "ok: preempted and blocked time, their host tasks and the worst stall add up to report sched"
else
	echo "FAIL: top --json against report sched"; cat "$out"; fails=$((fails + 1))
fi

# VM 1 without its guest side (no agent): its host columns are filled,
# its guest columns say so (no tasks, no steal, no task on its longest
# exits), and its exits still add up to the report's
mkdir "$dir/n"
"$writer" --write-noagent "$dir/n" || { echo "FAIL: writing the no-agent trace"; exit 1; }
"$exe" report exits --json "$dir/n/merged" >"$dir/nrep.json" &&
"$exe" top --replay "$dir/n/merged" --json --interval 0.05 --tasks 100 --top 1000 >"$dir/ntop.json" 2>"$out"
if [ $? -eq 0 ] && python3 - "$dir/nrep.json" "$dir/ntop.json" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
lines = [json.loads(l) for l in open(sys.argv[2])]
for l in lines:
    vm = {m["vm"]: m for m in l["vms"]}
    assert vm[0]["agent"] and not vm[1]["agent"], l["vms"]
    for c in vm[1]["vcpus"]:
        assert c["guest_steal_ns"] is None and "steal_readings" not in c, c
    assert all(t["vm"] == 0 for t in l["tasks"])
    assert all(("task" in x) == (x["vm"] == 0) for x in l["longest"])
assert any(x["vm"] == 1 for l in lines for x in l["longest"])
for v in (0, 1):
    ex = sum(c["exits"] for l in lines for m in l["vms"] if m["vm"] == v for c in m["vcpus"])
    gn = sum(c["guest_ns"] for l in lines for m in l["vms"] if m["vm"] == v for c in m["vcpus"])
    assert ex > 1000 and gn > 0, (v, ex, gn)
    assert ex == sum(c["exits"] for m in rep["vms"] if m["vm"] == v for c in m["vcpus"])
    n = sum(g["count"] for l in lines for g in l["reasons"] if g["vm"] == v)
    assert n == sum(g["count"] for g in rep["groups"] if g["vm"] == v) == ex, (v, n, ex)
PY
then
	echo "ok: a VM without agent: host columns filled, guest columns marked"
else
	echo "FAIL: top --json on a VM without agent"; cat "$out"; fails=$((fails + 1))
fi
expect 0 '^VM 1 synth1 \(no agent\)' -- top --replay "$dir/n/merged" --batch --interval 0.1
expect 0 'guest tasks: no agent' -- top --replay "$dir/n/merged" --batch --interval 0.1
expect 0 '^  0 +2001 +[0-9]+ .* no agent$' -- top --replay "$dir/n/merged" --batch --interval 0.1

# a session VM that never exits: listed, no vCPU, in every interval
mkdir "$dir/silent" && "$writer" --write-silent-vm "$dir/silent" ||
	{ echo "FAIL: writing the silent-VM trace"; exit 1; }
"$exe" top --replay "$dir/silent/merged" --json --interval 0.5 >"$dir/silent.json" 2>"$out"
if [ $? -eq 0 ] && python3 - "$dir/silent.json" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 4 and lines[-1]["final"], len(lines)
for l in lines:
    assert [m["vm"] for m in l["vms"]] == [0, 1], l["vms"]
    assert l["vms"][1]["vcpus"] == [], l["vms"][1]
assert sum(l["counts"]["exits"] for l in lines) == 20
assert sum(c["exits"] for l in lines for c in l["vms"][0]["vcpus"]) == 20
PY
then
	echo "ok: a VM that never exits: listed without vCPUs"
else
	echo "FAIL: top --json with a VM that never exits"; cat "$out"; fails=$((fails + 1))
fi
expect 0 '^VM 1 ' -- top --replay "$dir/silent/merged" --batch --interval 0.5

# --sort count: every interval's reasons and tasks by count, largest first
"$exe" top --replay "$m" --json --interval 0.05 --sort count >"$dir/count.json" 2>"$out"
if [ $? -eq 0 ] && python3 - "$dir/count.json" <<'PY'
import json, sys
changed = False
for l in map(json.loads, open(sys.argv[1])):
    for k in ("reasons", "tasks"):
        c = [g["count"] for g in l[k]]
        assert c == sorted(c, reverse=True), (k, c)
    t = [g["total_ns"] for g in l["reasons"]]
    if t != sorted(t, reverse=True):
        changed = True
assert changed, "sorting by count never differed from sorting by total"
PY
then
	echo "ok: --sort count orders each interval"
else
	echo "FAIL: --sort count"; cat "$out"; fails=$((fails + 1))
fi

# --speed 1: the 0.49 s of the trace take at least 0.45 s
start=$(date +%s%N)
"$exe" top --replay "$m" --json --interval 0.1 --speed 1 >/dev/null 2>"$out"
st=$? took=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $st -eq 0 ] && [ $took -ge 450 ]; then
	echo "ok: --speed 1 took $took ms"
else
	echo "FAIL: --speed 1: exit $st, $took ms"; cat "$out"; fails=$((fails + 1))
fi

# a merged stream cut in the middle: the intervals read are shown, exit 1
cp -r "$m" "$dir/cut"
size=$(stat -c %s "$dir/cut/merged.vtf")
truncate -s $((size / 2)) "$dir/cut/merged.vtf"
expect 1 'merged stream ended' -- top --replay "$dir/cut" --json --interval 0.05
expect 1 '"interval":0,' -- top --replay "$dir/cut" --json --interval 0.05
expect 0 'damaged \(accepted\)' -- top --replay "$dir/cut" --json --interval 0.05 --accept-damage

[ $fails -eq 0 ] && echo "all top tests passed" || echo "$fails top test(s) failed"
[ $fails -eq 0 ]
