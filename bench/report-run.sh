#!/bin/bash
# `vmscope report exits` and `report sched` on merged traces of 1 M and 10 M
# records (bench/gen_merged.c): wall time, median of 3 runs, and peak RSS
# (/usr/bin/time), to show the reports' memory does not grow with the
# trace. Uses build/release (scripts/build.sh).
#
# Usage: bench/report-run.sh [SCRATCH-DIR]     (default /var/tmp/vmscope-report-bench)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/release
dir=${1:-/var/tmp/vmscope-report-bench}
ninja -C "$bin" cli/vmscope bench/gen-merged >/dev/null
rm -rf "$dir"
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| records | trace size | command | wall s (median of 3) | runs | peak RSS MiB (max of 3) |\n'
printf '|---|---|---|---|---|---|\n'
for n in 1000000 10000000; do
	"$bin/bench/gen-merged" "$dir/t$n" "$n" >/dev/null
	size=$(du -sh "$dir/t$n/merged" | cut -f1)
	for cmd in "report exits --by task" "report exits --by reason" "report sched"; do
		walls=() rss=0
		for _ in 1 2 3; do
			# shellcheck disable=SC2086
			/usr/bin/time -f "%e %M" -o "$dir/time" "$bin/cli/vmscope" $cmd "$dir/t$n/merged" >/dev/null
			read -r w m <"$dir/time"
			walls+=("$w")
			[ "$m" -gt "$rss" ] && rss=$m
		done
		printf '| %s | %s | `%s` | %s | %s | %.1f |\n' "$n" "$size" "$cmd" \
			"$(printf '%s\n' "${walls[@]}" | median)" "${walls[*]}" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
	done
	rm -rf "$dir/t$n"
done
