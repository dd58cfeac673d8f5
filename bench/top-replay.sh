#!/bin/bash
# `vmscope top --replay` on merged traces of 1 M and 10 M records
# (bench/gen_merged.c): records per second of wall time (median of 3
# runs) and peak RSS (/usr/bin/time), beside `report exits` and `report
# sched` on the same trace (top runs both passes, plus its windows). Uses
# build/release (scripts/build.sh).
#
# Usage: bench/top-replay.sh ["RECORDS..." [SCRATCH-DIR]]
#        (defaults "1000000 10000000", /var/tmp/vmscope-top-bench)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/release
sizes=${1:-1000000 10000000}
dir=${2:-/var/tmp/vmscope-top-bench}
ninja -C "$bin" cli/vmscope bench/gen-merged >/dev/null
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# run_size N: the table for a trace of about N records
run_size() {
	"$bin/bench/gen-merged" "$dir/t" "$1" >/dev/null
	m=$dir/t/merged
	records=$("$bin/cli/vmscope" report exits --json "$m" |
		python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["counts"]["records"], r["last_ns"] - r["first_ns"])')
	read -r recs span <<<"$records"
	echo "trace: $recs records, $(du -sh "$m" | cut -f1), $((span / 1000000)) ms of host time"
	printf '| command | wall s (median of 3) | runs | records/s | peak RSS MiB (max of 3) |\n'
	printf '|---|---|---|---|---|\n'
	k=0
	for cmd in "top --replay $m --json --interval 0.01" "top --replay $m --json --interval 1" \
		"report exits --by reason $m" "report sched $m"; do
		walls=() rss=0 k=$((k + 1))
		for _ in 1 2 3; do
			# shellcheck disable=SC2086
			/usr/bin/time -f "%e %M" -o "$dir/time" "$bin/cli/vmscope" $cmd >"$dir/out.$k"
			read -r w kib <"$dir/time"
			walls+=("$w")
			[ "$kib" -gt "$rss" ] && rss=$kib
		done
		wall=$(printf '%s\n' "${walls[@]}" | median)
		printf '| `%s` | %s | %s | %s | %.1f |\n' "${cmd//$m/MERGED}" "$wall" "${walls[*]}" \
			"$(awk -v r="$recs" -v w="$wall" 'BEGIN { printf "%.2f M", (w > 0 ? r / w / 1e6 : 0) }')" \
			"$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
	done
	echo "intervals of the --interval 0.01 runs: $(wc -l <"$dir/out.1")"
	rm -rf "$dir/t"
}

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for n in $sizes; do
	run_size "$n"
done
