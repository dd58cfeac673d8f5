#!/bin/sh
# `vmscope report exits --by port|msr|mmio` on the merged trace that
# analysis/tests/test_detail.c --write makes (one VM, 6000 exits: port
# I/O, MSR and MMIO exits with the host's kvm_pio/kvm_msr/kvm_mmio records,
# five keys each, read and write; HLT, CPUID and io exits without one):
# the text table's rows (port, in/out and access size, MSR and read/write, the page's
# range and read/write; an MSR with msr-index.h's name) and the line on
# the exits not in it; the JSON
# (parsed): ten groups (30 by port: three sizes), their counts adding up with exits_without_detail
# to every exit, each group's key fields, what each of the longest exits
# accessed; --help says what each means. --by npf, mmio-region,
# npf-region: the text rows (a region's range and pages), and the JSON
# groups equal to the story's (want.json: test_detail's own account of
# what it wrote, per page or region count, total, min, max, writes).
# Usage: report-detail-test.sh PATH-TO-vmscope PATH-TO-test_detail
set -u
exe=$1 writer=$2
. "$(dirname "$0")/expect.sh"
expect_tmpdir report-detail-test

"$writer" --write "$dir" >/dev/null 2>&1 || { echo "FAIL: writing the trace"; exit 1; }
m=$dir/merged
expect 0 'exits that accessed an I/O port, an MSR or MMIO' -- report --help
expect 0 '--by port\|msr\|mmio +what the exits accessed' -- report exits --help
expect 0 'MMIO by the 4 KiB guest-physical page' -- report exits --help
expect 0 '^0 +0x3f8 out 1 byte +[0-9]+ ' -- report exits --by port "$m"
expect 0 '^0 +0xcf8 in 4 bytes +[0-9]+ ' -- report exits --by port "$m"
expect 0 '^0 +0x70 out 2 bytes +[0-9]+ ' -- report exits --by port "$m"
expect 0 '^[0-9]+ exits with an I/O port \(a kvm_pio record inside the exit\); [0-9]+ other exits' -- report exits --by port "$m"
# with msr-index.h's name where the build found the headers package
expect 0 '^0 +0xc0000080 (MSR_EFER )?write +[0-9]+ ' -- report exits --by msr "$m"
expect 0 '^0 +0x6e0 (MSR_IA32_TSC_DEADLINE )?read +[0-9]+ ' -- report exits --by msr "$m"
expect 0 '^0 +0x830 read +[0-9]+ ' -- report exits --by msr "$m"
expect 0 '^0 +0xfee00000-0xfee00fff write +[0-9]+ ' -- report exits --by mmio "$m"
expect 0 '^0 +0x100000000-0x100000fff read +[0-9]+ ' -- report exits --by mmio "$m"
# the longest exits say what each accessed
expect 0 'at \(host time\)  accessed' -- report exits --by port --top 3 "$m"
expect 0 ' [0-9]+\.[0-9]{9} 0x[0-9a-f]+ (in|out) [124] bytes?$' -- report exits --by port --top 3 "$m"
expect 0 ' [0-9]+\.[0-9]{9} 0x[0-9a-f]+ (read|write)$' -- report exits --by mmio --top 3 "$m"
for by in port msr mmio; do
	"$exe" report exits --json --by $by "$m" >"$dir/j" 2>"$out" || { echo "FAIL: --json --by $by"; fails=$((fails + 1)); continue; }
	if python3 - "$dir/j" $by <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
by = sys.argv[2]
g = j["groups"]
# a port's groups by direction and access size (1, 2, 4 bytes)
assert j["by"] == by and len(g) == (30 if by == "port" else 10), (j["by"], len(g))
assert sum(x["count"] for x in g) + j["exits_without_detail"] == j["counts"]["exits"] == 6000
for x in g:
    if by == "port":
        assert x["dir"] in ("in", "out") and x["port"] in (0x3f8, 0xcf8, 0xcfc, 0x70, 0x1f0), x
        assert x["size"] in (1, 2, 4), x
    elif by == "msr":
        assert x["access"] in ("read", "write") and x["msr"] in ("0x6e0", "0x830", "0xc0000080", "0x10", "0x3b"), x
        assert x["msr_name"] in (None, {"0x6e0": "MSR_IA32_TSC_DEADLINE", "0xc0000080": "MSR_EFER", "0x10": "MSR_IA32_TSC", "0x3b": "MSR_IA32_TSC_ADJUST"}.get(x["msr"])), x
    else:
        assert int(x["gpa_end"], 16) - int(x["gpa_start"], 16) == 4095 and x["access"] in ("read", "write"), x
    assert x["min_ns"] <= x["p50_ns"] <= x["max_ns"] and x["total_ns"] > 0
key = {"port": "port", "msr": "msr", "mmio": "gpa"}[by]
assert j["top"] and all(key in e for e in j["top"]), j["top"]
assert by != "port" or all(e["size"] in (1, 2, 4) for e in j["top"]), j["top"]
PY
	then
		echo "ok: report exits --json --by $by: its groups, counts add up, keys"
	else
		echo "FAIL: report exits --json --by $by"; fails=$((fails + 1))
	fi
done

# nested page faults by page, and MMIO and faults by region: the story's
# own groups (want.json, written by test_detail from what it wrote), exact
expect 0 '--by npf +nested page faults' -- report exits --help
expect 0 '--by mmio-region\|npf-region +the same exits as --by mmio and --by npf' -- report exits --help
expect 0 'region of adjacent pages \(--by mmio-region\|npf-region\)' -- report --help
expect 0 '^0 +0xfebf0000-0xfebf1fff 2 pages +[0-9]+ ' -- report exits --by mmio-region "$m"
expect 0 '^0 +0xc0000-0xc0fff 1 page +[0-9]+ ' -- report exits --by mmio-region "$m"
expect 0 '^a region: adjacent 4 KiB guest-physical pages' -- report exits --by mmio-region "$m"
expect 0 '^0 +0x200000-0x202fff 3 pages +[0-9]+ ' -- report exits --by npf-region "$m"
expect 0 '^0 +0x201000-0x201fff write +[0-9]+ ' -- report exits --by npf "$m"
expect 0 '^[0-9]+ exits with a nested page fault \(a kvm_page_fault record inside an NPF or EPT violation exit\); [0-9]+ other' -- report exits --by npf "$m"
expect 0 ' [0-9]+\.[0-9]{9} 0x[0-9a-f]+ (read|write)$' -- report exits --by npf-region --top 3 "$m"
for by in mmio-region npf npf-region; do
	"$exe" report exits --json --top 5 --by $by "$m" >"$dir/j" 2>"$out" || { echo "FAIL: --json --by $by"; fails=$((fails + 1)); continue; }
	if python3 - "$dir/j" "$dir/want.json" $by <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
want = json.load(open(sys.argv[2]))[sys.argv[3]]
by = sys.argv[3]
keys = ["gpa_start", "gpa_end", "count", "total_ns", "min_ns", "max_ns"]
keys += ["access"] if by == "npf" else ["pages", "writes"]
got = sorted(tuple(g[k] for k in keys) for g in j["groups"])
exp = sorted(tuple(g[k] for k in keys) for g in want["groups"])
assert j["by"] == by and got == exp, (got, exp)
assert j["exits_without_detail"] == want["exits_without_detail"], j["exits_without_detail"]
assert j["exits_beyond_table"] == 0
assert sum(g["count"] for g in j["groups"]) + j["exits_without_detail"] == j["counts"]["exits"]
assert len(j["top"]) == 5 and all("gpa" in e and e["access"] in ("read", "write") for e in j["top"])
print(len(got), "groups")
PY
	then
		echo "ok: report exits --json --by $by: the story's groups, exact"
	else
		echo "FAIL: report exits --json --by $by"; fails=$((fails + 1))
	fi
done

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
