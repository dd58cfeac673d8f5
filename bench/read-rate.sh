#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Issue 5's reader benchmark, part 2 (on this machine): events/s of
# `vmscope dump` (every event as text) against `trace-cmd report` on the
# two traces bench/vm/record-traces.sh recorded of the same guest workload
# in one test host run, median of RUNS runs each, interleaved, output to
# /dev/null; then `vmscope dump` of a synthetic 10 M-event trace
# (bench/gen_trace.c). Prints a table; the target is vmscope's rate at
# least 3x trace-cmd's.
#
# Usage: bench/read-rate.sh [RESULTS-DIR [RUNS]]
#   RESULTS-DIR: build/vmtests/record-traces (made by
#   `tests/vm/run.sh bench/vm/record-traces.sh`)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
res=${1:-$top/build/vmtests/record-traces}
runs=${2:-5}
vmscope=$top/build/release/cli/vmscope
gen=$top/build/release/bench/gen-trace
[ -x "$vmscope" ] && [ -x "$gen" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
command -v trace-cmd >/dev/null || { echo "trace-cmd missing: scripts/install-deps.sh" >&2; exit 1; }
[ -d "$res/rt-vmscope" ] && [ -f "$res/rt.dat" ] ||
	{ echo "no traces in $res: run tests/vm/run.sh bench/vm/record-traces.sh" >&2; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
secs() { /usr/bin/time -f %e "$@" >/dev/null 2>/tmp/read-rate.time; tail -n 1 /tmp/read-rate.time; }

n_vm=$("$vmscope" dump --summary "$res/rt-vmscope" | awk '$1 == "events" { n += $4 } END { print n + 0 }')
# trace-cmd report prints one line per event after its header lines,
# which do not have the "name: " event column
n_tc=$(trace-cmd report -i "$res/rt.dat" 2>/dev/null | grep -Ec ' kvm_[a-z_]+: ')
tvm=() ttc=()
for _ in $(seq "$runs"); do
	tvm+=("$(secs "$vmscope" dump "$res/rt-vmscope")")
	ttc+=("$(secs trace-cmd report -i "$res/rt.dat")")
done
m_vm=$(printf '%s\n' "${tvm[@]}" | median)
m_tc=$(printf '%s\n' "${ttc[@]}" | median)

syn=$(mktemp -d /var/tmp/read-rate.XXXXXX)
trap 'rm -rf "$syn"' EXIT
"$gen" "$syn/t" 10000000 >/dev/null
tsyn=()
for _ in $(seq 3); do tsyn+=("$(secs "$vmscope" dump "$syn/t")"); done
m_syn=$(printf '%s\n' "${tsyn[@]}" | median)

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(trace-cmd --version 2>&1 | grep -m1 -o 'version [0-9.]*' || true)"
echo "vmscope dump runs: ${tvm[*]} s; trace-cmd report runs: ${ttc[*]} s; synthetic: ${tsyn[*]} s"
awk -v nv="$n_vm" -v nt="$n_tc" -v tv="$m_vm" -v tt="$m_tc" -v ts="$m_syn" -v r="$runs" 'BEGIN {
	printf "| reader (median of %d, to /dev/null) | events | s | events/s |\n", r
	printf "|---|---|---|---|\n"
	printf "| vmscope dump, test-host trace | %d | %.2f | %.0f |\n", nv, tv, nv / tv
	printf "| trace-cmd report, same workload | %d | %.2f | %.0f |\n", nt, tt, nt / tt
	printf "| vmscope dump, synthetic 10 M (median of 3) | 10000000 | %.2f | %.0f |\n", ts, 1e7 / ts
	printf "vmscope / trace-cmd rate: %.2f (target >= 3)\n", (nv / tv) / (nt / tt)
}'
