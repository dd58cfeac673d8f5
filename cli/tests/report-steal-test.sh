#!/bin/sh
# `vmscope report sched`'s guest steal columns on the traces of
# analysis/tests/test_steal.c (run with a folder, it leaves them there):
# a trace whose guest sync records carry steal_ns (ABI 0.4) and the same
# story in ABI 0.3's layout (no steal_ns). With steal: vCPU 0's JSON
# guest_steal_ns, preempted_in_steal_span_ns, blocked_in_steal_span_ns,
# steal_span_ns and steal_readings are the test's expected values, the text row shows them;
# vCPU 1 (one reading) is n/a: JSON null, text "n/a". Without: every vCPU
# n/a with 0 readings, never 0 ns; --help says what the columns are.
# Usage: report-steal-test.sh PATH-TO-vmscope PATH-TO-test_steal
set -u
exe=$1 writer=$2
. "$(dirname "$0")/expect.sh"
expect_tmpdir report-steal

"$writer" "$dir" >"$dir/writer.out" 2>&1 || { echo "FAIL: test_steal"; cat "$dir/writer.out"; exit 1; }
read -r guest host blocked span readings <"$dir/expect"
echo "expected for vCPU 0: guest $guest ns, host $host ns (blocked $blocked ns), span $span ns, $readings readings"

expect 0 "'guest steal' is the steal time the guest kernel" -- report sched --help
expect 0 'guest_steal_ns and preempted_in_steal_span_ns' -- report sched --help
expect 0 '^  vcpu .* guest steal +host, same span ' -- report sched "$dir/new/merged"
# vCPU 0: two durations in the steal columns; vCPU 1: n/a n/a
expect 0 '^  0 +1001 .* [0-9.]+ ms +[0-9.]+ ms  hog/4242 ' -- report sched "$dir/new/merged"
expect 0 '^  1 +1002 .* n/a +n/a  hog/4242 ' -- report sched "$dir/new/merged"
expect 0 '^  0 +1001 .* n/a +n/a  hog/4242 ' -- report sched "$dir/abi03/merged"
expect 0 '^  1 +1002 .* n/a +n/a  hog/4242 ' -- report sched "$dir/abi03/merged"

check_json() {	# FILE WHAT: python asserts, prints ok/FAIL
	python3 - "$@" <<'PY'
import json, sys
path, what = sys.argv[1], sys.argv[2]
exp = [int(x) for x in sys.argv[3:]]
v = {c["vcpu"]: c for c in json.load(open(path))["vms"][0]["vcpus"]}
keys = ("guest_steal_ns", "preempted_in_steal_span_ns", "blocked_in_steal_span_ns",
        "steal_span_ns")
bad = []
if what == "new":
    got = [v[0][k] for k in keys] + [v[0]["steal_readings"]]
    if got != exp:
        bad.append(f"vCPU 0: {got}, want {exp}")
    if any(v[1][k] is not None for k in keys) or v[1]["steal_readings"] != 1:
        bad.append(f"vCPU 1: {[v[1][k] for k in keys]}, want null (1 reading)")
else:
    for c in v.values():
        if any(c[k] is not None for k in keys) or c["steal_readings"] != 0:
            bad.append(f"vCPU {c['vcpu']}: {[c[k] for k in keys]}, want null")
print("FAIL: " + "; ".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PY
}
for t in new abi03; do
	if "$exe" report sched --json "$dir/$t/merged" >"$dir/$t.json" 2>"$out" &&
	   check_json "$dir/$t.json" "$t" "$guest" "$host" "$blocked" "$span" "$readings" >"$out" 2>&1; then
		echo "ok: report sched --json on the $t trace: $(cat "$out")"
	else
		echo "FAIL: report sched --json on the $t trace:"; cat "$out"; fails=$((fails + 1))
	fi
done
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
