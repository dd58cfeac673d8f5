#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The libvirt hook's time per call on this machine (issue 8: < 100 ms),
# with the release build: vmscoped runs with a stand-in recorder
# (daemon/tests/fake-vmscope: the hook's time does not include recording)
# and fake QEMU processes; each round runs, as libvirt does, the installed
# hook script (qemu-hook: sh, then `vmscope hook`) with a domain XML on
# stdin for: prepare (ignored), started and stopped of an opted-in domain
# (one request each to the daemon), started of a domain not opted in.
# Prints per operation the median and max wall time (bash around the
# exec) and the median of the hook's own time since exec
# (VMSCOPE_HOOK_TIMES, 10 ms resolution).
#
# Usage: bench/hook-latency.sh [rounds]   (default 30)
set -euo pipefail
rounds=${1:-30}
top=$(cd "$(dirname "$0")/.." && pwd)
rel=$top/build/release
[ -x "$rel/cli/vmscope" ] && [ -x "$rel/daemon/vmscoped" ] || "$top/scripts/build.sh" >/dev/null
T=$(mktemp -d /var/tmp/vmscope-hookbench.XXXXXX)
dpid= qpid=
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	[ -n "$qpid" ] && kill "$qpid" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
export VMSCOPE_SOCKET=$T/run/vmscoped.sock VMSCOPE_HOOK_TIMES=$T/self.txt
cp "$top/daemon/tests/fake-vmscope" "$T/fake-vmscope"
# the hook script as installed, pointing at this build
sed "s|@BINDIR@|$rel/cli|" "$top/daemon/qemu-hook.in" >"$T/hook"
chmod +x "$T/hook"
mkdir -p "$T/libvirt"
sleep 100000 & qpid=$!
echo "$qpid" >"$T/libvirt/b1.pid"
"$rel/daemon/vmscoped" --socket "$VMSCOPE_SOCKET" --state-dir "$T/state" --pid-dir "$T/libvirt" \
	--vmscope "$T/fake-vmscope" 2>"$T/daemon.log" &
dpid=$!
for _ in $(seq 50); do "$rel/cli/vmscope" daemon status >/dev/null 2>&1 && break; sleep 0.1; done

opt="<metadata><v:trace xmlns:v='http://vmscope.org/xmlns/trace/1'/></metadata>"
xml() { echo "<domain type='kvm'><name>$1</name>$2<devices><vsock model='virtio'><cid address='5'/></vsock></devices></domain>"; }
call() { # NAME OP XML-METADATA
	local t0 t1
	xml "$1" "$3" >"$T/in.xml"
	t0=$(date +%s%N)
	"$T/hook" "$1" "$2" begin - <"$T/in.xml" 2>/dev/null
	t1=$(date +%s%N)
	echo "$2${3:+-optin} $(((t1 - t0) / 1000))" >>"$T/wall.txt"
}
for _ in $(seq "$rounds"); do
	call b1 prepare "$opt"
	call b1 started "$opt"
	call b1 stopped "$opt"
	call p1 started ""
	# the daemon finalizes b1 in the background (fake merge): wait, so
	# that each round's started finds nothing recording
	for _ in $(seq 100); do grep -q "b1: trace finalized" "$T/daemon.log" && break; sleep 0.02; done
	: >"$T/daemon.log"
done
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: bench/hook-latency.sh $rounds"
printf "%-16s %6s %12s %12s %14s\n" operation calls "median ms" "max ms" "own median ms"
for op in prepare-optin started-optin stopped-optin started; do
	sort -n -k2 <(grep "^$op " "$T/wall.txt") | awk -v op="$op" '
		{ v[NR] = $2 } END { printf "%-16s %6d %12.1f %12.1f", op, NR, v[int((NR + 1) / 2)] / 1000, v[NR] / 1000 }'
	o=${op%-optin}
	[ "$op" = started ] && sel='$1 == "p1"' || sel='$1 == "b1"'
	awk "$sel && \$2 == \"$o\" { print \$3 }" "$T/self.txt" | sort -n |
		awk '{ v[NR] = $1 } END { printf " %14d\n", v[int((NR + 1) / 2)] }'
done
