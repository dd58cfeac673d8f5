#!/bin/sh
# `vmscope report exits --by symbol` on the merged trace that
# analysis/tests/test_symbols.c --write makes (one VM with a guest symbol
# table of four kernel functions and a module virtio_x; io exits in
# do_out and vx_kick, CPUID exits from user space by tasks cpuid-loop and
# cpuid-two, kernel RIPs no symbol covers): the text rows (function,
# "function [module]", "(user) task", "(kernel, no symbol)"), the line on
# the VM's table, the longest exits' RIPs as symbol+offset; the JSON
# (parsed): five groups adding up to every exit, user groups with their
# task and no symbol, a user exit never with a rip_symbol; the RIPs of a
# trace without a table stay hex; --help says what it means.
# Usage: report-symbol-test.sh PATH-TO-vmscope PATH-TO-test_symbols PATH-TO-test_detail
set -u
exe=$1 writer=$2 other=$3
. "$(dirname "$0")/expect.sh"
expect_tmpdir report-symbol-test

"$writer" --write "$dir" >/dev/null 2>&1 || { echo "FAIL: writing the trace"; exit 1; }
m=$dir/merged
expect 0 'kernel function at the exit.s RIP \(--by symbol\)' -- report --help
expect 0 '--by symbol +the guest kernel function at the exit.s guest RIP' -- report exits --help
expect 0 'are "\(user\)" with their task, never a kernel' -- report exits --help
expect 0 '^VM 0: 5 guest kernel symbols$' -- report exits --by symbol "$m"
expect 0 '^0 +do_out +[0-9]+ ' -- report exits --by symbol "$m"
expect 0 '^0 +vx_kick \[virtio_x\] +[0-9]+ ' -- report exits --by symbol "$m"
expect 0 '^0 +\(user\) cpuid-loop/200 +[0-9]+ ' -- report exits --by symbol "$m"
expect 0 '^0 +\(user\) cpuid-two/201 +[0-9]+ ' -- report exits --by symbol "$m"
expect 0 '^0 +\(kernel, no symbol\) +[0-9]+ ' -- report exits --by symbol "$m"
expect 0 ' (do_out|vx_kick)\+0x[0-9a-f]+ ' -- report exits --by symbol --top 20 "$m"
expect 0 ' vx_kick\+0x[0-9a-f]+ \[virtio_x\] ' -- report exits --by symbol --top 50 "$m"
# every grouping names RIPs the same way
expect 0 ' do_out\+0x[0-9a-f]+ ' -- report exits --by task --top 50 "$m"
"$exe" report exits --json --by symbol --top 3000 "$m" >"$dir/j" 2>"$out" || { echo "FAIL: --json --by symbol"; fails=$((fails + 1)); }
if python3 - "$dir/j" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
g = j["groups"]
assert j["by"] == "symbol" and len(g) == 5, (j["by"], len(g))
assert sum(x["count"] for x in g) == j["counts"]["exits"] == 3000
assert j["vms"][0]["guest_symbols"] == 5 and j["vms"][0]["guest_symbols_dropped"] == 0
names = set()
for x in g:
    if x["mode"] == "user":
        assert x["symbol"] is None and x["task"]["tid"] in (200, 201), x
        names.add("user/%d" % x["task"]["tid"])
    elif x["symbol"] is None:
        assert x["unnamed"] == "no_symbol", x
        names.add("none")
    else:
        names.add("%s[%s]" % (x["symbol"], x["module"]))
assert names == {"user/200", "user/201", "none", "do_out[None]", "vx_kick[virtio_x]"}, names
assert len(j["top"]) == 3000
for e in j["top"]:
    rip = int(e["rip"], 16)
    assert e["user_mode"] == (rip < 0x800000000000), e
    if e["user_mode"]:
        assert e["rip_symbol"] is None, e
    elif e["rip_symbol"] is not None:
        assert e["rip_symbol"].startswith(("do_out+0x", "vx_kick+0x")), e
PY
then :; else echo "FAIL: --json --by symbol fields"; fails=$((fails + 1)); fi
# a trace without symbols: its RIPs stay hex, its VM says so
mkdir "$dir/nosym" && "$other" --write "$dir/nosym" >/dev/null 2>&1 || { echo "FAIL: writing the other trace"; exit 1; }
expect 0 '^VM 0: no guest symbols in the trace' -- report exits --by symbol "$dir/nosym/merged"
# (its exits' RIPs are 0: user mode, by task, whatever the table)
expect 0 '^0 +\(user\) \(before guest session\) +[0-9]+ ' -- report exits --by symbol "$dir/nosym/merged"
expect 0 ' 0 \(user\) +[0-9]+\.[0-9]{9}' -- report exits --by symbol --top 3 "$dir/nosym/merged"
[ "$fails" -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
