#!/bin/bash
# `vmscope top --replay --json` on synthetic traces of about 1 M and 10 M
# events, beside `vmscope report exits --by reason` on the same trace in
# the same run (the peer: the ratio of their rates is what a loaded machine
# leaves meaningful): records per second of CPU time (user + system),
# median of REPEATS runs (the commands interleaved, so that load drift hits
# them alike), the median wall time beside it, and
# peak RSS (/usr/bin/time, max of the runs), which must not grow with the
# trace. Two kinds of trace, both synthetic, written through the project's
# own writers:
# - merged: bench/gen_merged.c (analysis/tests/scen.h, merge's writer: 2 VMs
#   x 4 vCPUs, three guest tasks per VM, io exits through userspace, a host
#   task preempting a vCPU); also `top --interval 0.01` and `report sched`;
# - raw, as `vmscope record` writes it: `test_online --write DIR SECONDS`
#   (merge/tests/synth.c, walkable: 2 VMs x 2 vCPUs, exit/entry pairs of
#   three reasons, guest tasks switching, sync exchanges every ms with
#   forged ones, a guest clock step), which top merges online as it reads
#   and report exits merges in its two passes.
# Uses build/release (scripts/build.sh).
#
# Usage: bench/top-replay.sh ["EVENTS..." [SCRATCH-DIR]]
#        (defaults "1000000 10000000", /var/tmp/vmscope-top-bench; REPEATS=3)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/release
sizes=${1:-1000000 10000000}
dir=${2:-/var/tmp/vmscope-top-bench}
repeats=${REPEATS:-3}
ninja -C "$bin" cli/vmscope bench/gen-merged merge/test_online >/dev/null
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# table KIND RECORDS TRACE CMD...: each CMD (the trace's place: TRACE) run
# REPEATS times, interleaved; one row each, rates against the last CMD's.
# Rates are of CPU time (user + system): the machine is shared, and wall
# time charges a run for the time others had its core.
table() {
	local kind=$1 recs=$2 t=$3 i k
	shift 3
	local cmds=("$@") n=$#
	for ((k = 0; k < n; k++)); do : >"$dir/cpu.$k" && : >"$dir/wall.$k" && echo 0 >"$dir/rss.$k"; done
	for ((i = 0; i < repeats; i++)); do
		for ((k = 0; k < n; k++)); do
			# shellcheck disable=SC2086
			/usr/bin/time -f "%e %U %S %M" -o "$dir/time" "$bin/cli/vmscope" ${cmds[k]//TRACE/$t} \
				>"$dir/out.$k" 2>"$dir/err.$k" ||
				{ echo "failed: vmscope ${cmds[k]}: $(cat "$dir/err.$k")" >&2; exit 1; }
			read -r w u sy kib <"$dir/time"
			echo "$w" >>"$dir/wall.$k"
			awk -v u="$u" -v s="$sy" 'BEGIN { printf "%.2f\n", u + s }' >>"$dir/cpu.$k"
			[ "$kib" -gt "$(cat "$dir/rss.$k")" ] && echo "$kib" >"$dir/rss.$k"
		done
	done
	local peer
	peer=$(median <"$dir/cpu.$((n - 1))")
	for ((k = 0; k < n; k++)); do
		local cpu runs rss
		cpu=$(median <"$dir/cpu.$k")
		runs=$(tr '\n' ' ' <"$dir/cpu.$k")
		rss=$(cat "$dir/rss.$k")
		printf '| %s | %s | `%s` | %s | %s | %s | %s | %s | %.1f |\n' "$kind" "$recs" "${cmds[k]}" "$cpu" "${runs% }" \
			"$(awk -v r="$recs" -v c="$cpu" 'BEGIN { printf "%.2f M", (c > 0 ? r / c / 1e6 : 0) }')" \
			"$(awk -v p="$peer" -v c="$cpu" 'BEGIN { printf "%.2f", (c > 0 ? p / c : 0) }')" \
			"$(median <"$dir/wall.$k")" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
		[ "${cmds[k]}" = "top --replay TRACE --json --interval 0.01" ] &&
			echo "$kind $recs: $(wc -l <"$dir/out.$k") intervals of 10 ms" >>"$dir/notes"
	done
	return 0
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); vmscope $(git -C "$top" rev-parse --short HEAD)"
: >"$dir/notes"
printf '| trace | records | command (TRACE: that trace) | CPU s, median of %d | runs | records/s of CPU | rate / report exits | wall s, median | peak RSS MiB, max |\n' "$repeats"
printf '|---|---|---|---|---|---|---|---|---|\n'
for n in $sizes; do
	"$bin/bench/gen-merged" "$dir/m" "$n" >/dev/null
	recs=$("$bin/cli/vmscope" report exits --json "$dir/m/merged" | jq '.counts.records')
	table merged "$recs" "$dir/m/merged" "top --replay TRACE --json --interval 1" \
		"top --replay TRACE --json --interval 0.01" "report sched TRACE" "report exits --by reason TRACE"
	rm -rf "$dir/m"
	# the raw generator makes about 217 000 events per second of trace
	"$bin/merge/test_online" --write "$dir/r" "$(awk -v n="$n" 'BEGIN { printf "%.3f", n / 217220 }')"
	recs=$("$bin/cli/vmscope" dump --summary "$dir/r" | awk '/^total:/ { for (i = 1; i < NF; i++) if ($(i + 1) ~ /^events/) print $i }')
	table raw "$recs" "$dir/r" "top --replay TRACE --json --interval 1" "report exits --by reason TRACE"
	rm -rf "$dir/r"
done
cat "$dir/notes"
