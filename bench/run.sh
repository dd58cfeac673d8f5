#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Build the ring buffer benchmark (release) and run it beside LTTng-UST.
# Starts lttng-sessiond if none is running, creates a snapshot (overwrite)
# session with a 16 x 64 KiB per-CPU channel (the same geometry as the
# vmscope buffers), enables the benchmark's event, runs, takes a snapshot
# to show LTTng really recorded, and tears everything down.
#
# Usage: bench/run.sh [events-per-thread [runs [threads]]]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build="$top/build/bench"

if ! command -v lttng >/dev/null || ! pkg-config --exists lttng-ust; then
	echo "LTTng tools or liblttng-ust-dev missing: running scripts/install-deps.sh" >&2
	"$top/scripts/install-deps.sh"
fi

if [ -d "$build" ]; then
	meson configure "$build" -Dbench=true -Dbuildtype=release >/dev/null
else
	meson setup "$build" "$top" -Dbench=true -Dbuildtype=release >/dev/null
fi
ninja -C "$build" -j2 bench/rb-bench >/dev/null

tmp=$(mktemp -d /tmp/vmscope-bench.XXXXXX)
session="vmscope-bench-$$"
started_sessiond=""
rundir=/var/run/lttng
[ "$(id -u)" -eq 0 ] || rundir="${LTTNG_HOME:-$HOME}/.lttng"

cleanup() {
	lttng destroy "$session" >/dev/null 2>&1 || true
	if [ -n "$started_sessiond" ]; then
		kill "$started_sessiond" 2>/dev/null || true
		# the consumer daemons exit with it; give them a moment
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$started_sessiond" 2>/dev/null || break
			sleep 0.2
		done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! lttng list >/dev/null 2>&1; then
	lttng-sessiond --daemonize --no-kernel
	started_sessiond=$(cat "$rundir/lttng-sessiond.pid")
fi

lttng create "$session" --snapshot --output="$tmp/snapshot" >/dev/null
lttng enable-channel -u -s "$session" --subbuf-size=64K --num-subbuf=16 \
	--overwrite bench >/dev/null
lttng enable-event -u -s "$session" -c bench vmscope_bench:payload32 >/dev/null
lttng start "$session" >/dev/null

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
echo "command: bench/run.sh $*"
"$build/bench/rb-bench" "$@"

lttng snapshot record -s "$session" >/dev/null
echo "LTTng snapshot of what it recorded: $(du -sh "$tmp/snapshot" | cut -f1) in $(find "$tmp/snapshot" -type f -name 'bench_*' | wc -l) stream files"
lttng stop "$session" >/dev/null
