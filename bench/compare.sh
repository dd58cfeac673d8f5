#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# This tree against an older commit on the benchmarks that run on the
# machine, for "behaviour unchanged, benchmarks within noise" (issue 20):
# builds REV in a git worktree (release, beside this tree's build/release),
# then on the same inputs, made by this tree's generators, runs each
# command with both builds, interleaved, RUNS times: the median of user +
# system CPU seconds of each, and their ratio (this tree / REV). Inputs:
# - RAW: a recording as `vmscope record` writes it, `test_merge --write
#   DIR SECONDS` (merge/tests/synth.c: 2 VMs x 2 vCPUs, sync every ms);
# - each build's own merged trace of RAW (the merged format may differ
#   between the two: each reads what it writes).
# Commands: `merge` of RAW, `dump` of RAW, `report exits --by task`,
# `report exits --by reason` and `report sched` of the merged trace, and
# the ring buffer's write cost (bench/run.sh: ns per event beside
# LTTng-UST in the same run, whose ratio is what a loaded machine leaves
# meaningful); and the reports' instruction counts (valgrind's callgrind,
# which load does not change). The kernel probes' cost needs the test host
# (bench/vm/kvm-exit-probe-cost.sh) and is not here.
#
# Usage: bench/compare.sh REV [RUNS [SECONDS]]   (defaults 5 runs, 20 s of RAW)
set -euo pipefail
rev=${1:?usage: bench/compare.sh REV [RUNS [SECONDS]]}
runs=${2:-5}
secs=${3:-20}
top=$(cd "$(dirname "$0")/.." && pwd)
cmp=$top/build/compare
src=$cmp/src
data=/var/tmp/vmscope-compare.$$
trap 'rm -rf "$data"' EXIT

base=$(git -C "$top" rev-parse --short "$rev^{commit}")
now=$(git -C "$top" rev-parse --short HEAD)
[ -d "$src" ] || git -C "$top" worktree add --detach "$src" "$base" >/dev/null
git -C "$src" checkout -q --detach "$base"
[ -f "$src/build/rel/build.ninja" ] ||
	meson setup "$src/build/rel" "$src" --buildtype=release >/dev/null
ninja -C "$src/build/rel" cli/vmscope >/dev/null
ninja -C "$top/build/release" cli/vmscope merge/test_merge >/dev/null
old=$src/build/rel/cli/vmscope
new=$top/build/release/cli/vmscope

mkdir -p "$data"
"$top/build/release/merge/test_merge" --write "$data/raw" "$secs" >/dev/null
"$old" merge -o "$data/m-old" "$data/raw" >/dev/null 2>&1
"$new" merge -o "$data/m-new" "$data/raw" >/dev/null 2>&1
events=$("$new" merge --show "$data/m-new" 2>/dev/null | tail -n 1)

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# cpu BIN ARGS...: user + system seconds of one run (output discarded);
# @M@ in ARGS is that build's merged trace, @O@ a fresh output path
cpu() {
	local bin=$1 tag=$2
	shift 2
	local args=("${@//@M@/$data/m-$tag}")
	args=("${args[@]//@O@/$data/out-$tag}")
	rm -rf "$data/out-$tag"
	/usr/bin/time -f '%U %S' -o "$data/time" "$bin" "${args[@]}" >/dev/null 2>&1 ||
		{ echo "n/a"; return; }
	awk '{ printf "%.3f\n", $1 + $2 }' "$data/time"
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "RAW: $secs s of test_merge --write ($events); $runs runs each, interleaved"
printf '| command | %s CPU s (median) | %s CPU s (median) | %s / %s |\n' "$base" "$now" "$now" "$base"
printf '|---|---|---|---|\n'
for c in "merge -o @O@ RAW" "dump RAW" "report exits --by task @M@" \
	 "report exits --by reason @M@" "report sched @M@"; do
	read -ra a <<<"${c//RAW/$data/raw}"
	: >"$data/o" && : >"$data/n"
	for _ in $(seq "$runs"); do
		cpu "$old" old "${a[@]}" >>"$data/o"
		cpu "$new" new "${a[@]}" >>"$data/n"
	done
	o=$(median <"$data/o") n=$(median <"$data/n")
	printf '| `vmscope %s` | %s | %s | %s |\n' "${c//@M@/MERGED}" "$o" "$n" \
		"$(awk -v o="$o" -v n="$n" 'BEGIN { if (o + 0 > 0 && n + 0 > 0) printf "%.2f", n / o; else print "n/a" }')"
done

# instructions (callgrind: the same count whatever the load) of the
# reports, on a 2 s recording
"$top/build/release/merge/test_merge" --write "$data/raw2" 2 >/dev/null
"$old" merge -o "$data/i-old" "$data/raw2" >/dev/null 2>&1
"$new" merge -o "$data/i-new" "$data/raw2" >/dev/null 2>&1
instr() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
for c in "report exits --by task" "report exits --by reason" "report sched"; do
	read -ra a <<<"$c"
	o=$(instr "$old" "${a[@]}" "$data/i-old") n=$(instr "$new" "${a[@]}" "$data/i-new")
	printf '| `vmscope %s MERGED`, 2 s recording: instructions | %s | %s | %s |\n' "$c" "$o" "$n" \
		"$(awk -v o="$o" -v n="$n" 'BEGIN { printf "%.3f", n / o }')"
done

# the ring buffer: each tree's own bench/run.sh (its rb-bench and build)
ring() {
	"$1/bench/run.sh" 1000000 "$runs" 1 2>/dev/null | awk -F'|' '$2 ~ /^ 1 $/ { gsub(/[ *]/, "", $5); print $3 + 0, $5 }'
}
read -r o_ns o_ratio <<<"$(ring "$src")"
read -r n_ns n_ratio <<<"$(ring "$top")"
printf '| ring buffer write, ns/event (vmscope/LTTng-UST in its run) | %s (%s) | %s (%s) | %s |\n' \
	"$o_ns" "$o_ratio" "$n_ns" "$n_ratio" \
	"$(awk -v o="$o_ratio" -v n="$n_ratio" 'BEGIN { printf "%.2f", n / o }')"
