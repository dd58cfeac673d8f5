#!/bin/sh
# vmscope-agent, the static build of `vmscope agent`: file(1) says it is
# statically linked (no interpreter, no shared library to find in a
# busybox-only guest), it answers --help and bad options like the
# subcommand, and without the guest module it says what to load.
# Usage: agent-static-test.sh PATH-TO-vmscope-agent
set -u
exe=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

desc=$(file -L "$exe")
echo "$desc"
case $desc in
*"statically linked"*) ;;
*) fail "not statically linked" ;;
esac
case $desc in
*"interpreter"*|*"dynamically linked"*) fail "has a dynamic loader" ;;
esac
out=$("$exe" --help) || fail "--help exited $?"
echo "$out" | grep -q "^usage: vmscope agent" || fail "--help: $out"
echo "$out" | grep -q "vmscope-agent" || fail "--help does not name the static program"
"$exe" --frobnicate >/dev/null 2>&1
[ $? = 2 ] || fail "bad option: exit status not 2"
if [ ! -e /dev/vmscope-guest ]; then
	out=$("$exe" --duration 1 2>&1)
	st=$?
	[ $st = 1 ] || fail "without the module: exit $st, want 1"
	echo "$out" | grep -q "is vmscope_guest.ko loaded" || fail "without the module: $out"
fi
[ "$fails" -eq 0 ] && echo "ok: $(wc -c <"$exe") bytes, static"
[ "$fails" -eq 0 ]
