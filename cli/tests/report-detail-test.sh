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
# accessed; --help says what each means.
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

[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
