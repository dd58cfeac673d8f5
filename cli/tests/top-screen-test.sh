#!/bin/sh
# `vmscope top --replay`'s screen in a real terminal (a tmux server of its
# own), on the merged trace analysis/tests/test_analysis.c --write makes:
# the screen shows the exit reasons and, grouped by task (g), the guest
# task names; s sorts by count (the exits/s column then never grows down
# the table, and the order differs from the default sort by total); p
# pauses (the interval shown stays); v picks one VM; q quits with exit 0;
# on a trace with a host task preempting a vCPU thread, the worst stalls
# name it and the host-preemptor grouping lists it; without a terminal the
# command says so and exits 1.
# Usage: top-screen-test.sh PATH-TO-vmscope PATH-TO-test_analysis
set -u
exe=$1 writer=$2
fails=0
dir=$(mktemp -d /var/tmp/top-screen-XXXXXX)
sock=vmscope-top-test-$$
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$dir"' EXIT
out=$dir/out

. "$(dirname "$0")/expect.sh"

"$writer" --write "$dir" || { echo "FAIL: writing the trace"; exit 1; }
m=$dir/merged
expect 1 'the screen needs a terminal' -- top --replay "$m"

ok() { echo "ok: $1"; }
bad() { echo "FAIL: $1"; tm capture-pane -p -t top | sed 's/^/  | /'; fails=$((fails + 1)); }
# wait_for REGEX: until the screen shows it (10 s at most)
wait_for() {
	for _ in $(seq 100); do
		tm capture-pane -p -t top >"$dir/screen" 2>/dev/null && grep -Eq -- "$1" "$dir/screen" &&
			return 0
		sleep 0.1
	done
	return 1
}
# the group table's rows: "VM NAME exits/s"
rows() { tm capture-pane -p -t top | awk '/^VM +(exit reason|guest task|vcpu) / { on = 1; next }
	on && /^$/ { on = 0 } on && $1 ~ /^[0-9]+$/ { print $1, $2, $3 }'; }

# --speed 0.1: 4.9 s for the 0.49 s of the trace, time to pause
tm new-session -d -s top -x 130 -y 60 \
	"'$exe' top --replay '$m' --interval 0.1 --speed 0.1; echo EXIT=\$?; sleep 60"
if wait_for '^vmscope top .* interval 1 '; then
	tm send-keys -t top p
	if wait_for 'PAUSED'; then
		first=$(grep -o 'interval [0-9]*' "$dir/screen")
		sleep 1.5
		tm capture-pane -p -t top >"$dir/screen"
		if [ "$(grep -o 'interval [0-9]*' "$dir/screen")" = "$first" ]; then ok "p pauses ($first)"
		else bad "p: the interval moved on while paused"; fi
	else
		bad "p: no PAUSED"
	fi
	tm send-keys -t top p
else
	bad "the screen did not show interval 1"
fi
if wait_for 'END OF TRACE'; then ok "the replay ends on the screen"
else bad "no END OF TRACE"; fi
if grep -Eq '^1 +IO_INSTRUCTION ' "$dir/screen" && grep -Eq '^0 +npf ' "$dir/screen" &&
   grep -Eq 'keys: s sort \(total\)' "$dir/screen"; then ok "the screen shows the exit reasons"
else bad "exit reasons"; fi
rows >"$dir/total"
tm send-keys -t top s
wait_for 'sort \(count\)' || bad "s: no sort (count)"
rows >"$dir/count"
if [ "$(wc -l <"$dir/count")" -eq 8 ] &&
   awk '{ if (NR > 1 && $3 > prev) bad = 1; prev = $3 } END { exit bad }' "$dir/count" &&
   ! cmp -s "$dir/total" "$dir/count"; then ok "s reorders the table by count"
else bad "s: $(cat "$dir/count")"; fi
tm send-keys -t top g
if wait_for 'guest task' && grep -Eq '^0 +alpha/100 ' "$dir/screen" &&
   grep -Eq '^1 +gamma/102 ' "$dir/screen"; then ok "g groups by guest task, with their names"
else bad "g: guest tasks"; fi
tm send-keys -t top v
if wait_for 'VM \(0\)' && ! grep -Eq '^VM 1 synth1' "$dir/screen" &&
   ! grep -Eq '^1 +[a-z]+/10[0-9] ' "$dir/screen"; then ok "v shows VM 0 alone"
else bad "v: VM 0 alone"; fi
tm send-keys -t top q
if wait_for '^EXIT=0'; then ok "q quits, exit 0"
else bad "q"; fi

# the trace where a host task preempts VM 0's vCPU 0 (--write-sched): the
# worst stalls name the hog, and the fourth grouping (g three times) lists
# the host tasks that had the vCPU thread's CPU
mkdir "$dir/s"
"$writer" --write-sched "$dir/s" >/dev/null || { echo "FAIL: writing the sched trace"; exit 1; }
# The same pane, its command replaced: killing the only session ends the
# tmux server, and a new-session right after it may reach the server while
# it exits ("server exited unexpectedly", seen under load).
tm respawn-pane -k -t top \
	"'$exe' top --replay '$dir/s/merged' --interval 10 --speed 1000; echo EXIT=\$?; sleep 60"
if wait_for 'END OF TRACE' && grep -Eq '^  VM 0 vcpu 0 [a-z]+/10[0-9] .* by hog/4242 \(host CPU 0\)' "$dir/screen"
then ok "the worst stalls name the host task"
else bad "stalls"; fi
tm send-keys -t top g g g
if wait_for '^host task on vCPU threads' && grep -Eq '^hog/4242 ' "$dir/screen" &&
   grep -Eq '^kworker/0:1/4343 ' "$dir/screen" && grep -Eq '^\(blocked in the host\) ' "$dir/screen"
then ok "g: the host tasks that had the vCPU thread's CPU"
else bad "g: host preemptors"; fi
tm send-keys -t top q
wait_for '^EXIT=0' || bad "q on the sched trace"

[ $fails -eq 0 ] && echo "all top screen tests passed" || echo "$fails top screen test(s) failed"
[ $fails -eq 0 ]
