#!/bin/sh
# `vmscope report exits|sched` on a raw trace (what `record` writes) is the
# report on the same trace merged by `vmscope merge`: the report runs the
# merge's two passes itself and reads pass 2's records instead of a file.
# On two raw traces (test_online --write: 2 VMs x 2 vCPUs, three exit
# reasons, four guest tasks, a guest clock step, forged exchanges, 37
# clock-unreliable spans; test_merge --write):
# - stdout of `report exits --json` (--by reason, task, vm, vcpu), `report
#   sched --json` and both text reports on RAW equal, byte for byte, those
#   on MERGED, but for the trace's own path; and on a third (test_online
#   --write-details: port I/O, nested page faults, MMIO in the exits)
#   `report exits --json --by port|mmio|mmio-region|npf|npf-region`;
# - stderr says the raw trace was merged and prints merge's clock report
#   (each VM's segments with their bounds, its unreliable spans);
# - a flipped byte in a host stream, a guest stream cut in half: exit 1
#   naming the file and the damage as `vmscope merge` names it; with
#   --accept-damage exit 0, the output saying it is damaged.
# Usage: report-raw-test.sh PATH-TO-vmscope PATH-TO-test_online PATH-TO-test_merge
set -u
exe=$1 online=$2 merge=$3

. "$(dirname "$0")/expect.sh"
expect_tmpdir report-raw-test

# a third: exits with what they accessed (kvm_pio, kvm_page_fault, kvm_mmio)
raw_traces "$online" --write-details
traces="raw raw2"

# same ARGS...: stdout of `report ARGS RAW` equals `report ARGS MERGED`
# (the trace's path taken out), for both traces
same() {
	for t in $traces; do
		[ -d "$dir/$t.merged" ] || "$exe" merge "$dir/$t" -o "$dir/$t.merged" >/dev/null ||
			{ echo "FAIL: vmscope merge $t"; fails=$((fails + 1)); continue; }
		"$exe" report "$@" "$dir/$t" 2>"$out" | sed "s#$dir/$t##g" >"$dir/a"
		ra=$?
		"$exe" report "$@" "$dir/$t.merged" 2>>"$out" | sed "s#$dir/$t.merged##g" >"$dir/b"
		if [ "$ra" -eq 0 ] && [ -s "$dir/a" ] && cmp -s "$dir/a" "$dir/b"; then
			echo "ok: report $* on $t equals on $t.merged ($(wc -c <"$dir/a") bytes)"
		else
			echo "FAIL: report $* on $t differs from $t.merged"
			diff "$dir/a" "$dir/b" | head -20; cat "$out"; fails=$((fails + 1))
		fi
	done
}

same exits --json
same exits --json --by task
same exits --json --by vm
same exits --json --by vcpu --top 50
same sched --json
same exits --by task
same sched
# what the exits accessed, on the trace that has it
traces=raw3
for by in port mmio mmio-region npf npf-region; do
	same exits --json --by $by --top 20
done
same exits --by npf-region
traces="raw raw2"
# not an empty comparison: raw3 has port groups, faults in two regions, MMIO
"$exe" report exits --json --by npf-region "$dir/raw3" >"$dir/j" 2>"$out"
"$exe" report exits --json --by port "$dir/raw3" >"$dir/k" 2>>"$out"
"$exe" report exits --json --by mmio-region "$dir/raw3" >"$dir/l" 2>>"$out"
if python3 - "$dir/j" "$dir/k" "$dir/l" <<'PY'
import json, sys
j, k, m = (json.load(open(p)) for p in sys.argv[1:4])
assert len(m["groups"]) >= 1, m
r = sorted((g["vm"], g["gpa_start"], g["gpa_end"]) for g in j["groups"])
assert len(r) >= 2 and all(g["count"] > 0 for g in j["groups"]), r
assert len(k["groups"]) >= 8 and {g["size"] for g in k["groups"]} == {1, 2, 4}, k["groups"]
PY
then
	echo "ok: raw3 has npf and MMIO regions and port groups of three sizes"
else
	echo "FAIL: raw3's groups"; cat "$out"; fails=$((fails + 1))
fi
expect 0 'raw trace, merged as `vmscope merge` merges it' -- report exits --json "$dir/raw"
expect 0 'segment 0: accurate, .* bound [0-9]+ ns' -- report exits --json "$dir/raw"
expect 0 'CLOCK UNRELIABLE in 18 spans' -- report sched --json "$dir/raw"
expect 0 'guest clock unreliable \(vmscope merge\): 37 spans' -- report exits "$dir/raw"
expect 0 'a raw recording .*merged' -- report exits --help
expect 0 'a raw recording .*merged' -- report sched --help

# damage: a flipped byte in a host stream, a guest stream cut in half
damage_raw "$dir/raw"
for t in flip cut; do
	"$exe" merge "$dir/$t" -o "$dir/$t.m" >"$dir/merge.out" 2>&1
	# the damage as merge names it, in the report's refusal
	acct=$(grep -o 'is damaged ([^)]*): .*' "$dir/merge.out" | head -1 |
		sed 's/ (--accept-damage to merge it)$//')
	if [ -z "$acct" ]; then
		echo "FAIL: merge of $t gave no damage account"; cat "$dir/merge.out"; fails=$((fails + 1))
	fi
	for r in exits sched; do
		"$exe" report $r --json "$dir/$t" >"$dir/a" 2>"$out"
		st=$?
		if [ "$st" -eq 1 ] && grep -Fq -- "vmscope report $r: $dir/$t $acct (--accept-damage" "$out" &&
		   [ ! -s "$dir/a" ]; then
			echo "ok: report $r $t: exit 1, the damage merge gives"
		else
			echo "FAIL: report $r $t: exit $st (want 1 and: $acct)"; cat "$out"; fails=$((fails + 1))
		fi
	done
done
expect 1 'flip is damaged .*host-cpu0.vtf: corrupt' -- report exits "$dir/flip"
expect 1 'cut is damaged .*guest0-cpu0.vtf: [0-9]+ bytes, the summary lists' -- report sched "$dir/cut"
expect 0 'damaged: .*flip is damaged .*host-cpu0.vtf: corrupt' -- report exits --accept-damage "$dir/flip"
expect 0 '"damaged": ?"[^"]*cut is damaged .*guest0-cpu0.vtf' -- report exits --json --accept-damage "$dir/cut"
expect 0 'damaged' -- report sched --accept-damage "$dir/cut"
expect 1 'no such|No such' -- report exits "$dir/nothere"

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
