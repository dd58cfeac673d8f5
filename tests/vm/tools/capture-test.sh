#!/bin/sh
# vmscope-capture without the kernel module: help, usage errors, numbers
# out of range, -o refusing an existing file and leaving none when the
# capture fails, the error a user sees when the module is absent.
# Usage: capture-test.sh PATH-TO-vmscope-capture
set -u
exe=$1
fails=0
out=$(mktemp)
tmpd=$(mktemp -d)
trap 'rm -f "$out"; rm -rf "$tmpd"' EXIT

. "$(dirname "$0")/../../../cli/tests/expect.sh"

expect 0 'usage: vmscope-capture' -- --help
expect 2 "unrecognized option '--bogus'" -- --bogus
expect 2 "capture: --pid: a number from 1 to 1073741823, not '4294967295'" -- --pid 4294967295
expect 2 "capture: --duration: a number from 0 to 4294967295, not '4294967296'" -- --duration 4294967296
expect 2 "capture: --flush-ms: a number from 0 to 4294967295, not '\+5'" -- --flush-ms +5
# -o: an existing file refused before the session, kept
echo keep >"$tmpd/raw"
expect 1 "capture: -o: output $tmpd/raw: File exists" -- -o "$tmpd/raw" --duration 1
[ "$(cat "$tmpd/raw")" = keep ] && echo "ok: capture -o kept the existing file" ||
	{ echo "FAIL: capture -o changed an existing file"; fails=$((fails + 1)); }
expect 1 'is vmscope_host.ko loaded' -- -o "$tmpd/raw2" --duration 1
[ -z "$(ls -A "$tmpd" | grep -v '^raw$')" ] && echo "ok: a capture that failed left no file" ||
	{ echo "FAIL: left: $(ls -A "$tmpd")"; fails=$((fails + 1)); }
if [ ! -e /dev/vmscope-host ]; then
	expect 1 'is vmscope_host.ko loaded' -- --duration 1
fi

[ "$fails" -eq 0 ]
