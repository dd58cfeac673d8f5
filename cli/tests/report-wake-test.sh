#!/bin/sh
# `vmscope report wake` on the trace of analysis/tests/test_wake.c (with
# --write DIR it leaves it there, with its expected values): per vCPU the
# JSON fields equal the story's (wake-ups, polled, slept, halted_ns,
# polling_ns, polling_unknown, wake_to_entry count / max / unknown exact;
# p50 and p99 within the histogram's 1/128 of the story's values at those
# ranks), no interrupt row (the story injects none; analysis-irq tests
# them), the text row shows the counts; --help explains the columns; a
# trace without kvm_vcpu_wakeup records (test_steal's) says so and has no
# vCPU.
# Usage: report-wake-test.sh PATH-TO-vmscope PATH-TO-test_wake PATH-TO-test_steal
set -u
exe=$1 writer=$2 old=$3
. "$(dirname "$0")/expect.sh"
expect_tmpdir report-wake

"$writer" --write "$dir" >"$dir/writer.out" 2>&1 || { echo "FAIL: test_wake"; cat "$dir/writer.out"; exit 1; }
mkdir "$dir/s" && "$old" "$dir/s" >"$dir/old.out" 2>&1 || { echo "FAIL: test_steal"; cat "$dir/old.out"; exit 1; }

expect 0 'polled: KVM.s halt polling saw the' -- report wake --help
expect 0 'wake_to_entry \{count, p50_ns, p99_ns, max_ns, unknown\}' -- report wake --help
expect 0 '^  wake +how halted vCPUs run again' -- report --help
expect 0 'Then interrupt delivery, per VM and x86 vector' -- report wake --help
expect 0 'injected = matched \+ unmatched \+ reinj\., for every vector' -- report wake --help
while read -r v n polled slept halted poll punk cnt max unk p50 p99; do
	expect 0 "^  $v +100$((v + 1)) +[0-9.]+ [mu]?s +$n +$polled +$slept +[0-9.]+ [mu]?s +$punk +$cnt, " \
		-- report wake "$dir/merged"
done <"$dir/expect"
expect 0 'no kvm_vcpu_wakeup records: no vCPU of the trace woke' -- report wake "$dir/s/new/merged"

if "$exe" report wake --json "$dir/merged" >"$dir/out.json" 2>"$out" &&
   python3 - "$dir/out.json" "$dir/expect" >"$out" 2>&1 <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
v = {c["vcpu"]: c for c in j["vms"][0]["vcpus"]}
bad = []
if j["has_wakeup_records"] is not True:
    bad.append("has_wakeup_records not true")
if j["vms"][0]["interrupts"] != [] or j["vms"][0]["has_vector_records"] is not True:
    bad.append("interrupt rows in a trace without injections, or no vector records")
for line in open(sys.argv[2]):
    x = [int(f) for f in line.split()]
    c = v[x[0]]
    got = [c["wakeups"], c["polled"], c["slept"], c["halted_ns"], c["polling_ns"],
           c["polling_unknown"], c["wake_to_entry"]["count"], c["wake_to_entry"]["max_ns"],
           c["wake_to_entry"]["unknown"]]
    if got != x[1:10] or c["invalid"] != 0 or c["tid"] != 1001 + x[0]:
        bad.append(f"vCPU {x[0]}: {got}, want {x[1:10]}")
    for k, want in (("p50_ns", x[10]), ("p99_ns", x[11])):
        if abs(c["wake_to_entry"][k] - want) * 128 > want:
            bad.append(f"vCPU {x[0]} {k} {c['wake_to_entry'][k]}, want {want} +- 1/128")
print("FAIL: " + "; ".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
then
	echo "ok: report wake --json: $(cat "$out")"
else
	echo "FAIL: report wake --json:"; cat "$out"; fails=$((fails + 1))
fi
if "$exe" report wake --json "$dir/s/new/merged" >"$dir/old.json" 2>"$out" &&
   python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(j["has_wakeup_records"] is not False or j["vms"][0]["vcpus"] != [])' "$dir/old.json"; then
	echo "ok: report wake --json on a trace without kvm_vcpu_wakeup: has_wakeup_records false, no vCPU"
else
	echo "FAIL: report wake --json on a trace without kvm_vcpu_wakeup"; fails=$((fails + 1))
fi
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
