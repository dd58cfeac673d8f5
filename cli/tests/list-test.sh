#!/bin/sh
# `vmscope list`: every event of kvm-probes/events.def is listed once, with
# the sides (HOST, GUEST, BOTH) that events.def gives it, from the
# descriptors compiled into the tool (--builtin: the same table the
# modules answer GET_EVENT_DESC from).
# Usage: list-test.sh PATH-TO-vmscope PATH-TO-events.def
set -u
exe=$1 def=$2
fails=0
out=$(mktemp); trap 'rm -f "$out"' EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$exe" list --builtin >"$out" || fail "list --builtin exited $?"
# VMSCOPE_EVENT(name, SIDES, ... at the start of a line: the table itself
want=$(sed -n 's/^VMSCOPE_EVENT(\([a-z0-9_]*\), *\([A-Z]*\),.*/\1 \2/p' "$def")
[ "$(echo "$want" | wc -l)" -gt 20 ] || fail "events.def parsed to too few events: $want"
echo "$want" | while read -r name side; do
	n=$(grep -c "^$name " "$out")
	[ "$n" = 1 ] || { echo "FAIL: $name listed $n times"; exit 1; }
	grep -Eq "^$name +$side +" "$out" ||
		{ echo "FAIL: $name: want sides $side, got: $(grep "^$name " "$out")"; exit 1; }
done || fails=$((fails + 1))
listed=$(grep -vc '^#' "$out")
[ "$listed" = "$(echo "$want" | wc -l)" ] ||
	fail "$listed events listed, events.def has $(echo "$want" | wc -l)"
for side in HOST GUEST BOTH; do
	grep -Eq "^[a-z0-9_]+ +$side " "$out" || fail "no $side event listed"
done
grep -q "^# $listed events$" "$out" || fail "no '# $listed events' line"
"$exe" list --help | grep -q "HOST: vmscope_host" || fail "--help does not explain the sides"
"$exe" list --builtin --fields | grep -Eq '^    next_pid +s32' || fail "--fields lost"

if [ ! -e /dev/vmscope-host ] && [ ! -e /dev/vmscope-guest ]; then
	"$exe" list | grep -q "^# neither vmscope_host nor vmscope_guest is loaded" ||
		fail "without modules: no note that the compiled-in table is used"
fi
[ "$fails" -eq 0 ] && echo "ok: $listed events with their sides"
[ "$fails" -eq 0 ]
