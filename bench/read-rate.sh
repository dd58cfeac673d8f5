#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Issue 5's reader benchmark, part 2 (on this machine): events/s of
# `vmscope dump` (every event as text) against `trace-cmd report` on the
# two traces bench/vm/record-traces.sh recorded of the same guest workload
# in one test host run, median of RUNS runs each, interleaved, output to
# /dev/null; then `vmscope dump` of a synthetic 10 M-event trace
# (bench/gen_trace.c), also RUNS runs. With BEFORE (another build's
# vmscope binary, e.g. of an older commit), that one is timed too,
# interleaved with the others on both traces, for a before/after ratio.
# Prints a table of wall-time medians (and user CPU time medians, steadier
# on a shared machine); the target is vmscope's rate at least 3x
# trace-cmd's.
#
# Usage: bench/read-rate.sh [RESULTS-DIR [RUNS [BEFORE]]]
#   RESULTS-DIR: build/vmtests/record-traces (made by
#   `tests/vm/run.sh bench/vm/record-traces.sh`)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
res=${1:-$top/build/vmtests/record-traces}
runs=${2:-5}
before=${3:-}
vmscope=$top/build/release/cli/vmscope
gen=$top/build/release/bench/gen-trace
[ -x "$vmscope" ] && [ -x "$gen" ] || { echo "build first: scripts/build.sh" >&2; exit 1; }
[ -z "$before" ] || [ -x "$before" ] || { echo "$before: not an executable" >&2; exit 1; }
command -v trace-cmd >/dev/null || { echo "trace-cmd missing: scripts/install-deps.sh" >&2; exit 1; }
[ -d "$res/rt-vmscope" ] && [ -f "$res/rt.dat" ] ||
	{ echo "no traces in $res: run tests/vm/run.sh bench/vm/record-traces.sh" >&2; exit 1; }

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
tmp=$(mktemp -d /var/tmp/read-rate.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# timed NAME CMD...: appends "wall user" of one run to $tmp/NAME
timed() {
	local name=$1
	shift
	/usr/bin/time -f '%e %U' "$@" >/dev/null 2>"$tmp/time"
	tail -n 1 "$tmp/time" >>"$tmp/$name"
}
wall() { awk '{ print $1 }' "$tmp/$1" | median; }
user() { awk '{ print $2 }' "$tmp/$1" | median; }
runs_of() { awk '{ printf "%s%s", sep, $1; sep = " " }' "$tmp/$1"; }

n_vm=$("$vmscope" dump --summary "$res/rt-vmscope" | awk '$1 == "events" { n += $4 } END { print n + 0 }')
# trace-cmd report prints one line per event after its header lines,
# which do not have the "name: " event column
n_tc=$(trace-cmd report -i "$res/rt.dat" 2>/dev/null | grep -Ec ' kvm_[a-z_]+: ')
"$gen" "$tmp/trace" 10000000 >/dev/null
for _ in $(seq "$runs"); do
	timed vm "$vmscope" dump "$res/rt-vmscope"
	timed tc trace-cmd report -i "$res/rt.dat"
	timed syn "$vmscope" dump "$tmp/trace"
	if [ -n "$before" ]; then
		timed vm_before "$before" dump "$res/rt-vmscope"
		timed syn_before "$before" dump "$tmp/trace"
	fi
done

echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(trace-cmd --version 2>&1 | grep -m1 -o 'version [0-9.]*' || true)"
echo "wall s, vmscope dump: $(runs_of vm); trace-cmd report: $(runs_of tc); synthetic: $(runs_of syn)"
[ -z "$before" ] || echo "wall s, BEFORE dump: $(runs_of vm_before); synthetic: $(runs_of syn_before)"
row() {	# row LABEL EVENTS NAME
	awk -v l="$1" -v n="$2" -v w="$(wall "$3")" -v u="$(user "$3")" 'BEGIN {
		printf "| %s | %d | %.2f | %.0f | %.2f | %.0f |\n", l, n, w, n / w, u, (u > 0 ? n / u : 0)
	}'
}
echo "| reader (median of $runs, to /dev/null) | events | wall s | events/s | user s | events/s of user time |"
echo "|---|---|---|---|---|---|"
row "vmscope dump, test-host trace" "$n_vm" vm
row "trace-cmd report, same workload" "$n_tc" tc
row "vmscope dump, synthetic 10 M" 10000000 syn
if [ -n "$before" ]; then
	row "BEFORE vmscope dump, test-host trace" "$n_vm" vm_before
	row "BEFORE vmscope dump, synthetic 10 M" 10000000 syn_before
fi
awk -v nv="$n_vm" -v nt="$n_tc" -v tv="$(wall vm)" -v tt="$(wall tc)" -v uv="$(user vm)" -v ut="$(user tc)" 'BEGIN {
	printf "vmscope / trace-cmd rate: %.2f by wall time, %.2f by user time (target >= 3)\n",
		(nv / tv) / (nt / tt), (nv / uv) / (nt / ut)
}'
[ -z "$before" ] || awk -v a="$(wall vm_before)" -v b="$(wall vm)" -v c="$(wall syn_before)" -v d="$(wall syn)" 'BEGIN {
	printf "after / before speed (wall): test-host trace %.2f, synthetic %.2f\n", a / b, c / d
}'
